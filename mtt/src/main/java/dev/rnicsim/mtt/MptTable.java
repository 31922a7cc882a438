package dev.rnicsim.mtt;

/**
 * The MPT (memory protection table, mlx5's mkey table): {@code max_mr} entries, each the protection context of
 * one MR (state, PD, iova, length, access, page shift, MTT range, variant), named by a 32-bit key laid out as
 * {@link MKey} draws it. Index 0 is reserved so that key 0 never names an MR. Entry fields live in primitive
 * arrays per chunk of 256 entries: 5 bytes an index for the variant history of every index ever used, and 48
 * more only while the chunk holds a live entry. A table of 2^24 entries costs memory only where it is used.
 *
 * <p>Which index an allocation takes is {@link MptIndexSet}'s (the index policy), which variant its key gets is
 * {@link MptVariants}' (the variant policy); this class keeps the entries and checks keys against them.
 *
 * <p>{@link #lookup} never throws: a bad key is an outcome ({@link KeyCheck}). Not thread safe.
 */
public final class MptTable
{
    /** Bit of a translation slot: the access is the empty one just past the MR's last byte. */
    static final long SLOT_PAST_END = 1 << 6;
    private static final int CHUNK_SHIFT = 8;
    private static final int CHUNK_MASK = (1 << CHUNK_SHIFT) - 1;
    private static final byte NEVER_USED = 0;
    private static final byte USED_BEFORE = 1;
    /** The states by ordinal, read without the copy {@code MptState.values()} makes each call. */
    private static final MptState[] STATES = MptState.values();

    private final MptConfig config;
    /** Chunks by index / 256, the array grown (doubling) to the highest chunk taken so far. */
    private Chunk[] chunks;
    /** Chunks the table can have: max_mr / 256, rounded up. */
    private final int chunkCount;
    private final int variantBits;
    /** Which indices are live, and the free one the index policy gives next. */
    private final MptIndexSet indices;
    /** The variants new and freed entries get under the variant policy. */
    private final MptVariants variants;
    /** A body whose chunk emptied, kept to serve the next chunk that needs one (all its entries are FREE). */
    private Body spare;
    private long inUse;
    private long allocations;
    private long frees;
    /** Entries created, freed, rewritten or moved between states: {@link #changes()}. */
    private long changes;
    private long failures;

    /**
     * One chunk of 256 entries (at most 13.5 KiB while live: a device that holds a few MRs does not zero 200 KiB
     * for them). The variant history of every index that was ever used must outlive its entry
     * (GENERATION and RECYCLED depend on it): 5 bytes an index, kept. The rest, 48 bytes an index, exists only
     * while some entry of the chunk is live.
     */
    private static final class Chunk
    {
        final byte[] history = new byte[1 << CHUNK_SHIFT];
        final int[] variant = new int[1 << CHUNK_SHIFT];
        Body body;
        int liveCount;
    }

    /**
     * The fields of 256 entries. What a translation reads sits in one array, four longs an entry:
     * <pre>
     *   [4i]     iova
     *   [4i + 1] length in bytes
     *   [4i + 2] mttFirst &lt;&lt; 16 | state &lt;&lt; 8 | pageShift
     *   [4i + 3] pd &lt;&lt; 32 | access (32 bits)
     * </pre>
     * The MTT entry counts, read only on deregistration, sit apart. Both arrays hold the first 16 entries at first and
     * double, up to the chunk's 256, as a higher entry is allocated (only live entries are read, each allocated
     * first): a device that holds a few MRs does not zero 12 KiB for them.
     */
    private static final class Body
    {
        long[] hot = new long[4 * 16];
        long[] mttCounts = new long[2 * 16];

        /** Makes room for entry {@code i}. */
        Body holding(final int i)
        {
            if (4 * i >= hot.length)
            {
                final int entries = Math.min(1 << CHUNK_SHIFT, Integer.highestOneBit(i) << 1);
                hot = java.util.Arrays.copyOf(hot, 4 * entries);
                mttCounts = java.util.Arrays.copyOf(mttCounts, 2 * entries);
            }
            return this;
        }

        int state(final int i)
        {
            return (int)(hot[4 * i + 2] >>> 8) & 0xff;
        }

