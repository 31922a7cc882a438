package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AddressHandle;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.DeviceMemory;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.FastRegMr;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MrAdvice;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.XrcDomain;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A simulated protection domain: the verbs a PD answers ({@code ib_uverbs_*} of uverbs_cmd.c) and the objects it
 * holds, so that {@link #dealloc()} refuses while any is live (EBUSY) and {@link #close()} releases them all. Each
 * kind of memory registration is a collaborator named after the kernel code it models:
 * <ul>
 *   <li>{@link UmemRegistration}: pinned MRs ({@code ib_umem_get}, umem.c), with libibverbs' fork support;</li>
 *   <li>{@link UmemOdpRegistration}: ODP MRs and ibv_advise_mr ({@code ib_umem_odp_get}, umem_odp.c; mlx5
 *       odp.c);</li>
 *   <li>{@link PeerMemRegistration}: MRs over GPU memory, through a peer-memory client or a dma-buf
 *       ({@code ib_umem_dmabuf_get}, umem_dmabuf.c);</li>
 *   <li>{@link ReregMr}: ibv_rereg_mr ({@code ib_uverbs_rereg_mr});</li>
 *   <li>{@link MwAllocation} and {@link FastRegAllocation}: memory windows ({@code ib_uverbs_alloc_mw}) and
 *       fast-registration MRs ({@code ib_alloc_mr}).</li>
 * </ul>
 * Any failed registration undoes every earlier step, so it leaves no pin, no charge and no table entry.
 *
 * <p>Not thread safe.
 */
public final class SimPd implements ProtectionDomain
{
    /** How many of the MRs that hold a PD the EBUSY of {@code ibv_dealloc_pd} names. */
    private static final int MRS_NAMED = 4;

    private final SimContext context;
    private final int pdNum;
    private final Set<SimQp> qps = new LinkedHashSet<>();
    private final Set<SimSrq> srqs = new LinkedHashSet<>();
    private final Set<SimAh> ahs = new LinkedHashSet<>();
    private final UmemRegistration umem;
    private final UmemOdpRegistration odp;
    private final PeerMemRegistration peerMem;
    private final ReregMr rereg;
    private final MwAllocation windows;
    private final FastRegAllocation fastRegs;
    /** Users of the PD the collaborators do not hold (null MRs, device-memory MRs), for {@link #dealloc()}. */
    private long extraUsers;
    private boolean closed;

    SimPd(final SimContext context, final int pdNum)
    {
        this.context = context;
        this.pdNum = pdNum;
        this.umem = new UmemRegistration(this);
        this.odp = new UmemOdpRegistration(this);
        this.peerMem = new PeerMemRegistration(this);
        this.rereg = new ReregMr(this);
        this.windows = new MwAllocation(this);
        this.fastRegs = new FastRegAllocation(this);
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

    UmemRegistration umem()
    {
        return umem;
    }

    PeerMemRegistration peerMem()
    {
        return peerMem;
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

    /** ib_uverbs_reg_mr: an ODP registration ({@code ib_umem_odp_get}) or a pinned one ({@code ib_umem_get}). */
    private MemoryRegion register(final long addr, final long lengthBytes, final long iova, final Set<Access> access,
        final boolean explicitIova)
    {
        checkOpen(UmemRegistration.REG);
        if (access == null || AccessRules.hasNull(access))
        {
            throw Errors.invalid(UmemRegistration.REG, "access must be a set of Access flags (empty for none), got "
                + access);
        }
        if (access.contains(Access.ON_DEMAND))
        {
            return odp.register(addr, lengthBytes, iova, EnumSet.copyOf(access), explicitIova);
        }
        return umem.register(addr, lengthBytes, iova, access, explicitIova);
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
            device.fabric().span(device, "madvise", "registration", ns, Map.of("advice", advice));
        }
    }

    /** The driver's deregistration of a pinned MR ({@link UmemRegistration#deregister}). */
    void deregister(final SimMr mr)
    {
        umem.deregister(mr);
    }

    /** Deregisters an ODP MR ({@link UmemOdpRegistration#deregister}). */
    void deregisterOdp(final SimOdpMr mr)
    {
        odp.deregister(mr);
    }

    /**
     * @return the live ODP MRs of this PD.
     */
    public List<SimOdpMr> odpMemoryRegions()
    {
        return odp.live();
    }

    @Override
    public void adviseMr(final MrAdvice advice, final int flags, final List<Sge> sgList)
    {
        context.device().fabric().guardedRun(() -> odp.advise(advice, flags, sgList));
    }

    @Override
    public MemoryRegion regDmabufMr(final long offset, final long lengthBytes, final long iova, final int fd,
        final Set<Access> access)
    {
        return context.device().fabric().guarded(() -> peerMem.registerDmabuf(offset, lengthBytes, iova, fd, access));
    }

    /** Deregisters an MR over GPU memory ({@link PeerMemRegistration#deregister}). */
    void deregisterPeer(final SimPeerMr mr)
    {
        peerMem.deregister(mr);
    }

    /**
     * @return the live MRs over GPU memory of this PD.
     */
    public List<SimPeerMr> peerMemoryRegions()
    {
        return peerMem.live();
    }

    /**
     * As the interface, with the device's refusal first: a device without windows answers EOPNOTSUPP whatever the
     * type (libibverbs finds no alloc_mw in the provider), one with windows EINVAL for a type other than 1 or 2.
     */
    @Override
    public MemoryWindow allocMw(final int typeCode)
    {
        checkOpen("ibv_alloc_mw");
        windows.checkSupported("ibv_alloc_mw");
        return ProtectionDomain.super.allocMw(typeCode);
    }

    @Override
    public MemoryWindow allocMw(final MwType type)
    {
        return context.device().fabric().guarded(() -> windows.allocate(type));
    }

    /** ibv_dealloc_mw ({@link MwAllocation#dealloc}). */
    void deallocMw(final SimMw mw)
    {
        windows.dealloc(mw);
    }

    @Override
    public FastRegMr allocMr(final int maxNumSg)
    {
        return context.device().fabric().guarded(() -> fastRegs.allocate(maxNumSg));
    }

    /** ibv_dereg_mr of a fast-registration MR ({@link FastRegAllocation#dealloc}). */
    void deallocFastReg(final SimFastRegMr mr)
    {
        fastRegs.dealloc(mr);
    }

    /**
     * @return the live fast-registration MRs of this PD.
     */
    public List<SimFastRegMr> fastRegMrs()
    {
        return fastRegs.live();
    }

    /**
     * @return the live memory windows of this PD.
     */
    public List<SimMw> memoryWindows()
    {
        return windows.live();
    }

    /** @return the live windows, not copied: for a search that changes none. */
    java.util.Collection<SimMw> windowsView()
    {
        return windows.view();
    }

    /** @return the live fast-registration MRs, not copied: for a search that changes none. */
    java.util.Collection<SimFastRegMr> fastRegsView()
    {
        return fastRegs.view();
    }

    /** ibv_rereg_mr of a pinned MR of this PD ({@link ReregMr#rereg}). Nothing changes on failure. */
    void rereg(final SimMr mr, final Set<ReregFlag> flags, final ProtectionDomain newPd, final long newAddr,
        final long newLength, final Set<Access> newAccess)
    {
        rereg.rereg(mr, flags, newPd, newAddr, newLength, newAccess);
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
    public SharedReceiveQueue createSrq(final SrqAttr attr)
    {
        return context.device().fabric().guarded(() ->
        {
            checkOpen("ibv_create_srq");
            final SimSrq srq = SimSrq.create(this, attr, context.device().objects().srqsLive());
            srqs.add(srq);
            context.device().objects().srqsLive(1);
            return srq;
        });
    }

    @Override
    public SharedReceiveQueue createXrcSrq(final XrcDomain xrcd,
        final CompletionQueue cq, final SrqAttr attr)
    {
        return context.device().fabric().guarded(() ->
        {
            checkOpen("ibv_create_srq_ex");
            final SimSrq srq = SimSrq.createXrc(this, xrcd, cq, attr, context.device().objects().srqsLive());
            srqs.add(srq);
            context.device().objects().srqsLive(1);
            return srq;
        });
    }

    void srqClosed(final SimSrq srq)
    {
        if (srqs.remove(srq))
        {
            context.device().objects().srqsLive(-1);
        }
    }

    @Override
    public AddressHandle createAh(final AhAttr attr)
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
        return umem.live();
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
        RuntimeException failure = Closing.each(windows.live(), SimMw::close, null);
        failure = Closing.each(fastRegs.live(), SimFastRegMr::close, failure);
        failure = Closing.each(odp.live(), SimOdpMr::close, failure);
        failure = Closing.each(peerMem.live(), SimPeerMr::close, failure);
        failure = Closing.each(umem.live(), SimMr::close, Closing.each(List.copyOf(qps), SimQp::close,
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
    public MemoryRegion regDmMr(final DeviceMemory dm, final long dmOffset, final long lengthBytes,
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
        final long users = (long)umem.count() + odp.count() + peerMem.count() + fastRegs.count() + windows.count()
            + qps.size() + srqs.size() + ahs.size() + extraUsers;
        if (users > 0)
        {
            throw Errors.of(verb, Errno.EBUSY, "the PD still has " + umem.count() + " MR(s), " + odp.count()
                + " ODP MR(s), " + peerMem.count() + " GPU MR(s), " + fastRegs.count() + " fast-registration MR(s), "
                + windows.count() + " memory window(s), " + qps.size() + " QP(s), " + srqs.size() + " SRQ(s), "
                + ahs.size() + " address handle(s) and " + extraUsers + " other "
                + "object(s) (the kernel frees a PD only when its use count is 0)" + pinnedMrsNamed()
                + "; destroy them first, or close() the PD to release everything it holds");
        }
        close();
    }

    /**
     * The pinned MRs that keep a PD from being freed, named by key, length and address (at most
     * {@value #MRS_NAMED}), so that a teardown which skipped one finds it: perftest's "Failed to deallocate PD -
     * Device or resource busy" came from an MR its destroy path no longer deregistered (linux-rdma/perftest issue
     * 52, fixed by pull request 77).
     */
    private String pinnedMrsNamed()
    {
        final List<SimMr> live = umem.live();
        if (live.isEmpty())
        {
            return "";
        }
        final StringBuilder b = new StringBuilder("; MRs still registered on it:");
        for (int i = 0; i < Math.min(MRS_NAMED, live.size()); i++)
        {
            final SimMr mr = live.get(i);
            b.append(i == 0 ? " " : ", ").append("lkey 0x").append(Integer.toHexString(mr.lkey())).append(" (")
                .append(mr.lengthBytes()).append(" bytes at 0x").append(Long.toHexString(mr.addr())).append(')');
        }
        return b.append(live.size() > MRS_NAMED ? " and " + (live.size() - MRS_NAMED) + " more" : "")
            .append(" (ibv_dereg_mr each)").toString();
    }


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
