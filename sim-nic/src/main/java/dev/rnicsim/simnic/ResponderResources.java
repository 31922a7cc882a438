package dev.rnicsim.simnic;

import dev.rnicsim.dma.DmaResult;
import dev.rnicsim.dma.DmaStatus;
import dev.rnicsim.mtt.KeyCheck;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WrOpcode;

/**
 * The responder's resources for RDMA READ and atomics ({@code max_dest_rd_atomic}, ibv_modify_qp(3)): a responder
 * QP given none cannot answer a READ, an atomic or an ATOMIC_WRITE. rxe's responder checks it after the opcode and
 * the QP's access flags and before the length and the rkey ({@code check_resource} in rxe_resp.c:
 * RESPST_ERR_TOO_MANY_RDMA_ATM_REQ), a class C error: a NAK "invalid request", so the requester completes with
 * IBV_WC_REM_INV_REQ_ERR, nothing is read or changed, and the responder QP goes to the error state (rxe
 * {@code do_class_ac_error}; IBA's responder resources, which the requester's max_rd_atomic must not exceed).
 * mlx5 and mlx4 never hold 0: a depth of 0 leaves their QP context's log2 field at 0, one resource
 * ({@link ProviderRule#RD_ATOMIC_ZERO_KEPT_AS_ONE}, {@link QpContextFields}). The other drivers are modelled as rxe
 * (assumed; irdma, for one, leaves its {@code ird_size} unset for 0 in {@code irdma_modify_qp_roce}). A FLUSH is not counted
 * (rxe's check names the READ, atomic and ATOMIC_WRITE opcodes). Stateless.
 */
final class ResponderResources
{
    private ResponderResources()
    {
    }

    /**
     * @param maxDestRdAtomic the responder QP's {@code max_dest_rd_atomic}.
     * @param wr              the request.
     * @return the refusal, or null when the request needs no responder resource or the QP has one.
     */
    static DmaResult check(final int maxDestRdAtomic, final SendWr wr)
    {
        final WrOpcode op = wr.opcode();
        final boolean needsResource = op == WrOpcode.RDMA_READ || op == WrOpcode.ATOMIC_CMP_AND_SWP
            || op == WrOpcode.ATOMIC_FETCH_AND_ADD || op == WrOpcode.ATOMIC_WRITE;
        if (!needsResource || maxDestRdAtomic > 0)
        {
            return null;
        }
        return DmaResult.remote(DmaStatus.REM_INV_REQ_ERR, DmaStatus.REM_INV_REQ_ERR, KeyCheck.VALID, op
            + ": the responder QP has max_dest_rd_atomic=0, no resource to answer an RDMA READ or atomic "
            + "(RESPST_ERR_TOO_MANY_RDMA_ATM_REQ: rxe check_resource); NAK invalid request. Modify "
            + "the responder QP to RTR with max_dest_rd_atomic of 1 or more");
    }
}
