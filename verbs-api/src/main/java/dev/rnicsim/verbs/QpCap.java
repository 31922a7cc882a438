package dev.rnicsim.verbs;

/**
 * Queue-pair capacities ({@code struct ibv_qp_cap}).
 *
 * @param maxSendWr        send queue depth in work requests, 1 to {@code max_qp_wr}.
 * @param maxRecvWr        receive queue depth in work requests, 1 to {@code max_qp_wr}.
 * @param maxSendSge       SGEs per send work request, 1 to {@code max_sge}.
 * @param maxRecvSge       SGEs per receive work request, 1 to {@code max_sge}.
 * @param maxInlineDataBytes bytes a send work request may carry inline.
 */
public record QpCap(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineDataBytes)
{
    /**
     * @return capacities for small examples: 64 send and 64 receive work requests of up to 4 SGEs, 64 bytes inline.
     */
    public static QpCap defaults()
    {
        return new QpCap(64, 64, 4, 4, 64);
    }
}
