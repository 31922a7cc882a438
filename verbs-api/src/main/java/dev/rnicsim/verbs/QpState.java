package dev.rnicsim.verbs;

/**
 * Queue-pair states ({@code enum ibv_qp_state}, libibverbs/verbs.h; IBA 10.3.1). An RC QP goes RESET → INIT → RTR
 * → RTS; any error in execution moves it to ERR, where every outstanding and later work request completes with
 * {@link WcStatus#WR_FLUSH_ERR}.
 *
 * <p>Immutable and thread safe.
 */
public enum QpState
{
    /** IBV_QPS_RESET (0). */
    RESET,
    /** IBV_QPS_INIT (1): receives may be posted. */
    INIT,
    /** IBV_QPS_RTR (2): ready to receive; the remote QP is known. */
    RTR,
    /** IBV_QPS_RTS (3): ready to send. */
    RTS,
    /** IBV_QPS_SQD (4). */
    SQD,
    /** IBV_QPS_SQE (5). */
    SQE,
    /** IBV_QPS_ERR (6). */
    ERR
}
