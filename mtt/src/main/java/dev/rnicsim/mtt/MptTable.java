package dev.rnicsim.mtt;

import java.util.BitSet;
import java.util.SplittableRandom;

/**
 * The MPT (memory protection table, mlx5's mkey table): {@code max_mr} entries, each the protection context of
 * one MR (state, PD, iova, length, access, page shift, MTT range, variant), named by a 32-bit key laid out as
 * {@link MKey} draws it. Index 0 is reserved so that key 0 never names an MR. Entry fields live in primitive
 * arrays per chunk of 4096 entries: 5 bytes an index for the variant history of every index ever used, and about
 * 50 more only while the chunk holds a live entry. A table of 2^24 entries costs memory only where it is used.
 *
 * <p>{@link #lookup} never throws: a bad key is an outcome ({@link KeyCheck}). Not thread safe.
 */
public final class MptTable
{
    private static final int CHUNK_SHIFT = 12;
    private static final int CHUNK_MASK = (1 << CHUNK_SHIFT) - 1;
    private static final byte NEVER_USED = 0;
    private static final byte USED_BEFORE = 1;

    private final MptConfig config;
    private final int variantMask;
    private final Chunk[] chunks;
    private final BitSet live = new BitSet();
    private final SplittableRandom random;
    private long cursor = 1;
    private int deviceVariantCounter;
    private long inUse;
    private long allocations;
    private long frees;
    private long failures;

    /**
     * One chunk of 4096 entries. The variant history of every index that was ever used must outlive its entry
     * (GENERATION and RECYCLED depend on it): 5 bytes an index, kept. The rest, 50 bytes an index, exists only
     * while some entry of the chunk is live.
     */
    private static final class Chunk
    {
        final byte[] history = new byte[1 << CHUNK_SHIFT];
        final int[] variant = new int[1 << CHUNK_SHIFT];
        Body body;
        int liveCount;
    }

    private static final class Body
    {
        final byte[] state = new byte[1 << CHUNK_SHIFT];
        final int[] pd = new int[1 << CHUNK_SHIFT];
        final int[] access = new int[1 << CHUNK_SHIFT];
        final byte[] pageShift = new byte[1 << CHUNK_SHIFT];
        final long[] iova = new long[1 << CHUNK_SHIFT];
        final long[] length = new long[1 << CHUNK_SHIFT];
        final long[] mttFirst = new long[1 << CHUNK_SHIFT];
        final long[] mttEntries = new long[1 << CHUNK_SHIFT];
        final long[] mttReserved = new long[1 << CHUNK_SHIFT];
    }

    /**
     * @param config size and key policy.
     */
    public MptTable(final MptConfig config)
    {
        this.config = config;
        this.variantMask = (1 << config.variantBits()) - 1;
        this.chunks = new Chunk[(int)((config.maxMr() + CHUNK_MASK) >>> CHUNK_SHIFT)];
        this.random = new SplittableRandom(config.seed());
    }

    /**
     * @return the configuration.
     */
    public MptConfig config()
    {
        return config;
    }

