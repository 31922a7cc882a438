package dev.rnicsim.verbs;

/**
 * The operation a work completion reports, with the numbers of {@code enum ibv_wc_opcode} (libibverbs/verbs.h).
 * Meaningful only for successful completions (ibv_poll_cq(3)).
 *
 * <p>Immutable and thread safe.
 */
public enum WcOpcode
{
    /** IBV_WC_SEND (0). */
    SEND(0),
    /** IBV_WC_RDMA_WRITE (1). */
    RDMA_WRITE(1),
    /** IBV_WC_RDMA_READ (2). */
    RDMA_READ(2),
    /** IBV_WC_COMP_SWAP (3). */
    COMP_SWAP(3),
    /** IBV_WC_FETCH_ADD (4). */
    FETCH_ADD(4),
    /** IBV_WC_BIND_MW (5). */
    BIND_MW(5),
    /** IBV_WC_LOCAL_INV (6). */
    LOCAL_INV(6),
    /** IBV_WC_FLUSH (8). */
    FLUSH(8),
    /** IBV_WC_ATOMIC_WRITE (9). */
    ATOMIC_WRITE(9),
    /** IB_WC_REG_MR (kernel verbs only; in include/rdma/ib_verbs.h it follows IB_WC_ATOMIC_WRITE = 9): a fast
     * registration completed. */
    REG_MR(10),
    /** IBV_WC_RECV (128): a receive consumed by a SEND. */
    RECV(128),
    /** IBV_WC_RECV_RDMA_WITH_IMM (129): a receive consumed by an RDMA WRITE with immediate. */
    RECV_RDMA_WITH_IMM(129);

    private final int code;

    WcOpcode(final int code)
    {
        this.code = code;
    }

    /**
     * @return the number in {@code enum ibv_wc_opcode}.
     */
    public int code()
    {
        return code;
    }
}
