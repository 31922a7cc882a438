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
import dev.rnicsim.verbs.MemoryRegion;
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
    /** Rights that make the pin FOLL_WRITE ({@code ib_access_writable}, include/rdma/ib_umem.h). */
    private static final Set<Access> WRITABLE = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
        Access.REMOTE_ATOMIC, Access.MW_BIND);
    private static final Set<Access> REMOTE = EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ,
        Access.REMOTE_ATOMIC);

    private final SimContext context;
    private final int pdNum;
    private final java.util.Set<SimMr> mrs = new java.util.LinkedHashSet<>();
    private final java.util.Set<SimQp> qps = new java.util.LinkedHashSet<>();
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
        return register(addr, lengthBytes, addr, access, false);
    }

    @Override
    public MemoryRegion regMr(final long addr, final long lengthBytes, final long iova, final Set<Access> access)
    {
        return register(addr, lengthBytes, iova, access, true);
    }

    private SimMr register(final long addr, final long lengthBytes, final long iova, final Set<Access> access,
        final boolean explicitIova)
    {
        checkOpen(REG);
        if (access == null || access.contains(null))
        {
            throw Errors.invalid(REG, "access must be a set of Access flags (empty for none), got " + access);
        }
        final SimDevice device = context.device();
        final long startNs = device.fabric().clock().nowNs();
        final Set<Access> rights = access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access);
        final boolean zeroBased = rights.contains(Access.ZERO_BASED);
        final long tableIova = zeroBased ? addr & 0xfff : iova;
        try
        {
            checkArguments(device.profile().attributes(), addr, lengthBytes, iova, rights, explicitIova);
        }
        catch (final VerbsException e)
        {
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw e;
        }
        final UserProcess process = context.process();
        final PinnedPages pinned;
        try
        {
            pinned = process.pinUserPages(addr, lengthBytes, !disjoint(rights, WRITABLE), true);
        }
        catch (final KernelException e)
        {
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw Errors.of(REG, e);
        }
        final List<DmaRun> runs = new ArrayList<>(pinned.runs().size());
        long leaves = 0;
        for (final PhysRun run : pinned.runs())
        {
            runs.add(new DmaRun(run.physAddr(), run.lengthBytes()));
            leaves += (run.lengthBytes() + run.pageSizeBytes() - 1) / run.pageSizeBytes();
        }
        final RegisteredMr registered;
        try
        {
            registered = device.tables().register(pdNum, runs, addr, lengthBytes, tableIova, Access.toBits(rights)
                & ~Access.ZERO_BASED.bit());
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
            registered.mtt().entries());
        device.fabric().span(device, "reg_mr", "registration", durationNs, java.util.Map.of("lkey", key, "addr", addr,
            "length", lengthBytes, "pages_pinned", pinned.pageCount(), "page_size", registered.pageSizeBytes(),
            "mtt_entries", registered.mtt().entries()));
        device.count(SimCounter.MR_REGISTRATIONS, 1);
        device.count(SimCounter.PINNED_BYTES, pinned.lengthBytes());
        device.record(new RegistrationEvent(RegistrationEvent.Kind.REG, startNs, durationNs, key, addr, lengthBytes,
            mr.iova(), Access.toBits(rights), pinned.pageCount(), leaves, registered.pageSizeBytes(),
            registered.mtt().entries(), 0));
        return mr;
    }

    /**
     * The checks made before anything is pinned, in the kernel's order: page offsets of addr and iova
     * ({@code ib_uverbs_reg_mr}), access flags ({@code ib_check_mr_access}), length against {@code max_mr_size},
     * then zero and wrapping lengths ({@code ib_umem_get}).
     */
    private static void checkArguments(final DeviceAttributes a, final long addr, final long lengthBytes,
        final long iova, final Set<Access> rights, final boolean explicitIova)
    {
        if (explicitIova && (addr & 0xfff) != (iova & 0xfff))
        {
            throw Errors.invalid(REG, "addr=0x" + Long.toHexString(addr) + " and iova=0x" + Long.toHexString(iova)
                + " differ in their offset within a 4 KiB page (ib_uverbs_reg_mr)");
        }
        Access.checkDependencies(rights, REG);
        if (rights.contains(Access.ON_DEMAND))
        {
            throw Errors.of(REG, Errno.EOPNOTSUPP, "access ON_DEMAND: on-demand-paging MRs are not simulated yet "
                + "(issue #8); odp general caps of this device=0x" + Integer.toHexString(a.odpCaps().generalCaps()));
        }
        if (rights.contains(Access.FLUSH_GLOBAL) || rights.contains(Access.FLUSH_PERSISTENT))
        {
            throw Errors.of(REG, Errno.EOPNOTSUPP, "access " + rights + ": the device has no FLUSH capability "
                + "(ib_check_mr_access)");
        }
        if (lengthBytes == 0)
        {
            throw Errors.invalid(REG, "lengthBytes=0: an MR needs at least one byte (ib_umem_get)");
        }
        if (Long.compareUnsigned(lengthBytes, a.maxMrSizeBytes()) > 0)
        {
            throw Errors.invalid(REG, "lengthBytes=" + Long.toUnsignedString(lengthBytes) + " > max_mr_size="
                + Long.toUnsignedString(a.maxMrSizeBytes()));
        }
        if (Long.compareUnsigned(addr + lengthBytes, addr) < 0)
        {
            throw Errors.invalid(REG, "addr=0x" + Long.toHexString(addr) + " + lengthBytes="
                + Long.toUnsignedString(lengthBytes) + " wraps past 2^64 (ib_umem_get)");
        }
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
        final long startNs = device.fabric().clock().nowNs();
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
    }

    @Override
    public QueuePair createQp(final QpInitAttr attr)
    {
        checkOpen("ibv_create_qp");
        if (attr == null)
        {
            throw Errors.invalid("ibv_create_qp", "attr is null");
        }
        final SimQp qp = SimQp.create(this, attr);
        qps.add(qp);
        return qp;
    }

    void qpClosed(final SimQp qp)
    {
        qps.remove(qp);
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
        if (closed)
        {
            return;
        }
        final RuntimeException failure = Closing.each(List.copyOf(mrs), SimMr::close,
            Closing.each(List.copyOf(qps), SimQp::close, null));
        closed = true;
        context.pdClosed(this);
        if (failure != null)
        {
            throw failure;
        }
    }

    void checkOpen(final String verb)
    {
        context.checkOpen(verb);
        if (closed)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "the PD is closed");
        }
    }
}
