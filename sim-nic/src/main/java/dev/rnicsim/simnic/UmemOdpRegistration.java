package dev.rnicsim.simnic;

import dev.rnicsim.mtt.TableException;
import dev.rnicsim.pagetable.BasePage;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MrAdvice;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A PD's on-demand-paging MRs: registration without a pin, deregistration and prefetch advice. Models
 * {@code ib_umem_odp_get} and {@code ib_init_umem_odp} (drivers/infiniband/core/umem_odp.c) with the driver's side in
 * mlx5's odp.c and mr.c ({@code create_user_odp_mr}, {@code mlx5_ib_alloc_implicit_mr},
 * {@code mlx5_ib_advise_mr_prefetch}, {@code get_prefetchable_mr}, {@code pagefault_mr}); the faults and
 * invalidations of a live MR are {@link SimOdpMr}'s. With fork support on, libibverbs leaves an ODP range out of
 * MADV_DONTFORK (rdma-core "verbs: Prevent dontfork on ODP MR", PR #834: ODP follows the page tables, so a
 * copy-on-write after fork reaches the device as an invalidation), so nothing here madvises.
 *
 * <p>Not thread safe.
 */
final class UmemOdpRegistration
{
    private static final String REG = UmemRegistration.REG;

    private final SimPd pd;
    private final SimContext context;
    private final int pdNum;
    private final Set<SimOdpMr> odpMrs = new LinkedHashSet<>();

    UmemOdpRegistration(final SimPd pd)
    {
        this.pd = pd;
        this.context = pd.context();
        this.pdNum = pd.pdNum();
    }

