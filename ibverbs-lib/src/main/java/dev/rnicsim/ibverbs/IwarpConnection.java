package dev.rnicsim.ibverbs;

import dev.rnicsim.simnic.DriverTraits;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpAttrMask;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.VerbsException;
import java.util.Set;

/**
 * How a program's {@code ibv_modify_qp} meets an iWARP device (transport iWARP: siw, cxgb4, erdma, irdma in iWARP
 * mode). An iWARP QP is connected by the iWARP connection manager: {@code rdma_connect}/{@code rdma_accept} run the
 * MPA exchange over a TCP stream and hand the driver that stream, and only then does the driver take the QP to RTS.
 * A modify to RTS that comes straight from the application carries no stream, and every iWARP driver refuses it with
 * EINVAL, nothing changed: siw {@code siw_qp_nextstate_from_idle} ("no socket": no SIW_QP_ATTR_LLP_HANDLE), erdma
 * {@code erdma_modify_qp_state_to_rts} (no ERDMA_QP_ATTR_LLP_HANDLE), cxgb4 {@code c4iw_modify_qp} (no
 * C4IW_QP_ATTR_LLP_STREAM_HANDLE), irdma {@code irdma_modify_qp} ({@code !iwqp->cm_id}). The steps before it pass:
 * INIT, and RTR, whose address vector the drivers ignore (the stream decides the peer) and which the core takes
 * without a GRH on an iWARP port ({@code rdma_check_ah_attr}: only RoCE and GRH-required ports need one). So
 * {@code ibv_rc_pingpong} on an iWARP device prints "Failed to modify QP to RTS", as on the real device. The model has
 * no connection manager for C programs; the Java API's and scripts' {@code connect} stand for the connection it makes.
 */
final class IwarpConnection
{
    private IwarpConnection()
    {
    }

    /**
     * @param device the QP's device.
     * @return true when the device's transport is iWARP.
     */
    static boolean iwarp(final SimDevice device)
    {
        return device.profile().traits().transport() == DriverTraits.Transport.IWARP;
    }

    /**
     * Refuses a modify to RTS from INIT or RTR on an iWARP device (see the class comment).
     *
     * @param device the QP's device.
     * @param now    the QP's state.
     * @param attr   the attributes the program gave.
     * @param mask   which of them.
     * @throws VerbsException EINVAL, naming the rule and what to do instead.
     */
    static void checkRts(final SimDevice device, final QpState now, final QpAttr attr, final Set<QpAttrMask> mask)
    {
        if (iwarp(device) && mask.contains(QpAttrMask.STATE) && attr.qpState() == QpState.RTS
            && (now == QpState.INIT || now == QpState.RTR))
        {
            throw new VerbsException("ibv_modify_qp", Errno.EINVAL.code(), "an iWARP QP reaches RTS only through the "
                + "iWARP connection manager, which hands the " + device.profile().traits().driver() + " driver the TCP "
                + "stream and MPA parameters of the connection (siw_qp_nextstate_from_idle, erdma_modify_qp_state_to_rts, "
                + "c4iw_modify_qp, irdma_modify_qp refuse a modify to RTS without them); " + device.name()
                + " is iWARP: connect the QP with rdma_cm (rdma_connect/rdma_accept), or run the program on a RoCE or "
                + "InfiniBand profile (rxe, mlx5), where ibv_modify_qp connects QPs");
        }
    }
}
