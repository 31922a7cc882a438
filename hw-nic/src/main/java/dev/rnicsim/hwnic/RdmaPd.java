package dev.rnicsim.hwnic;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AddressHandle;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.FastRegMr;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.XrcDomain;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * An rdma-core protection domain ({@code struct ibv_pd}). Registration is {@code ibv_reg_mr_iova2}, which the
 * {@code ibv_reg_mr} and {@code ibv_reg_mr_iova} macros of verbs.h call; the checks (access dependencies, length,
 * page offsets) are the library's and the kernel's, so the errno is the device's own.
 *
 * <p>Not thread safe (see {@link RdmaContext}).
 */
public final class RdmaPd implements ProtectionDomain
{
    private final RdmaContext context;
    private final MemorySegment pd;
    private final Set<RdmaQp> qps = new LinkedHashSet<>();
    private final Set<RdmaMw> windows = new LinkedHashSet<>();
    private final Set<RdmaMr> mrs = new LinkedHashSet<>();
    private final Set<RdmaAh> ahs = new LinkedHashSet<>();
    private final Set<RdmaSrq> srqs = new LinkedHashSet<>();
    private boolean closed;

    RdmaPd(final RdmaContext context, final MemorySegment pd)
    {
        this.context = context;
        this.pd = pd;
    }

    @Override
    public RdmaContext context()
    {
        return context;
    }

    @Override
    public MemoryRegion regMr(final long addr, final long lengthBytes, final Set<Access> access)
    {
        return register(addr, lengthBytes, addr, access);
    }

    @Override
    public MemoryRegion regMr(final long addr, final long lengthBytes, final long iova, final Set<Access> access)
    {
        return register(addr, lengthBytes, iova, access);
    }

