package dev.rnicsim.dma;

/**
 * Outcome of a transfer on one side, named after the work-completion status it becomes ({@code enum ibv_wc_status}).
 * The DMA engine decides them in the order rxe's requester and responder do (drivers/infiniband/sw/rxe: rxe_req.c,
 * rxe_resp.c {@code check_rkey}, rxe_comp.c {@code check_ack}).
 *
 * <p>Immutable and thread safe.
 */
public enum DmaStatus
{
    /** Done. */
    SUCCESS,
    /** A local length error: the message is longer than the port's max_msg_sz, or a receive is too small. */
    LOC_LEN_ERR,
    /** A local SGE failed its lkey check (key, PD, rights, state, range). */
    LOC_PROT_ERR,
    /** A local work-queue error. */
    LOC_QP_OP_ERR,
    /** The responder refused the rkey, its PD, rights, state or range (NAK remote access error). */
    REM_ACCESS_ERR,
    /** The responder found the request invalid: length, misaligned atomic, or a right the responder QP does not
     * grant (NAK invalid request). */
    REM_INV_REQ_ERR,
    /** The responder could not complete the operation (NAK remote operational error, e.g. a bad receive buffer). */
    REM_OP_ERR,
    /** The responder answered RNR NAK because it met a page fault on an on-demand-paging MR and is handling it:
     * nothing moved; the requester waits {@code min_rnr_timer} and retries, up to {@code rnr_retry} times (not a
     * completion status by itself: it becomes IBV_WC_RNR_RETRY_EXC_ERR when the retries run out). */
    RNR_NAK
}
