package dev.rnicsim.simnic;

import dev.rnicsim.dma.DmaResult;
import dev.rnicsim.dma.DmaStatus;
import dev.rnicsim.verbs.WcStatus;

/**
 * The statuses of an RC SEND longer than the receive buffers it lands in: the responder refuses the packet that no
 * longer fits (or the whole message in one step), NAKs it as an invalid request (class C) and moves its QP to ERR;
 * both work requests complete in error. Which statuses they carry is driver behaviour:
 * <ul>
 *   <li>the requester's: the status its driver maps the "invalid request" NAK to, IBV_WC_REM_INV_REQ_ERR on every
 *       modelled driver (rxe: the responder sends AETH_NAK_INVALID_REQ for RESPST_ERR_LENGTH, rxe_resp.c, and
 *       rxe_comp.c {@code check_ack} maps it to IB_WC_REM_INV_REQ_ERR; mlx5: CQE syndrome
 *       MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, providers/mlx5/cq.c {@code mlx5_handle_error_cqe}; IBA 9.9.3.1.1,
 *       Table 60: an invalid request NAK completes the WQE with a Remote Invalid Request Error);</li>
 *   <li>the receive's: {@link ProviderRule#RECEIVE_OVERFLOW_AS_INVALID_REQUEST} (rxe: IBV_WC_REM_INV_REQ_ERR),
 *       else IBV_WC_LOC_LEN_ERR (mlx5).</li>
 * </ul>
 */
final class SendOverflow
{
    private SendOverflow()
    {
    }

    /** True when the outcome is a SEND refused for overflowing its receive buffers. */
    static boolean is(final DmaResult r)
    {
        return r.requester() == DmaStatus.REM_INV_REQ_ERR && r.responder() == DmaStatus.LOC_LEN_ERR;
    }

    /**
     * @param requester the requester's device profile.
     * @return the requester's status for an overflowing SEND.
     */
    static WcStatus requesterStatus(final DeviceProfile requester)
    {
        // Every modelled driver maps the invalid-request NAK the same way (see the class comment).
        return WcStatus.REM_INV_REQ_ERR;
    }

    /**
     * @param responder the responder's device profile.
     * @return the receive's status for an overflowing SEND.
     */
    static WcStatus receiveStatus(final DeviceProfile responder)
    {
        return responder.follows(ProviderRule.RECEIVE_OVERFLOW_AS_INVALID_REQUEST) ? WcStatus.REM_INV_REQ_ERR
            : WcStatus.LOC_LEN_ERR;
    }
}