        void state(final int i, final MptState state)
        {
            hot[4 * i + 2] = (hot[4 * i + 2] & ~0xff00L) | ((long)state.ordinal() << 8);
        }

        MttRange mtt(final int i)
        {
            return new MttRange(hot[4 * i + 2] >>> 16, mttCounts[2 * i], mttCounts[2 * i + 1]);
        }
    }

    /**
     * @param config size and key policy.
     */
    public MptTable(final MptConfig config)
    {
        this.config = config;
        this.variantBits = config.variantBits();
        this.indices = new MptIndexSet(config.maxMr(), config.indexPolicy());
        this.variants = new MptVariants(config.variantPolicy(), config.variantBits(), config.seed());
        this.chunkCount = (int)((config.maxMr() + CHUNK_MASK) >>> CHUNK_SHIFT);
        this.chunks = new Chunk[Math.min(chunkCount, 16)];
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
     * @throws TableException EINVAL when {@code state} is FREE or null, {@code mtt} is null, the page shift is
     *                        outside 0-62, or the range is empty or wraps past 2^64; ENOMEM when all
     *                        {@code max_mr - 1} indices are live. Nothing changes on failure.
     */
    public int allocate(final MptState state, final int pd, final long iova, final long lengthBytes,
        final int access, final int pageShift, final MttRange mtt)
    {
        return allocate(state, pd, iova, lengthBytes, access, pageShift, mtt, false);
    }

    /**
     * As {@link #allocate(MptState, int, long, long, int, int, MttRange)}, for an object outside the MR cache (a
     * window, a fast-registration MR) when {@code fresh}: under RECYCLED keys it takes the device-wide counter's next
     * value even on a reused index (mlx5 {@code assign_mkey_variant}, one increment per mkey).
     */
    int allocate(final MptState state, final int pd, final long iova, final long lengthBytes, final int access,
        final int pageShift, final MttRange mtt, final boolean fresh)
    {
        if (state == null || state == MptState.FREE || mtt == null)
        {
            throw new TableException(Errno.EINVAL, "a new MPT entry needs state INVALID or VALID and an MTT range,"
                + " got state=" + state + " mtt=" + mtt);
        }
        if (pageShift < 0 || pageShift > 62 || lengthBytes <= 0
            || Long.compareUnsigned(iova + lengthBytes - 1, iova) < 0)
        {
            throw new TableException(Errno.EINVAL, "pageShift=" + pageShift + " must be 0-62 and the range iova=0x"
                + Long.toHexString(iova) + " length=" + lengthBytes + " non-empty without wrapping");
        }
        final long index = indices.next();
        if (index < 0)
        {
            failures++;
            throw new TableException(Errno.ENOMEM, "MPT full: " + inUse + " entries live, every one of the "
                + (config.maxMr() - 1) + " usable indices (max_mr=" + (config.maxMr() - 1) + "; index 0 is reserved)"
                + "; deregister an MR or window first, or use a device with a larger max_mr");
        }
        final Chunk c = chunk(index);
        final int i = (int)(index & CHUNK_MASK);
        c.variant[i] = variants.onAllocate(c.variant[i], c.history[i] == USED_BEFORE && !fresh);
        c.history[i] = USED_BEFORE;
        if (c.body == null)
        {
            c.body = spare != null ? spare : new Body();
            spare = null;
        }
        c.liveCount++;
        final Body b = c.body.holding(i);
        b.hot[4 * i] = iova;
        b.hot[4 * i + 1] = lengthBytes;
        b.hot[4 * i + 2] = (mtt.firstEntry() << 16) | ((long)state.ordinal() << 8) | pageShift;
        b.hot[4 * i + 3] = ((long)pd << 32) | Integer.toUnsignedLong(access);
        b.mttCounts[2 * i] = mtt.entries();
        b.mttCounts[2 * i + 1] = mtt.reservedEntries();
        indices.take(index);
        inUse++;
        allocations++;
        changes++;
        return MKey.make(index, c.variant[i], variantBits);
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
        release(key);
        return entry;
    }

    /** Frees the entry of a key the caller has checked to be live. */
    void release(final int key)
    {
        final long index = MKey.index(key, variantBits);
        final Chunk c = chunk(index);
        final int i = (int)(index & CHUNK_MASK);
        c.body.state(i, MptState.FREE);
        if (--c.liveCount == 0)
        {
            spare = c.body;
            c.body = null;
        }
        c.variant[i] = variants.onFree(c.variant[i]);
        indices.release(index);
        inUse--;
        frees++;
        changes++;
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
            throw new TableException(Errno.EINVAL, "state FREE is not set by setState: use free()"
                + " to free an MPT entry (a caller's bug: the entry stays)");
        }
        final long index = MKey.index(key, variantBits);
        chunk(index).body.state((int)(index & CHUNK_MASK), state);
        changes++;
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
        final long index = MKey.index(key, variantBits);
        if (!indices.isLive(index))
        {
            return KeyCheck.NO_SUCH_INDEX;
        }
        final Chunk c = chunks[(int)(index >>> CHUNK_SHIFT)];
        final int i = (int)(index & CHUNK_MASK);
        if (c.variant[i] != MKey.variant(key, variantBits))
        {
            return KeyCheck.VARIANT_MISMATCH;
        }
        final long[] hot = c.body.hot;
        final long pdAccess = hot[4 * i + 3];
        if ((int)(pdAccess >>> 32) != pd)
        {
            return KeyCheck.WRONG_PD;
        }
        if (((int)pdAccess & access) != access)
        {
            return KeyCheck.RIGHTS_MISSING;
        }
        if (((hot[4 * i + 2] >>> 8) & 0xff) != MptState.VALID.ordinal())
        {
            return KeyCheck.WRONG_STATE;
        }
        final long mrLength = hot[4 * i + 1];
        final long offset = iova - hot[4 * i];
        if (lengthBytes < 0 || Long.compareUnsigned(offset, mrLength) > 0
            || Long.compareUnsigned(lengthBytes, mrLength - offset) > 0)
        {
            return KeyCheck.OUT_OF_RANGE;
        }
        return KeyCheck.VALID;
    }

