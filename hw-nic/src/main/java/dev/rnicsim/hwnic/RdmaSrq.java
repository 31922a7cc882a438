package dev.rnicsim.hwnic;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.XrcDomain;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * An rdma-core shared receive queue ({@code struct ibv_srq}, ibv_create_srq(3)): receive work requests every QP
 * created with it takes its receives from. It belongs to a PD and keeps it busy; a QP created with it keeps it busy in
 * turn ({@code ibv_destroy_srq} answers EBUSY, the kernel's {@code ib_destroy_srq_user}). Receives are written as
 * for a QP ({@link WorkRequests#writeRecv}) and posted through the inline {@code ibv_post_srq_recv}. An XRC SRQ
 * ({@link #createXrc}, ibv_create_srq_ex(3)) belongs to an XRC domain ({@link RdmaXrcd}) too and completes on its own
 * CQ; {@link #srqNum()} gives the number XRC_SEND QPs name.
 *
 * <p>Not thread safe (see {@link RdmaContext}).
 */
public final class RdmaSrq implements SharedReceiveQueue
{
    private static final long RECV_WR_BYTES = WrStructs.IBV_RECV_WR.byteSize();
    private static final long SGE_BYTES = WrStructs.IBV_SGE.byteSize();
    private static final long ATTR_MAX_WR = IbvStructs.offset(SrqVerbs.IBV_SRQ_ATTR, "max_wr");
    private static final long ATTR_MAX_SGE = IbvStructs.offset(SrqVerbs.IBV_SRQ_ATTR, "max_sge");
    private static final long ATTR_SRQ_LIMIT = IbvStructs.offset(SrqVerbs.IBV_SRQ_ATTR, "srq_limit");
    /** {@code sizeof(struct ibv_srq)} is larger; the binding reads none of its members. */
    private static final long IBV_SRQ_BYTES = 8;

    private final RdmaPd pd;
    private final MemorySegment srq;
    private final SrqAttr granted;
    private final RdmaXrcd xrcd;
    private boolean closed;

    private RdmaSrq(final RdmaPd pd, final MemorySegment srq, final SrqAttr granted, final RdmaXrcd xrcd)
    {
        this.pd = pd;
        this.srq = srq;
        this.granted = granted;
        this.xrcd = xrcd;
    }

    /**
     * {@code ibv_create_srq}.
     *
     * @param pd   the PD.
     * @param attr max_wr, max_sge and srq_limit.
     * @return the SRQ, with the capacities the device granted.
     * @throws VerbsException EINVAL for a null attr (checked here); otherwise the errno the library gave (EINVAL for
     *                        max_wr or max_sge of 0 or above max_srq_wr / max_srq_sge, EOPNOTSUPP without SRQs,
     *                        ENOMEM when max_srq SRQs live).
     */
    static RdmaSrq create(final RdmaPd pd, final SrqAttr attr)
    {
        final String verb = "ibv_create_srq";
        if (attr == null)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "attr is null");
        }
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment init = a.allocate(SrqVerbs.IBV_SRQ_INIT_ATTR);
            final MemorySegment at = init.asSlice(SrqVerbs.SRQ_INIT_ATTR, SrqVerbs.IBV_SRQ_ATTR);
            write(at, attr);
            final Errnos.Result r = pd.context().lib().srqs().createSrq(pd.segment(), init);
            if (r.isNull())
            {
                throw new VerbsException(verb, r.errno(), pd.context().device().name() + ": " + attr + " (max_srq="
                    + pd.context().attributes().maxSrq() + "; max_wr and max_sge from 1 to the device's max_srq_wr and "
                    + "max_srq_sge, srq_limit at most max_wr)");
            }
            return new RdmaSrq(pd, r.pointer(IBV_SRQ_BYTES), read(at), null);
        }
    }

    /**
     * {@code ibv_create_srq_ex} with srq_type IBV_SRQT_XRC and comp_mask TYPE, PD, XRCD and CQ
     * (ibv_create_srq_ex(3)).
     *
     * @param pd   the PD.
     * @param xrcd the XRC domain.
     * @param cq   the CQ its receive completions go to.
     * @param attr max_wr, max_sge and srq_limit.
     * @return the SRQ, with the capacities the device granted.
     * @throws VerbsException EINVAL for a null attr, or a domain or CQ that is not an open one of the PD's context
     *                        (checked here); otherwise the errno the library gave (EOPNOTSUPP without XRC, EINVAL
     *                        for attributes as {@link #create}, ENOMEM when max_srq SRQs live).
     */
    static RdmaSrq createXrc(final RdmaPd pd, final XrcDomain xrcd, final CompletionQueue cq, final SrqAttr attr)
    {
        final String verb = "ibv_create_srq_ex";
        if (attr == null)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "attr is null");
        }
        if (!(xrcd instanceof RdmaXrcd x) || x.isClosed() || x.context() != pd.context())
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "the XRC domain must be an open domain of the PD's "
                + "context: " + xrcd);
        }
        if (!(cq instanceof RdmaCq c) || c.isClosed() || c.context() != pd.context())
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "the CQ must be an open CQ of the PD's context: " + cq);
        }
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment init = a.allocate(XrcVerbs.IBV_SRQ_INIT_ATTR_EX);
            final MemorySegment at = init.asSlice(XrcVerbs.SRQ_EX_ATTR, SrqVerbs.IBV_SRQ_ATTR);
            write(at, attr);
            init.set(JAVA_INT, XrcVerbs.SRQ_EX_COMP_MASK, XrcVerbs.IBV_SRQ_INIT_ATTR_TYPE
                | XrcVerbs.IBV_SRQ_INIT_ATTR_PD | XrcVerbs.IBV_SRQ_INIT_ATTR_XRCD | XrcVerbs.IBV_SRQ_INIT_ATTR_CQ);
            init.set(JAVA_INT, XrcVerbs.SRQ_EX_SRQ_TYPE, XrcVerbs.IBV_SRQT_XRC);
            init.set(ADDRESS, XrcVerbs.SRQ_EX_PD, pd.segment());
            init.set(ADDRESS, XrcVerbs.SRQ_EX_XRCD, x.segment());
            init.set(ADDRESS, XrcVerbs.SRQ_EX_CQ, c.segment());
            final Errnos.Result r = pd.context().lib().xrcs().createSrqEx(pd.context().segment(), init);
            if (r.isNull())
            {
                throw new VerbsException(verb, r.errno(), pd.context().device().name() + ": XRC SRQ " + attr + " in "
                    + x + " (max_srq=" + pd.context().attributes().maxSrq() + "; max_wr and max_sge from 1 to the "
                    + "device's max_srq_wr and max_srq_sge, srq_limit at most max_wr)");
            }
            return new RdmaSrq(pd, r.pointer(IBV_SRQ_BYTES), read(at), x);
        }
    }

    private static void write(final MemorySegment at, final SrqAttr attr)
    {
        at.set(JAVA_INT, ATTR_MAX_WR, attr.maxWr());
        at.set(JAVA_INT, ATTR_MAX_SGE, attr.maxSge());
        at.set(JAVA_INT, ATTR_SRQ_LIMIT, attr.srqLimit());
    }

    private static SrqAttr read(final MemorySegment at)
    {
        return new SrqAttr(at.get(JAVA_INT, ATTR_MAX_WR), at.get(JAVA_INT, ATTR_MAX_SGE),
            at.get(JAVA_INT, ATTR_SRQ_LIMIT));
    }

    @Override
    public RdmaPd pd()
    {
        return pd;
    }

    /**
     * @return the capacities the device granted at creation (max_wr and max_sge as the provider wrote them back).
     */
    public SrqAttr granted()
    {
        return granted;
    }

    /**
     * {@code ibv_post_srq_recv}.
     *
     * @throws PostException EINVAL for a null list or work request, or on a destroyed SRQ; otherwise the errno the
     *                       library gave (EINVAL for more SGEs than max_sge, ENOMEM when full) with the index of the
     *                       refused work request.
     */
    @Override
    public void postRecv(final List<RecvWr> wrs)
    {
        final String verb = "ibv_post_srq_recv";
        if (wrs == null || closed)
        {
            throw new PostException(verb, Errno.EINVAL.code(), 0, wrs == null ? "the work-request list is null"
                : "the SRQ is destroyed");
        }
        int sgeTotal = 0;
        int count = 0;
        for (final RecvWr wr : wrs)
        {
            if (wr == null)
            {
                break;
            }
            sgeTotal += wr.sgList().size();
            count++;
        }
        if (count > 0)
        {
            try (Arena a = Arena.ofConfined())
            {
                final MemorySegment array = a.allocate(WrStructs.IBV_RECV_WR, count);
                final MemorySegment sges = a.allocate(WrStructs.IBV_SGE, Math.max(1, sgeTotal));
                int sgeAt = 0;
                for (int i = 0; i < count; i++)
                {
                    final RecvWr wr = wrs.get(i);
                    final MemorySegment w = array.asSlice(i * RECV_WR_BYTES, RECV_WR_BYTES);
                    WorkRequests.writeRecv(w, wr, sges.asSlice(sgeAt * SGE_BYTES, wr.sgList().size() * SGE_BYTES));
                    w.set(ADDRESS, WrStructs.RECV_WR_NEXT, i + 1 < count
                        ? MemorySegment.ofAddress(array.address() + (i + 1) * RECV_WR_BYTES) : MemorySegment.NULL);
                    sgeAt += wr.sgList().size();
                }
                final MemorySegment badWr = a.allocate(ADDRESS);
                final Errnos.Result r = pd.context().lib().srqs().postSrqRecv(pd.context().segment(), srq, array,
                    badWr);
                if (r.value() != 0)
                {
                    final long bad = badWr.get(ADDRESS, 0).address();
                    final long index = (bad - array.address()) / RECV_WR_BYTES;
                    throw new PostException(verb, r.errno(), bad >= array.address() && index < count ? (int)index : 0,
                        "refused by the provider (max_wr=" + granted.maxWr() + ", max_sge=" + granted.maxSge() + ")");
                }
            }
        }
        if (count < wrs.size())
        {
            throw new PostException(verb, Errno.EINVAL.code(), count, "the work request is null");
        }
    }

    /**
     * {@code ibv_modify_srq} with IBV_SRQ_LIMIT.
     *
     * @throws VerbsException the errno the library gave (EINVAL for a limit above max_wr).
     */
    @Override
    public void modifyLimit(final int srqLimit)
    {
        modify(ATTR_SRQ_LIMIT, srqLimit, SrqVerbs.IBV_SRQ_LIMIT, "srq_limit=" + srqLimit + " (max_wr="
            + granted.maxWr() + ")");
    }

    /**
     * {@code ibv_modify_srq} with IBV_SRQ_MAX_WR: the provider resizes the SRQ where the device can
     * (IBV_DEVICE_SRQ_RESIZE); {@link #query()} reports the size it granted.
     *
     * @throws VerbsException the errno the library gave (EINVAL where the device cannot resize or refuses the size;
     *                        EOPNOTSUPP where the provider has no resize).
     */
    @Override
    public void resize(final int maxWr)
    {
        modify(ATTR_MAX_WR, maxWr, SrqVerbs.IBV_SRQ_MAX_WR, "IBV_SRQ_MAX_WR: max_wr=" + maxWr
            + " (max_wr granted at creation " + granted.maxWr() + "); the device refused the new size; nothing "
            + "changed");
    }

    /**
     * {@code ibv_modify_srq} of one attribute.
     *
     * @param offset where the attribute sits in {@code struct ibv_srq_attr}.
     * @param value  its value.
     * @param mask   the {@code ibv_srq_attr_mask} bit.
     * @param detail what a refusal says.
     * @throws VerbsException the errno the library gave.
     */
    private void modify(final long offset, final int value, final int mask, final String detail)
    {
        final String verb = "ibv_modify_srq";
        checkOpen(verb);
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment at = a.allocate(SrqVerbs.IBV_SRQ_ATTR);
            at.set(JAVA_INT, offset, value);
            final Errnos.Result r = pd.context().lib().srqs().modifySrq(srq, at, mask);
            if (r.value() != 0)
            {
                throw new VerbsException(verb, r.errno(), detail);
            }
        }
    }

    /**
     * {@code ibv_query_srq}.
     *
     * @throws VerbsException the errno the library gave.
     */
    @Override
    public SrqAttr query()
    {
        final String verb = "ibv_query_srq";
        checkOpen(verb);
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment at = a.allocate(SrqVerbs.IBV_SRQ_ATTR);
            final Errnos.Result r = pd.context().lib().srqs().querySrq(srq, at);
            if (r.value() != 0)
            {
                throw new VerbsException(verb, r.errno(), "the SRQ " + granted);
            }
            return read(at);
        }
    }

    /**
     * Not available: libibverbs has no verb that counts the receives an SRQ holds (the device consumes them without
     * telling the process).
     *
     * @throws VerbsException EOPNOTSUPP always.
     */
    @Override
    public int receivesPosted()
    {
        throw new VerbsException("ibv_query_srq", Errno.EOPNOTSUPP.code(), "libibverbs does not report how many "
            + "receives an SRQ holds; count the completions instead, or use the simulated backend");
    }

    /**
     * {@code ibv_get_srq_num} (ibv_get_srq_num(3)).
     *
     * @throws VerbsException EINVAL on a destroyed SRQ; otherwise the errno the library gave (EOPNOTSUPP where the
     *                        provider has no {@code get_srq_num}, as rxe, or reports numbers of XRC SRQs only, as
     *                        mlx4).
     */
    @Override
    public int srqNum()
    {
        final String verb = "ibv_get_srq_num";
        checkOpen(verb);
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment num = a.allocate(JAVA_INT);
            final Errnos.Result r = pd.context().lib().xrcs().getSrqNum(pd.context().segment(), srq, num);
            if (r.value() != 0)
            {
                throw new VerbsException(verb, r.errno(), pd.context().device().name() + ": " + this
                    + (r.errno() == Errno.EOPNOTSUPP.code() ? " (the provider reports no number for "
                        + (xrcd == null ? "a basic SRQ; only XRC SRQs have one there" : "this SRQ") + ")" : ""));
            }
            return num.get(JAVA_INT, 0);
        }
    }

    /**
     * @return the XRC domain of an XRC SRQ, null for a basic SRQ.
     */
    @Override
    public RdmaXrcd xrcd()
    {
        return xrcd;
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    /**
     * {@code ibv_destroy_srq}. Idempotent.
     *
     * @throws VerbsException the errno the library gave (EBUSY while a QP created with it lives); the SRQ stays.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        final Errnos.Result r = pd.context().lib().srqs().destroySrq(srq);
        if (r.value() != 0)
        {
            throw new VerbsException("ibv_destroy_srq", r.errno(), "the SRQ stays" + (r.errno() == Errno.EBUSY.code()
                ? ": a QP created with it still lives; destroy the QP first" : ""));
        }
        closed = true;
        pd.srqClosed(this);
    }

    MemorySegment segment()
    {
        return srq;
    }

    private void checkOpen(final String verb)
    {
        if (closed)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "the SRQ is destroyed");
        }
    }

    @Override
    public String toString()
    {
        return "RdmaSrq[" + (xrcd != null ? "XRC, " : "") + granted + (closed ? ", destroyed" : "") + "]";
    }
}
