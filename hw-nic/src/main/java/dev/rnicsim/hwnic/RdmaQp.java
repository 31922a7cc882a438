package dev.rnicsim.hwnic;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.QpAddress;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.UdSendWr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WrOpcode;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * An rdma-core queue pair ({@code struct ibv_qp}), RC, UC or UD. The state changes are {@code ibv_modify_qp} with
 * the attribute masks an RC connection needs (or any attributes through {@link #modify(dev.rnicsim.verbs.QpAttr,
 * Set)}); the address goes through the context's port and GID index (a global
 * route on RoCE). Posting is verbs.h's inline {@code ibv_post_send} / {@code ibv_post_recv}: the work requests are
 * written into {@code struct ibv_send_wr} / {@code ibv_recv_wr} arrays the QP keeps for reuse (DiSNI's stateful
 * verb calls, without JNI), linked, and passed to {@code context->ops.post_send}; {@code bad_wr} becomes the index
 * of {@link PostException}.
 *
 * <p>Not thread safe: one thread posts on a QP at a time (the reused arrays are the QP's).
 */
public final class RdmaQp implements QueuePair
{
    /** Local ACK timeout code for RC (4.096 µs × 2^14 ≈ 67 ms, IBA 9.7.6.1.3). */
    static final int ACK_TIMEOUT_CODE = 14;
    /** Most outstanding READs and atomics asked for, whatever the device allows. */
    static final int MAX_RD_ATOMIC = 16;

    private static final long SEND_WR_BYTES = WrStructs.IBV_SEND_WR.byteSize();
    private static final long RECV_WR_BYTES = WrStructs.IBV_RECV_WR.byteSize();
    private static final long SGE_BYTES = WrStructs.IBV_SGE.byteSize();

    private final RdmaPd pd;
    private final RdmaContext ctx;
    private final RdmaXrcd xrcd;
    private final MemorySegment qp;
    private final QpType type;
    private final RdmaSrq srq;
    private final int qpNum;
    private final int psn;
    private final PostArrays arrays = new PostArrays();
    private QpState tracked = QpState.RESET;
    private boolean closed;

    RdmaQp(final RdmaPd pd, final MemorySegment qp, final QpType type, final RdmaSrq srq)
    {
        this(pd.context(), pd, null, qp, type, srq);
    }

    /**
     * An XRC_RECV QP: of a domain, with no PD.
     */
    RdmaQp(final RdmaXrcd xrcd, final MemorySegment qp)
    {
        this(xrcd.context(), null, xrcd, qp, QpType.XRC_RECV, null);
    }

    private RdmaQp(final RdmaContext ctx, final RdmaPd pd, final RdmaXrcd xrcd, final MemorySegment qp,
        final QpType type, final RdmaSrq srq)
    {
        this.ctx = ctx;
        this.pd = pd;
        this.xrcd = xrcd;
        this.qp = qp;
        this.type = type;
        this.srq = srq;
        this.qpNum = qp.get(JAVA_INT, IbvStructs.QP_QP_NUM);
        // Any 24-bit start; derived from the QP number so that runs are reproducible.
        this.psn = (int)((qpNum * 2654435761L) & 0xffffff);
    }

    /**
     * {@code ibv_create_qp}, or {@code ibv_create_qp_ex} for a QP given send_ops_flags: see {@link QpCreation}.
     *
     * @param pd   the PD.
     * @param attr the QP's attributes.
     * @return the QP in RESET.
     */
    static RdmaQp create(final RdmaPd pd, final QpInitAttr attr)
    {
        return QpCreation.create(pd, attr);
    }

    /**
     * @return the PD; null for an XRC_RECV QP, which belongs to its XRC domain only.
     */
    @Override
    public RdmaPd pd()
    {
        return pd;
    }

    /**
     * @return the SRQ it was created with, or null.
     */
    @Override
    public RdmaSrq srq()
    {
        return srq;
    }

    @Override
    public int qpNum()
    {
        return qpNum;
    }

    @Override
    public QpType type()
    {
        return type;
    }

    /**
     * @return the state {@code ibv_query_qp} reports (the QP may have moved to ERR on its own); the last state set
     *     here if the query fails.
     */
    @Override
    public QpState state()
    {
        if (closed)
        {
            return tracked;
        }
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment attr = a.allocate(IbvStructs.IBV_QP_ATTR);
            final MemorySegment init = a.allocate(IbvStructs.IBV_QP_INIT_ATTR);
            final Errnos.Result r = ctx.lib().queryQp(qp, attr, Ibv.IBV_QP_STATE, init);
            final int code = attr.get(JAVA_INT, IbvStructs.QP_ATTR_QP_STATE);
            return r.value() == 0 && code >= 0 && code < QpState.values().length ? QpState.values()[code] : tracked;
        }
    }

    /**
     * {@code ibv_query_qp} with IBV_QP_CAP: the capacities the provider granted, from the init attributes it answers.
     *
     * @throws VerbsException the errno of ibv_query_qp, or EINVAL on a destroyed QP.
     */
    @Override
    public dev.rnicsim.verbs.QpCap cap()
    {
        checkOpen("ibv_query_qp");
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment attr = a.allocate(IbvStructs.IBV_QP_ATTR);
            final MemorySegment init = a.allocate(IbvStructs.IBV_QP_INIT_ATTR);
            final Errnos.Result r = ctx.lib().queryQp(qp, attr, Ibv.IBV_QP_STATE | 1 << 19, init); // IBV_QP_CAP
            if (r.value() != 0)
            {
                throw new VerbsException("ibv_query_qp", Errnos.errnoOf((int) r.value(), r.errno()), "IBV_QP_CAP of QP "
                    + qpNum);
            }
            return new dev.rnicsim.verbs.QpCap(init.get(JAVA_INT, IbvStructs.QP_INIT_MAX_SEND_WR),
                init.get(JAVA_INT, IbvStructs.QP_INIT_MAX_RECV_WR), init.get(JAVA_INT, IbvStructs.QP_INIT_MAX_SEND_SGE),
                init.get(JAVA_INT, IbvStructs.QP_INIT_MAX_RECV_SGE),
                init.get(JAVA_INT, IbvStructs.QP_INIT_MAX_INLINE_DATA));
        }
    }

    /**
     * @return LID and GID of the context's port, this QP's number and its first PSN.
     * @throws VerbsException the errno of ibv_query_port or ibv_query_gid.
     */
    @Override
    public QpAddress address()
    {
        checkOpen("ibv_query_port");
        final RdmaContext.Port port = ctx.port();
        return new QpAddress(port.lid(), port.gid(), qpNum(), psn);
    }

    @Override
    public void modifyToInit(final Set<Access> qpAccessFlags)
    {
        checkOpen("ibv_modify_qp");
        if (qpAccessFlags == null || RdmaPd.hasNull(qpAccessFlags))
        {
            throw new VerbsException("ibv_modify_qp", Errno.EINVAL.code(), "qp_access_flags must be a set (empty for "
                + "none)");
        }
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment attr = a.allocate(IbvStructs.IBV_QP_ATTR);
            attr.set(JAVA_INT, IbvStructs.QP_ATTR_QP_STATE, QpState.INIT.ordinal());
            attr.set(JAVA_SHORT, IbvStructs.QP_ATTR_PKEY_INDEX, (short)0);
            attr.set(JAVA_BYTE, IbvStructs.QP_ATTR_PORT_NUM, (byte)ctx.port().num());
            attr.set(JAVA_INT, IbvStructs.QP_ATTR_QP_ACCESS_FLAGS, Access.toBits(qpAccessFlags));
            modify(attr, Ibv.IBV_QP_STATE | Ibv.IBV_QP_PKEY_INDEX | Ibv.IBV_QP_PORT | Ibv.IBV_QP_ACCESS_FLAGS,
                QpState.INIT, "qp_access_flags=" + qpAccessFlags);
        }
    }

    /**
     * INIT → RTR, with the port's active MTU and, on RoCE (or without a LID), a global route to the remote GID
     * from the context's GID index.
     *
     * @param remote      the peer's address.
     * @param minRnrTimer 0 to 31 (checked here: the field is 5 bits wide, IBA table 45).
     */
    @Override
    public void modifyToRtr(final QpAddress remote, final int minRnrTimer)
    {
        checkOpen("ibv_modify_qp");
        final String verb = "ibv_modify_qp";
        if (remote == null)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "the remote QP's address is null");
        }
        if (minRnrTimer < 0 || minRnrTimer > 31)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "min_rnr_timer=" + minRnrTimer + " must be 0-31");
        }
        final RdmaContext.Port port = ctx.port();
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment attr = a.allocate(IbvStructs.IBV_QP_ATTR);
            attr.set(JAVA_INT, IbvStructs.QP_ATTR_QP_STATE, QpState.RTR.ordinal());
            attr.set(JAVA_INT, IbvStructs.QP_ATTR_PATH_MTU, port.activeMtu() > 0 ? port.activeMtu() : Ibv.IBV_MTU_1024);
            attr.set(JAVA_INT, IbvStructs.QP_ATTR_DEST_QP_NUM, remote.qpNum());
            attr.set(JAVA_INT, IbvStructs.QP_ATTR_RQ_PSN, remote.psn() & 0xffffff);
            attr.set(JAVA_BYTE, IbvStructs.QP_ATTR_AH_PORT_NUM, (byte)port.num());
            attr.set(JAVA_SHORT, IbvStructs.QP_ATTR_AH_DLID, (short)remote.lid());
            if (port.global() || remote.lid() == 0)
            {
                attr.set(JAVA_BYTE, IbvStructs.QP_ATTR_AH_IS_GLOBAL, (byte)1);
                MemorySegment.copy(GlobalRoute.gidBytes(remote.gid()), 0, attr, JAVA_BYTE, IbvStructs.QP_ATTR_AH_DGID, 16);
                attr.set(JAVA_BYTE, IbvStructs.QP_ATTR_AH_SGID_INDEX, (byte)port.gidIndex());
                attr.set(JAVA_BYTE, IbvStructs.QP_ATTR_AH_HOP_LIMIT, (byte)GlobalRoute.HOP_LIMIT);
            }
            int mask = Ibv.IBV_QP_STATE | Ibv.IBV_QP_AV | Ibv.IBV_QP_PATH_MTU | Ibv.IBV_QP_DEST_QPN
                | Ibv.IBV_QP_RQ_PSN;
            // INIT -> RTR: RC and XRC_TGT need the responder's resources, UC and XRC_INI do not (kernel qp_state_table).
            if (type == QpType.RC || type == QpType.XRC_RECV)
            {
                attr.set(JAVA_BYTE, IbvStructs.QP_ATTR_MAX_DEST_RD_ATOMIC,
                    (byte)clamp(ctx.attributes().maxQpRdAtom()));
                attr.set(JAVA_BYTE, IbvStructs.QP_ATTR_MIN_RNR_TIMER, (byte)minRnrTimer);
                mask |= Ibv.IBV_QP_MAX_DEST_RD_ATOMIC | Ibv.IBV_QP_MIN_RNR_TIMER;
            }
            modify(attr, mask, QpState.RTR, "remote " + remote);
        }
    }

    /**
     * RTR → RTS.
     *
     * @param retryCount 0 to 7 (checked here: a 3-bit field).
     * @param rnrRetry   0 to 7 (7: retry forever).
     */
    @Override
    public void modifyToRts(final int retryCount, final int rnrRetry)
    {
        if (retryCount < 0 || retryCount > 7 || rnrRetry < 0 || rnrRetry > 7)
        {
            throw new VerbsException("ibv_modify_qp", Errno.EINVAL.code(), "retry_cnt=" + retryCount + " rnr_retry="
                + rnrRetry + " must be 0-7");
        }
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment attr = a.allocate(IbvStructs.IBV_QP_ATTR);
            attr.set(JAVA_INT, IbvStructs.QP_ATTR_QP_STATE, QpState.RTS.ordinal());
            attr.set(JAVA_INT, IbvStructs.QP_ATTR_SQ_PSN, psn);
            int mask = Ibv.IBV_QP_STATE | Ibv.IBV_QP_SQ_PSN;
            // RTR -> RTS: RC and XRC_INI need the requester's timers, XRC_TGT the timeout only (kernel qp_state_table).
            if (type == QpType.XRC_RECV)
            {
                attr.set(JAVA_BYTE, IbvStructs.QP_ATTR_TIMEOUT, (byte)ACK_TIMEOUT_CODE);
                mask |= Ibv.IBV_QP_TIMEOUT;
            }
            if (type == QpType.RC || type == QpType.XRC_SEND)
            {
                attr.set(JAVA_BYTE, IbvStructs.QP_ATTR_TIMEOUT, (byte)ACK_TIMEOUT_CODE);
                attr.set(JAVA_BYTE, IbvStructs.QP_ATTR_RETRY_CNT, (byte)retryCount);
                attr.set(JAVA_BYTE, IbvStructs.QP_ATTR_RNR_RETRY, (byte)rnrRetry);
                attr.set(JAVA_BYTE, IbvStructs.QP_ATTR_MAX_RD_ATOMIC,
                    (byte)clamp(ctx.attributes().maxQpInitRdAtom()));
                mask |= Ibv.IBV_QP_TIMEOUT | Ibv.IBV_QP_RETRY_CNT | Ibv.IBV_QP_RNR_RETRY | Ibv.IBV_QP_MAX_QP_RD_ATOMIC;
            }
            modify(attr, mask, QpState.RTS, "retry_cnt=" + retryCount + " rnr_retry=" + rnrRetry);
        }
    }

    @Override
    public void modifyToError()
    {
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment attr = a.allocate(IbvStructs.IBV_QP_ATTR);
            attr.set(JAVA_INT, IbvStructs.QP_ATTR_QP_STATE, QpState.ERR.ordinal());
            modify(attr, Ibv.IBV_QP_STATE, QpState.ERR, "");
        }
    }

    /**
     * {@code ibv_modify_qp} with any attributes and mask: the kernel's table decides, its errno comes back as it is.
     */
    @Override
    public void modify(final dev.rnicsim.verbs.QpAttr attr, final Set<dev.rnicsim.verbs.QpAttrMask> mask)
    {
        checkOpen("ibv_modify_qp");
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment seg = a.allocate(IbvStructs.IBV_QP_ATTR);
            RdmaQpAttrs.write(attr, mask, seg);
            final QpState to = mask.contains(dev.rnicsim.verbs.QpAttrMask.STATE) ? attr.qpState() : state();
            modify(seg, dev.rnicsim.verbs.QpAttrMask.toBits(mask), to, "attr_mask " + mask);
        }
    }

    /**
     * {@code ibv_query_qp} of every attribute.
     */
    @Override
    public dev.rnicsim.verbs.QpAttr query()
    {
        checkOpen("ibv_query_qp");
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment attr = a.allocate(IbvStructs.IBV_QP_ATTR);
            final MemorySegment init = a.allocate(IbvStructs.IBV_QP_INIT_ATTR);
            final Errnos.Result r = ctx.lib().queryQp(qp, attr, RdmaQpAttrs.ALL, init);
            if (r.value() != 0)
            {
                throw new VerbsException("ibv_query_qp", r.errno(), "QP 0x" + Integer.toHexString(qpNum()));
            }
            return RdmaQpAttrs.read(attr);
        }
    }

    private static int clamp(final int deviceMax)
    {
        return Math.max(1, Math.min(MAX_RD_ATOMIC, deviceMax));
    }

    private void modify(final MemorySegment attr, final int mask, final QpState to, final String what)
    {
        checkOpen("ibv_modify_qp");
        final Errnos.Result r = ctx.lib().modifyQp(qp, attr, mask);
        if (r.value() != 0)
        {
            throw new VerbsException("ibv_modify_qp", r.errno(), "QP 0x" + Integer.toHexString(qpNum()) + " "
                + state() + " -> " + to + (what.isEmpty() ? "" : ": " + what) + " (mask 0x" + Integer.toHexString(mask)
                + ")");
        }
        tracked = to;
    }

    // ------------------------------------------------------------------ posting

    @Override
    public void postSend(final List<SendWr> wrs)
    {
        post(wrs, null);
    }

    /**
     * {@code ibv_post_send} on a UD QP: each work request with {@code wr.ud} (address handle, remote QP number,
     * Q_Key) written beside it (see {@link WorkRequests#writeUd}).
     *
     * @throws PostException EINVAL on a QP that is not UD, for a null list, or at the first work request that is not
     *                       SEND or SEND_WITH_IMM or names an address handle that is not a live one of this QP's PD;
     *                       otherwise the errno the library gave, with the index of the refused work request.
     */
    @Override
    public void postSendUd(final List<UdSendWr> wrs)
    {
        if (wrs == null)
        {
            throw new PostException("ibv_post_send", Errno.EINVAL.code(), 0, "the work-request list is null");
        }
        if (type != QpType.UD)
        {
            throw new PostException("ibv_post_send", Errno.EINVAL.code(), 0, "QP 0x" + Integer.toHexString(qpNum)
                + " is " + type + ": work requests with an address handle (wr.ud) go to a UD QP");
        }
        final List<SendWr> plain = new ArrayList<>(wrs.size());
        for (final UdSendWr u : wrs)
        {
            plain.add(u == null ? null : u.wr());
        }
        post(plain, wrs);
    }

    /** Posts through ops.post_send; ud, when given, holds each work request's datagram destination. */
    private void post(final List<SendWr> wrs, final List<UdSendWr> ud)
    {
        final String verb = "ibv_post_send";
        if (wrs == null)
        {
            throw new PostException(verb, Errno.EINVAL.code(), 0, "the work-request list is null");
        }
        if (closed)
        {
            throw new PostException(verb, Errno.EINVAL.code(), 0, "the QP is destroyed");
        }
        if (wrs.isEmpty())
        {
            return;
        }
        int sgeTotal = 0;
        for (final SendWr wr : wrs)
        {
            sgeTotal += wr == null ? 0 : wr.sgList().size();
        }
        final MemorySegment sendWrs = arrays.sendWrs(wrs.size(), sgeTotal);
        final MemorySegment sges = arrays.sges();
        final MemorySegment state = arrays.state();
        final MemorySegment badWr = arrays.badWr();
        int count = 0;
        int sgeAt = 0;
        PostException refused = null;
        for (final SendWr wr : wrs)
        {
            final MemorySegment w = sendWrs.asSlice(count * SEND_WR_BYTES, SEND_WR_BYTES);
            String problem = wr == null ? "EINVAL the work request is null" : WorkRequests.writeSend(w, wr,
                sges.asSlice(sgeAt * SGE_BYTES, wr.sgList().size() * SGE_BYTES), ctx);
            if (problem == null && ud != null)
            {
                problem = WorkRequests.writeUd(w, ud.get(count), pd);
            }
            if (problem != null)
            {
                refused = new PostException(verb, problem.startsWith("EOPNOTSUPP") ? Errno.EOPNOTSUPP.code()
                    : Errno.EINVAL.code(), count, problem.substring(problem.indexOf(' ') + 1));
                break;
            }
            sgeAt += wr.sgList().size();
            count++;
        }
        if (count > 0)
        {
            PostArrays.link(sendWrs, count, SEND_WR_BYTES, WrStructs.SEND_WR_NEXT);
            badWr.set(ADDRESS, 0, MemorySegment.NULL);
            final int rc0 = ctx.lib().postSend(ctx.postSendFn(), state, qp, sendWrs, badWr);
            final int rc = Errnos.errnoOf(rc0, Errnos.read(state));
            final int posted = rc == 0 ? count : arrays.badIndex(sendWrs, SEND_WR_BYTES, count);
            for (int i = 0; i < posted; i++)
            {
                // A type 2 window's rkey member follows the bind, as a type 1 window's does (see RdmaMw).
                if (wrs.get(i).opcode() == WrOpcode.BIND_MW && wrs.get(i).localOp() instanceof SendWr.Bind b)
                {
                    b.mw().setRkey(b.newRkey());
                }
            }
            if (rc != 0)
            {
                throw new PostException(verb, rc, posted, wrs.get(posted).opcode() + " refused by the provider on QP 0x"
                    + Integer.toHexString(qpNum()) + " in " + state());
            }
        }
        if (refused != null)
        {
            throw refused;
        }
    }

    @Override
    public void postRecv(final List<RecvWr> wrs)
    {
        final String verb = "ibv_post_recv";
        if (wrs == null)
        {
            throw new PostException(verb, Errno.EINVAL.code(), 0, "the work-request list is null");
        }
        if (closed)
        {
            throw new PostException(verb, Errno.EINVAL.code(), 0, "the QP is destroyed");
        }
        if (wrs.isEmpty())
        {
            return;
        }
        int sgeTotal = 0;
        for (final RecvWr wr : wrs)
        {
            sgeTotal += wr == null ? 0 : wr.sgList().size();
        }
        final MemorySegment recvWrs = arrays.recvWrs(wrs.size(), sgeTotal);
        final MemorySegment sges = arrays.sges();
        final MemorySegment state = arrays.state();
        final MemorySegment badWr = arrays.badWr();
        int count = 0;
        int sgeAt = 0;
        for (final RecvWr wr : wrs)
        {
            if (wr == null)
            {
                break;
            }
            final MemorySegment w = recvWrs.asSlice(count * RECV_WR_BYTES, RECV_WR_BYTES);
            WorkRequests.writeRecv(w, wr, sges.asSlice(sgeAt * SGE_BYTES, wr.sgList().size() * SGE_BYTES));
            sgeAt += wr.sgList().size();
            count++;
        }
        if (count > 0)
        {
            PostArrays.link(recvWrs, count, RECV_WR_BYTES, WrStructs.RECV_WR_NEXT);
            badWr.set(ADDRESS, 0, MemorySegment.NULL);
            final int rc0 = ctx.lib().postRecv(ctx.postRecvFn(), state, qp, recvWrs, badWr);
            final int rc = Errnos.errnoOf(rc0, Errnos.read(state));
            if (rc != 0)
            {
                throw new PostException(verb, rc, arrays.badIndex(recvWrs, RECV_WR_BYTES, count), "refused by the "
                    + "provider on QP 0x" + Integer.toHexString(qpNum()) + " in " + state());
            }
        }
        if (count < wrs.size())
        {
            throw new PostException(verb, Errno.EINVAL.code(), count, "the work request is null");
        }
    }

    /**
     * {@code ibv_bind_mw}: see {@link WindowBinds#bind}.
     */
    @Override
    public int bindMw(final MemoryWindow mw, final long wrId, final Set<SendFlag> flags, final MwBindInfo info)
    {
        checkOpen("ibv_bind_mw");
        return WindowBinds.bind(this, mw, wrId, flags, info);
    }

    /**
     * @return the native {@code struct ibv_qp}.
     */
    MemorySegment segment()
    {
        return qp;
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    /**
     * {@code ibv_destroy_qp}. Idempotent.
     *
     * @throws VerbsException the provider's errno; the QP stays.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        final Errnos.Result r = ctx.lib().destroyQp(qp);
        if (r.value() != 0)
        {
            throw new VerbsException("ibv_destroy_qp", r.errno(), "QP 0x" + Integer.toHexString(qpNum()) + " stays");
        }
        closed = true;
        arrays.close();
        if (pd != null)
        {
            pd.qpClosed(this);
        }
        else
        {
            xrcd.qpClosed(this);
        }
    }

    private void checkOpen(final String verb)
    {
        if (closed)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "the QP is destroyed");
        }
    }

    @Override
    public String toString()
    {
        return "RdmaQp[" + type + (closed ? ", destroyed" : " 0x" + Integer.toHexString(qpNum())) + "]";
    }
}