    /**
     * {@link #lookup} and the block arithmetic of a translation in one pass over the entry.
     *
     * @param index the MPT index of {@code key}.
     * @return {@code mttIndex << 7 | pastEnd << 6 | pageShift} for the MTT entry holding {@code iova} (for an empty
     * access just past the end: holding the last byte, with the {@link #SLOT_PAST_END} bit), or the negative
     * {@link KeyCheck#code()} of the failed check.
     */
    long translationSlot(final long index, final int key, final int pd, final int access, final long iova,
        final long lengthBytes)
    {
        if (!indices.isLive(index))
        {
            return KeyCheck.NO_SUCH_INDEX.code();
        }
        final Chunk c = chunks[(int)(index >>> CHUNK_SHIFT)];
        final int i = (int)(index & CHUNK_MASK);
        if (c.variant[i] != MKey.variant(key, variantBits))
        {
            return KeyCheck.VARIANT_MISMATCH.code();
        }
        final long[] hot = c.body.hot;
        final int at4 = 4 * i;
        final long pdAccess = hot[at4 + 3];
        if ((int)(pdAccess >>> 32) != pd)
        {
            return KeyCheck.WRONG_PD.code();
        }
        if (((int)pdAccess & access) != access)
        {
            return KeyCheck.RIGHTS_MISSING.code();
        }
        final long mttWord = hot[at4 + 2];
        if (((mttWord >>> 8) & 0xff) != MptState.VALID.ordinal())
        {
            return KeyCheck.WRONG_STATE.code();
        }
        final long mrIova = hot[at4];
        final long mrLength = hot[at4 + 1];
        final long offset = iova - mrIova;
        if (lengthBytes < 0 || Long.compareUnsigned(offset, mrLength) > 0
            || Long.compareUnsigned(lengthBytes, mrLength - offset) > 0)
        {
            return KeyCheck.OUT_OF_RANGE.code();
        }
        final int shift = (int)(mttWord & 0xff);
        final boolean pastEnd = offset == mrLength;
        final long at = pastEnd ? iova - 1 : iova;
        final long block = (at >>> shift) - (mrIova >>> shift);
        return (((mttWord >>> 16) + block) << 7) | (pastEnd ? SLOT_PAST_END : 0) | shift;
    }

