package dev.rnicsim.mtt;

import java.util.List;
import java.util.function.LongPredicate;

/**
 * The ordinary registrations of the adapter tables: a pinned buffer's page size chosen ({@code
 * ib_umem_find_best_pgsz}), its MTT entries reserved and written, an MPT entry taken; rereg in place (PD and access,
 * or a new translation); revocation; and the part of deregistration every MR with MTT entries of its own shares.
 * The access check ({@code ib_check_mr_access}) and the MTT writer are shared with fast registration.
 *
 * <p>Part of {@link AdapterTables} ({@link AdapterTables#registrations()}), whose MTT, MPT, translation cache and
 * counts it shares. Not thread safe.
 */
public final class MrRegistrations
{
    private final AdapterConfig config;
    private final Mtt mtt;
    private final MptTable mpt;
    private final TranslationCache cache;
    private final int variantBits;
    private final TableCounters counters;
    /** True for an MPT index that holds a window, a fast-registration MR or an ODP MR: no pinned user MR. */
    private final LongPredicate otherKind;

    /**
     * @param config    the device's table properties (page_size_cap, the errno when no page size fits).
     * @param mtt       the MTT the MRs' entries are reserved in.
     * @param mpt       the MPT their entries live in.
     * @param cache     the translation cache that holds their entries.
     * @param counters  the tables' shared counts.
     * @param otherKind true for an MPT index that holds an object of another kind (window, fast-registration or
     *                  ODP MR), which rereg and revoke refuse.
     */
    MrRegistrations(final AdapterConfig config, final Mtt mtt, final MptTable mpt, final TranslationCache cache,
        final TableCounters counters, final LongPredicate otherKind)
    {
        this.config = config;
        this.mtt = mtt;
        this.mpt = mpt;
        this.cache = cache;
        this.variantBits = config.mpt().variantBits();
        this.counters = counters;
        this.otherKind = otherKind;
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
        return register(pd, runs, address, lengthBytes, iova, access, 4096);
    }

    /**
     * {@link #register(int, List, long, long, long, int)} on a host whose kernel PAGE_SIZE is
     * {@code basePageBytes}: page sizes below it are taken out of {@code page_size_cap} first
     * (drivers/infiniband/core/umem.c {@code ib_umem_find_best_pgsz}: {@code pgsz_bitmap &= GENMASK(BITS_PER_LONG -
     * 1, PAGE_SHIFT)}), so a 64 KiB-page host never gets 4 KiB MTT entries.
     *
     * @param basePageBytes the host's PAGE_SIZE: 4096 (page_size_cap as it is), 16384 or 65536.
     */
    public RegisteredMr register(final int pd, final List<DmaRun> runs, final long address, final long lengthBytes,
        final long iova, final int access, final long basePageBytes)
    {
        checkAccess(access);
        final Prepared prep = prepare(runs, address, lengthBytes, iova,
            basePageBytes <= 4096 ? config.pageSizeCap() : config.pageSizeCap() & -basePageBytes);
        final MttRange range = mtt.allocate(prep.choice().blocks());
        final int key;
        try
        {
            key = mpt.allocate(MptState.VALID, pd, iova, lengthBytes, access, prep.choice().pageShift(), range);
        }
        catch (final TableException e)
        {
            mtt.undoAllocate(range);
            throw e;
        }
        writeEntries(range, prep.pages(), address, iova, prep.choice().pageSizeBytes());
        return new RegisteredMr(key, prep.choice().pageSizeBytes(), range);
    }

    /**
     * The page size and MTT entries a registration of this buffer would get, without registering it.
     *
     * @param runs        the buffer's DMA runs.
     * @param address     its first byte.
     * @param lengthBytes its length.
     * @param iova        the iova it would be registered with.
     * @return the choice ({@link PageSizeChoice#pageSizeBytes()} 0 when no page size fits).
     * @throws TableException EINVAL as {@link #register} for an empty or wrapping buffer or mismatched offsets.
     */
    public PageSizeChoice choose(final List<DmaRun> runs, final long address, final long lengthBytes,
        final long iova)
    {
        final long end = address + lengthBytes;
        if (lengthBytes <= 0 || Long.compareUnsigned(end, address) < 0 || (address & 0xfff) != (iova & 0xfff))
        {
            throw new TableException(Errno.EINVAL, "buffer 0x" + Long.toHexString(address) + "+" + lengthBytes
                + " is empty, wraps, or differs from iova 0x" + Long.toHexString(iova) + " in its page offset"
                + " (ib_umem_get); give a non-empty buffer whose address and iova share a page offset");
        }
        return PageSizeSelector.choose(PageSizeSelector.trim(runs, address, lengthBytes), address, lengthBytes,
            iova, config.pageSizeCap());
    }