    /**
     * The ODP registration path ({@code ib_check_mr_access}, then mlx5 {@code create_user_odp_mr} or
     * {@code mlx5_ib_alloc_implicit_mr}): EOPNOTSUPP without IBV_ODP_SUPPORT (or, for addr 0 and length SIZE_MAX,
     * without IBV_ODP_SUPPORT_IMPLICIT); no pin and no RLIMIT_MEMLOCK charge; an explicit MR maps the pages the CPU
     * has present now.
     */
    SimOdpMr register(final long addr, final long lengthBytes, final long iova,
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
        final int rkey = AccessRules.rkey(device.profile(), rights, key);
        if (zeroBased)
        {
            device.keys().zeroBased(key, tableIova);
        }
        final SimOdpMr mr = new SimOdpMr(pd, addr, lengthBytes, implicit ? 0 : tableIova, key, rkey, rights,
            implicit, pageShift);
        final long snapshot = mr.start();
        odpMrs.add(mr);
        device.keys().odpRegistered(mr);
        // Page-table leaves looked at for the snapshot: the present ones only (absent levels are skipped; the mkey
        // is created zapped), so the cost does not grow with the absent part of the range.
        final long pagesWalked = implicit ? 0 : snapshot;
        final long durationNs = device.fabric().costModel().odpRegistrationNs(pagesWalked, snapshot);
        device.fabric().span(device, "reg_mr", "registration", durationNs, Map.of("lkey", key, "addr", addr,
            "length", Long.toUnsignedString(lengthBytes), "odp", implicit ? "implicit" : "explicit",
            "entries_mapped", snapshot, "pages_pinned", 0));
        device.count(SimCounter.MR_REGISTRATIONS, 1);
        device.record(RegistrationEvent.reg(startNs, durationNs, key, addr, implicit ? UserProcess.TASK_SIZE
            : lengthBytes, mr.iova(), Access.toBits(rights)).translation(1L << pageShift, snapshot));
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
                + "; check odp_caps.general_caps of ibv_query_device_ex for IBV_ODP_SUPPORT before asking for it "
                + "and drop ON_DEMAND where it is missing, or use a device (or firmware configuration) that reports "
                + "ODP");
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
            throw Errors.invalid(REG, "length=0: an MR needs at least one byte (ib_umem_odp_get)"
                + "; register at least one byte");
        }
        if (Long.compareUnsigned(lengthBytes, a.maxMrSizeBytes()) > 0)
        {
            throw Errors.invalid(REG, "length=" + Long.toUnsignedString(lengthBytes) + " > max_mr_size="
                + Long.toUnsignedString(a.maxMrSizeBytes())
                + "; register a smaller range or split it into several MRs");
        }
        if (Long.compareUnsigned(addr + lengthBytes, addr) < 0
            || Long.compareUnsigned((addr + lengthBytes + 0xfff) & ~0xfffL, addr + lengthBytes) < 0)
        {
            throw Errors.of(REG, Errno.EOVERFLOW, "addr=0x" + Long.toHexString(addr) + " + length="
                + Long.toUnsignedString(lengthBytes) + " wraps past 2^64 (ib_init_umem_odp: check_add_overflow)"
                + "; give a range that ends below 2^64");
        }
        if (Long.compareUnsigned(addr + lengthBytes, UserProcess.TASK_SIZE) > 0)
        {
            throw Errors.of(REG, Errno.EFAULT, "addr=0x" + Long.toHexString(addr) + " + length="
                + Long.toUnsignedString(lengthBytes) + " wraps or leaves the user address space (ib_umem_odp_get)"
                + "; keep the range in user space");
        }
        // ib_umem_odp_get: the umem's page shift is PAGE_SHIFT (12, 14 or 16), or with IB_ACCESS_HUGETLB HPAGE_SHIFT,
        // the PMD (21 on x86-64, 25 or 29 on arm64 with 16 or 64 KiB pages), with no check of the VMA; a fault on pages
        // mapped smaller fails later (ib_umem_odp_map_dma_and_lock).
        final BasePage base = context.process().host().config().basePage();
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
    void deregister(final SimOdpMr mr)
    {
        final SimDevice device = context.device();
        final KeyZap zap = KeyZap.of(device, mr.lkey(), mr.rkey());
        mr.markClosed();
        odpMrs.remove(mr);
        device.keys().odpDeregistered(mr);
        final CostModel cost = device.fabric().costModel();
        final long durationNs = cost.deregFixedNs() + cost.invalidationStallNs();
        device.fabric().span(device, "dereg_mr", "registration", cost.deregFixedNs(), Map.of("lkey",
            mr.lkey(), "odp", mr.isImplicit() ? "implicit" : "explicit", "pages_unpinned", 0));
        zap.reportInvalidation(device, mr.lkey());
        device.record(RegistrationEvent.dereg(zap.startNs(), durationNs, mr.lkey(), mr.addr(), mr.isImplicit()
            ? UserProcess.TASK_SIZE : mr.lengthBytes(), mr.iova(), Access.toBits(mr.access()))
            .translation(1L << mr.pageShift(), 0).dropped(zap.cacheEntriesDropped()));
    }

    /**
     * ibv_advise_mr: every SGE checked first ({@code get_prefetchable_mr}: an ODP MR of this PD, PREFETCH_WRITE only
     * on a writable umem ({@code ib_access_writable}), the range inside the MR's iova space), then the pages faulted
     * in and mapped ({@code pagefault_mr}); with IBV_ADVISE_MR_FLAG_FLUSH the caller waits and sees a failure, without it the work is
     * queued and runs beside the caller.
     */
    void advise(final MrAdvice advice, final int flags,
        final List<Sge> sgList)
    {
        final String verb = "ibv_advise_mr";
        pd.checkOpen(verb);
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
        if ((flags & ~MrAdvice.FLAG_FLUSH) != 0)
        {
            throw Errors.invalid(verb, "flags=0x" + Integer.toHexString(flags) + ": only IBV_ADVISE_MR_FLAG_FLUSH (1)"
                + " is defined"
                + "; pass flags 0 or IBV_ADVISE_MR_FLAG_FLUSH");
        }
        // get_prefetchable_mr, for every SGE before any work is done.
        final List<SimOdpMr> targets = new ArrayList<>(sgList.size());
        for (int i = 0; i < sgList.size(); i++)
        {
            final Sge sge = sgList.get(i);
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
            if (mr.pd() != pd)
            {
                throw Errors.of(verb, Errno.EPERM, "sg_list[" + i + "] lkey 0x" + Integer.toHexString(sge.lkey())
                    + " is an MR of another PD (get_prefetchable_mr)"
                    + "; advise through the PD that holds the MR");
            }
            // get_prefetchable_mr asks for a writable umem, which ib_umem_get made writable for any of
            // LOCAL_WRITE, REMOTE_WRITE, REMOTE_ATOMIC and MW_BIND (ib_access_writable), not for LOCAL_WRITE alone.
            if (advice == MrAdvice.PREFETCH_WRITE && !AccessRules.writable(mr.access()))
            {
                throw Errors.of(verb, Errno.EPERM, "PREFETCH_WRITE on lkey 0x" + Integer.toHexString(sge.lkey())
                    + ", an MR without LOCAL_WRITE or another right that makes its umem writable (REMOTE_WRITE, "
                    + "REMOTE_ATOMIC, MW_BIND: ib_access_writable; get_prefetchable_mr)"
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
        final boolean fault = advice != MrAdvice.PREFETCH_NO_FAULT;
        final boolean write = advice == MrAdvice.PREFETCH_WRITE;
        long entries = 0;
        long walked = 0;
        long minor = 0;
        long major = 0;
        String failure = null;
        Errno failureErrno = Errno.EFAULT;
        for (int i = 0; i < targets.size() && failure == null; i++)
        {
            final Sge sge = sgList.get(i);
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
        final boolean flush = (flags & MrAdvice.FLAG_FLUSH) != 0;
        final Map<String, Object> args = Map.of("advice", advice.name(), "flush", flush,
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

    /** @return the live ODP MRs, in registration order. */
    List<SimOdpMr> live()
    {
        return List.copyOf(odpMrs);
    }

    /** @return how many ODP MRs are live. */
    int count()
    {
        return odpMrs.size();
    }
}
