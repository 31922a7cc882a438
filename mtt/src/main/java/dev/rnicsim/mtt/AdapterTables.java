package dev.rnicsim.mtt;

import java.util.List;

/**
 * The adapter's translation and protection tables together: page-size selection, the MTT, the MPT and the
 * translation cache, with the registration steps a driver performs on them and the translation a DMA performs
 * through them. It knows nothing of processes: a registration receives DMA runs and an iova. It never reads a
 * clock: it counts (entries written and zapped, cache hits, misses and invalidations) and a cost model elsewhere
 * prices the counts.
 *
 * <p>The registration steps live in one part per kind of object, each sharing this class's tables and counts, and
 * this class is their facade: {@link MrRegistrations} (pinned MRs: register, rereg, revoke), {@link MemoryWindows}
 * (allocate, bind, invalidate, free), {@link FastRegistrations} (ib_alloc_mr, REG_MR, LOCAL_INV) and
 * {@link OnDemandPaging} (explicit and implicit ODP MRs: map, zap); the translation a DMA performs and the key checks
 * every kind shares live in {@link KeyTranslation}. Deregistration and the counts stay here. Each delegating method
 * has the contract of the part's method it names.
 *
 * <p>Not thread safe.
 */
public final class AdapterTables
{
    /** log2 of the part of the address space one child of an implicit ODP MR covers: 1 GiB
     * ({@link OnDemandPaging#IMPLICIT_CHILD_SHIFT}). */
    public static final int IMPLICIT_CHILD_SHIFT = OnDemandPaging.IMPLICIT_CHILD_SHIFT;
    /** MTT entries of one implicit child ({@link OnDemandPaging#IMPLICIT_CHILD_ENTRIES}). */
    public static final long IMPLICIT_CHILD_ENTRIES = OnDemandPaging.IMPLICIT_CHILD_ENTRIES;

