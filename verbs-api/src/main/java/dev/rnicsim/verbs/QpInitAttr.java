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
 */
public record QpInitAttr(CompletionQueue sendCq, CompletionQueue recvCq, QpType type, QpCap cap, boolean sqSigAll)
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
     * @param cq the CQ for both queues.
     * @return an RC QP with default capacities and only signalled work requests completing.
     */
    public static QpInitAttr rc(final CompletionQueue cq)
    {
        return new QpInitAttr(cq, cq, QpType.RC, QpCap.defaults(), false);
    }
}