    /**
     * @param key a key.
     * @return the live entry it names in all 32 bits, or null.
     */
    public MptEntry entry(final int key)
    {
        final long index = MKey.index(key, variantBits);
        if (!indices.isLive(index))
        {
            return null;
        }
        final Chunk c = chunks[(int)(index >>> CHUNK_SHIFT)];
        final int i = (int)(index & CHUNK_MASK);
        if (c.variant[i] != MKey.variant(key, variantBits))
        {
            return null;
        }
        final Body b = c.body;
        final long[] hot = b.hot;
        return new MptEntry(key, STATES[b.state(i)], (int)(hot[4 * i + 3] >>> 32), hot[4 * i],
            hot[4 * i + 1], (int)hot[4 * i + 3], (int)(hot[4 * i + 2] & 0xff), b.mtt(i));
    }

    /**
     * Whether the key names a live entry (in all 32 bits) in {@code state}, of PD {@code pd}, and, when
     * {@code withRange}, with this start, length and access: what {@link #entry} would answer, without making the
     * entry (a check that compares every issued key's entry after every step of a run allocated one per key).
     *
     * @param key         a key.
     * @param state       the state the entry should be in.
     * @param pd          the PD number it should hold.
     * @param withRange   whether the start, length and access are compared too.
     * @param iova        the start it should hold.
     * @param lengthBytes the length it should hold.
     * @param access      the access bits it should hold.
     * @return true when there is such an entry and it holds these fields.
     */
    public boolean holds(final int key, final MptState state, final int pd, final boolean withRange, final long iova,
        final long lengthBytes, final int access)
    {
        final long[] hot = liveHot(key);
        if (hot == null)
        {
            return false;
        }
        final int i = slot(key);
        if (((int)(hot[4 * i + 2] >>> 8) & 0xff) != state.ordinal() || (int)(hot[4 * i + 3] >>> 32) != pd)
        {
            return false;
        }
        return !withRange || hot[4 * i] == iova && hot[4 * i + 1] == lengthBytes && (int)hot[4 * i + 3] == access;
    }

    /**
     * @param key a key.
     * @return log2 of the MR page size of the live entry the key names in all 32 bits, or -1 when none; allocates
     * nothing.
     */
    public int pageShift(final int key)
    {
        final long[] hot = liveHot(key);
        return hot == null ? -1 : (int)(hot[4 * slot(key) + 2] & 0xff);
    }

    /** The hot words of the chunk holding the live entry the key names in all 32 bits, or null. */
    private long[] liveHot(final int key)
    {
        final long index = MKey.index(key, variantBits);
        if (!indices.isLive(index))
        {
            return null;
        }
        final Chunk c = chunks[(int)(index >>> CHUNK_SHIFT)];
        return c.variant[(int)(index & CHUNK_MASK)] != MKey.variant(key, variantBits) ? null : c.body.hot;
    }

    /** The key's entry within its chunk. */
    private int slot(final int key)
    {
        return (int)(MKey.index(key, variantBits) & CHUNK_MASK);
    }

    /**
     * @param key a key.
     * @return the access bits of the live entry the key names in all 32 bits, or -1 when none; allocates nothing.
     */
    public int accessBits(final int key)
    {
        final long[] hot = liveHot(key);
        return hot == null ? -1 : (int)hot[4 * slot(key) + 3];
    }

    /**
     * @param key  a key.
     * @param iova an address inside the MR.
     * @return the index of the MTT entry of the MR page holding {@code iova}, for the live entry the key names in
     * all 32 bits, or -1 when none; checks nothing else and allocates nothing.
     */
    public long blockIndex(final int key, final long iova)
    {
        final long[] hot = liveHot(key);
        if (hot == null)
        {
            return -1;
        }
        final int i = slot(key);
        final long mttWord = hot[4 * i + 2];
        final int shift = (int)(mttWord & 0xff);
        return (mttWord >>> 16) + (iova >>> shift) - (hot[4 * i] >>> shift);
    }

    /**
     * @return how many times an entry was created, freed or rewritten or changed state: while it stays the same, every
     * key check answers as it did (a DMA that checked a key need not read the entry again).
     */
    public long changes()
    {
        return changes;
    }

