package dev.rnicsim.hwnic;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.XrcDomain;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * An rdma-core XRC domain ({@code struct ibv_xrcd}, ibv_open_xrcd(3)) opened without a file (fd -1, so a new domain
 * of the context). The XRC SRQs and XRC_RECV QPs created in it keep it busy: {@code ibv_close_xrcd} answers EBUSY while one lives (the
 * kernel's {@code ib_dealloc_xrcd_user} checks the domain's use count).
 *
 * <p>Not thread safe (see {@link RdmaContext}).
 */
public final class RdmaXrcd implements XrcDomain
{
    /** fd -1: no file, a new domain (ibv_open_xrcd(3)). */
    private static final int NO_FILE = -1;
    /** {@code O_CREAT} of fcntl.h, the oflags a new domain is opened with (as ibv_xsrq_pingpong does). */
    static final int O_CREAT = 0100;

    private final RdmaContext ctx;
    private final MemorySegment xrcd;
    private final Set<RdmaQp> recvQps = new LinkedHashSet<>();
    private boolean closed;

    private RdmaXrcd(final RdmaContext ctx, final MemorySegment xrcd)
    {
        this.ctx = ctx;
        this.xrcd = xrcd;
    }

    /**
     * {@code ibv_open_xrcd} with comp_mask FD and OFLAGS, fd -1 and O_CREAT.
     *
     * @param ctx the context.
     * @return the domain.
     * @throws VerbsException the errno the library gave: EOPNOTSUPP when the device has no XRC (no
     *                        {@code open_xrcd} in the extended table; libibverbs answers so without a call), ENOMEM.
     */
    static RdmaXrcd open(final RdmaContext ctx)
    {
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment init = a.allocate(XrcVerbs.IBV_XRCD_INIT_ATTR);
            init.set(JAVA_INT, XrcVerbs.XRCD_INIT_COMP_MASK, XrcVerbs.IBV_XRCD_INIT_ATTR_FD
                | XrcVerbs.IBV_XRCD_INIT_ATTR_OFLAGS);
            init.set(JAVA_INT, XrcVerbs.XRCD_INIT_FD, NO_FILE);
            init.set(JAVA_INT, XrcVerbs.XRCD_INIT_OFLAGS, O_CREAT);
            final Errnos.Result r = ctx.lib().xrcs().openXrcd(ctx.segment(), init);
            if (r.isNull())
            {
                throw new VerbsException("ibv_open_xrcd", r.errno(), ctx.device().name() + ": no XRC domain opened"
                    + (r.errno() == Errno.EOPNOTSUPP.code() ? " (the device has no XRC: IBV_DEVICE_XRC is not in its "
                        + "device_cap_flags; use a device that has it, e.g. mlx4 or mlx5)" : ""));
            }
            return new RdmaXrcd(ctx, r.pointer(XrcVerbs.IBV_XRCD.byteSize()));
        }
    }

    /**
     * {@code ibv_create_qp_ex} with comp_mask IBV_QP_INIT_ATTR_XRCD and qp_type IBV_QPT_XRC_RECV
     * (ibv_create_qp_ex(3)): a target QP of this domain, in RESET, with no PD, CQ or queues.
     *
     * @return the QP.
     * @throws VerbsException EINVAL on a closed domain (checked here); otherwise the errno the library gave
     *                        (EOPNOTSUPP without XRC, ENOMEM when max_qp QPs live).
     */
    RdmaQp createRecvQp()
    {
        final String verb = "ibv_create_qp_ex";
        if (closed)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), this + ": the XRC domain is closed");
        }
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment init = a.allocate(ExtendedQpVerbs.IBV_QP_INIT_ATTR_EX);
            init.set(JAVA_INT, IbvStructs.QP_INIT_QP_TYPE, QpType.XRC_RECV.code());
            init.set(JAVA_INT, ExtendedQpVerbs.INIT_EX_COMP_MASK, ExtendedQpVerbs.IBV_QP_INIT_ATTR_XRCD);
            init.set(ADDRESS, ExtendedQpVerbs.INIT_EX_XRCD, xrcd);
            final Errnos.Result r = ctx.lib().extendedQps().createQpEx(ctx.segment(), init);
            if (r.isNull())
            {
                throw new VerbsException(verb, r.errno(), "XRC_RECV QP in " + this + " (max_qp="
                    + ctx.attributes().maxQp() + ")");
            }
            final RdmaQp qp = new RdmaQp(this, r.pointer(IbvStructs.IBV_QP.byteSize()));
            recvQps.add(qp);
            return qp;
        }
    }

    void qpClosed(final RdmaQp qp)
    {
        recvQps.remove(qp);
    }

    /**
     * For the context's close: destroys the XRC_RECV QPs of the domain, then closes it.
     */
    void closeWithQps()
    {
        final RuntimeException failure = Closing.each(recvQps, RdmaQp::close, null);
        if (failure != null)
        {
            throw failure;
        }
        close();
    }

    @Override
    public RdmaContext context()
    {
        return ctx;
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    /**
     * {@code ibv_close_xrcd}. Idempotent.
     *
     * @throws VerbsException the errno the library gave (EBUSY while an XRC SRQ of the domain lives); the domain
     *                        stays.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        final Errnos.Result r = ctx.lib().xrcs().closeXrcd(ctx.segment(), xrcd);
        if (r.value() != 0)
        {
            throw new VerbsException("ibv_close_xrcd", r.errno(), this + " stays" + (r.errno() == Errno.EBUSY.code()
                ? ": an XRC SRQ or XRC_RECV QP of it still lives; destroy those first" : ""));
        }
        closed = true;
        ctx.xrcdClosed(this);
    }

    MemorySegment segment()
    {
        return xrcd;
    }

    @Override
    public String toString()
    {
        return "RdmaXrcd[" + ctx.device().name() + (closed ? ", closed" : "") + "]";
    }
}
