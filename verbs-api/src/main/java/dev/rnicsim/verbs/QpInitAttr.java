package dev.rnicsim.verbs;

import java.util.EnumSet;
import java.util.Set;

/**
 * What {@code ibv_create_qp} needs ({@code struct ibv_qp_init_attr}).
 *
 * @param sendCq    CQ for send completions.
 * @param recvCq    CQ for receive completions (may be the same as sendCq).
 * @param type      transport type.
 * @param cap       capacities.
 * @param sqSigAll  true: every send work request completes, signalled or not.
 * @param srq       the shared receive queue the QP takes its receives from, or null for a receive queue of its own.
 * @param sendOps   the work requests the QP is created to post ({@code send_ops_flags} with
 *                  {@code IBV_QP_INIT_ATTR_SEND_OPS_FLAGS} in {@code comp_mask}, ibv_create_qp_ex(3): each
 *                  {@code IBV_QP_EX_WITH_*} bit names one opcode), or null for a QP created without them
 *                  ({@code ibv_create_qp}).
 */
public record QpInitAttr(CompletionQueue sendCq, CompletionQueue recvCq, QpType type, QpCap cap, boolean sqSigAll,
    SharedReceiveQueue srq, Set<WrOpcode> sendOps)
{
    /**
     * @throws IllegalArgumentException when a CQ, the type or the capacities are null (an XRC_RECV QP has no CQ: both
     *                              may be null for it).
     */
    public QpInitAttr
    {
        Given.required(type, "type", "give the QP type (QpType)");
        if (type != QpType.XRC_RECV)
        {
            Given.required(sendCq, "sendCq", "give the CQ its send completions go to (Context.createCq)");
            Given.required(recvCq, "recvCq", "give the CQ its receive completions go to (Context.createCq)");
        }
        Given.required(cap, "cap", "give the queues' capacities (QpCap)");
        sendOps = sendOps == null ? null : sendOps.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(sendOps));
    }

    /**
     * A QP created without send_ops_flags ({@code ibv_create_qp}).
     *
     * @param sendCq   CQ for send completions.
     * @param recvCq   CQ for receive completions.
     * @param type     transport type.
     * @param cap      capacities.
     * @param sqSigAll true: every send work request completes.
     * @param srq      the SRQ, or null.
     */
    public QpInitAttr(final CompletionQueue sendCq, final CompletionQueue recvCq, final QpType type, final QpCap cap,
        final boolean sqSigAll, final SharedReceiveQueue srq)
    {
        this(sendCq, recvCq, type, cap, sqSigAll, srq, null);
    }

    /**
     * A QP with a receive queue of its own.
     *
     * @param sendCq   CQ for send completions.
     * @param recvCq   CQ for receive completions.
     * @param type     transport type.
     * @param cap      capacities.
     * @param sqSigAll true: every send work request completes.
     */
    public QpInitAttr(final CompletionQueue sendCq, final CompletionQueue recvCq, final QpType type, final QpCap cap,
        final boolean sqSigAll)
    {
        this(sendCq, recvCq, type, cap, sqSigAll, null);
    }

    /**
     * @param shared the SRQ.
     * @return these attributes with receives taken from shared.
     */
    public QpInitAttr withSrq(final SharedReceiveQueue shared)
    {
        return new QpInitAttr(sendCq, recvCq, type, cap, sqSigAll, shared, sendOps);
    }

    /**
     * @param t the transport type.
     * @return these attributes with another type.
     */
    public QpInitAttr withType(final QpType t)
    {
        return new QpInitAttr(sendCq, recvCq, t, cap, sqSigAll, srq, sendOps);
    }

    /**
     * @param ops the work requests the QP is created to post (send_ops_flags); null for none given.
     * @return these attributes as {@code ibv_create_qp_ex} with {@code IBV_QP_INIT_ATTR_SEND_OPS_FLAGS} takes them.
     */
    public QpInitAttr withSendOps(final Set<WrOpcode> ops)
    {
        return new QpInitAttr(sendCq, recvCq, type, cap, sqSigAll, srq, ops);
    }

    /**
     * @param cq the CQ for both queues.
     * @return an RC QP with default capacities and only signalled work requests completing.
     */
    public static QpInitAttr rc(final CompletionQueue cq)
    {
        return new QpInitAttr(cq, cq, QpType.RC, QpCap.defaults(), false);
    }

    /**
     * An XRC_SEND (initiator) QP: a send queue only. The kernel's {@code create_qp} sets max_recv_wr and max_recv_sge
     * to 0 for XRC_INI and keeps no receive CQ, so {@code cq} serves the sends alone.
     *
     * @param cq the CQ for send completions.
     * @return XRC_SEND attributes with the default send capacities and no receive queue.
     */
    public static QpInitAttr xrcSend(final CompletionQueue cq)
    {
        final QpCap d = QpCap.defaults();
        return new QpInitAttr(cq, cq, QpType.XRC_SEND, new QpCap(d.maxSendWr(), 0, d.maxSendSge(), 0,
            d.maxInlineDataBytes()), false);
    }
}
