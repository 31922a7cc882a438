package dev.rnicsim.verbs;

import java.util.Objects;

/**
 * What {@code ibv_create_qp} needs ({@code struct ibv_qp_init_attr}).
 *
 * @param sendCq    CQ for send completions.
 * @param recvCq    CQ for receive completions (may be the same as sendCq).
 * @param type      transport type.
 * @param cap       capacities.
 * @param sqSigAll  true: every send work request completes, signalled or not.
 * @param srq       the shared receive queue the QP takes its receives from, or null for a receive queue of its own.
 */
public record QpInitAttr(CompletionQueue sendCq, CompletionQueue recvCq, QpType type, QpCap cap, boolean sqSigAll,
    SharedReceiveQueue srq)
{
    /**
     * @throws NullPointerException when a CQ, the type or the capacities are null.
     */
    public QpInitAttr
    {
        Objects.requireNonNull(sendCq, "sendCq");
        Objects.requireNonNull(recvCq, "recvCq");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(cap, "cap");
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
        return new QpInitAttr(sendCq, recvCq, type, cap, sqSigAll, shared);
    }

    /**
     * @param t the transport type.
     * @return these attributes with another type.
     */
    public QpInitAttr withType(final QpType t)
    {
        return new QpInitAttr(sendCq, recvCq, t, cap, sqSigAll, srq);
    }

    /**
     * @param cq the CQ for both queues.
     * @return an RC QP with default capacities and only signalled work requests completing.
     */
    public static QpInitAttr rc(final CompletionQueue cq)
    {
        return new QpInitAttr(cq, cq, QpType.RC, QpCap.defaults(), false);
    }
}
