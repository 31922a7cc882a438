package dev.rnicsim.simnic;

import dev.rnicsim.verbs.QpInitAttr;

/**
 * Which receive capacities {@code ibv_create_qp} checks for a QP that takes its receives from an SRQ, where the
 * drivers differ (a QP of its own always has both checked against max_qp_wr and max_sge):
 * <ul>
 * <li>rxe ({@link ProviderRule#SRQ_QP_RECV_CAPS_UNCHECKED}): neither; {@code rxe_qp_chk_cap} skips them when the QP
 * has an SRQ, so a max_recv_wr past max_qp_wr is taken and reported as given.</li>
 * <li>mlx5 ({@link ProviderRule#SRQ_QP_RECV_SGE_UNCHECKED}): max_recv_wr only (libmlx5 {@code mlx5_calc_rq_size}
 * compares it with max_qp_wr, EINVAL; {@code mlx5_calc_rcv_wqe} returns before the SGEs are looked at), then both
 * read 0.</li>
 * <li>mlx4 and the drivers not read (assumed): both (libmlx4 {@code mlx4_create_qp_ex} checks max_recv_wr and
 * max_recv_sge against the context's limits, EINVAL, before it zeroes them for an SRQ).</li>
 * </ul>
 *
 * @param wrChecked  max_recv_wr is checked against max_qp_wr.
 * @param sgeChecked max_recv_sge is checked against max_sge.
 * @param driver     the device's driver, for the message.
 * @param onSrq      the QP takes its receives from an SRQ.
 */
record RecvCapsOnSrq(boolean wrChecked, boolean sgeChecked, String driver, boolean onSrq)
{
    /**
     * @param profile the device's profile.
     * @param attr    the QP's init attributes.
     * @return the receive checks its driver makes.
     */
    static RecvCapsOnSrq of(final DeviceProfile profile, final QpInitAttr attr)
    {
        final boolean onSrq = attr.srq() != null;
        final boolean none = onSrq && profile.follows(ProviderRule.SRQ_QP_RECV_CAPS_UNCHECKED);
        final boolean sgeSkipped = onSrq && profile.follows(ProviderRule.SRQ_QP_RECV_SGE_UNCHECKED);
        return new RecvCapsOnSrq(!none, !none && !sgeSkipped, profile.driver(), onSrq);
    }

    /**
     * @param wr       the work-request check failed (else the SGE check).
     * @param recvOver the receive field is the one out of range.
     * @return what the driver checks for a QP on an SRQ, for the message; empty for a QP of its own.
     */
    String why(final boolean wr, final boolean recvOver)
    {
        if (!onSrq || !recvOver)
        {
            return "";
        }
        if (wr)
        {
            return " (the QP takes its receives from an SRQ, but " + driver + " checks max_recv_wr all the same: "
                + (sgeChecked ? "it checks both receive caps, as libmlx4's mlx4_create_qp_ex does"
                : "mlx5_calc_rq_size checks max_recv_wr")
                + " before the SRQ is looked at; give 0 receive work requests to a QP on an SRQ)";
        }
        return wrChecked && !sgeChecked ? "" : " (the QP takes its receives from an SRQ, but " + driver
            + " checks max_recv_sge all the same, as mlx4_create_qp_ex does; give 0 receive SGEs to a QP on an SRQ)";
    }
}