    /** A buffer's runs trimmed to it and the page size chosen for it. */
    private record Prepared(List<DmaRun> pages, PageSizeChoice choice)
    {
    }

    /** The buffer checks and the page-size choice of a registration. */
    private Prepared prepare(final List<DmaRun> runs, final long address, final long lengthBytes, final long iova,
        final long pageSizeBitmap)
    {
        final long end = address + lengthBytes;
        if (lengthBytes <= 0 || Long.compareUnsigned(end, address) < 0
            || Long.compareUnsigned((end + 0xfff) & ~0xfffL, end) < 0)
        {
            throw new TableException(Errno.EINVAL, "buffer 0x" + Long.toHexString(address) + "+" + lengthBytes
                + " is empty or its page-aligned end wraps (ib_umem_get)"
                + "; give a non-empty range that ends below 2^64");
        }
        if ((address & 0xfff) != (iova & 0xfff))
        {
            throw new TableException(Errno.EINVAL, "address 0x" + Long.toHexString(address) + " and iova 0x"
                + Long.toHexString(iova) + " differ in their offset within a 4 KiB page (ib_uverbs_reg_mr)"
                + "; give an iova with the address's page offset");
        }
        final List<DmaRun> pages = PageSizeSelector.trim(runs, address, lengthBytes);
        final PageSizeChoice choice = PageSizeSelector.choose(pages, address, lengthBytes, iova, pageSizeBitmap);
        if (choice.pageSizeBytes() == 0)
        {
            throw new TableException(config.noPageSizeErrno(), "no page size in page_size_cap=0x"
                + Long.toHexString(pageSizeBitmap) + " fits iova 0x" + Long.toHexString(iova)
                + " and the buffer's physical layout"
                + " (ib_umem_find_best_pgsz); use an iova with the address's offset in the device's smallest page size");
        }
        return new Prepared(pages, choice);
    }

    /** Access bits the kernel accepts for an MR: IB_ACCESS_SUPPORTED (include/rdma/ib_verbs.h). */
    private static final int SUPPORTED_ACCESS = 0xff | (1 << 8) | (1 << 9) | 0x1ff00000;

    /** {@code ib_check_mr_access}: unknown bits, or remote write or atomic without local write, are EINVAL. */
    static void checkAccess(final int access)
    {
        if ((access & ~SUPPORTED_ACCESS) != 0)
        {
            throw new TableException(Errno.EINVAL, "access 0x" + Integer.toHexString(access) + " has bits outside "
                + "IB_ACCESS_SUPPORTED=0x" + Integer.toHexString(SUPPORTED_ACCESS)
                + "; pass only IB_ACCESS_SUPPORTED bits");
        }
        if ((access & (AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_ATOMIC)) != 0
            && (access & AccessFlags.LOCAL_WRITE) == 0)
        {
            throw new TableException(Errno.EINVAL, "access 0x" + Integer.toHexString(access)
                + ": REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE (ib_check_mr_access)");
        }
    }

    /**
     * The part of a deregistration common to pinned, fast-registration and explicit ODP MRs: the MPT index is
     * released, the translation cache drops the key and the MR's entries, the MTT range is zapped and freed.
     *
     * @param key   the MR's key, live and not a window's.
     * @param index its MPT index.
     * @param fast  the range a fast-registration MR reserved at allocation (its variant history is forgotten too), or
     *              null for any other MR (its range is read from the MPT).
     * @return the number of cached entries the invalidation dropped.
     */
    long deregister(final int key, final long index, final MttRange fast)
    {
        final MttRange range = fast != null ? fast : mpt.mttRange(index);
        if (fast != null)
        {
            mpt.forgetHistory(key);
        }
        mpt.release(key);
        final long dropped = cache.invalidate(index, range.firstEntry(), range.entries());
        mtt.free(range);
        counters.entriesZapped += range.entries();
        return dropped;
    }

    /**
     * Zaps every MTT entry of a live pinned MR and drops its cached translation: the device stops reaching its pages
     * (a peer-memory client's invalidation of freed device memory); its key still names the MR, whose accesses now
     * fail with {@link KeyCheck#NOT_PRESENT}. The revocation counts as a key change ({@link
     * AdapterTables#keyChanges()}): a message in flight to or from the MR checks its key again at its next packet and
     * fails there, as the device fails an mkey revoked by UMR (mlx5 {@code mlx5r_umr_revoke_mr} moves the mkey to
     * the free state; MLNX_OFED's peer-memory invalidation, {@code ib_invalidate_peer_memory}, calls the driver's
     * invalidation of the umem, which revokes it).
     *
     * @param key a live MR's key.
     * @return the number of cached entries dropped.
     * @throws TableException EINVAL when the key names no live pinned user MR.
     */
    public long revoke(final int key)
    {
        final MptEntry e = liveMr(key, "revoke");
        mtt.zap(e.mtt());
        mpt.translationRevoked();
        counters.entriesZapped += e.mtt().entries();
        counters.invalidations++;
        return cache.invalidate(MKey.index(key, variantBits), e.mtt().firstEntry(), e.mtt().entries());
    }