    /**
     * Notes that a live entry's translation was revoked under it (its MTT entries zapped, the entry kept): a key
     * change for {@link #changes()}, since the key's checks no longer find its pages.
     */
    void translationRevoked()
    {
        changes++;
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

    /**
     * Rewrites every field of a live entry in place, its key's variant included (a window bind, a fast
     * registration, a rereg): the index stays, the caller has checked the key.
     *
     * @param key         the entry's current key (live in all its bits).
     * @param newVariant  the variant of the entry's new key.
     * @param state       INVALID or VALID.
     * @param pd          protection domain number.
     * @param iova        first address.
     * @param lengthBytes length in bytes (0 allowed for an unbound window).
     * @param access      access bits.
     * @param pageShift   log2 of the page size.
     * @param mtt         the MTT range the entry translates through.
     * @return the entry's new key.
     */
    int rewrite(final int key, final int newVariant, final MptState state, final int pd, final long iova,
        final long lengthBytes, final int access, final int pageShift, final MttRange mtt)
    {
        final long index = MKey.index(key, variantBits);
        final Chunk c = chunks[(int)(index >>> CHUNK_SHIFT)];
        final int i = (int)(index & CHUNK_MASK);
        c.variant[i] = newVariant & variants.mask();
        final Body b = c.body;
        b.hot[4 * i] = iova;
        b.hot[4 * i + 1] = lengthBytes;
        b.hot[4 * i + 2] = (mtt.firstEntry() << 16) | ((long)state.ordinal() << 8) | pageShift;
        b.hot[4 * i + 3] = ((long)pd << 32) | Integer.toUnsignedLong(access);
        b.mttCounts[2 * i] = mtt.entries();
        b.mttCounts[2 * i + 1] = mtt.reservedEntries();
        changes++;
        return MKey.make(index, c.variant[i], variantBits);
    }

    /**
     * Forgets the variant history of a live entry's index, so that its next allocation draws a variant as for a
     * never-used index: a window or a fast-registration MR whose key bytes the consumer chose must not hand its last
     * key to the next MR under RECYCLED keys (mlx5 creates those mkeys with a fresh variant, {@code
     * assign_mkey_variant}, outside the MR cache).
     *
     * @param key a live key.
     */
    void forgetHistory(final int key)
    {
        final long index = MKey.index(key, variantBits);
        chunks[(int)(index >>> CHUNK_SHIFT)].history[(int)(index & CHUNK_MASK)] = NEVER_USED;
    }

    /**
     * @return bits of a key that hold the variant.
     */
    int variantBits()
    {
        return variantBits;
    }

    // ---- fast accessors for translation (package-private; the caller has checked the key)

    /** @return the MTT range of a live entry, read before it is freed. */
    MttRange mttRange(final long index)
    {
        return chunks[(int)(index >>> CHUNK_SHIFT)].body.mtt((int)(index & CHUNK_MASK));
    }

    /** @return true when {@code key} names a live entry in all its bits. */
    boolean isLiveKey(final int key)
    {
        final long index = MKey.index(key, variantBits);
        return indices.isLive(index) && chunks[(int)(index >>> CHUNK_SHIFT)].variant[(int)(index & CHUNK_MASK)]
            == MKey.variant(key, variantBits);
    }

    private MptEntry requireLive(final int key, final String op)
    {
        final MptEntry entry = entry(key);
        if (entry == null)
        {
            throw new TableException(Errno.EINVAL, op + ": key " + MKey.toHex(key) + " names no live MPT entry ("
                + lookup(key, 0, 0, 0, 0) + ")"
                + "; pass the key of a live MR or window");
        }
        return entry;
    }

    private Chunk chunk(final long index)
    {
        final int at = (int)(index >>> CHUNK_SHIFT);
        if (at >= chunks.length)
        {
            chunks = java.util.Arrays.copyOf(chunks, Math.min(chunkCount, Math.max(at + 1, 2 * chunks.length)));
        }
        Chunk c = chunks[at];
        if (c == null)
        {
            c = new Chunk();
            chunks[(int)(index >>> CHUNK_SHIFT)] = c;
        }
        return c;
    }
}
