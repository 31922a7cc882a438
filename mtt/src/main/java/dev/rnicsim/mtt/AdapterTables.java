package dev.rnicsim.mtt;

import java.util.List;

/**
 * The adapter's translation and protection tables together: page-size selection, the MTT, the MPT and the
 * translation cache, with the registration steps a driver performs on them and the translation a DMA performs
 * through them. It knows nothing of processes: a registration receives DMA runs and an iova. It never reads a
 * clock: it counts (entries written and zapped, cache hits, misses and invalidations) and a cost model elsewhere
 * prices the counts.
 *
 * <p>Not thread safe.
 */
public final class AdapterTables
{
    private final AdapterConfig config;
    private final Mtt mtt;
    private final MptTable mpt;
    private final TranslationCache cache;
    private final int variantBits;
    private long entriesWritten;
    private long entriesZapped;

    /**
     * @param config the device's table properties.
     */
    public AdapterTables(final AdapterConfig config)
    {
        this.config = config;
        this.mtt = new Mtt(config.mtt());
        this.mpt = new MptTable(config.mpt());
        this.cache = new TranslationCache(config.cacheEntries(), config.cacheWays());
        this.variantBits = config.mpt().variantBits();
    }

    /**
     * @return the device's table properties.
     */
    public AdapterConfig config()
    {
        return config;
    }

    /**
     * @return the MTT.
     */
    public Mtt mtt()
    {
        return mtt;
    }

    /**
     * @return the MPT.
     */
    public MptTable mpt()
    {
        return mpt;
    }

    /**
     * @return the translation cache.
     */
    public TranslationCache cache()
    {
        return cache;
    }

    /**
     * Registers a pinned buffer: chooses the page size ({@code ib_umem_find_best_pgsz}), reserves MTT entries,
     * takes an MPT index and writes one MTT entry per DMA block. Any failure undoes the earlier steps.
     *
     * @param pd          protection domain number.
     * @param runs        the buffer's DMA runs (see {@link PageSizeSelector#choose}).
     * @param address     user virtual address of the buffer's first byte.
     * @param lengthBytes buffer length in bytes.
     * @param iova        the address the MR is accessed by.
     * @param access      access bits ({@link AccessFlags}).
     * @return the key, page size and MTT range.
     * @throws TableException EINVAL for access bits the kernel refuses ({@code ib_check_mr_access}), an empty buffer
     *                        or one whose end wraps, an address and iova with different offsets in their 4 KiB page,
     *                        bad runs, or when no page size of {@code page_size_cap} fits; ENOMEM when the MTT or the
     *                        MPT is full (the message names the entries asked for and the limit).
     * @throws NullPointerException when {@code runs} or one of its elements is null.
     */
    public RegisteredMr register(final int pd, final List<DmaRun> runs, final long address, final long lengthBytes,
        final long iova, final int access)
    {
        checkAccess(access);
        final long end = address + lengthBytes;
        if (lengthBytes <= 0 || Long.compareUnsigned(end, address) < 0
            || Long.compareUnsigned((end + 0xfff) & ~0xfffL, end) < 0)
        {
            throw new TableException(Errno.EINVAL, "buffer 0x" + Long.toHexString(address) + "+" + lengthBytes
                + " is empty or its page-aligned end wraps (ib_umem_get)");
        }
        if ((address & 0xfff) != (iova & 0xfff))
        {
            throw new TableException(Errno.EINVAL, "address 0x" + Long.toHexString(address) + " and iova 0x"
                + Long.toHexString(iova) + " differ in their offset within a 4 KiB page (ib_uverbs_reg_mr)");
        }
        final List<DmaRun> pages = PageSizeSelector.trim(runs, address, lengthBytes);
        final PageSizeChoice choice = PageSizeSelector.choose(pages, address, lengthBytes, iova, config.pageSizeCap());
        if (choice.pageSizeBytes() == 0)
        {
            throw new TableException(Errno.EINVAL, "no page size in page_size_cap=0x"
                + Long.toHexString(config.pageSizeCap()) + " fits iova 0x" + Long.toHexString(iova)
                + " and the buffer's physical layout");
        }
        final MttRange range = mtt.allocate(choice.blocks());
        final int key;
        try
        {
            key = mpt.allocate(MptState.VALID, pd, iova, lengthBytes, access, choice.pageShift(), range);
        }
        catch (final TableException e)
        {
            mtt.undoAllocate(range);
            throw e;
        }
        writeEntries(range, pages, address, iova, choice.pageSizeBytes());
        return new RegisteredMr(key, choice.pageSizeBytes(), range);
    }

    /** Access bits the kernel accepts for an MR: IB_ACCESS_SUPPORTED (include/rdma/ib_verbs.h). */
    private static final int SUPPORTED_ACCESS = 0xff | (1 << 8) | (1 << 9) | 0x1ff00000;

    /** {@code ib_check_mr_access}: unknown bits, or remote write or atomic without local write, are EINVAL. */
    private static void checkAccess(final int access)
    {
        if ((access & ~SUPPORTED_ACCESS) != 0)
        {
            throw new TableException(Errno.EINVAL, "access 0x" + Integer.toHexString(access) + " has bits outside "
                + "IB_ACCESS_SUPPORTED=0x" + Integer.toHexString(SUPPORTED_ACCESS));
        }
        if ((access & (AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_ATOMIC)) != 0
            && (access & AccessFlags.LOCAL_WRITE) == 0)
        {
            throw new TableException(Errno.EINVAL, "access 0x" + Integer.toHexString(access)
                + ": REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE (ib_check_mr_access)");
        }
    }

