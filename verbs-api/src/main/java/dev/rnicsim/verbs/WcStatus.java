package dev.rnicsim.verbs;

/**
 * Work-completion status, with the numbers of {@code enum ibv_wc_status} (rdma-core libibverbs/verbs.h) and the
 * names {@code ibv_wc_status_str} prints. Unknown numbers map to {@link #UNKNOWN}, never by ordinal.
 *
 * <p>Immutable and thread safe.
 */
public enum WcStatus
{
    /** IBV_WC_SUCCESS (0). */
    SUCCESS(0),
    /** IBV_WC_LOC_LEN_ERR (1): local length error (e.g. a message larger than the receive buffer). */
    LOC_LEN_ERR(1),
    /** IBV_WC_LOC_QP_OP_ERR (2): local QP operation error. */
    LOC_QP_OP_ERR(2),
    /** IBV_WC_LOC_EEC_OP_ERR (3). */
    LOC_EEC_OP_ERR(3),
    /** IBV_WC_LOC_PROT_ERR (4): a local SGE's lkey, PD, rights or range failed. */
    LOC_PROT_ERR(4),
    /** IBV_WC_WR_FLUSH_ERR (5): the QP was in the error state; the work request was not executed. */
    WR_FLUSH_ERR(5),
    /** IBV_WC_MW_BIND_ERR (6). */
    MW_BIND_ERR(6),
    /** IBV_WC_BAD_RESP_ERR (7). */
    BAD_RESP_ERR(7),
    /** IBV_WC_LOC_ACCESS_ERR (8). */
    LOC_ACCESS_ERR(8),
    /** IBV_WC_REM_INV_REQ_ERR (9): the responder found the request invalid (length, misaligned atomic, an
     * operation the QP does not allow). */
    REM_INV_REQ_ERR(9),
    /** IBV_WC_REM_ACCESS_ERR (10): the responder refused the rkey, its PD, rights or range. */
    REM_ACCESS_ERR(10),
    /** IBV_WC_REM_OP_ERR (11): the responder could not complete the operation (e.g. a bad receive buffer). */
    REM_OP_ERR(11),
    /** IBV_WC_RETRY_EXC_ERR (12): transport retries exhausted. */
    RETRY_EXC_ERR(12),
    /** IBV_WC_RNR_RETRY_EXC_ERR (13): receiver-not-ready retries exhausted. */
    RNR_RETRY_EXC_ERR(13),
    /** IBV_WC_LOC_RDD_VIOL_ERR (14). */
    LOC_RDD_VIOL_ERR(14),
    /** IBV_WC_REM_INV_RD_REQ_ERR (15). */
    REM_INV_RD_REQ_ERR(15),
    /** IBV_WC_REM_ABORT_ERR (16). */
    REM_ABORT_ERR(16),
    /** IBV_WC_INV_EECN_ERR (17). */
    INV_EECN_ERR(17),
    /** IBV_WC_INV_EEC_STATE_ERR (18). */
    INV_EEC_STATE_ERR(18),
    /** IBV_WC_FATAL_ERR (19). */
    FATAL_ERR(19),
    /** IBV_WC_RESP_TIMEOUT_ERR (20). */
    RESP_TIMEOUT_ERR(20),
    /** IBV_WC_GENERAL_ERR (21). */
    GENERAL_ERR(21),
    /** IBV_WC_TM_ERR (22). */
    TM_ERR(22),
    /** IBV_WC_TM_RNDV_INCOMPLETE (23). */
    TM_RNDV_INCOMPLETE(23),
    /** A number with no constant here (a driver-specific status). */
    UNKNOWN(-1);

    private static final WcStatus[] BY_CODE = new WcStatus[24];

    static
    {
        for (final WcStatus s : values())
        {
            if (s.code >= 0)
            {
                BY_CODE[s.code] = s;
            }
        }
    }

    private final int code;

    WcStatus(final int code)
    {
        this.code = code;
    }

    /**
     * @return the number in {@code enum ibv_wc_status} (-1 for UNKNOWN).
     */
    public int code()
    {
        return code;
    }

    /**
     * @return the C name, e.g. {@code IBV_WC_REM_ACCESS_ERR}.
     */
    public String cName()
    {
        return "IBV_WC_" + name();
    }

    /**
     * @param code a status number.
     * @return its constant, or UNKNOWN.
     */
    public static WcStatus of(final int code)
    {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }
}