    private MemoryRegion register(final long addr, final long lengthBytes, final long iova, final Set<Access> access)
    {
        final String verb = "ibv_reg_mr";
        checkOpen(verb);
        if (access == null || hasNull(access))
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "access must be a set of Access flags, got " + access);
        }
        final Errnos.Result r = context.lib().registration().regMr(pd, addr, lengthBytes, iova, Access.toBits(access));
        if (r.isNull())
        {
            throw new VerbsException(verb, r.errno(), registrationFailure(r.errno(), addr, lengthBytes, iova,
                access));
        }
        final RdmaMr mr = new RdmaMr(this, r.pointer(IbvStructs.IBV_MR.byteSize()), iova,
            access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access));
        mrs.add(mr);
        return mr;
    }

    @Override
    public MemoryRegion regDmabufMr(final long offset, final long lengthBytes, final long iova, final int fd,
        final Set<Access> access)
    {
        final String verb = "ibv_reg_dmabuf_mr";
        checkOpen(verb);
        if (access == null || hasNull(access))
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "access must be a set of Access flags, got " + access);
        }
        final Errnos.Result r = context.lib().registration().regDmabufMr(pd, offset, lengthBytes, iova, fd,
            Access.toBits(access));
        if (r.isNull())
        {
            throw new VerbsException(verb, r.errno(), "offset=" + offset + " length="
                + Long.toUnsignedString(lengthBytes) + " iova=0x" + Long.toHexString(iova) + " fd=" + fd + " access="
                + access + (Errno.of(r.errno()) == Errno.EOPNOTSUPP ? ": the library or provider cannot register "
                + "dma-bufs" : ""));
        }
        final RdmaMr mr = new RdmaMr(this, r.pointer(IbvStructs.IBV_MR.byteSize()), iova,
            access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access));
        mrs.add(mr);
        return mr;
    }

    /** {@code ibv_reg_dm_mr} ({@link RdmaDm#register}): a zero-based MR over device memory of this PD's context. */
    @Override
    public MemoryRegion regDmMr(final dev.rnicsim.verbs.DeviceMemory dm, final long dmOffset, final long lengthBytes,
        final Set<Access> access)
    {
        checkOpen("ibv_reg_dm_mr");
        final RdmaMr mr = RdmaDm.register(this, dm, dmOffset, lengthBytes, access);
        mrs.add(mr);
        return mr;
    }

    /** True when the collection holds null (asked by iteration: immutable sets throw on contains(null)). */
    static boolean hasNull(final java.util.Collection<?> c)
    {
        for (final Object o : c)
        {
            if (o == null)
            {
                return true;
            }
        }
        return false;
    }

    /** The message of a failed registration: what was asked, and the likely cause of that errno. */
    private String registrationFailure(final int errno, final long addr, final long lengthBytes, final long iova,
        final Set<Access> access)
    {
        final String asked = "addr=0x" + Long.toHexString(addr) + " length=" + Long.toUnsignedString(lengthBytes)
            + " iova=0x" + Long.toHexString(iova) + " access=" + access;
        final Errno e = Errno.of(errno);
        return asked + switch (e)
        {
            case ENOMEM -> ": the pages could not be pinned or the device is out of MRs or translation entries (max_mr="
                + context.attributes().maxMr() + "); " + Diagnosis.memlock();
            case EPERM -> ": pinning is not allowed; " + Diagnosis.memlock();
            case EINVAL -> ": refused (REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE, the length must be 1 to "
                + "max_mr_size=0x" + Long.toHexString(context.attributes().maxMrSizeBytes())
                + ", addr and iova need the "
                + "same offset within a page, and every flag must be supported by the device)";
            case EFAULT -> ": part of the range is not mapped, or not writable for the rights asked";
            case EOPNOTSUPP -> ": the device does not support these access flags (ON_DEMAND needs ODP, general caps 0x"
                + Integer.toHexString(context.attributes().odpCaps().generalCaps()) + ")";
            default -> "";
        };
    }

    @Override
    public QueuePair createQp(final QpInitAttr attr)
    {
        checkOpen("ibv_create_qp");
        final RdmaQp qp = RdmaQp.create(this, attr);
        qps.add(qp);
        return qp;
    }

    /**
     * {@code ibv_create_srq} (ibv_create_srq(3)): see {@link RdmaSrq#create}.
     */
    @Override
    public SharedReceiveQueue createSrq(final SrqAttr attr)
    {
        checkOpen("ibv_create_srq");
        final RdmaSrq srq = RdmaSrq.create(this, attr);
        srqs.add(srq);
        return srq;
    }

    /**
     * {@code ibv_create_srq_ex} of type IBV_SRQT_XRC (ibv_create_srq_ex(3)): see {@link RdmaSrq#createXrc}.
     */
    @Override
    public SharedReceiveQueue createXrcSrq(final XrcDomain xrcd, final CompletionQueue cq, final SrqAttr attr)
    {
        checkOpen("ibv_create_srq_ex");
        final RdmaSrq srq = RdmaSrq.createXrc(this, xrcd, cq, attr);
        srqs.add(srq);
        return srq;
    }

    /**
     * {@code ibv_create_ah} (ibv_create_ah(3)): see {@link RdmaAh#create}.
     */
    @Override
    public AddressHandle createAh(final AhAttr attr)
    {
        checkOpen("ibv_create_ah");
        final RdmaAh ah = RdmaAh.create(this, attr);
        ahs.add(ah);
        return ah;
    }

    /**
     * {@code ibv_alloc_mw} (inline in verbs.h: EOPNOTSUPP when the provider has no {@code alloc_mw}).
     *
     * @param type type 1 or 2.
     * @return the window.
     * @throws VerbsException the provider's errno: EOPNOTSUPP without windows (or without this type), EINVAL,
     *                        ENOMEM.
     */
    @Override
    public MemoryWindow allocMw(final MwType type)
    {
        final String verb = "ibv_alloc_mw";
        checkOpen(verb);
        if (type == null)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "type must be TYPE_1 or TYPE_2");
        }
        final Errnos.Result r = context.lib().registration().allocMw(context.segment(), pd, type.code());
        if (r.isNull())
        {
            throw new VerbsException(verb, r.errno(), context.device().name() + ": no " + type + " window (max_mw="
                + context.attributes().maxMw() + ", device_cap_flags=0x"
                + Long.toHexString(context.attributes().deviceCapFlags()) + ")");
        }
        final RdmaMw mw = new RdmaMw(this, r.pointer(IbvStructs.IBV_MW.byteSize()), type);
        windows.add(mw);
        return mw;
    }

    /**
     * Not available: fast registration (IB_WR_REG_MR with {@code ib_alloc_mr}) is a kernel verb; libibverbs has no
     * user-space equivalent.
     *
     * @param maxNumSg ignored.
     * @return never.
     * @throws VerbsException EOPNOTSUPP always.
     */
    @Override
    public FastRegMr allocMr(final int maxNumSg)
    {
        throw new VerbsException("ib_alloc_mr", Errno.EOPNOTSUPP.code(), "fast registration (ib_alloc_mr, "
            + "IB_WR_REG_MR) is a kernel verb: libibverbs offers no user-space equivalent");
    }

    /**
     * {@code ibv_advise_mr} (ibv_advise_mr(3)): prefetch the pages of ODP MRs of this PD. verbs-api has no verb for
     * it; this is the hardware backend's own.
     *
     * @param advice {@code IBV_ADVISE_MR_ADVICE_PREFETCH} (0), {@code _PREFETCH_WRITE} (1) or
     *               {@code _PREFETCH_NO_FAULT} (2).
     * @param flags  0, or {@code MrAdvice.FLAG_FLUSH} ({@code IBV_ADVISE_MR_FLAG_FLUSH}): return once the
     *               translations are in the device.
     * @param sgList ranges of ODP MRs of this PD, by lkey.
     * @throws VerbsException the errno: EOPNOTSUPP when the provider lacks the verb, EFAULT, EINVAL, EPERM, ENOENT
     *                        as ibv_advise_mr(3) lists them.
     */
    @Override
    public void adviseMr(final dev.rnicsim.verbs.MrAdvice advice, final int flags, final List<Sge> sgList)
    {
        if ((flags & ~dev.rnicsim.verbs.MrAdvice.FLAG_FLUSH) != 0)
        {
            throw new VerbsException("ibv_advise_mr", dev.rnicsim.verbs.Errno.EINVAL.code(), "flags=0x"
                + Integer.toHexString(flags) + ": only IBV_ADVISE_MR_FLAG_FLUSH (1) is defined");
        }
        adviseMr(advice.code(), flags != 0, sgList);
    }

    public void adviseMr(final int advice, final boolean flush, final List<Sge> sges)
    {
        final String verb = "ibv_advise_mr";
        checkOpen(verb);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment sgList = arena.allocate(WrStructs.IBV_SGE, Math.max(1, sges.size()));
            for (int i = 0; i < sges.size(); i++)
            {
                final MemorySegment s = sgList.asSlice(i * WrStructs.IBV_SGE.byteSize(), WrStructs.IBV_SGE);
                s.set(JAVA_LONG, WrStructs.SGE_ADDR, sges.get(i).addr());
                s.set(JAVA_INT, WrStructs.SGE_LENGTH, (int)sges.get(i).lengthBytes());
                s.set(JAVA_INT, WrStructs.SGE_LKEY, sges.get(i).lkey());
            }
            final Errnos.Result r = context.lib().registration().adviseMr(context.segment(), pd, advice,
                flush ? Ibv.IBV_ADVISE_MR_FLAG_FLUSH : 0, sgList, sges.size());
            if (r.value() != 0)
            {
                throw new VerbsException(verb, r.errno(), "advice=" + advice + " flush=" + flush + " sges=" + sges);
            }
        }
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    /**
     * {@code ibv_dealloc_pd} itself: EBUSY (the kernel's) while the PD has MRs, windows, QPs, SRQs or address
     * handles.
     */
    @Override
    public void dealloc()
    {
        if (closed)
        {
            throw new VerbsException("ibv_dealloc_pd", Errno.EINVAL.code(), "the PD is closed");
        }
        final Errnos.Result r = context.lib().deallocPd(pd);
        if (r.value() != 0)
        {
            throw new VerbsException("ibv_dealloc_pd", r.errno(), "the kernel refused: the PD still has MRs, "
                + "windows, QPs, SRQs or address handles");
        }
        closed = true;
        context.pdClosed(this);
    }

    /**
     * Destroys this PD's QPs, deallocates its windows, deregisters its MRs, destroys its address handles and SRQs,
     * then {@code ibv_dealloc_pd}. Idempotent; when a child cannot be closed the PD stays allocated and the failure is
     * thrown.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        final RuntimeException failure = Closing.each(srqs, RdmaSrq::close, Closing.each(ahs, RdmaAh::close,
            Closing.each(mrs, RdmaMr::close, Closing.each(windows, RdmaMw::close, Closing.each(qps, RdmaQp::close,
                null)))));
        if (failure != null)
        {
            throw failure;
        }
        final Errnos.Result r = context.lib().deallocPd(pd);
        if (r.value() != 0)
        {
            throw new VerbsException("ibv_dealloc_pd", r.errno(), "the PD is still in use");
        }
        closed = true;
        context.pdClosed(this);
    }

    // ------------------------------------------------------------------ for the children

    MemorySegment segment()
    {
        return pd;
    }

    void qpClosed(final RdmaQp qp)
    {
        qps.remove(qp);
    }

    void srqClosed(final RdmaSrq srq)
    {
        srqs.remove(srq);
    }

    void ahClosed(final RdmaAh ah)
    {
        ahs.remove(ah);
    }

    void mwClosed(final RdmaMw mw)
    {
        windows.remove(mw);
    }

    void mrClosed(final RdmaMr mr)
    {
        mrs.remove(mr);
    }

    void mrMovedHere(final RdmaMr mr)
    {
        mrs.add(mr);
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
