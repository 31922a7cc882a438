package dev.rnicsim.mtt;

import java.util.List;

/**
 * The fast-registration MRs of the adapter tables ({@code ib_alloc_mr(IB_MR_TYPE_MEM_REG)}): MTT entries reserved at
 * allocation, an MPT entry INVALID until a REG_MR work request writes its pages and makes it VALID under a new key,
 * and LOCAL_INV (or a received SEND_WITH_INV) taking it back to INVALID ({@code rxe_reg_fast_mr},
 * {@code rxe_invalidate_mr}).
 *
 * <p>Part of {@link AdapterTables} ({@link AdapterTables#fastRegistrations()}), whose MTT, MPT, translation cache and
 * counts it shares. Not thread safe.
 */
public final class FastRegistrations
{
    private final Mtt mtt;
    private final MptTable mpt;
    private final TranslationCache cache;
    private final int variantBits;
    private final TableCounters counters;
    private final MrRegistrations registrations;
    /** MPT index of each fast-registration MR: the MTT entries reserved at allocation. */
    private final LongMap<MttRange> fastReg = new LongMap<>();

    /**
     * @param mtt           the MTT the MRs' entries are reserved in.
     * @param mpt           the MPT their entries live in.
     * @param cache         the translation cache that holds their entries.
     * @param variantBits   the key's variant width ({@link MKey}).
     * @param counters      the tables' shared counts.
     * @param registrations the ordinary registrations, whose access check and MTT writer REG_MR uses.
     */
    FastRegistrations(final Mtt mtt, final MptTable mpt, final TranslationCache cache, final int variantBits,
        final TableCounters counters, final MrRegistrations registrations)
    {
        this.mtt = mtt;
        this.mpt = mpt;
        this.cache = cache;
        this.variantBits = variantBits;
        this.counters = counters;
        this.registrations = registrations;
    }

    /**
     * @param index an MPT index.
     * @return true when it holds a fast-registration MR (live or not: the caller checks the key).
     */
    boolean holds(final long index)
    {
        return !fastReg.isEmpty() && fastReg.containsKey(index);
    }

    /**
     * Forgets the fast-registration MR at an index, for its deregistration.
     *
     * @param index an MPT index.
     * @return the MTT entries reserved at its allocation, or null when the index holds no fast-registration MR.
     */
    MttRange forget(final long index)
    {
        return fastReg.remove(index);
    }

    /**
     * Allocates a fast-registration MR ({@code ib_alloc_mr(IB_MR_TYPE_MEM_REG, max_num_sg)}): MTT entries for
     * {@code maxPages} pages reserved now, the MPT entry INVALID (rxe's FREE) until a REG_MR work request.
     *
     * @param pd       protection domain number.
     * @param maxPages the most pages one registration may map, at least 1.
     * @return the MR's key.
     * @throws TableException EINVAL for maxPages below 1; ENOMEM when the MTT or the MPT is full.
     */
    public int allocate(final int pd, final long maxPages)
    {
        if (maxPages < 1)
        {
            throw new TableException(Errno.EINVAL, "max_num_sg=" + maxPages + " must be 1 or more");
        }
        final MttRange range = mtt.allocate(maxPages);
        final int key;
        try
        {
            key = mpt.allocate(MptState.INVALID, pd, 0, 1, 0, 12, range, true);
        }
        catch (final TableException e)
        {
            mtt.undoAllocate(range);
            throw e;
        }
        fastReg.put(MKey.index(key, variantBits), range);
        return key;
    }

    /**
     * Executes a REG_MR work request ({@code rxe_reg_fast_mr}): the MR must be INVALID and the new key must keep
     * its index; its 4 KiB pages are written into the MTT entries reserved at allocation, and the entry becomes
     * VALID under the new key (lkey and rkey alike: {@code ib_update_fast_reg_key}).
     *
     * @param key         the MR's current key.
     * @param newKey      the key after registration: same index, the consumer's low byte.
     * @param runs        the DMA runs of the pages mapped.
     * @param address     user virtual address of the first byte.
     * @param lengthBytes bytes mapped, at least 1.
     * @param iova        the address the MR is accessed by.
     * @param access      access bits.
     * @return MTT entries written.
     * @throws TableException EINVAL when the key names no fast-registration MR, it is VALID already, the new key
     *                        changes the index, the access is refused, or the pages exceed those reserved.
     */
    public long register(final int key, final int newKey, final List<DmaRun> runs, final long address,
        final long lengthBytes, final long iova, final int access)
    {
        final long index = MKey.index(key, variantBits);
        final MttRange range = fastReg.get(index);
        if (range == null || !mpt.isLiveKey(key))
        {
            throw new TableException(Errno.EINVAL, "REG_MR: key " + MKey.toHex(key) + " names no fast-registration"
                + " MR"
                + "; post REG_MR with the lkey of an MR from ibv_alloc_mr");
        }
        if (mpt.entry(key).state() != MptState.INVALID)
        {
            throw new TableException(Errno.EINVAL, "REG_MR: MR " + MKey.toHex(key) + " is VALID: invalidate it "
                + "first (rxe_reg_fast_mr requires state FREE)");
        }
        if (MKey.index(newKey, variantBits) != index)
        {
            throw new TableException(Errno.EINVAL, "REG_MR: new key " + MKey.toHex(newKey) + " must keep the index "
                + "of " + MKey.toHex(key));
        }
        MrRegistrations.checkAccess(access);
        final List<DmaRun> pages = PageSizeSelector.trim(runs, address, lengthBytes);
        final long first = iova & ~0xfffL;
        final long blocks = ((iova + lengthBytes - 1) >>> 12) - (first >>> 12) + 1;
        if (blocks > range.entries())
        {
            throw new TableException(Errno.EINVAL, "REG_MR: " + blocks + " pages > max_num_sg=" + range.entries()
                + " the MR was allocated for"
                + "; allocate the MR with a larger max_num_sg or map fewer pages");
        }
        final MttRange used = new MttRange(range.firstEntry(), blocks, range.reservedEntries());
        registrations.writeEntries(used, pages, address, iova, 4096);
        mpt.rewrite(key, MKey.variant(newKey, variantBits), MptState.VALID, mpt.entry(key).pd(), iova, lengthBytes,
            access, 12, range);
        cache.invalidate(index, range.firstEntry(), range.entries());
        return blocks;
    }

    /**
     * Invalidates a fast-registration MR (LOCAL_INV or a received SEND_WITH_INV, {@code rxe_invalidate_mr}): VALID
     * to INVALID, key unchanged; its cached entries dropped.
     *
     * @param key the MR's key.
     * @return the number of cached entries dropped.
     * @throws TableException EINVAL when the key names no fast-registration MR.
     */
    public long invalidate(final int key)
    {
        final long index = MKey.index(key, variantBits);
        final MttRange range = fastReg.get(index);
        if (range == null || !mpt.isLiveKey(key))
        {
            throw new TableException(Errno.EINVAL, "LOCAL_INV: key " + MKey.toHex(key) + " names no "
                + "fast-registration MR (user MRs cannot be invalidated)"
                + "; invalidate the key of an MR from ibv_alloc_mr or of a window");
        }
        mpt.setState(key, MptState.INVALID);
        counters.invalidations++;
        return cache.invalidate(index, range.firstEntry(), range.entries());
    }

    /**
     * @param key a key.
     * @return true when it names a live fast-registration MR in all its bits.
     */
    public boolean isFastReg(final int key)
    {
        return mpt.isLiveKey(key) && fastReg.containsKey(MKey.index(key, variantBits));
    }
}