    /**
     * Deregisters an MR: its MTT entries are zapped, the translation cache drops the key and its entries, the MTT
     * range and the MPT index are freed.
     *
     * @param key the MR's key.
     * @return the number of cached entries the invalidation dropped.
     * @throws TableException EINVAL when the key names no live MR.
     */
    public long deregister(final int key)
    {
        if (!mpt.isLiveKey(key))
        {
            throw new TableException(Errno.EINVAL, "deregister: key " + MKey.toHex(key) + " names no live MR ("
                + mpt.lookup(key, 0, 0, 0, 0) + ")");
        }
        final long index = MKey.index(key, variantBits);
        final MttRange range = mpt.mttRange(index);
        mpt.release(key);
        final long dropped = cache.invalidate(index, range.firstEntry(), range.entries());
        mtt.free(range);
        entriesZapped += range.entries();
        return dropped;
    }

    /**
     * Translates an access as the NIC does: the MPT entry (through the cache), the key checks, then the MTT entry
     * of the page (through the cache). Allocates nothing and never throws.
     *
     * @param key         the key presented.
     * @param pd          the PD of the QP presenting it.
     * @param access      access bits the operation needs.
     * @param iova        first address accessed.
     * @param lengthBytes bytes accessed.
     * @return the DMA address of {@code iova} (0 or more), or the negative {@link KeyCheck#code()} of the failed
     * check: decode it with {@link KeyCheck#ofTranslation(long)}.
     */
    public long translate(final int key, final int pd, final int access, final long iova, final long lengthBytes)
    {
        final long index = MKey.index(key, variantBits);
        cache.access(TranslationCache.mptTag(index));
        final long slot = mpt.translationSlot(index, key, pd, access, iova, lengthBytes);
        if (slot < 0)
        {
            return slot;
        }
        final int shift = (int)(slot & 63);
        final long mttIndex = slot >>> 7;
        cache.access(TranslationCache.mttTag(mttIndex));
        final long pageMask = (1L << shift) - 1;
        final long raw = mtt.rawEntry(mttIndex);
        if (raw >= 0)
        {
            return KeyCheck.NOT_PRESENT.code();
        }
        final long page = raw & ~Mtt.PRESENT & ~pageMask;
        if ((slot & MptTable.SLOT_PAST_END) != 0)
        {
            // An empty access just past the last byte (rxe mr_check_range allows it) maps one past that byte.
            return page + ((iova - 1) & pageMask) + 1;
        }
        return page | (iova & pageMask);
    }

    /**
     * @param key a key.
     * @return log2 of the MR page size of the live entry the key names in all 32 bits, or -1 when none.
     */
    public int pageShift(final int key)
    {
        return mpt.pageShift(key);
    }

    /**
     * @param key  a key.
     * @param iova an address inside the MR.
     * @return the MTT index of the MR page holding {@code iova} for a live key, or -1; no check, no cache access.
     */
    public long blockIndex(final int key, final long iova)
    {
        return mpt.blockIndex(key, iova);
    }

    /**
     * The step a DMA takes when an access it already checked crosses into the next MR page: the NIC holds the MPT
     * entry for the transfer and fetches only the next MTT entry (through the translation cache).
     *
     * @param mttIndex  the MTT entry of the page entered.
     * @param pageShift log2 of the MR page size.
     * @return the DMA address of the page's first byte, or {@link KeyCheck#NOT_PRESENT}'s code when the entry was
     * zapped.
     */
    public long blockDmaAddress(final long mttIndex, final int pageShift)
    {
        cache.access(TranslationCache.mttTag(mttIndex));
        final long raw = mtt.rawEntry(mttIndex);
        if (raw >= 0)
        {
            return KeyCheck.NOT_PRESENT.code();
        }
        return raw & ~Mtt.PRESENT & ~((1L << pageShift) - 1);
    }

    /**
     * @return MTT entries written by registrations since creation.
     */
    public long entriesWritten()
    {
        return entriesWritten;
    }

    /**
     * @return MTT entries zapped by deregistrations since creation.
     */
    public long entriesZapped()
    {
        return entriesZapped;
    }

    /**
     * Writes one entry per DMA block: block b covers iova {@code [ALIGN_DOWN(iova, P) + b*P, ... + P)}, and its DMA
     * address is that of the block's first byte (the page-size choice guarantees that VA and PA agree below P and
     * that runs change only at P boundaries), as {@code rdma_umem_for_each_dma_block} yields them.
     */
    private void writeEntries(final MttRange range, final List<DmaRun> runs, final long address, final long iova,
        final long pageSize)
    {
        // Offsets are taken from the first byte of the first run (iova - pgoff), so that iovas near 2^64 cannot
        // overflow a signed comparison: every offset here lies within about one page size of the buffer.
        final long pgoff = address & 0xfff;
        final long firstBlockOffset = (iova & -pageSize) - (iova - pgoff);
        int run = 0;
        long runOffset = 0;
        for (long b = 0; b < range.entries(); b++)
        {
            final long blockOffset = firstBlockOffset + b * pageSize;
            final long probe = Math.max(blockOffset, pgoff);
            while (probe >= runOffset + runs.get(run).lengthBytes())
            {
                runOffset += runs.get(run).lengthBytes();
                run++;
            }
            final long dma = runs.get(run).dmaAddr() + (probe - runOffset) - (probe - blockOffset);
            mtt.writeEntry(range.firstEntry() + b, dma);
        }
        entriesWritten += range.entries();
    }
}
