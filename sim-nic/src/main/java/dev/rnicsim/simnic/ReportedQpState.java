package dev.rnicsim.simnic;

import dev.rnicsim.verbs.QpState;

/**
 * The state {@code ibv_query_qp} answers for a QP in RESET on an iWARP device (node type RNIC): INIT. The iWARP
 * drivers keep no RESET state: a new QP, or one modified to RESET, is IDLE, which their query reports as INIT (siw
 * {@code siw_qp_state_to_ib_qp_state}: {@code [SIW_QP_STATE_IDLE] = IB_QPS_INIT}; cxgb4 {@code to_ib_qp_state}:
 * {@code C4IW_QP_STATE_IDLE} to {@code IB_QPS_INIT}), and rdma-core's own tests expect INIT from a new QP on every
 * RNIC device and RESET elsewhere (tests/test_qp.py {@code query_qp_common_test}). Only the answer differs: the QP
 * behaves as in RESET. Where the device is iWARP is its driver's transport ({@link DriverTraits#transport()}).
 * Stateless.
 */
final class ReportedQpState
{
    private ReportedQpState()
    {
    }

    /**
     * @param profile the QP's device profile.
     * @param state   the QP's state.
     * @return the state {@code ibv_query_qp} answers.
     */
    static QpState of(final DeviceProfile profile, final QpState state)
    {
        return state == QpState.RESET && profile.traits().transport() == DriverTraits.Transport.IWARP ? QpState.INIT
            : state;
    }
}
