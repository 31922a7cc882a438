package dev.rnicsim.hwnic;

/**
 * The values of {@code <infiniband/verbs.h>} enums and defines the binding passes or reads that verbs-api has no
 * type for, named exactly as in C so that the layout check ({@code LayoutCheckTest}) compares each with the
 * header. (Access flags, work-request and completion codes, send flags and the like come from the verbs-api enums,
 * which the same check compares with the header.)
 *
 * <p>Immutable and thread safe.
 */
final class Ibv
{
    /** {@code enum ibv_qp_attr_mask}: qp_state is valid. */
    static final int IBV_QP_STATE = 1;
    /** access flags are valid. */
    static final int IBV_QP_ACCESS_FLAGS = 1 << 3;
    /** pkey_index is valid. */
    static final int IBV_QP_PKEY_INDEX = 1 << 4;
    /** port_num is valid. */
    static final int IBV_QP_PORT = 1 << 5;
    /** ah_attr is valid. */
    static final int IBV_QP_AV = 1 << 7;
    /** path_mtu is valid. */
    static final int IBV_QP_PATH_MTU = 1 << 8;
    /** timeout is valid. */
    static final int IBV_QP_TIMEOUT = 1 << 9;
    /** retry_cnt is valid. */
    static final int IBV_QP_RETRY_CNT = 1 << 10;
    /** rnr_retry is valid. */
    static final int IBV_QP_RNR_RETRY = 1 << 11;
    /** rq_psn is valid. */
    static final int IBV_QP_RQ_PSN = 1 << 12;
    /** max_rd_atomic is valid. */
    static final int IBV_QP_MAX_QP_RD_ATOMIC = 1 << 13;
    /** min_rnr_timer is valid. */
    static final int IBV_QP_MIN_RNR_TIMER = 1 << 15;
    /** sq_psn is valid. */
    static final int IBV_QP_SQ_PSN = 1 << 16;
    /** max_dest_rd_atomic is valid. */
    static final int IBV_QP_MAX_DEST_RD_ATOMIC = 1 << 17;
    /** dest_qp_num is valid. */
    static final int IBV_QP_DEST_QPN = 1 << 20;

    /** {@code enum ibv_wc_flags}: the receive buffer starts with a 40-byte GRH. */
    static final int IBV_WC_GRH = 1;
    /** {@code enum ibv_wc_flags}: imm_data is valid. */
    static final int IBV_WC_WITH_IMM = 1 << 1;
    /** invalidated_rkey is valid. */
    static final int IBV_WC_WITH_INV = 1 << 3;

    /** {@code enum ibv_mtu}: 1024 bytes. */
    static final int IBV_MTU_1024 = 3;

    /** {@code enum ibv_port_state}: active. */
    static final int IBV_PORT_ACTIVE = 4;

    /** {@code IBV_LINK_LAYER_INFINIBAND}. */
    static final int IBV_LINK_LAYER_INFINIBAND = 1;
    /** {@code IBV_LINK_LAYER_ETHERNET}: RoCE, addressed by GID (the AH is global). */
    static final int IBV_LINK_LAYER_ETHERNET = 2;

    /** {@code enum ibv_rereg_mr_err_code}: libibverbs refused the input. */
    static final int IBV_REREG_MR_ERR_INPUT = -1;
    /** fork protection of the new range failed; the old MR is valid. */
    static final int IBV_REREG_MR_ERR_DONT_FORK_NEW = -2;
    /** the new MR is valid, releasing fork protection of the old range failed. */
    static final int IBV_REREG_MR_ERR_DO_FORK_OLD = -3;
    /** the kernel command failed; the MR must not be used. */
    static final int IBV_REREG_MR_ERR_CMD = -4;
    /** the kernel command failed and fork protection of the new range is inconsistent. */
    static final int IBV_REREG_MR_ERR_CMD_AND_DO_FORK_NEW = -5;

    /** {@code enum ibv_advise_mr_advice}: prefetch for reading. */
    static final int IBV_ADVISE_MR_ADVICE_PREFETCH = 0;
    /** prefetch for writing. */
    static final int IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE = 1;
    /** only map pages already present. */
    static final int IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT = 2;
    /** {@code IBV_ADVISE_MR_FLAG_FLUSH}: synchronous. */
    static final int IBV_ADVISE_MR_FLAG_FLUSH = 1;

    private Ibv()
    {
    }
}