    /**
     * Takes a free index and fills its entry.
     *
     * @param state       INVALID or VALID.
     * @param pd          protection domain number.
     * @param iova        first address of the MR.
     * @param lengthBytes MR length in bytes.
     * @param access      access bits ({@link AccessFlags}).
     * @param pageShift   log2 of the MR page size.
     * @param mtt         the MR's MTT range.
     * @return the new key (lkey == rkey for an MR).
     * @throws TableException EINVAL when {@code state} is FREE; ENOMEM when all {@code max_mr - 1} indices are
     *                        live.
     */
    public int allocate(final MptState state, final int pd, final long iova, final long lengthBytes,
        final int access, final int pageShift, final MttRange mtt)
    {
        if (state == MptState.FREE)
        {
            throw new TableException(Errno.EINVAL, "a new MPT entry must be INVALID or VALID");
        }
        final long index = freeIndex();
        if (index < 0)
        {
            failures++;
            throw new TableException(Errno.ENOMEM, "MPT full: " + inUse + " MRs live of max_mr=" + config.maxMr()
                + " (index 0 reserved)");
        }
        final Chunk c = chunk(index);
        final int i = (int)(index & CHUNK_MASK);
        c.variant[i] = nextVariant(c, i);
        c.history[i] = USED_BEFORE;
        if (c.body == null)
        {
            c.body = new Body();
        }
        c.liveCount++;
        final Body b = c.body;
        b.state[i] = (byte)state.ordinal();
        b.pd[i] = pd;
        b.iova[i] = iova;
        b.length[i] = lengthBytes;
        b.access[i] = access;
        b.pageShift[i] = (byte)pageShift;
        b.mttFirst[i] = mtt.firstEntry();
        b.mttEntries[i] = mtt.entries();
        b.mttReserved[i] = mtt.reservedEntries();
        live.set((int)index);
        inUse++;
        allocations++;
        if (config.indexPolicy() == IndexPolicy.CYCLIC)
        {
            cursor = index + 1 >= config.maxMr() ? 1 : index + 1;
        }
        return MKey.make(index, c.variant[i], config.variantBits());
    }

    private long freeIndex()
    {
        final int max = (int)Math.min(config.maxMr(), Integer.MAX_VALUE);
        final long start = config.indexPolicy() == IndexPolicy.CYCLIC ? cursor : 1;
        int index = live.nextClearBit((int)start);
        if (index >= max && start > 1)
        {
            index = live.nextClearBit(1);
        }
        return index >= max ? -1 : index;
    }

    private int nextVariant(final Chunk c, final int i)
    {
        final boolean reused = c.history[i] == USED_BEFORE;
        return switch (config.variantPolicy())
        {
            case GENERATION -> c.variant[i];
            case RECYCLED ->
            {
                if (reused)
                {
                    yield c.variant[i];
                }
                final int v = deviceVariantCounter & variantMask;
                deviceVariantCounter++;
                yield v;
            }
            case RANDOM ->
            {
                int v = random.nextInt(variantMask + 1);
                while (reused && v == c.variant[i] && variantMask > 0)
                {
                    v = random.nextInt(variantMask + 1);
                }
                yield v;
            }
        };
    }

    /**
     * Frees the entry of a live key; under GENERATION its index's variant advances.
     *
     * @param key a live key.
     * @return the freed entry as it was.
     * @throws TableException EINVAL when the key does not name a live entry in all its bits.
     */
    public MptEntry free(final int key)
    {
        final MptEntry entry = requireLive(key, "free");
        final long index = MKey.index(key, config.variantBits());
        final Chunk c = chunk(index);
        final int i = (int)(index & CHUNK_MASK);
        c.body.state[i] = (byte)MptState.FREE.ordinal();
        if (--c.liveCount == 0)
        {
            c.body = null;
        }
        if (config.variantPolicy() == VariantPolicy.GENERATION)
        {
            c.variant[i] = (c.variant[i] + 1) & variantMask;
        }
        live.clear((int)index);
        inUse--;
        frees++;
        return entry;
    }

    /**
     * Moves a live entry between INVALID and VALID (fast-register MRs, local invalidation).
     *
     * @param key   a live key.
     * @param state INVALID or VALID.
     * @throws TableException EINVAL when the key does not name a live entry, or {@code state} is FREE.
     */
    public void setState(final int key, final MptState state)
    {
        requireLive(key, "setState");
        if (state == MptState.FREE)
        {
            throw new TableException(Errno.EINVAL, "use free() to free an MPT entry");
        }
        final long index = MKey.index(key, config.variantBits());
        chunk(index).body.state[(int)(index & CHUNK_MASK)] = (byte)state.ordinal();
    }

