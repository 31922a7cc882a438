package dev.rnicsim.simnic;

import dev.rnicsim.mtt.DmaRun;
import dev.rnicsim.mtt.PageSizeChoice;
import dev.rnicsim.mtt.RegisteredMr;
import dev.rnicsim.mtt.TableException;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.PhysRun;
import dev.rnicsim.pagetable.PinnedPages;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.VerbsException;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A PD's pinned MRs: the driver path of an ordinary registration and deregistration, step by step. Models
 * libibverbs' {@code ibv_reg_mr}/{@code ibv_dereg_mr} fork support (verbs.c: MADV_DONTFORK before, MADV_DOFORK after),
 * the kernel's {@code ib_uverbs_reg_mr} (uverbs_cmd.c) with {@code ib_check_mr_access}, and {@code ib_umem_get}
 * (drivers/infiniband/core/umem.c): the RLIMIT_MEMLOCK charge and the long-term pin, physically contiguous pages merged
 * into DMA runs, the page size chosen ({@code ib_umem_find_best_pgsz}), MTT entries reserved and MPT index taken,
 * entries written, keys returned. Any failure undoes every earlier step, so a failed call leaves no pin, no charge and
 * no table entry. An MR over GPU memory goes to {@link PeerMemRegistration} once the arguments are checked.
 *
 * <p>Not thread safe.
 */
final class UmemRegistration
{
    static final String REG = "ibv_reg_mr";

    private final SimPd pd;
    private final SimContext context;
    private final int pdNum;
    private final Set<SimMr> mrs = new LinkedHashSet<>();

    UmemRegistration(final SimPd pd)
    {
        this.pd = pd;
        this.context = pd.context();
        this.pdNum = pd.pdNum();
    }

