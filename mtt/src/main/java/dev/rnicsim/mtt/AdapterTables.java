package dev.rnicsim.mtt;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

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
    /** MPT index of each memory window: its type and the QP a type 2 window is bound to. */
    private final Map<Long, Window> windows = new HashMap<>();
    /** Windows bound, unbound, allocated or freed: part of {@link #keyChanges()}. */
    private long windowChanges;
    /** MPT index of each fast-registration MR: the MTT entries reserved at allocation. */
    private final Map<Long, MttRange> fastReg = new HashMap<>();
    private long windowBinds;
    private long invalidations;
    /** MPT index of each on-demand-paging MR. */
    private final Map<Long, Odp> odp = new HashMap<>();

    /** An ODP MR's bookkeeping: its page shift, and for an implicit MR the child of each 1 GiB slot. */
    private record Odp(boolean implicit, int pageShift, Map<Long, Child> children)
    {
    }

    /** One child of an implicit ODP MR: its MTT entries and how many of them are present now. */
    private static final class Child
    {
        final MttRange range;
        long present;

        Child(final MttRange range)
        {
            this.range = range;
        }
    }

    /** A memory window's bookkeeping beside its MPT entry. */
    private record Window(int type, int qpn, int mrKey)
    {
    }

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
    private Prepared prepare(final List<DmaRun> runs, final long address, final long lengthBytes, final long iova)
    {
        return prepare(runs, address, lengthBytes, iova, config.pageSizeCap());
    }

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
    private static void checkAccess(final int access)
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
                + mpt.lookup(key, 0, 0, 0, 0) + ")"
                + "; deregister each MR once, with its own key");
        }
        final long index = MKey.index(key, variantBits);
        if (windows.containsKey(index))
        {
            throw new TableException(Errno.EINVAL, "deregister: key " + MKey.toHex(key) + " names a memory window, not an"
                + " MR; free it with freeWindow");
        }
        final Odp o = odp.isEmpty() ? null : odp.remove(index);
        if (o != null && o.implicit())
        {
            long dropped = cache.invalidate(index, 0, 0);
            for (final Child c : o.children().values())
            {
                dropped += cache.invalidate(index, c.range.firstEntry(), c.range.entries());
                mtt.free(c.range);
                entriesZapped += c.present;
            }
            mpt.release(key);
            return dropped;
        }
        final boolean fast = fastReg.containsKey(index);
        final MttRange range = fast ? fastReg.remove(index) : mpt.mttRange(index);
        if (fast)
        {
            mpt.forgetHistory(key);
        }
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
        return translate(key, pd, -1, access, iova, lengthBytes);
    }

    /**
     * As {@link #translate(int, int, int, long, long)}, presented through a QP: a type 2 memory window answers only
     * the QP it is bound to ({@link KeyCheck#WRONG_QP}, checked after the PD as rxe_lookup_mw does).
     *
     * @param key         the key presented.
     * @param pd          the PD of the QP presenting it.
     * @param qpn         the number of the QP presenting it (-1: none).
     * @param access      access bits the operation needs.
     * @param iova        first address accessed.
     * @param lengthBytes bytes accessed.
     * @return the DMA address of {@code iova}, or the negative {@link KeyCheck#code()} of the failed check.
     */
    public long translate(final int key, final int pd, final int qpn, final int access, final long iova,
        final long lengthBytes)
    {
        return translate(key, pd, qpn, access, iova, lengthBytes, true);
    }

    /**
     * As {@link #translate(int, int, int, int, long, long)} for a packet after the first of a message: the key's
     * context was fetched for the first packet and stays with the QP's message state, so the MPT entry is not looked
     * up in the translation cache again; its state, range and rights still are (a key destroyed in between fails).
     *
     * @param key         the key presented.
     * @param pd          the PD of the QP presenting it.
     * @param qpn         the number of the QP presenting it (-1: none).
     * @param access      access bits the operation needs.
     * @param iova        first address accessed.
     * @param lengthBytes bytes accessed.
     * @return the DMA address of {@code iova}, or the negative {@link KeyCheck#code()} of the failed check.
     */
    public long translateInMessage(final int key, final int pd, final int qpn, final int access, final long iova,
        final long lengthBytes)
    {
        return translate(key, pd, qpn, access, iova, lengthBytes, false);
    }

    private long translate(final int key, final int pd, final int qpn, final int access, final long iova,
        final long lengthBytes, final boolean mptLookup)
    {
        final long index = MKey.index(key, variantBits);
        if (!windows.isEmpty())
        {
            final Window w = windows.get(index);
            if (w != null && w.type() == 2 && w.qpn() != qpn && mpt.isLiveKey(key)
                && mpt.entry(key).pd() == pd)
            {
                if (mptLookup)
                {
                    cache.access(TranslationCache.mptTag(index));
                }
                return KeyCheck.WRONG_QP.code();
            }
        }
        if (mptLookup)
        {
            cache.access(TranslationCache.mptTag(index));
        }
        final long slot = mpt.translationSlot(index, key, pd, access, iova, lengthBytes);
        if (slot < 0)
        {
            return slot;
        }
        int shift = (int)(slot & 63);
        long mttIndex = slot >>> 7;
        if (!odp.isEmpty())
        {
            final Odp o = odp.get(index);
            if (o != null && o.implicit())
            {
                // The parent's KSM entry of the 1 GiB slot, then the child's MTT entry of the 4 KiB page.
                final long at = (slot & MptTable.SLOT_PAST_END) != 0 ? iova - 1 : iova;
                final Child c = o.children().get(at >>> IMPLICIT_CHILD_SHIFT);
                if (c == null)
                {
                    return KeyCheck.NOT_PRESENT.code();
                }
                shift = 12;
                mttIndex = c.range.firstEntry() + ((at & ((1L << IMPLICIT_CHILD_SHIFT) - 1)) >>> 12);
            }
        }
        cache.access(TranslationCache.mttTag(mttIndex));
        final long pageMask = (1L << shift) - 1;
        final long raw = mtt.rawEntry(mttIndex);
        if (raw >= 0 || ((raw & Mtt.READ_ONLY) != 0 && (access & DEVICE_WRITES) != 0))
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
        if (!odp.isEmpty() && isImplicit(key))
        {
            return 12;
        }
        return mpt.pageShift(key);
    }

    /**
     * @param key  a key.
     * @param iova an address inside the MR.
     * @return the MTT index of the MR page holding {@code iova} for a live key, or -1; no check, no cache access.
     */
    public long blockIndex(final int key, final long iova)
    {
        if (!odp.isEmpty() && isImplicit(key))
        {
            return -1;
        }
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
     * Zaps every MTT entry of a live pinned MR and drops its cached translation: the device stops reaching its pages
     * (a peer-memory client's invalidation of freed device memory); its key still names the MR, whose accesses now
     * fail with {@link KeyCheck#NOT_PRESENT}.
     *
     * @param key a live MR's key.
     * @return the number of cached entries dropped.
     * @throws TableException EINVAL when the key names no live pinned user MR.
     */
    public long revoke(final int key)
    {
        final MptEntry e = liveMr(key, "revoke");
        mtt.zap(e.mtt());
        entriesZapped += e.mtt().entries();
        invalidations++;
        return cache.invalidate(MKey.index(key, variantBits), e.mtt().firstEntry(), e.mtt().entries());
    }

    // ------------------------------------------------------------------ on-demand paging

    /** log2 of the part of the address space one child of an implicit ODP MR covers: 1 GiB
     * ({@code MLX5_IMR_MTT_SIZE}, drivers/infiniband/hw/mlx5/odp.c). */
    public static final int IMPLICIT_CHILD_SHIFT = 30;
    /** MTT entries of one implicit child: one per 4 KiB page of its 1 GiB ({@code MLX5_IMR_MTT_ENTRIES}). */
    public static final long IMPLICIT_CHILD_ENTRIES = 1L << (IMPLICIT_CHILD_SHIFT - 12);
    /** Access bits with which the device writes memory: a read-only MTT entry faults for them. */
    private static final int DEVICE_WRITES = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE
        | AccessFlags.REMOTE_ATOMIC;

    /**
     * Registers an explicit on-demand-paging MR ({@code create_user_odp_mr}): MTT entries for every block of the
     * range and a VALID MPT entry, but no translation: every entry starts zapped, so the first access to a block
     * finds it not present ({@link KeyCheck#NOT_PRESENT}) and the driver maps it with {@link #mapOnDemand}.
     *
     * @param pd          protection domain number.
     * @param lengthBytes MR length in bytes, more than 0.
     * @param iova        first address of the MR.
     * @param access      access bits ({@link AccessFlags}).
     * @param pageShift   log2 of the MR page size: 12, or the huge-page shift of an IBV_ACCESS_HUGETLB MR.
     * @return the key, page size and MTT range.
     * @throws TableException EINVAL for refused access bits, an empty or wrapping range, or a page shift outside
     *                        12-30; ENOMEM when the MTT or the MPT is full. Nothing changes on failure.
     */
    public RegisteredMr registerOnDemand(final int pd, final long lengthBytes, final long iova, final int access,
        final int pageShift)
    {
        checkAccess(access);
        final long last = iova + lengthBytes - 1;
        if (lengthBytes <= 0 || Long.compareUnsigned(last, iova) < 0 || pageShift < 12 || pageShift > 30)
        {
            throw new TableException(Errno.EINVAL, "ODP MR iova 0x" + Long.toHexString(iova) + "+" + lengthBytes
                + " page shift " + pageShift + ": empty, wrapping, or a page shift outside 12-30"
                + "; give a non-empty range and a page shift from 12 to 30");
        }
        final long blocks = (last >>> pageShift) - (iova >>> pageShift) + 1;
        final MttRange range = mtt.allocate(blocks);
        final int key;
        try
        {
            key = mpt.allocate(MptState.VALID, pd, iova, lengthBytes, access, pageShift, range);
        }
        catch (final TableException e)
        {
            mtt.undoAllocate(range);
            throw e;
        }
        odp.put(MKey.index(key, variantBits), new Odp(false, pageShift, null));
        return new RegisteredMr(key, 1L << pageShift, range);
    }

    /**
     * Registers an implicit ODP MR over the first {@code lengthBytes} of the address space, iova 0
     * ({@code mlx5_ib_alloc_implicit_mr}): a parent entry whose 1 GiB slots point at no child yet and no MTT entries
     * of its own (the parent is an indirect KSM mkey). A child with {@link #IMPLICIT_CHILD_ENTRIES} MTT entries is
     * created by the first {@link #mapOnDemand} in its slot and freed when its last entry is zapped.
     *
     * @param pd          protection domain number.
     * @param lengthBytes bytes of address space covered (the user address space), more than 0.
     * @param access      access bits.
     * @return the key.
     * @throws TableException EINVAL for refused access bits or a non-positive length; ENOMEM when the MPT is full.
     */
    public int registerImplicit(final int pd, final long lengthBytes, final int access)
    {
        checkAccess(access);
        if (lengthBytes <= 0)
        {
            throw new TableException(Errno.EINVAL, "implicit ODP MR length " + lengthBytes + " must be positive"
                + "; give a length of one byte or more");
        }
        final int key = mpt.allocate(MptState.VALID, pd, 0, lengthBytes, access, IMPLICIT_CHILD_SHIFT,
            new MttRange(0, 0, 0));
        odp.put(MKey.index(key, variantBits), new Odp(true, 12, new HashMap<>()));
        return key;
    }

    /**
     * @return true when any on-demand-paging MR is live.
     */
    public boolean hasOnDemand()
    {
        return !odp.isEmpty();
    }

    /**
     * A count that moves whenever the answer of {@link #check} for some key may change: an MPT entry created, freed,
     * rewritten (bind, rereg, fast registration) or moved between VALID and INVALID, or a window's binding changed.
     * While it stays the same, a check that passed for a range passes again for every part of that range: the DMA
     * engine checks a message's keys again per packet only when it moved (a key retired mid-message still fails the
     * next packet).
     *
     * @return the count, only ever growing.
     */
    public long keyChanges()
    {
        return mpt.changes() + windowChanges;
    }

    /**
     * The key checks of {@link #translate(int, int, int, int, long, long)} without the translation cache (nothing
     * is counted): what a driver asks of a key before acting for it.
     *
     * @param key         the key.
     * @param pd          the PD presenting it.
     * @param qpn         the QP presenting it (-1: none).
     * @param access      access bits needed.
     * @param iova        first address.
     * @param lengthBytes bytes.
     * @return VALID, the failed check, or NOT_PRESENT when the checks pass but the first block is not mapped.
     */
    public KeyCheck check(final int key, final int pd, final int qpn, final int access, final long iova,
        final long lengthBytes)
    {
        final long index = MKey.index(key, variantBits);
        final Window w = windows.isEmpty() ? null : windows.get(index);
        if (w != null && w.type() == 2 && w.qpn() != qpn && mpt.isLiveKey(key) && mpt.entry(key).pd() == pd)
        {
            return KeyCheck.WRONG_QP;
        }
        final long slot = mpt.translationSlot(index, key, pd, access, iova, lengthBytes);
        return slot < 0 ? KeyCheck.ofTranslation(slot) : KeyCheck.VALID;
    }

    /**
     * @param key a key.
     * @return true when it names a live on-demand-paging MR in all its bits.
     */
    public boolean isOnDemand(final int key)
    {
        return !odp.isEmpty() && odp.containsKey(MKey.index(key, variantBits)) && mpt.isLiveKey(key);
    }

    /**
     * @param key a key.
     * @return true when it names a live implicit ODP MR.
     */
    public boolean isImplicit(final int key)
    {
        final Odp o = odp.isEmpty() ? null : odp.get(MKey.index(key, variantBits));
        return o != null && o.implicit() && mpt.isLiveKey(key);
    }

    /**
     * Finds the first byte of a range of an ODP MR whose block the device cannot access now: not present, or
     * read-only for a write. Reads the table only (no cache access): it stands for the device meeting the missing
     * entry while it walks the range.
     *
     * @param key         a live ODP MR's key.
     * @param iova        first address, inside the MR.
     * @param lengthBytes bytes, more than 0, inside the MR.
     * @param write       the access writes.
     * @return the first such address (at least {@code iova}), or -1 when every block is mapped for the access.
     * @throws TableException EINVAL when the key names no live ODP MR.
     */
    public long firstUnmapped(final int key, final long iova, final long lengthBytes, final boolean write)
    {
        final Odp o = odpMr(key, "fault");
        final long end = iova + lengthBytes;
        if (o.implicit())
        {
            long page = iova & ~0xfffL;
            while (Long.compareUnsigned(page, end) < 0)
            {
                final Child c = o.children().get(page >>> IMPLICIT_CHILD_SHIFT);
                if (c == null || !usable(mtt.rawEntry(c.range.firstEntry()
                    + ((page & ((1L << IMPLICIT_CHILD_SHIFT) - 1)) >>> 12)), write))
                {
                    return Math.max(page, iova);
                }
                page += 4096;
            }
            return -1;
        }
        final MptEntry e = mpt.entry(key);
        final int shift = o.pageShift();
        final long firstBlock = (iova >>> shift) - (e.iova() >>> shift);
        final long lastBlock = ((end - 1) >>> shift) - (e.iova() >>> shift);
        for (long b = firstBlock; b <= lastBlock; b++)
        {
            if (!usable(mtt.rawEntry(e.mtt().firstEntry() + b), write))
            {
                return Math.max(((e.iova() >>> shift) + b) << shift, iova);
            }
        }
        return -1;
    }

    /**
     * What the device would reach for one address of an ODP MR now, read from the tables without the cache (for
     * inspection; counts nothing).
     *
     * @param key  a live ODP MR's key.
     * @param iova an address inside the MR.
     * @return the DMA address, or -1 when the block is not mapped.
     * @throws TableException EINVAL when the key names no live ODP MR.
     */
    public long mappedDmaAddress(final int key, final long iova)
    {
        final Odp o = odpMr(key, "peek");
        final MptEntry e = mpt.entry(key);
        final long raw;
        final long mask;
        if (o.implicit())
        {
            final Child c = o.children().get(iova >>> IMPLICIT_CHILD_SHIFT);
            raw = c == null ? 0 : mtt.rawEntry(c.range.firstEntry()
                + ((iova & ((1L << IMPLICIT_CHILD_SHIFT) - 1)) >>> 12));
            mask = 0xfff;
        }
        else
        {
            if (Long.compareUnsigned(iova - e.iova(), e.lengthBytes()) >= 0)
            {
                return -1;
            }
            raw = mtt.rawEntry(e.mtt().firstEntry() + (iova >>> o.pageShift()) - (e.iova() >>> o.pageShift()));
            mask = (1L << o.pageShift()) - 1;
        }
        return raw >= 0 ? -1 : (raw & ~Mtt.PRESENT & ~mask) | (iova & mask);
    }

    private static boolean usable(final long raw, final boolean write)
    {
        return raw < 0 && (!write || (raw & Mtt.READ_ONLY) == 0);
    }

    /**
     * Maps the block holding {@code iova} of an ODP MR (the UMR a page fault or prefetch posts,
     * {@code mlx5r_umr_update_xlt}); for an implicit MR the child of the slot is created first
     * ({@code implicit_get_child_mr}).
     *
     * @param key      a live ODP MR's key.
     * @param iova     an address inside the MR.
     * @param dmaAddr  the DMA address of the block's first byte, aligned to the MR page size.
     * @param writable the device may write through it.
     * @return true when the entry changed (it was not present, was read-only, or pointed elsewhere).
     * @throws TableException EINVAL when the key names no live ODP MR or iova lies outside it; ENOMEM when an
     *                        implicit child's MTT entries cannot be allocated.
     */
    public boolean mapOnDemand(final int key, final long iova, final long dmaAddr, final boolean writable)
    {
        final Odp o = odpMr(key, "map");
        final MptEntry e = mpt.entry(key);
        if (Long.compareUnsigned(iova - e.iova(), e.lengthBytes()) >= 0 || dmaAddr < 0)
        {
            throw new TableException(Errno.EINVAL, "map: iova 0x" + Long.toHexString(iova) + " is outside the MR 0x"
                + Long.toHexString(e.iova()) + "+" + e.lengthBytes() + " or DMA address 0x"
                + Long.toHexString(dmaAddr) + " is negative"
                + "; map only addresses inside the MR");
        }
        final long index;
        Child child = null;
        if (o.implicit())
        {
            final long slot = iova >>> IMPLICIT_CHILD_SHIFT;
            child = o.children().get(slot);
            if (child == null)
            {
                child = new Child(mtt.allocate(IMPLICIT_CHILD_ENTRIES));
                o.children().put(slot, child);
            }
            index = child.range.firstEntry() + ((iova & ((1L << IMPLICIT_CHILD_SHIFT) - 1)) >>> 12);
        }
        else
        {
            index = e.mtt().firstEntry() + (iova >>> o.pageShift()) - (e.iova() >>> o.pageShift());
        }
        final long shiftMask = (1L << (o.implicit() ? 12 : o.pageShift())) - 1;
        final long before = mtt.rawEntry(index);
        final long after = (dmaAddr & ~shiftMask) | Mtt.PRESENT | (writable ? 0 : Mtt.READ_ONLY);
        if (before == after)
        {
            return false;
        }
        if (before != 0)
        {
            // A read-only entry upgraded, or a stale one replaced: the device must not keep the old one cached.
            cache.invalidate(MKey.index(key, variantBits), index, 1);
        }
        else if (child != null)
        {
            child.present++;
        }
        mtt.writeEntry(index, dmaAddr & ~shiftMask, !writable);
        entriesWritten++;
        return true;
    }

    /**
     * Zaps the blocks of an ODP MR that overlap {@code [iova, iova + lengthBytes)} (the invalidation an MMU
     * notifier runs, {@code mlx5_ib_invalidate_range}: MTT entries zeroed by UMR, then the translation cache
     * invalidated). An implicit child left with no present entry is freed.
     *
     * @param key         a live ODP MR's key.
     * @param iova        first address; the range is clipped to the MR.
     * @param lengthBytes bytes.
     * @return the number of present entries zapped (0 when none was: then nothing is posted and the cache is not
     * touched).
     * @throws TableException EINVAL when the key names no live ODP MR.
     */
    public long zapOnDemand(final int key, final long iova, final long lengthBytes)
    {
        final Odp o = odpMr(key, "zap");
        final MptEntry e = mpt.entry(key);
        final long start = Math.max(iova, e.iova());
        final long end = Math.min(iova + lengthBytes, e.iova() + e.lengthBytes());
        if (lengthBytes <= 0 || start >= end)
        {
            return 0;
        }
        final long mptIndex = MKey.index(key, variantBits);
        long zapped = 0;
        if (o.implicit())
        {
            for (long slot = start >>> IMPLICIT_CHILD_SHIFT; slot <= (end - 1) >>> IMPLICIT_CHILD_SHIFT; slot++)
            {
                final Child c = o.children().get(slot);
                if (c == null)
                {
                    continue;
                }
                final long slotBase = slot << IMPLICIT_CHILD_SHIFT;
                final long from = (Math.max(start, slotBase) - slotBase) >>> 12;
                final long to = ((Math.min(end, slotBase + (1L << IMPLICIT_CHILD_SHIFT)) - 1 - slotBase) >>> 12) + 1;
                final long n = mtt.zapEntries(c.range.firstEntry() + from, to - from);
                if (n > 0)
                {
                    cache.invalidate(mptIndex, c.range.firstEntry() + from, to - from);
                    c.present -= n;
                    zapped += n;
                }
                if (c.present == 0)
                {
                    // An implicit child left empty is destroyed (mlx5 schedules destroy_unused_implicit_child_mr).
                    cache.invalidate(mptIndex, c.range.firstEntry(), c.range.entries());
                    mtt.free(c.range);
                    o.children().remove(slot);
                }
            }
        }
        else
        {
            final int shift = o.pageShift();
            final long first = (start >>> shift) - (e.iova() >>> shift);
            final long count = ((end - 1) >>> shift) - (e.iova() >>> shift) - first + 1;
            zapped = mtt.zapEntries(e.mtt().firstEntry() + first, count);
            if (zapped > 0)
            {
                cache.invalidate(mptIndex, e.mtt().firstEntry() + first, count);
            }
        }
        if (zapped > 0)
        {
            invalidations++;
            entriesZapped += zapped;
        }
        return zapped;
    }

    /**
     * @param key a live implicit ODP MR's key.
     * @return its children now (1 GiB slots with MTT entries).
     * @throws TableException EINVAL when the key names no live implicit ODP MR.
     */
    public int implicitChildren(final int key)
    {
        final Odp o = odpMr(key, "children");
        if (!o.implicit())
        {
            throw new TableException(Errno.EINVAL, "children: key " + MKey.toHex(key) + " names an explicit ODP MR"
                + " (only an implicit ODP MR has children); pass the key of an implicit ODP MR");
        }
        return o.children().size();
    }

    /**
     * @param key  a live implicit ODP MR's key.
     * @param slot a 1 GiB slot number (address >> 30).
     * @return true when the slot has a child now.
     * @throws TableException EINVAL when the key names no live ODP MR.
     */
    public boolean hasImplicitChild(final int key, final long slot)
    {
        final Odp o = odpMr(key, "child");
        return o.implicit() && o.children().containsKey(slot);
    }

    private Odp odpMr(final int key, final String op)
    {
        final Odp o = odp.isEmpty() ? null : odp.get(MKey.index(key, variantBits));
        if (o == null || !mpt.isLiveKey(key))
        {
            throw new TableException(Errno.EINVAL, op + ": key " + MKey.toHex(key) + " names no live ODP MR"
                + "; pass the key of a live ODP MR");
        }
        return o;
    }

    // ------------------------------------------------------------------ memory windows

    /**
     * Allocates a memory window: an MPT entry of its own (so its key shares the MR key space and layout), unbound:
     * state INVALID, length 0, no rights, no MTT entries ({@code mlx4_mw_alloc}, {@code rxe_alloc_mw}).
     *
     * @param pd   protection domain number.
     * @param type 1 or 2.
     * @return the window's key (its rkey).
     * @throws TableException EINVAL for another type; ENOMEM when the MPT is full.
     */
    public int allocateWindow(final int pd, final int type)
    {
        if (type != 1 && type != 2)
        {
            throw new TableException(Errno.EINVAL, "memory window type " + type + ": expected 1 or 2"
                + "; give type 1 or type 2");
        }
        // A window is no MR-cache object: under RECYCLED keys it must not take the last MR's key at its index.
        final int key = mpt.allocate(MptState.INVALID, pd, 0, 1, 0, 12, new MttRange(0, 0, 0), true);
        final int unbound = mpt.rewrite(key, MKey.variant(key, variantBits), MptState.INVALID, pd, 0, 0, 0, 12,
            new MttRange(0, 0, 0));
        windows.put(MKey.index(unbound, variantBits), new Window(type, -1, 0));
        windowChanges++;
        return unbound;
    }

    /**
     * @param key a key.
     * @return true when it names a live memory window in all its bits.
     */
    public boolean isWindow(final int key)
    {
        return mpt.isLiveKey(key) && windows.containsKey(MKey.index(key, variantBits));
    }

    /**
     * Binds a window to a range of a live MR, or unbinds it ({@code lengthBytes} 0), under a new key: the window's
     * index with the new key's variant ({@code ibv_inc_rkey} for type 1, the consumer's byte for type 2). The
     * window's entry then translates through the MR's MTT entries (VA-based: {@code iova} is an address of the
     * MR's iova space). The old key stops validating and the cache drops the window's entry. The semantic checks of
     * a bind (rights, MW_BIND, bounds, state) are the caller's; these are the table's own.
     *
     * @param mwKey       the window's current key.
     * @param newKey      the window's key after the bind: same index.
     * @param mrKey       the MR's key (ignored when unbinding).
     * @param qpn         the QP a type 2 window is bound to (-1 for type 1).
     * @param iova        first address of the window, in the MR's iova space.
     * @param lengthBytes window length in bytes; 0 unbinds.
     * @param access      the window's rights ({@link AccessFlags} remote bits).
     * @return the number of cached entries the bind dropped.
     * @throws TableException EINVAL when mwKey names no live window, newKey has another index, mrKey names no
     *                        live MR, or the range is outside the MR.
     */
    public long bindWindow(final int mwKey, final int newKey, final int mrKey, final int qpn, final long iova,
        final long lengthBytes, final int access)
    {
        final long index = MKey.index(mwKey, variantBits);
        final Window w = windows.get(index);
        if (w == null || !mpt.isLiveKey(mwKey))
        {
            throw new TableException(Errno.EINVAL, "bind: key " + MKey.toHex(mwKey) + " names no live window"
                + "; bind a window that is allocated and not yet freed");
        }
        if (MKey.index(newKey, variantBits) != index)
        {
            throw new TableException(Errno.EINVAL, "bind: new key " + MKey.toHex(newKey) + " must keep the index of "
                + MKey.toHex(mwKey) + " (only the low byte may change)"
                + "; give a key of the same index");
        }
        final MptEntry mw = mpt.entry(mwKey);
        MptEntry mr = null;
        if (lengthBytes != 0)
        {
            mr = mpt.isLiveKey(mrKey) && !windows.containsKey(MKey.index(mrKey, variantBits)) ? mpt.entry(mrKey) : null;
            if (mr == null)
            {
                throw new TableException(Errno.EINVAL, "bind: key " + MKey.toHex(mrKey) + " names no live MR"
                    + "; bind to a registered MR");
            }
            final long offset = iova - mr.iova();
            if (lengthBytes < 0 || Long.compareUnsigned(offset, mr.lengthBytes()) >= 0
                || Long.compareUnsigned(lengthBytes, mr.lengthBytes() - offset) > 0)
            {
                throw new TableException(Errno.EINVAL, "bind: window 0x" + Long.toHexString(iova) + "+" + lengthBytes
                    + " is outside the MR 0x" + Long.toHexString(mr.iova()) + "+" + mr.lengthBytes()
                    + "; bind a range inside the MR");
            }
        }
        final long dropped = cache.invalidate(index, 0, 0);
        invalidations++;
        windowBinds++;
        if (lengthBytes == 0)
        {
            mpt.rewrite(mwKey, MKey.variant(newKey, variantBits), MptState.INVALID, mw.pd(), 0, 0, 0, 12,
                new MttRange(0, 0, 0));
            windows.put(index, new Window(w.type(), -1, 0));
            windowChanges++;
            return dropped;
        }
        final int shift = mr.pageShift();
        final long first = mr.mtt().firstEntry() + (iova >>> shift) - (mr.iova() >>> shift);
        mpt.rewrite(mwKey, MKey.variant(newKey, variantBits), MptState.VALID, mw.pd(), iova, lengthBytes, access,
            shift, new MttRange(first, 0, 0));
        windows.put(index, new Window(w.type(), w.type() == 2 ? qpn : -1, mrKey));
        windowChanges++;
        return dropped;
    }

    /**
     * Invalidates a bound window (LOCAL_INV or a received SEND_WITH_INV of a type 2 window, {@code
     * rxe_invalidate_mw}): state INVALID, its key unchanged, the cache drops its entry.
     *
     * @param mwKey the window's key.
     * @return the number of cached entries dropped.
     * @throws TableException EINVAL when mwKey names no live window.
     */
    public long invalidateWindow(final int mwKey)
    {
        final long index = MKey.index(mwKey, variantBits);
        final Window w = windows.get(index);
        if (w == null || !mpt.isLiveKey(mwKey))
        {
            throw new TableException(Errno.EINVAL, "invalidate: key " + MKey.toHex(mwKey) + " names no live window"
                + "; invalidate a window that is allocated and not yet freed");
        }
        final MptEntry mw = mpt.entry(mwKey);
        mpt.rewrite(mwKey, MKey.variant(mwKey, variantBits), MptState.INVALID, mw.pd(), 0, 0, 0, 12,
            new MttRange(0, 0, 0));
        windows.put(index, new Window(w.type(), -1, 0));
        windowChanges++;
        invalidations++;
        return cache.invalidate(index, 0, 0);
    }

    /**
     * Frees a window's MPT entry (dealloc): its key stops validating.
     *
     * @param mwKey the window's key.
     * @return the number of cached entries dropped.
     * @throws TableException EINVAL when mwKey names no live window.
     */
    public long freeWindow(final int mwKey)
    {
        final long index = MKey.index(mwKey, variantBits);
        if (!windows.containsKey(index) || !mpt.isLiveKey(mwKey))
        {
            throw new TableException(Errno.EINVAL, "free: key " + MKey.toHex(mwKey) + " names no live window"
                + "; free each window once");
        }
        windows.remove(index);
        windowChanges++;
        mpt.forgetHistory(mwKey);
        mpt.release(mwKey);
        invalidations++;
        return cache.invalidate(index, 0, 0);
    }

    // ------------------------------------------------------------------ fast registration and rereg

    /**
     * Allocates a fast-registration MR ({@code ib_alloc_mr(IB_MR_TYPE_MEM_REG, max_num_sg)}): MTT entries for
     * {@code maxPages} pages reserved now, the MPT entry INVALID (rxe's FREE) until a REG_MR work request.
     *
     * @param pd       protection domain number.
     * @param maxPages the most pages one registration may map, at least 1.
     * @return the MR's key.
     * @throws TableException EINVAL for maxPages below 1; ENOMEM when the MTT or the MPT is full.
     */
    public int allocateFastReg(final int pd, final long maxPages)
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
    public long fastRegister(final int key, final int newKey, final List<DmaRun> runs, final long address,
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
        checkAccess(access);
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
        writeEntries(used, pages, address, iova, 4096);
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
    public long invalidateFastReg(final int key)
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
        invalidations++;
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
        invalidations++;
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
        invalidations++;
        cache.invalidate(MKey.index(key, variantBits), e.mtt().firstEntry(), e.mtt().entries());
        mtt.free(e.mtt());
        entriesZapped += e.mtt().entries();
        return new RegisteredMr(key, prep.choice().pageSizeBytes(), range);
    }

    private MptEntry liveMr(final int key, final String op)
    {
        final long index = MKey.index(key, variantBits);
        final MptEntry e = mpt.entry(key);
        if (e == null || windows.containsKey(index) || fastReg.containsKey(index) || odp.containsKey(index))
        {
            throw new TableException(Errno.EINVAL, op + ": key " + MKey.toHex(key) + " names no live pinned user MR"
                + "; pass the key of a registered, pinned MR");
        }
        return e;
    }

    /**
     * @return live memory windows (they hold MPT entries too).
     */
    public int windowCount()
    {
        return windows.size();
    }

    /**
     * @return window binds and unbinds since creation.
     */
    public long windowBinds()
    {
        return windowBinds;
    }

    /**
     * @return invalidations of keys other than deregistrations (binds, LOCAL_INV, rereg, window frees).
     */
    public long invalidations()
    {
        return invalidations;
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
