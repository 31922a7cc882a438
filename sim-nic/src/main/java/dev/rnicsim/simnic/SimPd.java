package dev.rnicsim.simnic;

import dev.rnicsim.mtt.DmaRun;
import dev.rnicsim.mtt.RegisteredMr;
import dev.rnicsim.mtt.TableException;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.PhysRun;
import dev.rnicsim.pagetable.PinnedPages;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.FastRegMr;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * A simulated protection domain. Its {@link #regMr} is the driver path of a registration, step by step:
 * argument checks ({@code ib_uverbs_reg_mr}, {@code ib_check_mr_access}), the RLIMIT_MEMLOCK charge and the
 * long-term pin ({@code ib_umem_get}), physically contiguous pages merged into DMA runs, the page size chosen
 * ({@code ib_umem_find_best_pgsz}), MTT entries reserved and MPT index taken, entries written, keys returned. Any
 * failure undoes every earlier step, so a failed call leaves no pin, no charge and no table entry.
 *
 * <p>Not thread safe.
 */
public final class SimPd implements ProtectionDomain
{
    private static final String REG = "ibv_reg_mr";
    /** Most pages of a fast-registration MR: the kernel's {@code max_fast_reg_page_list_len} (assumed 2^16 for
     * every profile; rxe reports 512 and mlx5 derives it from its KLM list size). */
    static final int MAX_FAST_REG_PAGES = 1 << 16;
    /** Rights that make the pin FOLL_WRITE ({@code ib_access_writable}, include/rdma/ib_umem.h). */
    private static final Set<Access> WRITABLE = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
        Access.REMOTE_ATOMIC, Access.MW_BIND);
    private static final Set<Access> REMOTE = EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ,
        Access.REMOTE_ATOMIC);

    private final SimContext context;
    private final int pdNum;
    private final java.util.Set<SimMr> mrs = new java.util.LinkedHashSet<>();
    private final java.util.Set<SimQp> qps = new java.util.LinkedHashSet<>();
    private final java.util.Set<SimSrq> srqs = new java.util.LinkedHashSet<>();
    private final java.util.Set<SimAh> ahs = new java.util.LinkedHashSet<>();
    private final java.util.Set<SimMw> windows = new java.util.LinkedHashSet<>();
    private final java.util.Set<SimFastRegMr> fastRegs = new java.util.LinkedHashSet<>();
    private final java.util.Set<SimOdpMr> odpMrs = new java.util.LinkedHashSet<>();
    private final java.util.Set<SimPeerMr> peerMrs = new java.util.LinkedHashSet<>();
    private boolean closed;

    SimPd(final SimContext context, final int pdNum)
    {
        this.context = context;
        this.pdNum = pdNum;
    }

    @Override
    public SimContext context()
    {
        return context;
    }

    /**
     * @return the PD number the adapter stores in MPT entries and QP contexts.
     */
    public int pdNum()
    {
        return pdNum;
    }

    @Override
    public MemoryRegion regMr(final long addr, final long lengthBytes, final Set<Access> access)
    {
        return context.device().fabric().guarded(() -> register(addr, lengthBytes, addr, access, false));
    }

    @Override
    public MemoryRegion regMr(final long addr, final long lengthBytes, final long iova, final Set<Access> access)
    {
        return context.device().fabric().guarded(() -> register(addr, lengthBytes, iova, access, true));
    }

    private MemoryRegion register(final long addr, final long lengthBytes, final long iova, final Set<Access> access,
        final boolean explicitIova)
    {
        checkOpen(REG);
        if (access == null || hasNull(access))
        {
            throw Errors.invalid(REG, "access must be a set of Access flags (empty for none), got " + access);
        }
        if (access.contains(Access.ON_DEMAND))
        {
            return registerOnDemand(addr, lengthBytes, iova, EnumSet.copyOf(access), explicitIova);
        }
        // libibverbs ibv_reg_mr: MADV_DONTFORK the range first (fork support), MADV_DOFORK it again on failure.
        final ForkSafety fork = context.device().host().forkSafety(context.process());
        final boolean madvised = context.device().host().gpuBufferAt(addr) == null;
        if (madvised)
        {
            final long workBefore = fork.workNs(context.device().fabric().costModel());
            try
            {
                fork.dontforkRange(REG, addr, lengthBytes);
            }
            catch (final VerbsException e)
            {
                context.device().count(SimCounter.MR_REGISTRATION_FAILURES, 1);
                throw e;
            }
            finally
            {
                madviseSpan(context.device(), fork, workBefore, "MADV_DONTFORK");
            }
        }
        try
        {
            return registerPinned(addr, lengthBytes, iova, access, explicitIova);
        }
        catch (final RuntimeException e)
        {
            if (madvised)
            {
                fork.doforkRange(addr, lengthBytes);
            }
            throw e;
        }
    }

    /**
     * Advances the clock by the madvise work fork support did since {@code workBeforeNs} (calls, VMA splits and
     * merges, page-size probes; {@link CostModel#forkSafetyNs}) and reports it as a span of its own.
     */
    static void madviseSpan(final SimDevice device, final ForkSafety fork, final long workBeforeNs, final String advice)
    {
        final long ns = fork.workNs(device.fabric().costModel()) - workBeforeNs;
        if (ns > 0)
        {
            device.fabric().span(device, "madvise", "registration", ns, java.util.Map.of("advice", advice));
        }
    }

    private MemoryRegion registerPinned(final long addr, final long lengthBytes, final long iova,
        final Set<Access> access, final boolean explicitIova)
    {
        final SimDevice device = context.device();
        final long startNs = device.fabric().clock().nowNs();
        final Set<Access> rights = access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access);
        final boolean zeroBased = rights.contains(Access.ZERO_BASED);
        final long tableIova = zeroBased ? addr & 0xfff : iova;
        try
        {
            checkArguments(device.profile(), addr, lengthBytes, iova, rights, explicitIova,
                SimHostMemory.basePageBytes(context.process()));
            checkDriverAccess(device.profile(), rights, REG);
        }
        catch (final VerbsException e)
        {
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw e;
        }
        final GpuBuffer gpuBuffer = device.host().gpuBufferAt(addr);
        if (gpuBuffer != null)
        {
            return registerPeerMemory(gpuBuffer, addr, lengthBytes, iova, rights);
        }
        final UserProcess process = context.process();
        final PinnedPages pinned;
        // pin_user_pages faults in the pages the process never touched: the cold part of a registration.
        final HostFaultClock faultIn = HostFaultClock.start(process.host());
        try
        {
            pinned = process.pinUserPages(addr, lengthBytes, !disjoint(rights, WRITABLE), true);
        }
        catch (final KernelException e)
        {
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            final DriverTraits t = device.profile().traits();
            if (t.pinFailureErrno() != null && !t.pinFailureErrno().name().equals(e.errno().name()))
            {
                throw Errors.of(REG, t.pinFailureErrno(), "ib_umem_get failed with " + e.getMessage() + "; "
                    + t.driver() + " returns " + t.pinFailureErrno() + " for any ib_umem_get failure (" + t.source()
                    + ")");
            }
            throw Errors.pinFailed(REG, e, !disjoint(rights, WRITABLE), process);
        }
        final List<DmaRun> runs = dmaRuns(pinned, addr);
        long leaves = 0;
        for (final PhysRun run : pinned.runs())
        {
            leaves += (run.lengthBytes() + run.pageSizeBytes() - 1) / run.pageSizeBytes();
        }
        final VerbsException tooLong = translationLimit(device, runs, addr, lengthBytes, tableIova);
        if (tooLong != null)
        {
            process.unpinUserPages(pinned);
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw tooLong;
        }
        final RegisteredMr registered;
        try
        {
            registered = device.tables().register(pdNum, runs, addr, lengthBytes, tableIova, Access.toBits(rights)
                & ~Access.ZERO_BASED.bit(), SimHostMemory.basePageBytes(process));
        }
        catch (final TableException e)
        {
            process.unpinUserPages(pinned);
            device.fabric().span(device, "reg_mr", "registration",
                device.fabric().costModel().failedRegistrationNs(pinned.pageCount(), leaves),
                java.util.Map.of("addr", addr, "length", lengthBytes, "pages_pinned", pinned.pageCount(),
                    "errno", e.errno().name()));
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw Errors.of(REG, e);
        }
        final int key = registered.key();
        final int rkey = device.profile().rkeyOnlyWithRemoteAccess() && disjoint(rights, REMOTE) ? 0 : key;
        if (zeroBased)
        {
            device.zeroBased(key, tableIova);
        }
        final SimMr mr = new SimMr(this, addr, lengthBytes, zeroBased ? 0 : iova, key, rkey, rights, pinned,
            registered);
        mrs.add(mr);
        final long durationNs = device.fabric().costModel().registrationNs(pinned.pageCount(), leaves,
            registered.mtt().entries()) + faultIn.faultsNs(device.fabric().costModel());
        device.fabric().span(device, "reg_mr", "registration", durationNs, java.util.Map.of("lkey", key, "addr", addr,
            "length", lengthBytes, "pages_pinned", pinned.pageCount(), "page_size", registered.pageSizeBytes(),
            "mtt_entries", registered.mtt().entries(), "pages_faulted_in", faultIn.minorFaults()
                + faultIn.majorFaults()));
        device.count(SimCounter.MR_REGISTRATIONS, 1);
        device.count(SimCounter.PINNED_BYTES, pinned.lengthBytes());
        device.record(new RegistrationEvent(RegistrationEvent.Kind.REG, startNs, durationNs, key, addr, lengthBytes,
            mr.iova(), Access.toBits(rights), pinned.pageCount(), leaves, registered.pageSizeBytes(),
            registered.mtt().entries(), 0));
        device.observe(o -> o.registered(mr));
        return mr;
    }

    /**
     * The per-MR size limit of a driver whose device walks a page-buffer list in levels (bnxt_re: 512 x 512 entries
     * in two levels, {@code bnxt_qplib_reg_mr}'s failure returned as EIO; qedr: a two-layered PBL of 512 x 512,
     * EINVAL from {@code qedr_prepare_pbl_tbl}; hns: its hop count), counted in entries of the page size the
     * registration would get.
     *
     * @return the error to throw, or null when the MR fits (or the driver has no such limit).
     */
    private static VerbsException translationLimit(final SimDevice device, final List<DmaRun> runs, final long addr,
        final long lengthBytes, final long tableIova)
    {
        final DriverTraits t = device.profile().traits();
        if (t.maxTranslationEntries() == 0)
        {
            return null;
        }
        final dev.rnicsim.mtt.PageSizeChoice c;
        try
        {
            c = device.tables().choose(runs, addr, lengthBytes, tableIova);
        }
        catch (final TableException e)
        {
            return null;
        }
        if (c.pageSizeBytes() == 0 || c.blocks() <= t.maxTranslationEntries())
        {
            return null;
        }
        return Errors.of(REG, t.translationOverflowErrno(), "the MR needs " + c.blocks() + " translation entries of "
            + c.pageSizeBytes() + " bytes; " + t.driver() + "'s " + t.translation() + (t.pblLevels() > 0 ? " of "
            + t.pblLevels() + " levels x " + t.pblEntriesPerPage() + " entries" : "") + " holds at most "
            + t.maxTranslationEntries() + " (" + t.source() + "); register it in smaller MRs or back it with huge"
            + " pages");
    }

    /**
     * The checks made before anything is pinned, in the kernel's order: page offsets of addr and iova
     * ({@code ib_uverbs_reg_mr}), access flags ({@code ib_check_mr_access}), length against {@code max_mr_size},
     * then zero and wrapping lengths ({@code ib_umem_get}).
     */
    private static void checkArguments(final DeviceProfile profile, final long addr, final long lengthBytes,
        final long iova, final Set<Access> rights, final boolean explicitIova, final long pageBytes)
    {
        final DeviceAttributes a = profile.attributes();
        if (explicitIova && (addr & (pageBytes - 1)) != (iova & (pageBytes - 1)))
        {
            throw Errors.invalid(REG, "addr=0x" + Long.toHexString(addr) + " and iova=0x" + Long.toHexString(iova)
                + " differ in their offset within a " + (pageBytes >> 10) + " KiB page (ib_uverbs_reg_mr: PAGE_MASK)"
                + "; give an iova with the address's offset in the page");
        }
        Access.checkDependencies(rights, REG);
        AccessRules.checkFlushCaps(profile, rights, REG);
        AccessRules.checkDriverMask(profile, rights, REG);
        if (rights.contains(Access.HUGETLB))
        {
            throw Errors.invalid(REG, "access HUGETLB is only meaningful with ON_DEMAND (ibv_reg_mr(3))"
                + "; drop HUGETLB or add ON_DEMAND");
        }
        if (lengthBytes == 0)
        {
            throw Errors.invalid(REG, "lengthBytes=0: an MR needs at least one byte (ib_umem_get)"
                + "; register at least one byte");
        }
        if (Long.compareUnsigned(lengthBytes, a.maxMrSizeBytes()) > 0)
        {
            throw Errors.invalid(REG, "lengthBytes=" + Long.toUnsignedString(lengthBytes) + " > max_mr_size="
                + Long.toUnsignedString(a.maxMrSizeBytes())
                + "; register a smaller range or split it into several MRs");
        }
        if (Long.compareUnsigned(addr + lengthBytes, addr) < 0)
        {
            throw Errors.invalid(REG, "addr=0x" + Long.toHexString(addr) + " + lengthBytes="
                + Long.toUnsignedString(lengthBytes) + " wraps past 2^64 (ib_umem_get)"
                + "; give a range that ends below 2^64");
        }
    }

    /**
     * The driver's own access check, made in its {@code reg_user_mr} after the core's ({@code ib_check_mr_access})
     * and before anything is pinned: a flag outside {@link DriverTraits#acceptedAccess()} gets the driver's errno
     * (efa {@code efa_reg_mr}: EOPNOTSUPP, REMOTE_READ and REMOTE_WRITE only with the device's RDMA_READ and
     * RDMA_WRITE caps; mana {@code mana_ib_reg_user_mr}: EINVAL).
     */
    private static void checkDriverAccess(final DeviceProfile profile, final Set<Access> rights, final String verb)
    {
        final DriverTraits t = profile.traits();
        final Set<Access> refused = t.refused(rights);
        if (refused.isEmpty())
        {
            return;
        }
        String why = "";
        if (refused.contains(Access.REMOTE_READ) && !t.rdmaRead())
        {
            why = "; REMOTE_READ needs the device's RDMA READ capability, which " + profile.name() + " lacks";
        }
        else if (refused.contains(Access.REMOTE_WRITE) && !t.rdmaWrite())
        {
            why = "; REMOTE_WRITE needs the device's RDMA WRITE capability, which " + profile.name() + " lacks";
        }
        throw Errors.of(verb, t.unsupportedAccessErrno(), "access " + refused + ": " + t.driver() + " accepts only "
            + t.acceptedAccess() + " (" + t.source() + ")" + why + "; drop the flag or use a device that has it");
    }

    /**
     * The pinned pages as DMA runs from the 4 KiB page holding {@code addr}: on a host of 16 or 64 KiB pages the pin
     * starts at the base page, and the tables skip the bytes before that 4 KiB page, as the kernel's umem offset does.
     */
    private static List<DmaRun> dmaRuns(final PinnedPages pinned, final long addr)
    {
        return new PinnedDmaRuns(pinned.runs(), (addr & (SimHostMemory.basePageBytes(pinned.process()) - 1)) & ~0xfffL);
    }

    /** True when the set holds null (asked by iteration: immutable sets throw on contains(null)). */
    private static boolean hasNull(final Set<?> set)
    {
        for (final Object o : set)
        {
            if (o == null)
            {
                return true;
            }
        }
        return false;
    }

    private static boolean disjoint(final Set<Access> a, final Set<Access> b)
    {
        for (final Access x : a)
        {
            if (b.contains(x))
            {
                return false;
            }
        }
        return true;
    }

    /** The driver's deregistration: zap the MTT entries, invalidate the cache for the key, unpin, uncharge. */
    void deregister(final SimMr mr)
    {
        final SimDevice device = context.device();
        device.fabric().engine().awaitKeyHolders(device, "ibv_dereg_mr", mr.lkey(), mr.rkey());
        final long startNs = device.fabric().clock().nowNs();
        // Writes still in flight to the MR land before its translation goes (the device stops writing first).
        device.writeOrdering().drain();
        final long dropped = device.tables().deregister(mr.lkey());
        device.forgetZeroBased(mr.lkey());
        final PinnedPages pinned = mr.pinned();
        pinned.process().unpinUserPages(pinned);
        mrs.remove(mr);
        mr.markClosed();
        final long durationNs = device.fabric().costModel().deregistrationNs(pinned.pageCount());
        final long stallNs = device.fabric().costModel().invalidationStallNs();
        device.fabric().span(device, "dereg_mr", "registration", durationNs - stallNs, java.util.Map.of("lkey",
            mr.lkey(), "pages_unpinned", pinned.pageCount(), "mtt_entries", mr.mttEntries()));
        device.fabric().span(device, "invalidate", "invalidation", stallNs, java.util.Map.of("lkey", mr.lkey(),
            "cache_entries_dropped", dropped));
        device.count(SimCounter.MR_DEREGISTRATIONS, 1);
        device.count(SimCounter.PINNED_BYTES, -pinned.lengthBytes());
        device.record(new RegistrationEvent(RegistrationEvent.Kind.DEREG, startNs, durationNs, mr.lkey(), mr.addr(),
            mr.lengthBytes(), mr.iova(), Access.toBits(mr.access()), pinned.pageCount(), 0, mr.pageSizeBytes(),
            mr.mttEntries(), dropped));
        device.observe(o -> o.deregistered(mr));
        // libibverbs ibv_dereg_mr: MADV_DOFORK after the kernel deregistered.
        final ForkSafety fork = device.host().forkSafety(pinned.process());
        final long workBefore = fork.workNs(device.fabric().costModel());
        fork.doforkRange(mr.addr(), mr.lengthBytes());
        madviseSpan(device, fork, workBefore, "MADV_DOFORK");
    }

    // ------------------------------------------------------------------ on-demand paging

    /**
     * The ODP registration path ({@code ib_check_mr_access}, then mlx5 {@code create_user_odp_mr} or
     * {@code mlx5_ib_alloc_implicit_mr}): EOPNOTSUPP without IBV_ODP_SUPPORT (or, for addr 0 and length SIZE_MAX,
     * without IBV_ODP_SUPPORT_IMPLICIT); no pin and no RLIMIT_MEMLOCK charge; an explicit MR maps the pages the CPU
     * has present now.
     */
    private SimOdpMr registerOnDemand(final long addr, final long lengthBytes, final long iova,
        final EnumSet<Access> rights, final boolean explicitIova)
    {
        final SimDevice device = context.device();
        final DeviceAttributes a = device.profile().attributes();
        final long startNs = device.fabric().clock().nowNs();
        final boolean implicit = addr == 0 && lengthBytes == -1L;
        final int pageShift;
        try
        {
            pageShift = checkOnDemand(device, a, addr, lengthBytes, iova, rights, explicitIova, implicit);
        }
        catch (final VerbsException e)
        {
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw e;
        }
        final int bits = Access.toBits(rights) & ~Access.HUGETLB.bit() & ~Access.ZERO_BASED.bit();
        // A ZERO_BASED ODP MR (mlx5 create_user_odp_mr takes every legal flag) is addressed by offsets: the tables
        // know it by its first byte's offset in its page, as a pinned one.
        final boolean zeroBased = !implicit && rights.contains(Access.ZERO_BASED);
        final long tableIova = zeroBased ? addr & 0xfff : iova;
        final int key;
        try
        {
            key = implicit ? device.tables().registerImplicit(pdNum, UserProcess.TASK_SIZE, bits)
                : device.tables().registerOnDemand(pdNum, lengthBytes, tableIova, bits, pageShift).key();
        }
        catch (final TableException e)
        {
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw Errors.of(REG, e);
        }
        final int rkey = device.profile().rkeyOnlyWithRemoteAccess() && disjoint(rights, REMOTE) ? 0 : key;
        if (zeroBased)
        {
            device.zeroBased(key, tableIova);
        }
        final SimOdpMr mr = new SimOdpMr(this, addr, lengthBytes, implicit ? 0 : tableIova, key, rkey, rights,
            implicit, pageShift);
        final long snapshot = mr.start();
        odpMrs.add(mr);
        device.odpRegistered(mr);
        // Page-table leaves looked at for the snapshot: the present ones only (absent levels are skipped; the mkey
        // is created zapped), so the cost does not grow with the absent part of the range.
        final long pagesWalked = implicit ? 0 : snapshot;
        final long durationNs = device.fabric().costModel().odpRegistrationNs(pagesWalked, snapshot);
        device.fabric().span(device, "reg_mr", "registration", durationNs, java.util.Map.of("lkey", key, "addr", addr,
            "length", Long.toUnsignedString(lengthBytes), "odp", implicit ? "implicit" : "explicit",
            "entries_mapped", snapshot, "pages_pinned", 0));
        device.count(SimCounter.MR_REGISTRATIONS, 1);
        device.record(new RegistrationEvent(RegistrationEvent.Kind.REG, startNs, durationNs, key, addr,
            implicit ? UserProcess.TASK_SIZE : lengthBytes, mr.iova(), Access.toBits(rights), 0, 0,
            1L << pageShift, snapshot, 0));
        return mr;
    }

    /** The ODP checks, in the kernel's order; returns the MR page shift. */
    private int checkOnDemand(final SimDevice device, final DeviceAttributes a, final long addr,
        final long lengthBytes, final long iova, final Set<Access> rights, final boolean explicitIova,
        final boolean implicit)
    {
        if (explicitIova && (addr & 0xfff) != (iova & 0xfff))
        {
            throw Errors.invalid(REG, "addr=0x" + Long.toHexString(addr) + " and iova=0x" + Long.toHexString(iova)
                + " differ in their offset within a 4 KiB page (ib_uverbs_reg_mr)"
                + "; give an iova with the address's offset in the page");
        }
        Access.checkDependencies(rights, REG);
        if (!a.odpCaps().supported())
        {
            throw Errors.of(REG, Errno.EOPNOTSUPP, "access ON_DEMAND: " + device.profile().name() + " has no "
                + "on-demand paging (odp general caps 0x" + Integer.toHexString(a.odpCaps().generalCaps())
                + " lack IBV_ODP_SUPPORT; ib_check_mr_access)"
                + "; drop ON_DEMAND or use a device with ODP (mlx5)");
        }
        AccessRules.checkFlushCaps(device.profile(), rights, REG);
        AccessRules.checkDriverMask(device.profile(), rights, REG);
        if (implicit)
        {
            if (explicitIova && iova != 0)
            {
                throw Errors.invalid(REG, "an implicit ODP MR (addr 0, length SIZE_MAX) needs iova 0, got 0x"
                    + Long.toHexString(iova) + " (mlx5 create_user_odp_mr)"
                    + "; give iova 0");
            }
            if (!a.odpCaps().implicitSupported())
            {
                // mlx5 create_user_odp_mr and rxe_odp_mr_init_user: an implicit MR on a device without the
                // capability is a bad argument (EINVAL), not a missing feature.
                throw Errors.invalid(REG, "implicit ODP (addr 0, length SIZE_MAX) needs IBV_ODP_SUPPORT_IMPLICIT; "
                    + device.profile().name() + " has odp general caps 0x"
                    + Integer.toHexString(a.odpCaps().generalCaps()) + "; register an explicit range instead");
            }
            if (rights.contains(Access.HUGETLB))
            {
                throw Errors.invalid(REG, "HUGETLB is only for an explicit ODP MR (ibv_reg_mr(3))"
                    + "; drop HUGETLB or register an explicit range");
            }
            return context.process().host().config().basePage().shift();
        }
        if (lengthBytes == 0)
        {
            throw Errors.invalid(REG, "lengthBytes=0: an MR needs at least one byte (ib_umem_odp_get)"
                + "; register at least one byte");
        }
        if (Long.compareUnsigned(lengthBytes, a.maxMrSizeBytes()) > 0)
        {
            throw Errors.invalid(REG, "lengthBytes=" + Long.toUnsignedString(lengthBytes) + " > max_mr_size="
                + Long.toUnsignedString(a.maxMrSizeBytes())
                + "; register a smaller range or split it into several MRs");
        }
        if (Long.compareUnsigned(addr + lengthBytes, addr) < 0
            || Long.compareUnsigned((addr + lengthBytes + 0xfff) & ~0xfffL, addr + lengthBytes) < 0)
        {
            throw Errors.of(REG, Errno.EOVERFLOW, "addr=0x" + Long.toHexString(addr) + " + lengthBytes="
                + Long.toUnsignedString(lengthBytes) + " wraps past 2^64 (ib_init_umem_odp: check_add_overflow)"
                + "; give a range that ends below 2^64");
        }
        if (Long.compareUnsigned(addr + lengthBytes, UserProcess.TASK_SIZE) > 0)
        {
            throw Errors.of(REG, Errno.EFAULT, "addr=0x" + Long.toHexString(addr) + " + lengthBytes="
                + Long.toUnsignedString(lengthBytes) + " wraps or leaves the user address space (ib_umem_odp_get)"
                + "; keep the range in user space");
        }
        // ib_umem_odp_get: the umem's page shift is PAGE_SHIFT (12, 14 or 16), or with IB_ACCESS_HUGETLB HPAGE_SHIFT,
        // the PMD (21 on x86-64, 25 or 29 on arm64 with 16 or 64 KiB pages), with no check of the VMA; a fault on pages
        // mapped smaller fails later (ib_umem_odp_map_dma_and_lock).
        final dev.rnicsim.pagetable.BasePage base = context.process().host().config().basePage();
        if (!rights.contains(Access.HUGETLB))
        {
            return base.shift();
        }
        final int shift = base.thpSize().pageShift();
        if (((addr ^ iova) & ((1L << shift) - 1)) != 0)
        {
            throw Errors.invalid(REG, "access HUGETLB: addr 0x" + Long.toHexString(addr) + " and iova 0x"
                + Long.toHexString(iova) + " differ within a " + ((1L << shift) >> 10) + " kB page"
                + "; give an iova with the address's offset in that page");
        }
        return shift;
    }

    /** Deregisters an ODP MR: the notifiers go, the tables entry (and implicit children) are freed. */
    void deregisterOdp(final SimOdpMr mr)
    {
        final SimDevice device = context.device();
        device.fabric().engine().awaitKeyHolders(device, "ibv_dereg_mr", mr.lkey(), mr.rkey());
        final long startNs = device.fabric().clock().nowNs();
        // Writes still in flight to the MR land before its translation goes (the device stops writing first).
        device.writeOrdering().drain();
        final long dropped = device.tables().deregister(mr.lkey());
        device.forgetZeroBased(mr.lkey());
        mr.markClosed();
        odpMrs.remove(mr);
        device.odpDeregistered(mr);
        final CostModel cost = device.fabric().costModel();
        final long durationNs = cost.deregFixedNs() + cost.invalidationStallNs();
        device.fabric().span(device, "dereg_mr", "registration", cost.deregFixedNs(), java.util.Map.of("lkey",
            mr.lkey(), "odp", mr.isImplicit() ? "implicit" : "explicit", "pages_unpinned", 0));
        device.fabric().span(device, "invalidate", "invalidation", cost.invalidationStallNs(), java.util.Map.of(
            "lkey", mr.lkey(), "cache_entries_dropped", dropped));
        device.count(SimCounter.MR_DEREGISTRATIONS, 1);
        device.record(new RegistrationEvent(RegistrationEvent.Kind.DEREG, startNs, durationNs, mr.lkey(), mr.addr(),
            mr.isImplicit() ? UserProcess.TASK_SIZE : mr.lengthBytes(), mr.iova(), Access.toBits(mr.access()), 0, 0,
            1L << mr.pageShift(), 0, dropped));
    }

    /**
     * @return the live ODP MRs of this PD.
     */
    public List<SimOdpMr> odpMemoryRegions()
    {
        return List.copyOf(odpMrs);
    }

    @Override
    public void adviseMr(final dev.rnicsim.verbs.MrAdvice advice, final int flags,
        final List<dev.rnicsim.verbs.Sge> sgList)
    {
        context.device().fabric().guardedRun(() -> advise(advice, flags, sgList));
    }

    private void advise(final dev.rnicsim.verbs.MrAdvice advice, final int flags,
        final List<dev.rnicsim.verbs.Sge> sgList)
    {
        final String verb = "ibv_advise_mr";
        checkOpen(verb);
        final SimDevice device = context.device();
        if (!device.profile().attributes().odpCaps().supported())
        {
            // The provider has no advise_mr (rxe, mlx4, irdma): the inline wrapper returns EOPNOTSUPP.
            throw Errors.of(verb, Errno.EOPNOTSUPP, device.profile().name() + " (" + device.profile().driver()
                + ") has no advise_mr: it has no on-demand paging"
                + "; use a device with ODP (mlx5) or drop the advice");
        }
        if (advice == null || sgList == null || sgList.isEmpty())
        {
            throw Errors.invalid(verb, "advice and a non-empty sg_list are required (got advice=" + advice
                + ", sg_list=" + sgList + ")"
                + "; give an advice and at least one SGE");
        }
        if ((flags & ~dev.rnicsim.verbs.MrAdvice.FLAG_FLUSH) != 0)
        {
            throw Errors.invalid(verb, "flags=0x" + Integer.toHexString(flags) + ": only IBV_ADVISE_MR_FLAG_FLUSH (1)"
                + " is defined"
                + "; pass flags 0 or IBV_ADVISE_MR_FLAG_FLUSH");
        }
        // get_prefetchable_mr, for every SGE before any work is done.
        final List<SimOdpMr> targets = new ArrayList<>(sgList.size());
        for (int i = 0; i < sgList.size(); i++)
        {
            final dev.rnicsim.verbs.Sge sge = sgList.get(i);
            if (sge == null)
            {
                throw Errors.invalid(verb, "sg_list[" + i + "] is null"
                    + "; give an SGE for every element");
            }
            final SimOdpMr mr = device.odpMemoryRegion(sge.lkey());
            if (mr == null)
            {
                if (device.tables().isWindow(sge.lkey()))
                {
                    throw Errors.invalid(verb, "sg_list[" + i + "] key 0x" + Integer.toHexString(sge.lkey())
                        + " names a memory window, not an MR (ibv_advise_mr(3))"
                        + "; advise the lkey of an ODP MR instead");
                }
                // Only ODP MRs are in the driver's odp_mkeys: any other key is not found there.
                throw Errors.of(verb, Errno.ENOENT, "sg_list[" + i + "] lkey 0x" + Integer.toHexString(sge.lkey())
                    + " names no ODP MR of " + device.name() + (device.memoryRegion(sge.lkey()) != null
                    || device.peerMemoryRegion(sge.lkey()) != null ? " (it names an MR that is not ODP)" : "")
                    + " (get_prefetchable_mr: not in odp_mkeys)"
                    + "; advise only lkeys of ODP MRs (registered with ON_DEMAND)");
            }
            if (mr.pd() != this)
            {
                throw Errors.of(verb, Errno.EPERM, "sg_list[" + i + "] lkey 0x" + Integer.toHexString(sge.lkey())
                    + " is an MR of another PD (get_prefetchable_mr)"
                    + "; advise through the PD that holds the MR");
            }
            if (advice == dev.rnicsim.verbs.MrAdvice.PREFETCH_WRITE && !mr.access().contains(Access.LOCAL_WRITE))
            {
                throw Errors.of(verb, Errno.EPERM, "PREFETCH_WRITE on lkey 0x" + Integer.toHexString(sge.lkey())
                    + ", an MR without LOCAL_WRITE (get_prefetchable_mr)"
                    + "; register the MR with LOCAL_WRITE or use PREFETCH");
            }
            // The SGE addresses the MR's iova space (mlx5 pagefault_mr checks it against the MR's iova and length).
            final long offset = sge.addr() - mr.iova();
            final long span = mr.isImplicit() ? UserProcess.TASK_SIZE : mr.lengthBytes();
            if (sge.lengthBytes() == 0 || Long.compareUnsigned(offset, span) >= 0
                || Long.compareUnsigned(sge.lengthBytes(), span - offset) > 0)
            {
                throw Errors.of(verb, Errno.EFAULT, "sg_list[" + i + "] 0x" + Long.toHexString(sge.addr()) + "+"
                    + sge.lengthBytes() + " is empty or outside its MR iova 0x" + Long.toHexString(mr.iova()) + "+"
                    + Long.toUnsignedString(mr.lengthBytes()) + " (pagefault_mr)"
                    + "; give a non-empty range inside the MR");
            }
            targets.add(mr);
        }
        final boolean fault = advice != dev.rnicsim.verbs.MrAdvice.PREFETCH_NO_FAULT;
        final boolean write = advice == dev.rnicsim.verbs.MrAdvice.PREFETCH_WRITE;
        long entries = 0;
        long walked = 0;
        long minor = 0;
        long major = 0;
        String failure = null;
        Errno failureErrno = Errno.EFAULT;
        for (int i = 0; i < targets.size() && failure == null; i++)
        {
            final dev.rnicsim.verbs.Sge sge = sgList.get(i);
            final SimOdpMr.Mapped m = targets.get(i).map(targets.get(i).vaOf(sge.addr()), sge.lengthBytes(), fault,
                write);
            entries += m.entries();
            walked += m.pagesWalked();
            minor += m.minorFaults();
            major += m.majorFaults();
            failure = m.failure() == null ? null : "sg_list[" + i + "]: " + m.failure();
            failureErrno = m.failureErrno();
        }
        device.count(SimCounter.ODP_PAGE_PREFETCH, entries);
        final long ns = device.fabric().costModel().odpFaultNs(walked, minor, major, entries);
        final boolean flush = (flags & dev.rnicsim.verbs.MrAdvice.FLAG_FLUSH) != 0;
        final java.util.Map<String, Object> args = java.util.Map.of("advice", advice.name(), "flush", flush,
            "entries_mapped", entries, "host_minor_faults", minor, "host_major_faults", major);
        if (flush)
        {
            device.fabric().span(device, "advise_mr", "odp", ns, args);
        }
        else
        {
            // Queued to the driver's work queue: the call returns at once and the work runs beside the caller.
            device.fabric().overlap(device, "advise_mr", "odp", device.fabric().clock().nowNs(), ns, args);
        }
        if (failure != null && flush)
        {
            throw Errors.of(verb, failureErrno, failure);
        }
    }

    // ------------------------------------------------------------------ GPU memory: peer memory and dma-buf

    /** Access flags ibv_reg_dmabuf_mr accepts (ibv_reg_mr(3)). */
    private static final Set<Access> DMABUF_ACCESS = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
        Access.REMOTE_READ, Access.REMOTE_ATOMIC, Access.RELAXED_ORDERING);

    /**
     * ibv_reg_mr on a GPU virtual address: without a peer-memory client the kernel finds no pinnable pages there
     * (EFAULT); with one the client pins the GPU pages and maps them through BAR1 (EFAULT when it is full).
     */
    private SimPeerMr registerPeerMemory(final GpuBuffer b, final long addr, final long lengthBytes, final long iova,
        final Set<Access> rights)
    {
        final SimDevice device = context.device();
        final long offset = addr - b.gpuVa();
        if (!device.host().peerMemoryClient())
        {
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw Errors.of(REG, Errno.EFAULT, "0x" + Long.toHexString(addr) + " is memory of GPU " + b.gpu().name()
                + ", not host memory: no peer-memory client (nvidia-peermem) is loaded, so ib_umem_get finds no "
                + "pages to pin; load one or register through ibv_reg_dmabuf_mr");
        }
        if (Long.compareUnsigned(lengthBytes, b.sizeBytes() - offset) > 0)
        {
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw Errors.of(REG, Errno.EFAULT, "0x" + Long.toHexString(addr) + "+" + lengthBytes + " runs past the end"
                + " of " + b + " (the peer-memory client's get_pages)"
                + "; register a range inside the GPU buffer");
        }
        return registerGpu(SimPeerMr.Kind.PEER_MEMORY, b, null, offset, addr, lengthBytes, iova, rights, REG);
    }

    @Override
    public MemoryRegion regDmabufMr(final long offset, final long lengthBytes, final long iova, final int fd,
        final Set<Access> access)
    {
        return context.device().fabric().guarded(() -> registerDmabuf(offset, lengthBytes, iova, fd, access));
    }

    private MemoryRegion registerDmabuf(final long offset, final long lengthBytes, final long iova, final int fd,
        final Set<Access> access)
    {
        final String verb = "ibv_reg_dmabuf_mr";
        checkOpen(verb);
        final SimDevice device = context.device();
        final SimDmabuf d;
        try
        {
            d = checkDmabuf(device, offset, lengthBytes, iova, fd, access, verb);
        }
        catch (final VerbsException e)
        {
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw e;
        }
        final SimPeerMr.Kind kind = device.profile().follows(ProviderRule.DMABUF_DYNAMIC)
            ? SimPeerMr.Kind.DMABUF_DYNAMIC : SimPeerMr.Kind.DMABUF_PINNED;
        return registerGpu(kind, d.buffer(), d, offset, iova, lengthBytes, iova, access.isEmpty()
            ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access), verb);
    }

    /** The checks of ibv_reg_dmabuf_mr, in the library's and kernel's order; returns the dma-buf. */
    private static SimDmabuf checkDmabuf(final SimDevice device, final long offset, final long lengthBytes,
        final long iova, final int fd, final Set<Access> access, final String verb)
    {
        if (access == null || hasNull(access))
        {
            throw Errors.invalid(verb, "access must be a set of Access flags (empty for none), got " + access);
        }
        for (final Access a : access)
        {
            if (!DMABUF_ACCESS.contains(a))
            {
                throw Errors.invalid(verb, "access " + a + ": only LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, "
                    + "REMOTE_ATOMIC and RELAXED_ORDERING are accepted (ibv_reg_mr(3))"
                    + "; drop the other flags");
            }
        }
        Access.checkDependencies(access, verb);
        checkDriverAccess(device.profile(), access, verb);
        if ((offset & 0xfff) != (iova & 0xfff))
        {
            throw Errors.invalid(verb, "offset=0x" + Long.toHexString(offset) + " and iova=0x"
                + Long.toHexString(iova) + " differ in their offset within a 4 KiB page (ibv_reg_mr(3))"
                + "; give an iova with the offset's page offset");
        }
        if (!device.profile().follows(ProviderRule.DMABUF_DYNAMIC)
            && !device.profile().follows(ProviderRule.DMABUF_PINNED))
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, device.profile().name() + " (" + device.profile().driver()
                + ") cannot register dma-bufs (no reg_user_mr_dmabuf)"
                + "; use a device that registers dma-bufs (mlx5)");
        }
        final SimDmabuf d = device.host().dmabuf(fd);
        if (d == null)
        {
            throw Errors.of(verb, Errno.EBADF, "fd " + fd + " names no open dma-buf on host "
                + device.host().name() + " (dma_buf_get)"
                + "; pass the fd from the GPU's dma-buf export");
        }
        if (lengthBytes == 0 || offset < 0 || Long.compareUnsigned(offset + lengthBytes, offset) < 0
            || Long.compareUnsigned(offset + lengthBytes, d.sizeBytes()) > 0)
        {
            throw Errors.invalid(verb, "range offset=" + offset + " lengthBytes=" + Long.toUnsignedString(
                lengthBytes) + " is empty, wraps or leaves the dma-buf of " + d.sizeBytes() + " bytes "
                + "(ib_umem_dmabuf_get)"
                + "; register a range inside the dma-buf");
        }
        return d;
    }

    /** The common part: BAR1 mapping, tables entry, translation. Nothing is left behind on failure. */
    private SimPeerMr registerGpu(final SimPeerMr.Kind kind, final GpuBuffer b, final SimDmabuf d, final long offset,
        final long addr, final long lengthBytes, final long iova, final Set<Access> rights, final String verb)
    {
        final SimDevice device = context.device();
        final long startNs = device.fabric().clock().nowNs();
        final int bits = Access.toBits(rights);
        final boolean zeroBased = rights.contains(Access.ZERO_BASED) && kind != SimPeerMr.Kind.DMABUF_DYNAMIC;
        // A ZERO_BASED MR is addressed by offsets: the tables know it by its first byte's offset in its page.
        final long tableIova = zeroBased ? addr & 0xfff : iova;
        // The footprint in BAR1 of whole 64 KiB GPU pages: computed from a provisional MR.
        final SimPeerMr probe = new SimPeerMr(this, kind, b, d, offset, addr, lengthBytes, iova, 0, 0, rights, 0, 0);
        final long bar1 = probe.bar1Footprint();
        if (!b.gpu().mapBar1(bar1))
        {
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw Errors.of(verb, Errno.EFAULT, b.gpu().bar1Exhausted(bar1));
        }
        final int key;
        final long entries;
        try
        {
            if (kind == SimPeerMr.Kind.DMABUF_DYNAMIC)
            {
                final RegisteredMr r = device.tables().registerOnDemand(pdNum, lengthBytes, iova, bits, 12);
                key = r.key();
                entries = r.mtt().entries();
            }
            else
            {
                // The pinned pages as whole 4 KiB pages of contiguous VRAM (ib_umem_get needs no alignment).
                final long first = probe.busAddr(0) & ~0xfffL;
                final long end = (probe.busAddr(0) + lengthBytes + 0xfff) & ~0xfffL;
                final RegisteredMr r = device.tables().register(pdNum, List.of(new DmaRun(first, end - first)),
                    probe.busAddr(0), lengthBytes, tableIova, bits & ~Access.ZERO_BASED.bit());
                key = r.key();
                entries = r.mtt().entries();
            }
        }
        catch (final TableException e)
        {
            b.gpu().unmapBar1(bar1);
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw Errors.of(verb, e);
        }
        final int rkey = device.profile().rkeyOnlyWithRemoteAccess() && disjoint(rights, REMOTE) ? 0 : key;
        if (zeroBased)
        {
            device.zeroBased(key, tableIova);
        }
        final SimPeerMr mr = new SimPeerMr(this, kind, b, d, offset, addr, lengthBytes, zeroBased ? 0 : iova, key,
            rkey, rights, entries, bar1);
        if (kind == SimPeerMr.Kind.DMABUF_DYNAMIC)
        {
            device.count(SimCounter.ODP_ENTRIES_MAPPED, mr.mapAll(device.tables()));
        }
        if (d != null)
        {
            d.attach(mr, kind == SimPeerMr.Kind.DMABUF_PINNED);
        }
        else
        {
            b.peerMrs().add(mr);
        }
        peerMrs.add(mr);
        device.peerRegistered(mr);
        final long durationNs = device.fabric().costModel().odpRegistrationNs(0, entries);
        device.fabric().span(device, verb.equals(REG) ? "reg_mr" : "reg_dmabuf_mr", "registration", durationNs,
            java.util.Map.of("lkey", key, "gpu", b.gpu().name(), "kind", kind.name(), "length", lengthBytes,
                "mtt_entries", entries, "bar1_bytes", bar1));
        device.count(SimCounter.MR_REGISTRATIONS, 1);
        device.record(new RegistrationEvent(RegistrationEvent.Kind.REG, startNs, durationNs, key, addr, lengthBytes,
            iova, bits, 0, 0, 4096, entries, 0));
        return mr;
    }

    /** Deregisters an MR over GPU memory: the tables entry goes, then BAR1 and the attachment. */
    void deregisterPeer(final SimPeerMr mr)
    {
        final SimDevice device = context.device();
        device.fabric().engine().awaitKeyHolders(device, "ibv_dereg_mr", mr.lkey(), mr.rkey());
        final long startNs = device.fabric().clock().nowNs();
        // Writes still in flight to the MR land before its translation goes (the device stops writing first).
        device.writeOrdering().drain();
        final long dropped = device.tables().deregister(mr.lkey());
        device.forgetZeroBased(mr.lkey());
        mr.markClosed();
        peerMrs.remove(mr);
        device.peerDeregistered(mr);
        final CostModel cost = device.fabric().costModel();
        device.fabric().span(device, "dereg_mr", "registration", cost.deregFixedNs(), java.util.Map.of("lkey",
            mr.lkey(), "gpu", mr.gpu().name(), "kind", mr.kind().name()));
        device.fabric().span(device, "invalidate", "invalidation", cost.invalidationStallNs(), java.util.Map.of(
            "lkey", mr.lkey(), "cache_entries_dropped", dropped));
        device.count(SimCounter.MR_DEREGISTRATIONS, 1);
        device.record(new RegistrationEvent(RegistrationEvent.Kind.DEREG, startNs, cost.deregFixedNs()
            + cost.invalidationStallNs(), mr.lkey(), mr.addr(), mr.lengthBytes(), mr.iova(),
            Access.toBits(mr.access()), 0, 0, 4096, mr.mttEntries(), dropped));
    }

    /**
     * @return the live MRs over GPU memory of this PD.
     */
    public List<SimPeerMr> peerMemoryRegions()
    {
        return List.copyOf(peerMrs);
    }

    // ------------------------------------------------------------------ memory windows and fast registration

    /**
     * As the interface, with the device's refusal first: a device without windows answers EOPNOTSUPP whatever the
     * type (libibverbs finds no alloc_mw in the provider), one with windows EINVAL for a type other than 1 or 2.
     */
    @Override
    public MemoryWindow allocMw(final int typeCode)
    {
        checkOpen("ibv_alloc_mw");
        checkWindowsSupported("ibv_alloc_mw");
        return ProtectionDomain.super.allocMw(typeCode);
    }

    private void checkWindowsSupported(final String verb)
    {
        final SimDevice device = context.device();
        final DeviceAttributes a = device.profile().attributes();
        if (!a.has(DeviceCap.MEM_WINDOW) || a.maxMw() == 0)
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, device.profile().name() + " has no memory windows (MEM_WINDOW "
                + (a.has(DeviceCap.MEM_WINDOW) ? "set" : "not set") + " in device_cap_flags, max_mw=" + a.maxMw()
                + ")"
                + "; use a device with memory windows (mlx5, rxe)");
        }
    }

    @Override
    public MemoryWindow allocMw(final MwType type)
    {
        return context.device().fabric().guarded(() -> allocateMw(type));
    }

    private MemoryWindow allocateMw(final MwType type)
    {
        final String verb = "ibv_alloc_mw";
        checkOpen(verb);
        if (type == null)
        {
            throw Errors.invalid(verb, "type must be TYPE_1 or TYPE_2"
                + "; pass TYPE_1 or TYPE_2");
        }
        final SimDevice device = context.device();
        final DeviceAttributes a = device.profile().attributes();
        checkWindowsSupported(verb);
        if (type == MwType.TYPE_2 && !a.has(DeviceCap.MEM_WINDOW_TYPE_2A) && !a.has(DeviceCap.MEM_WINDOW_TYPE_2B))
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, device.profile().name() + " has no type 2 windows (neither "
                + "MEM_WINDOW_TYPE_2A nor MEM_WINDOW_TYPE_2B in device_cap_flags)"
                + "; allocate a type 1 window or use a device with type 2 windows");
        }
        if (device.tables().windowCount() >= a.maxMw())
        {
            throw Errors.of(verb, Errno.ENOMEM, device.tables().windowCount() + " windows live = max_mw="
                + a.maxMw()
                + "; deallocate a window first or use a device with a larger max_mw");
        }
        final int key;
        try
        {
            key = device.tables().allocateWindow(pdNum, type.code());
        }
        catch (final TableException e)
        {
            throw Errors.of(verb, e);
        }
        final SimMw mw = new SimMw(this, type, key);
        windows.add(mw);
        return mw;
    }

    /** ibv_dealloc_mw: unbinds (releasing the MR), frees the window's MPT entry; its key stops validating. */
    void deallocMw(final SimMw mw)
    {
        final SimDevice device = context.device();
        device.fabric().engine().awaitKeyHolders(device, "ibv_dealloc_mw", mw.tableKey());
        device.forgetZeroBased(mw.tableKey());
        final long dropped = device.tables().freeWindow(mw.tableKey());
        mw.bound(mw.tableKey(), null, null, 0, 0, Set.of());
        windows.remove(mw);
        mw.markClosed();
        device.invalidated("dealloc_mw", mw.tableKey(), dropped);
    }

    @Override
    public FastRegMr allocMr(final int maxNumSg)
    {
        return context.device().fabric().guarded(() -> allocateMr(maxNumSg));
    }

    private FastRegMr allocateMr(final int maxNumSg)
    {
        final String verb = "ib_alloc_mr";
        checkOpen(verb);
        final SimDevice device = context.device();
        if (!device.profile().attributes().has(DeviceCap.MEM_MGT_EXTENSIONS))
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, device.profile().name() + " lacks MEM_MGT_EXTENSIONS (fast "
                + "registration)"
                + "; use a device with MEM_MGT_EXTENSIONS (mlx5, rxe)");
        }
        final int maxPages = Math.min(MAX_FAST_REG_PAGES, device.profile().traits().maxFastRegPages());
        if (maxNumSg < 1 || maxNumSg > maxPages)
        {
            throw Errors.invalid(verb, "max_num_sg=" + maxNumSg + " must be from 1 to " + maxPages
                + " (max_fast_reg_page_list_len of " + device.profile().traits().driver() + ", "
                + device.profile().traits().source() + ")"
                + "; give max_num_sg in that range");
        }
        final int key;
        try
        {
            key = device.tables().allocateFastReg(pdNum, maxNumSg);
        }
        catch (final TableException e)
        {
            throw Errors.of(verb, e);
        }
        final SimFastRegMr mr = new SimFastRegMr(this, maxNumSg, key);
        fastRegs.add(mr);
        device.count(SimCounter.MR_REGISTRATIONS, 1);
        return mr;
    }

    void deallocFastReg(final SimFastRegMr mr)
    {
        final SimDevice device = context.device();
        device.fabric().engine().awaitKeyHolders(device, "ibv_dereg_mr", mr.key());
        final long dropped = device.tables().deregister(mr.key());
        fastRegs.remove(mr);
        device.count(SimCounter.MR_DEREGISTRATIONS, 1);
        device.fabric().span(device, "invalidate", "invalidation", device.fabric().costModel().invalidationStallNs(),
            java.util.Map.of("cause", "dereg_mr", "key", mr.key(), "cache_entries_dropped", dropped));
    }

    /**
     * @return the live fast-registration MRs of this PD.
     */
    public List<SimFastRegMr> fastRegMrs()
    {
        return List.copyOf(fastRegs);
    }

    /**
     * @return the live memory windows of this PD.
     */
    public List<SimMw> memoryWindows()
    {
        return List.copyOf(windows);
    }

    // ------------------------------------------------------------------ rereg

    /**
     * ibv_rereg_mr: the library's input checks (ERR_INPUT), then the kernel's (ERR_CMD), then the change. Nothing
     * changes on failure.
     */
    void rereg(final SimMr mr, final Set<ReregFlag> flags, final ProtectionDomain newPd, final long newAddr,
        final long newLength, final Set<Access> newAccess)
    {
        if (mr.isClosed())
        {
            throw reregInput("the MR is deregistered"
                + " (ibv_dereg_mr released it); register a new MR");
        }
        if (flags == null || hasNull(flags))
        {
            throw reregInput("flags must be a set of ReregFlag, got " + flags);
        }
        final boolean translation = flags.contains(ReregFlag.CHANGE_TRANSLATION);
        final boolean changePd = flags.contains(ReregFlag.CHANGE_PD);
        final boolean changeAccess = flags.contains(ReregFlag.CHANGE_ACCESS);
        if (translation && (newAddr == 0 || newLength == 0))
        {
            throw reregInput("CHANGE_TRANSLATION with addr=0x" + Long.toHexString(newAddr) + " lengthBytes="
                + newLength + ": both must be non-zero (ibv_rereg_mr)"
                + "; give both with CHANGE_TRANSLATION, or drop the flag");
        }
        if (!changeAccess && newAccess != null && !newAccess.isEmpty())
        {
            throw reregInput("access " + newAccess + " given without CHANGE_ACCESS (ibv_rereg_mr)"
                + "; add CHANGE_ACCESS or drop the access flags");
        }
        final SimDevice device = context.device();
        if (device.profile().follows(ProviderRule.REREG_MR_UNSUPPORTED))
        {
            throw new ReregException(Errno.EOPNOTSUPP.code(), ReregException.ERR_INPUT, device.profile().driver()
                + "'s provider has no rereg_mr (libibverbs' stand-in answers); deregister and register again");
        }
        if (flags.isEmpty())
        {
            throw reregCmd(Errno.EINVAL, "flags=0: nothing to change (ib_uverbs_rereg_mr)"
                + "; give CHANGE_PD, CHANGE_ACCESS or CHANGE_TRANSLATION");
        }
        final SimPd target;
        if (changePd)
        {
            if (!(newPd instanceof SimPd p) || p.context != context || p.closed)
            {
                throw reregCmd(Errno.EINVAL, "CHANGE_PD: the PD given is not an open PD of this MR's context"
                    + "; pass a PD opened on the same context, not deallocated");
            }
            target = p;
        }
        else
        {
            target = this;
        }
        final Set<Access> rights;
        if (changeAccess)
        {
            if (newAccess == null || hasNull(newAccess))
            {
                throw reregCmd(Errno.EINVAL, "CHANGE_ACCESS: access must be a set of Access flags");
            }
            rights = newAccess.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(newAccess);
            try
            {
                Access.checkDependencies(rights, "ibv_rereg_mr");
            }
            catch (final VerbsException e)
            {
                throw reregCmd(e.errnoName(), e.detail());
            }
            if (rights.contains(Access.ON_DEMAND) != mr.access().contains(Access.ON_DEMAND)
                || rights.contains(Access.ZERO_BASED) != mr.access().contains(Access.ZERO_BASED))
            {
                throw reregCmd(Errno.EINVAL, "CHANGE_ACCESS cannot add or remove ON_DEMAND or ZERO_BASED"
                    + "; deregister and register again to change them");
            }
        }
        else
        {
            rights = mr.access();
        }
        if (mr.boundWindows() > 0)
        {
            throw reregCmd(Errno.EINVAL, mr.boundWindows() + " memory window(s) are bound to the MR (the "
                + "MPT cannot be taken back while windows use it; mlx4's HW2SW_MPT fails the same way)"
                + "; unbind or deallocate the windows first");
        }
        if (translation && device.profile().follows(ProviderRule.REREG_TRANSLATION_UNSUPPORTED))
        {
            throw reregCmd(Errno.EOPNOTSUPP, device.profile().driver() + " implements only CHANGE_PD and "
                + "CHANGE_ACCESS (rxe_rereg_user_mr)"
                + "; deregister and register again to change the translation");
        }
        final int bits = Access.toBits(rights) & ~Access.ZERO_BASED.bit();
        final long startNs = device.fabric().clock().nowNs();
        final boolean needsWritablePin = !disjoint(rights, WRITABLE) && !mr.pinned().write();
        if (!translation && needsWritablePin)
        {
            if (!device.profile().follows(ProviderRule.REREG_TRANSLATION_NEW_KEY)
                && !device.profile().follows(ProviderRule.REREG_TRANSLATION_UNSUPPORTED))
            {
                throw reregCmd(Errno.EPERM, "CHANGE_ACCESS " + rights + " needs a writable pin but the MR's pages "
                    + "were pinned read-only (mlx4_ib_rereg_user_mr)"
                    + "; deregister and register again with LOCAL_WRITE");
            }
            // mlx5 and rxe register the range anew, pinned for writing (ib_umem_get with FOLL_WRITE).
            retranslate(mr, target, mr.addr(), mr.lengthBytes(), rights);
            return;
        }
        if (translation)
        {
            retranslate(mr, target, newAddr, newLength, rights);
            return;
        }
        final long dropped = device.tables().modify(mr.lkey(), target.pdNum, bits);
        final int rkey = device.profile().rkeyOnlyWithRemoteAccess() && disjoint(rights, REMOTE) ? 0 : mr.lkey();
        moveTo(mr, target);
        mr.reregistered(target, mr.addr(), mr.lengthBytes(), mr.iova(), mr.lkey(), rkey, rights, mr.pinned(),
            mr.registered());
        device.count(SimCounter.MR_REREGISTRATIONS, 1);
        device.fabric().span(device, "rereg_mr", "registration", device.fabric().costModel().registrationNs(0, 0, 0),
            java.util.Map.of("lkey", mr.lkey(), "flags", ReregFlag.toBits(flags)));
        device.invalidated("rereg_mr", mr.lkey(), dropped);
        device.observe(o -> o.reregistered(mr, mr.lkey()));
    }

    /**
     * The translation half of a rereg: pins the new range, writes a new translation (a new mkey where the profile
     * says so), unpins the old pages; also the re-pin an access change needs when the pages were pinned read-only.
     */
    private void retranslate(final SimMr mr, final SimPd target, final long newAddr,
        final long newLength, final Set<Access> rights)
    {
        final SimDevice device = context.device();
        // The device finishes the writes it has in flight to the MR before its translation or rights change.
        device.writeOrdering().drain();
        final int bits = Access.toBits(rights) & ~Access.ZERO_BASED.bit();
        final long startNs = device.fabric().clock().nowNs();
        final DeviceAttributes a = device.profile().attributes();
        if (Long.compareUnsigned(newLength, a.maxMrSizeBytes()) > 0 || Long.compareUnsigned(newAddr + newLength,
            newAddr) < 0)
        {
            throw reregCmd(Errno.EINVAL, "addr=0x" + Long.toHexString(newAddr) + " lengthBytes="
                + Long.toUnsignedString(newLength) + " wraps or exceeds max_mr_size="
                + Long.toUnsignedString(a.maxMrSizeBytes())
                + "; give a range of 1..max_mr_size bytes that ends below 2^64");
        }
        final PinnedPages pinned;
        try
        {
            pinned = context.process().pinUserPages(newAddr, newLength, !disjoint(rights, WRITABLE), true);
        }
        catch (final KernelException e)
        {
            throw Errors.reregCmd(e);
        }
        final List<DmaRun> runs = dmaRuns(pinned, newAddr);
        long leaves = 0;
        for (final PhysRun run : pinned.runs())
        {
            leaves += (run.lengthBytes() + run.pageSizeBytes() - 1) / run.pageSizeBytes();
        }
        final boolean zeroBased = rights.contains(Access.ZERO_BASED);
        final long tableIova = zeroBased ? newAddr & 0xfff : newAddr;
        // mlx5 rewrites the translation in place (UMR, same mkey) when the new one's DMA blocks, at its best page
        // size, fit the entries the mkey has (mlx5_ib_rereg_user_mr: can_use_umr_rereg_pas); otherwise it
        // registers a new mkey.
        final dev.rnicsim.mtt.PageSizeChoice choice;
        try
        {
            choice = device.tables().choose(runs, newAddr, newLength, tableIova);
        }
        catch (final TableException e)
        {
            context.process().unpinUserPages(pinned);
            throw Errors.reregCmd(e);
        }
        final boolean newKey = device.profile().follows(ProviderRule.REREG_TRANSLATION_NEW_KEY)
            && (choice.pageSizeBytes() == 0 || choice.blocks() > mkeyCapacity(mr.mttEntries()));
        final RegisteredMr registered;
        long dropped = 0;
        try
        {
            registered = newKey ? device.tables().register(target.pdNum, runs, newAddr, newLength, tableIova, bits,
                    SimHostMemory.basePageBytes(context.process()))
                : device.tables().retranslate(mr.lkey(), target.pdNum, runs, newAddr, newLength, tableIova, bits,
                    SimHostMemory.basePageBytes(context.process()));
        }
        catch (final TableException e)
        {
            context.process().unpinUserPages(pinned);
            throw Errors.reregCmd(e);
        }
        final int oldKey = mr.lkey();
        device.forgetZeroBased(oldKey);
        if (newKey)
        {
            dropped = device.tables().deregister(oldKey);
        }
        final PinnedPages old = mr.pinned();
        old.process().unpinUserPages(old);
        final int key = registered.key();
        if (zeroBased)
        {
            device.zeroBased(key, tableIova);
        }
        final int rkey = device.profile().rkeyOnlyWithRemoteAccess() && disjoint(rights, REMOTE) ? 0 : key;
        moveTo(mr, target);
        mr.reregistered(target, newAddr, newLength, zeroBased ? 0 : newAddr, key, rkey, rights, pinned, registered);
        device.count(SimCounter.MR_REREGISTRATIONS, 1);
        device.count(SimCounter.PINNED_BYTES, pinned.lengthBytes() - old.lengthBytes());
        final long durationNs = device.fabric().costModel().registrationNs(pinned.pageCount(), leaves,
            registered.mtt().entries());
        device.fabric().span(device, "rereg_mr", "registration", durationNs, java.util.Map.of("old_lkey", oldKey,
            "lkey", key, "pages_pinned", pinned.pageCount(), "mtt_entries", registered.mtt().entries()));
        device.record(new RegistrationEvent(RegistrationEvent.Kind.REG, startNs, durationNs, key, newAddr, newLength,
            mr.iova(), Access.toBits(rights), pinned.pageCount(), leaves, registered.pageSizeBytes(),
            registered.mtt().entries(), dropped));
        device.invalidated("rereg_mr", oldKey, dropped);
        device.observe(o -> o.reregistered(mr, oldKey));
    }

    /** Entries an mlx5 mkey holds: its cache bucket's, a power of two (mr.c: {@code 1 << cache_ent->order}). */
    private static long mkeyCapacity(final long entries)
    {
        return entries <= 1 ? 1 : Long.highestOneBit(entries - 1) << 1;
    }

    private void moveTo(final SimMr mr, final SimPd target)
    {
        if (target != this)
        {
            mrs.remove(mr);
            target.mrs.add(mr);
        }
    }

    private static ReregException reregInput(final String message)
    {
        return new ReregException(Errno.EINVAL.code(), ReregException.ERR_INPUT, message);
    }

    private static ReregException reregCmd(final Errno errno, final String message)
    {
        return new ReregException(errno.code(), ReregException.ERR_CMD, message);
    }

    @Override
    public QueuePair createQp(final QpInitAttr attr)
    {
        return context.device().fabric().guarded(() -> createQpNow(attr));
    }

    private QueuePair createQpNow(final QpInitAttr attr)
    {
        checkOpen("ibv_create_qp");
        if (attr == null)
        {
            throw Errors.invalid("ibv_create_qp", "attr is null"
                + "; pass a QP init attr");
        }
        final SimQp qp = SimQp.create(this, attr);
        qps.add(qp);
        return qp;
    }

    void qpClosed(final SimQp qp)
    {
        qps.remove(qp);
    }

    @Override
    public dev.rnicsim.verbs.SharedReceiveQueue createSrq(final dev.rnicsim.verbs.SrqAttr attr)
    {
        return context.device().fabric().guarded(() ->
        {
            checkOpen("ibv_create_srq");
            final SimSrq srq = SimSrq.create(this, attr, context.device().srqsLive());
            srqs.add(srq);
            context.device().srqsLive(1);
            return srq;
        });
    }

    @Override
    public dev.rnicsim.verbs.SharedReceiveQueue createXrcSrq(final dev.rnicsim.verbs.XrcDomain xrcd,
        final dev.rnicsim.verbs.CompletionQueue cq, final dev.rnicsim.verbs.SrqAttr attr)
    {
        return context.device().fabric().guarded(() ->
        {
            checkOpen("ibv_create_srq_ex");
            final SimSrq srq = SimSrq.createXrc(this, xrcd, cq, attr, context.device().srqsLive());
            srqs.add(srq);
            context.device().srqsLive(1);
            return srq;
        });
    }

    void srqClosed(final SimSrq srq)
    {
        if (srqs.remove(srq))
        {
            context.device().srqsLive(-1);
        }
    }

    @Override
    public dev.rnicsim.verbs.AddressHandle createAh(final dev.rnicsim.verbs.AhAttr attr)
    {
        checkOpen("ibv_create_ah");
        final SimAh ah = SimAh.create(this, attr);
        ahs.add(ah);
        return ah;
    }

    void ahClosed(final SimAh ah)
    {
        ahs.remove(ah);
    }

    /**
     * @return the live MRs of this PD.
     */
    public List<SimMr> memoryRegions()
    {
        return List.copyOf(mrs);
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    @Override
    public void close()
    {
        context.device().fabric().guardedRun(this::closeNow);
    }

    private void closeNow()
    {
        if (closed)
        {
            return;
        }
        RuntimeException failure = Closing.each(List.copyOf(windows), SimMw::close, null);
        failure = Closing.each(List.copyOf(fastRegs), SimFastRegMr::close, failure);
        failure = Closing.each(List.copyOf(odpMrs), SimOdpMr::close, failure);
        failure = Closing.each(List.copyOf(peerMrs), SimPeerMr::close, failure);
        failure = Closing.each(List.copyOf(mrs), SimMr::close, Closing.each(List.copyOf(qps), SimQp::close,
            failure));
        failure = Closing.each(List.copyOf(srqs), SimSrq::close, Closing.each(List.copyOf(ahs), SimAh::close,
            failure));
        closed = true;
        context.pdClosed(this);
        if (failure != null)
        {
            throw failure;
        }
    }

    @Override
    public MemoryRegion regDmMr(final dev.rnicsim.verbs.DeviceMemory dm, final long dmOffset, final long lengthBytes,
        final Set<Access> access)
    {
        checkOpen("ibv_reg_dm_mr");
        return context.device().fabric().guarded(() -> SimDmMr.register(this, dm, dmOffset, lengthBytes, access));
    }

    @Override
    public MemoryRegion allocNullMr()
    {
        checkOpen("ibv_alloc_null_mr");
        return context.device().fabric().guarded(() -> SimNullMr.allocate(this));
    }

    @Override
    public void dealloc()
    {
        final String verb = "ibv_dealloc_pd";
        checkOpen(verb);
        final long users = (long)mrs.size() + odpMrs.size() + peerMrs.size() + fastRegs.size() + windows.size()
            + qps.size() + srqs.size() + ahs.size() + extraUsers;
        if (users > 0)
        {
            throw Errors.of(verb, Errno.EBUSY, "the PD still has " + mrs.size() + " MR(s), " + odpMrs.size()
                + " ODP MR(s), " + peerMrs.size() + " GPU MR(s), " + fastRegs.size() + " fast-registration MR(s), "
                + windows.size() + " memory window(s), " + qps.size() + " QP(s), " + srqs.size() + " SRQ(s), "
                + ahs.size() + " address handle(s) and " + extraUsers + " other "
                + "object(s) (the kernel frees a PD only when its use count is 0); destroy them first, or close() the "
                + "PD to release everything it holds");
        }
        close();
    }

    /** Users of the PD the lists above do not hold (null MRs, device-memory MRs), for {@link #dealloc()}. */
    private long extraUsers;

    void userAdded(final int delta)
    {
        extraUsers += delta;
    }

    void checkOpen(final String verb)
    {
        context.checkOpen(verb);
        if (closed)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "the PD is closed"
                + " (ibv_dealloc_pd or close released it); allocate a new PD");
        }
    }
}
