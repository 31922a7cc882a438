package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.QpAddress;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpState;
import java.util.Set;

/**
 * The checks of the three {@code ibv_modify_qp} calls that connect a QP (RESET → INIT → RTR → RTS, with the
 * attributes {@link SimQp#modifyToInit}, {@link ProgramRtr#modifyToRtr} and {@link SimQp#modifyToRts} give), made
 * before the first of them: each transition as the kernel checks it from the state the one before leaves
 * ({@link QpModifyCheck}: the state table, every attribute's field and the device's limits, the address vector's source
 * GID). A caller that moves two QPs (a script's {@code connect}) checks both first, so a refusal leaves both as they
 * were, as a refused {@code ibv_modify_qp} does (ibv_modify_qp(3): on failure the QP is unchanged).
 *
 * <p>Stateless.
 */
public final class ConnectChecks
{
    private ConnectChecks()
    {
    }

    /**
     * @param qp              the QP to connect, in RESET (or INIT).
     * @param peer            the address of the QP it connects to.
     * @param qpAccessFlags   its qp_access_flags.
     * @param minRnrTimerCode the RNR timer code.
     * @param sgidIndex       the source GID index of its address vector, or -1 for the connection manager's.
     * @param retryCnt        retry_cnt.
     * @param rnrRetryCnt     rnr_retry.
     * @throws dev.rnicsim.verbs.VerbsException EINVAL (ENODATA for an empty source GID entry) as the first of the three
     *                                          calls that would refuse it answers; nothing is changed.
     */
    public static void check(final SimQp qp, final QpAddress peer, final Set<Access> qpAccessFlags,
        final int minRnrTimerCode, final int sgidIndex, final int retryCnt, final int rnrRetryCnt)
    {
        final EngineThread held = qp.device.fabric().enter();
        try
        {
            final QpAttr.Builder init = QpTransitionAttrs.toInit(qp, qpAccessFlags);
            QpModifyCheck.checkHeld(qp, init.build(), init.mask(), qp.state);
            final QpAttr.Builder rtr = ProgramRtr.rtrAttrs(qp, peer, minRnrTimerCode, 0, sgidIndex);
            QpModifyCheck.checkHeld(qp, rtr.build(), rtr.mask(), QpState.INIT);
            final QpAttr.Builder rts = QpTransitionAttrs.toRts(qp, retryCnt, rnrRetryCnt);
            QpModifyCheck.checkHeld(qp, rts.build(), rts.mask(), QpState.RTR);
        }
        finally
        {
            SimFabric.exit(held);
        }
    }
}