    /**
     * Checks a key for an access, in rxe's order: index, all 32 bits, PD, rights, state, range. Never throws.
     *
     * @param key         the key presented.
     * @param pd          the PD of the QP presenting it.
     * @param access      the access bits the operation needs.
     * @param iova        first address accessed.
     * @param lengthBytes bytes accessed (0 allowed).
     * @return the outcome.
     */
    public KeyCheck lookup(final int key, final int pd, final int access, final long iova, final long lengthBytes)
    {
        final long index = MKey.index(key, config.variantBits());
        if (index == 0 || index >= config.maxMr() || !live.get((int)index))
        {
            return KeyCheck.NO_SUCH_INDEX;
        }
        final Chunk c = chunks[(int)(index >>> CHUNK_SHIFT)];
        final int i = (int)(index & CHUNK_MASK);
        if (c.variant[i] != MKey.variant(key, config.variantBits()))
        {
            return KeyCheck.VARIANT_MISMATCH;
        }
        final Body b = c.body;
        if (b.pd[i] != pd)
        {
            return KeyCheck.WRONG_PD;
        }
        if ((b.access[i] & access) != access)
        {
            return KeyCheck.RIGHTS_MISSING;
        }
        if (b.state[i] != MptState.VALID.ordinal())
        {
            return KeyCheck.WRONG_STATE;
        }
        final long offset = iova - b.iova[i];
        if (lengthBytes < 0 || Long.compareUnsigned(offset, b.length[i]) > 0
            || Long.compareUnsigned(lengthBytes, b.length[i] - offset) > 0)
        {
            return KeyCheck.OUT_OF_RANGE;
        }
        return KeyCheck.VALID;
    }

    /**
     * @param key a key.
     * @return the live entry it names in all 32 bits, or null.
     */
    public MptEntry entry(final int key)
    {
        final long index = MKey.index(key, config.variantBits());
        if (index == 0 || index >= config.maxMr() || !live.get((int)index))
        {
            return null;
        }
        final Chunk c = chunks[(int)(index >>> CHUNK_SHIFT)];
        final int i = (int)(index & CHUNK_MASK);
        if (c.variant[i] != MKey.variant(key, config.variantBits()))
        {
            return null;
        }
        final Body b = c.body;
        return new MptEntry(key, MptState.values()[b.state[i]], b.pd[i], b.iova[i], b.length[i], b.access[i],
            b.pageShift[i], new MttRange(b.mttFirst[i], b.mttEntries[i], b.mttReserved[i]));
    }

    /**
     * @return live entries.
     */
    public long inUse()
    {
        return inUse;
    }

    /**
     * @return successful allocations since creation.
     */
    public long allocations()
    {
        return allocations;
    }

    /**
     * @return frees since creation.
     */
    public long frees()
    {
        return frees;
    }

    /**
     * @return allocations refused with ENOMEM.
     */
    public long failures()
    {
        return failures;
    }

    // ---- fast accessors for translation (package-private; the caller has checked the key)

    long iova(final long index)
    {
        return chunks[(int)(index >>> CHUNK_SHIFT)].body.iova[(int)(index & CHUNK_MASK)];
    }

    long length(final long index)
    {
        return chunks[(int)(index >>> CHUNK_SHIFT)].body.length[(int)(index & CHUNK_MASK)];
    }

    int pageShift(final long index)
    {
        return chunks[(int)(index >>> CHUNK_SHIFT)].body.pageShift[(int)(index & CHUNK_MASK)];
    }

    long mttFirst(final long index)
    {
        return chunks[(int)(index >>> CHUNK_SHIFT)].body.mttFirst[(int)(index & CHUNK_MASK)];
    }

    private MptEntry requireLive(final int key, final String op)
    {
        final MptEntry entry = entry(key);
        if (entry == null)
        {
            throw new TableException(Errno.EINVAL, op + ": key " + MKey.toHex(key) + " names no live MPT entry ("
                + lookup(key, 0, 0, 0, 0) + ")");
        }
        return entry;
    }

    private Chunk chunk(final long index)
    {
        Chunk c = chunks[(int)(index >>> CHUNK_SHIFT)];
        if (c == null)
        {
            c = new Chunk();
            chunks[(int)(index >>> CHUNK_SHIFT)] = c;
        }
        return c;
    }
}