    /**
     * Changes the PD and access of a live MR in place, its key kept ({@code mlx4_mr_hw_change_pd},
     * {@code mlx4_mr_hw_change_access}, mlx5's UMR rereg of PD and access): the cache drops the MR's entries.
     *
     * @param key    the MR's key.
     * @param pd     the new protection domain number.
     * @param access the new access bits.
     * @return the number of cached entries dropped.
     * @throws TableException EINVAL when the key names no live MR or the access is refused.
     */
    public long modify(final int key, final int pd, final int access)
    {
        final MptEntry e = liveMr(key, "rereg");
        checkAccess(access);
        mpt.rewrite(key, MKey.variant(key, variantBits), e.state(), pd, e.iova(), e.lengthBytes(), access,
            e.pageShift(), e.mtt());
        counters.invalidations++;
        return cache.invalidate(MKey.index(key, variantBits), e.mtt().firstEntry(), e.mtt().entries());
    }

    /**
     * Gives a live MR a new translation in place, its key kept (mlx4's rereg: the MPT taken to software ownership,
     * {@code mlx4_mr_rereg_mem_write}): new MTT entries are reserved and written, the entry switched to them, the
     * old ones zapped and freed. Nothing changes on failure.
     *
     * @param key         the MR's key.
     * @param pd          the protection domain number after the rereg.
     * @param runs        the new buffer's DMA runs.
     * @param address     the new buffer's first byte.
     * @param lengthBytes the new length.
     * @param iova        the new iova.
     * @param access      the access bits after the rereg.
     * @return the new registration (same key).
     * @throws TableException as {@link #register}, and EINVAL when the key names no live MR.
     */
    public RegisteredMr retranslate(final int key, final int pd, final List<DmaRun> runs, final long address,
        final long lengthBytes, final long iova, final int access)
    {
        return retranslate(key, pd, runs, address, lengthBytes, iova, access, 4096);
    }

    /**
     * {@link #retranslate(int, int, List, long, long, long, int)} on a host whose PAGE_SIZE is {@code basePageBytes}:
     * page sizes below it are not chosen ({@code ib_umem_find_best_pgsz}).
     *
     * @param basePageBytes the host's PAGE_SIZE: 4096 (page_size_cap as it is), 16384 or 65536.
     */
    public RegisteredMr retranslate(final int key, final int pd, final List<DmaRun> runs, final long address,
        final long lengthBytes, final long iova, final int access, final long basePageBytes)
    {
        final MptEntry e = liveMr(key, "rereg");
        checkAccess(access);
        final Prepared prep = prepare(runs, address, lengthBytes, iova,
            basePageBytes <= 4096 ? config.pageSizeCap() : config.pageSizeCap() & -basePageBytes);
        final MttRange range = mtt.allocate(prep.choice().blocks());
        writeEntries(range, prep.pages(), address, iova, prep.choice().pageSizeBytes());
        mpt.rewrite(key, MKey.variant(key, variantBits), e.state(), pd, iova, lengthBytes, access,
            prep.choice().pageShift(), range);
        counters.invalidations++;
        cache.invalidate(MKey.index(key, variantBits), e.mtt().firstEntry(), e.mtt().entries());
        mtt.free(e.mtt());
        counters.entriesZapped += e.mtt().entries();
        return new RegisteredMr(key, prep.choice().pageSizeBytes(), range);
    }

    private MptEntry liveMr(final int key, final String op)
    {
        final long index = MKey.index(key, variantBits);
        final MptEntry e = mpt.entry(key);
        if (e == null || otherKind.test(index))
        {
            throw new TableException(Errno.EINVAL, op + ": key " + MKey.toHex(key) + " names no live pinned user MR"
                + "; pass the key of a registered, pinned MR");
        }
        return e;
    }

    /**
     * Writes one entry per DMA block: block b covers iova {@code [ALIGN_DOWN(iova, P) + b*P, ... + P)}, and its DMA
     * address is that of the block's first byte (the page-size choice guarantees that VA and PA agree below P and
     * that runs change only at P boundaries), as {@code rdma_umem_for_each_dma_block} yields them.
     */
    void writeEntries(final MttRange range, final List<DmaRun> runs, final long address, final long iova,
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
        counters.entriesWritten += range.entries();
    }
}