    /** libibverbs ibv_reg_mr: MADV_DONTFORK the range first (fork support), MADV_DOFORK it again on failure. */
    MemoryRegion register(final long addr, final long lengthBytes, final long iova, final Set<Access> access,
        final boolean explicitIova)
    {
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
                SimPd.madviseSpan(context.device(), fork, workBefore, "MADV_DONTFORK");
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
            AccessRules.checkDriverAccess(device.profile(), rights, REG);
        }
        catch (final VerbsException e)
        {
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw e;
        }
        final GpuBuffer gpuBuffer = device.host().gpuBufferAt(addr);
        if (gpuBuffer != null)
        {
            return pd.peerMem().registerPeerMemory(gpuBuffer, addr, lengthBytes, iova, rights);
        }
        final UserProcess process = context.process();
        final PinnedPages pinned;
        // pin_user_pages faults in the pages the process never touched: the cold part of a registration.
        final HostFaultClock faultIn = HostFaultClock.start(process.host());
        try
        {
            pinned = process.pinUserPages(addr, lengthBytes, AccessRules.writable(rights), true);
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
            throw Errors.pinFailed(REG, e, AccessRules.writable(rights), process);
        }
        final List<DmaRun> runs = dmaRuns(pinned, addr);
        final long leaves = leavesWalked(pinned);
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
                Map.of("addr", addr, "length", lengthBytes, "pages_pinned", pinned.pageCount(),
                    "errno", e.errno().name()));
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw Errors.of(REG, e);
        }
        final int key = registered.key();
        final int rkey = AccessRules.rkey(device.profile(), rights, key);
        if (zeroBased)
        {
            device.keys().zeroBased(key, tableIova);
        }
        final SimMr mr = new SimMr(pd, addr, lengthBytes, zeroBased ? 0 : iova, key, rkey, rights, pinned,
            registered);
        mrs.add(mr);
        final long durationNs = device.fabric().costModel().registrationNs(pinned.pageCount(), leaves,
            registered.mtt().entries()) + faultIn.faultsNs(device.fabric().costModel());
        // The span's arguments are built only for a trace listener (the clock advances either way).
        device.fabric().span(device, "reg_mr", "registration", durationNs, !device.fabric().tracing() ? Map.of()
            : Map.of("lkey", key, "addr", addr, "length", lengthBytes, "pages_pinned", pinned.pageCount(),
            "page_size", registered.pageSizeBytes(), "mtt_entries", registered.mtt().entries(),
            "pages_faulted_in", faultIn.minorFaults() + faultIn.majorFaults()));
        device.count(SimCounter.MR_REGISTRATIONS, 1);
        device.count(SimCounter.PINNED_BYTES, pinned.lengthBytes());
        device.record(RegistrationEvent.reg(startNs, durationNs, key, addr, lengthBytes, mr.iova(),
            Access.toBits(rights)).pinned(pinned.pageCount(), leaves).translation(registered.pageSizeBytes(),
            registered.mtt().entries()));
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
        final PageSizeChoice c;
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
            + t.maxTranslationEntries() + " (" + t.source() + MrSizeLimit.devicePagesNote(device.profile())
            + "); register it in smaller MRs or back it with huge pages");
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
            throw Errors.invalid(REG, "length=0: an MR needs at least one byte (ib_umem_get)"
                + "; register at least one byte");
        }
        MrSizeLimit.check(profile, lengthBytes, REG);
        if (Long.compareUnsigned(addr + lengthBytes, addr) < 0)
        {
            throw Errors.invalid(REG, "addr=0x" + Long.toHexString(addr) + " + length="
                + Long.toUnsignedString(lengthBytes) + " wraps past 2^64 (ib_umem_get)"
                + "; give a range that ends below 2^64");
        }
    }

    /**
     * The pinned pages as DMA runs from the 4 KiB page holding {@code addr}: on a host of 16 or 64 KiB pages the pin
     * starts at the base page, and the tables skip the bytes before that 4 KiB page, as the kernel's umem offset does.
     */
    static List<DmaRun> dmaRuns(final PinnedPages pinned, final long addr)
    {
        return new PinnedDmaRuns(pinned.runs(), (addr & (SimHostMemory.basePageBytes(pinned.process()) - 1)) & ~0xfffL);
    }

    /** @return the page-table leaves (4 KiB, 2 MiB or 1 GiB) the pin walked: the priced part of a pin. */
    static long leavesWalked(final PinnedPages pinned)
    {
        long leaves = 0;
        for (final PhysRun run : pinned.runs())
        {
            leaves += (run.lengthBytes() + run.pageSizeBytes() - 1) / run.pageSizeBytes();
        }
        return leaves;
    }

    /** The driver's deregistration: zap the MTT entries, invalidate the cache for the key, unpin, uncharge. */
    void deregister(final SimMr mr)
    {
        final SimDevice device = context.device();
        final KeyZap zap = KeyZap.of(device, mr.lkey(), mr.rkey());
        final PinnedPages pinned = mr.pinned();
        pinned.process().unpinUserPages(pinned);
        mrs.remove(mr);
        mr.markClosed();
        final long durationNs = device.fabric().costModel().deregistrationNs(pinned.pageCount());
        final long stallNs = device.fabric().costModel().invalidationStallNs();
        device.fabric().span(device, "dereg_mr", "registration", durationNs - stallNs,
            !device.fabric().tracing() ? Map.of() : Map.of("lkey", mr.lkey(), "pages_unpinned", pinned.pageCount(),
            "mtt_entries", mr.mttEntries()));
        zap.reportInvalidation(device, mr.lkey());
        device.count(SimCounter.PINNED_BYTES, -pinned.lengthBytes());
        device.record(RegistrationEvent.dereg(zap.startNs(), durationNs, mr.lkey(), mr.addr(), mr.lengthBytes(),
            mr.iova(), Access.toBits(mr.access())).pinned(pinned.pageCount(), 0).translation(mr.pageSizeBytes(),
            mr.mttEntries()).dropped(zap.cacheEntriesDropped()));
        device.observe(o -> o.deregistered(mr));
        // libibverbs ibv_dereg_mr: MADV_DOFORK after the kernel deregistered.
        final ForkSafety fork = device.host().forkSafety(pinned.process());
        final long workBefore = fork.workNs(device.fabric().costModel());
        fork.doforkRange(mr.addr(), mr.lengthBytes());
        SimPd.madviseSpan(device, fork, workBefore, "MADV_DOFORK");
    }

    /** Moves a live MR to another PD's set ({@code CHANGE_PD}); nothing when the PD stays. */
    void moveTo(final SimMr mr, final UmemRegistration target)
    {
        if (target != this)
        {
            mrs.remove(mr);
            target.mrs.add(mr);
        }
    }

    /** @return the live pinned MRs, in registration order. */
    List<SimMr> live()
    {
        return List.copyOf(mrs);
    }

    /** @return how many pinned MRs are live. */
    int count()
    {
        return mrs.size();
    }
}