    private final AdapterConfig config;
    private final Mtt mtt;
    private final MptTable mpt;
    private final TranslationCache cache;
    private final int variantBits;
    private final TableCounters counters = new TableCounters();
    private final MrRegistrations registrations;
    private final MemoryWindows windows;
    private final FastRegistrations fastReg;
    private final OnDemandPaging odp;
    private final KeyTranslation translation;

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
        this.windows = new MemoryWindows(mpt, cache, variantBits, counters);
        this.odp = new OnDemandPaging(mtt, mpt, cache, variantBits, counters);
        this.registrations = new MrRegistrations(config, mtt, mpt, cache, counters, this::holdsOtherKind);
        this.fastReg = new FastRegistrations(mtt, mpt, cache, variantBits, counters, registrations);
        this.translation = new KeyTranslation(mtt, mpt, cache, variantBits, windows, odp);
    }

    /** True for an MPT index that holds a window, a fast-registration MR or an ODP MR: no pinned user MR. */
    private boolean holdsOtherKind(final long index)
    {
        return windows.holds(index) || fastReg.holds(index) || odp.holds(index);
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
     * @return the pinned MRs' registration steps.
     */
    public MrRegistrations registrations()
    {
        return registrations;
    }

    /**
     * @return the memory windows.
     */
    public MemoryWindows windows()
    {
        return windows;
    }

    /**
     * @return the fast-registration MRs.
     */
    public FastRegistrations fastRegistrations()
    {
        return fastReg;
    }

    /**
     * @return the on-demand-paging MRs.
     */
    public OnDemandPaging onDemand()
    {
        return odp;
    }

    // ------------------------------------------------------------------ registration, deregistration, translation

    /**
     * Registers a pinned buffer: {@link MrRegistrations#register(int, List, long, long, long, int)}.
     */
    public RegisteredMr register(final int pd, final List<DmaRun> runs, final long address, final long lengthBytes,
        final long iova, final int access)
    {
        return registrations.register(pd, runs, address, lengthBytes, iova, access);
    }

    /**
     * Registers a pinned buffer on a host of another PAGE_SIZE:
     * {@link MrRegistrations#register(int, List, long, long, long, int, long)}.
     */
    public RegisteredMr register(final int pd, final List<DmaRun> runs, final long address, final long lengthBytes,
        final long iova, final int access, final long basePageBytes)
    {
        return registrations.register(pd, runs, address, lengthBytes, iova, access, basePageBytes);
    }

    /**
     * The page size and MTT entries a registration would get: {@link MrRegistrations#choose}.
     */
    public PageSizeChoice choose(final List<DmaRun> runs, final long address, final long lengthBytes,
        final long iova)
    {
        return registrations.choose(runs, address, lengthBytes, iova);
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
        if (windows.holds(index))
        {
            throw new TableException(Errno.EINVAL, "deregister: key " + MKey.toHex(key) + " names a memory window, not an"
                + " MR; free it with freeWindow");
        }
        final long implicitDropped = odp.forget(key, index);
        if (implicitDropped >= 0)
        {
            return implicitDropped;
        }
        return registrations.deregister(key, index, fastReg.forget(index));
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
        return translation.translate(key, pd, qpn, access, iova, lengthBytes, true);
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
        return translation.translate(key, pd, qpn, access, iova, lengthBytes, false);
    }

    /**
     * @param key a key.
     * @return log2 of the MR page size of the live entry the key names in all 32 bits, or -1 when none.
     */
    public int pageShift(final int key)
    {
        if (odp.any() && odp.isImplicit(key))
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
        if (odp.any() && odp.isImplicit(key))
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
        return translation.blockDmaAddress(mttIndex, pageShift);
    }

    /**
     * Zaps a live pinned MR's translation: {@link MrRegistrations#revoke}.
     */
    public long revoke(final int key)
    {
        return registrations.revoke(key);
    }

    /**
     * Changes a live MR's PD and access in place: {@link MrRegistrations#modify}.
     */
    public long modify(final int key, final int pd, final int access)
    {
        return registrations.modify(key, pd, access);
    }

    /**
     * Gives a live MR a new translation in place:
     * {@link MrRegistrations#retranslate(int, int, List, long, long, long, int)}.
     */
    public RegisteredMr retranslate(final int key, final int pd, final List<DmaRun> runs, final long address,
        final long lengthBytes, final long iova, final int access)
    {
        return registrations.retranslate(key, pd, runs, address, lengthBytes, iova, access);
    }

    /**
     * Gives a live MR a new translation on a host of another PAGE_SIZE:
     * {@link MrRegistrations#retranslate(int, int, List, long, long, long, int, long)}.
     */
    public RegisteredMr retranslate(final int key, final int pd, final List<DmaRun> runs, final long address,
        final long lengthBytes, final long iova, final int access, final long basePageBytes)
    {
        return registrations.retranslate(key, pd, runs, address, lengthBytes, iova, access, basePageBytes);
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
        return mpt.changes() + windows.changes();
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
        return translation.check(key, pd, qpn, access, iova, lengthBytes);
    }

    // ------------------------------------------------------------------ on-demand paging

    /**
     * Registers an explicit ODP MR: {@link OnDemandPaging#register}.
     */
    public RegisteredMr registerOnDemand(final int pd, final long lengthBytes, final long iova, final int access,
        final int pageShift)
    {
        return odp.register(pd, lengthBytes, iova, access, pageShift);
    }

    /**
     * Registers an implicit ODP MR: {@link OnDemandPaging#registerImplicit}.
     */
    public int registerImplicit(final int pd, final long lengthBytes, final int access)
    {
        return odp.registerImplicit(pd, lengthBytes, access);
    }

    /**
     * @return true when any on-demand-paging MR is live ({@link OnDemandPaging#any}).
     */
    public boolean hasOnDemand()
    {
        return odp.any();
    }

    /**
     * @return true when the key names a live ODP MR in all its bits ({@link OnDemandPaging#isOnDemand}).
     */
    public boolean isOnDemand(final int key)
    {
        return odp.isOnDemand(key);
    }

    /**
     * @return true when the key names a live implicit ODP MR ({@link OnDemandPaging#isImplicit}).
     */
    public boolean isImplicit(final int key)
    {
        return odp.isImplicit(key);
    }

    /**
     * The first byte of a range of an ODP MR the device cannot access now: {@link OnDemandPaging#firstUnmapped}.
     */
    public long firstUnmapped(final int key, final long iova, final long lengthBytes, final boolean write)
    {
        return odp.firstUnmapped(key, iova, lengthBytes, write);
    }

    /**
     * What the device would reach for one address of an ODP MR now: {@link OnDemandPaging#mappedDmaAddress}.
     */
    public long mappedDmaAddress(final int key, final long iova)
    {
        return odp.mappedDmaAddress(key, iova);
    }

    /**
     * Maps the block holding {@code iova} of an ODP MR: {@link OnDemandPaging#map}.
     */
    public boolean mapOnDemand(final int key, final long iova, final long dmaAddr, final boolean writable)
    {
        return odp.map(key, iova, dmaAddr, writable);
    }

    /**
     * Zaps the blocks of an ODP MR that overlap a range: {@link OnDemandPaging#zap}.
     */
    public long zapOnDemand(final int key, final long iova, final long lengthBytes)
    {
        return odp.zap(key, iova, lengthBytes);
    }

    /**
     * The children of an implicit ODP MR now: {@link OnDemandPaging#implicitChildren}.
     */
    public int implicitChildren(final int key)
    {
        return odp.implicitChildren(key);
    }

    /**
     * Whether a 1 GiB slot of an implicit ODP MR has a child now: {@link OnDemandPaging#hasImplicitChild}.
     */
    public boolean hasImplicitChild(final int key, final long slot)
    {
        return odp.hasImplicitChild(key, slot);
    }

    // ------------------------------------------------------------------ memory windows

    /**
     * Allocates a memory window: {@link MemoryWindows#allocate}.
     */
    public int allocateWindow(final int pd, final int type)
    {
        return windows.allocate(pd, type);
    }

    /**
     * @return true when the key names a live memory window in all its bits ({@link MemoryWindows#isWindow}).
     */
    public boolean isWindow(final int key)
    {
        return windows.isWindow(key);
    }

    /**
     * Binds a window to a range of a live MR, or unbinds it: {@link MemoryWindows#bind}.
     */
    public long bindWindow(final int mwKey, final int newKey, final int mrKey, final int qpn, final long iova,
        final long lengthBytes, final int access)
    {
        return windows.bind(mwKey, newKey, mrKey, qpn, iova, lengthBytes, access);
    }

    /**
     * Invalidates a bound window: {@link MemoryWindows#invalidate}.
     */
    public long invalidateWindow(final int mwKey)
    {
        return windows.invalidate(mwKey);
    }

    /**
     * Frees a window's MPT entry: {@link MemoryWindows#free}.
     */
    public long freeWindow(final int mwKey)
    {
        return windows.free(mwKey);
    }

    /**
     * @return live memory windows ({@link MemoryWindows#count}).
     */
    public int windowCount()
    {
        return windows.count();
    }

    /**
     * @return window binds and unbinds since creation ({@link MemoryWindows#binds}).
     */
    public long windowBinds()
    {
        return windows.binds();
    }

    // ------------------------------------------------------------------ fast registration

    /**
     * Allocates a fast-registration MR: {@link FastRegistrations#allocate}.
     */
    public int allocateFastReg(final int pd, final long maxPages)
    {
        return fastReg.allocate(pd, maxPages);
    }

    /**
     * Executes a REG_MR work request: {@link FastRegistrations#register}.
     */
    public long fastRegister(final int key, final int newKey, final List<DmaRun> runs, final long address,
        final long lengthBytes, final long iova, final int access)
    {
        return fastReg.register(key, newKey, runs, address, lengthBytes, iova, access);
    }

    /**
     * Invalidates a fast-registration MR: {@link FastRegistrations#invalidate}.
     */
    public long invalidateFastReg(final int key)
    {
        return fastReg.invalidate(key);
    }

    /**
     * @return true when the key names a live fast-registration MR in all its bits
     * ({@link FastRegistrations#isFastReg}).
     */
    public boolean isFastReg(final int key)
    {
        return fastReg.isFastReg(key);
    }

    // ------------------------------------------------------------------ counts

    /**
     * @return invalidations of keys other than deregistrations (binds, LOCAL_INV, rereg, window frees).
     */
    public long invalidations()
    {
        return counters.invalidations;
    }

    /**
     * @return MTT entries written by registrations since creation.
     */
    public long entriesWritten()
    {
        return counters.entriesWritten;
    }

    /**
     * @return MTT entries zapped by deregistrations since creation.
     */
    public long entriesZapped()
    {
        return counters.entriesZapped;
    }
}
