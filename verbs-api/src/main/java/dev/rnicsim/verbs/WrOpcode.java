package dev.rnicsim.verbs;

/**
 * The operation of a send work request, with the numbers of {@code enum ibv_wr_opcode} (libibverbs/verbs.h).
 *
 * <p>Immutable and thread safe.
 */
public enum WrOpcode
{
    /** IBV_WR_RDMA_WRITE (0): write the local SGL to the peer's memory at (remoteAddr, rkey). */
    RDMA_WRITE(0, WcOpcode.RDMA_WRITE),
    /** IBV_WR_RDMA_WRITE_WITH_IMM (1): as RDMA_WRITE, then consume a receive at the peer with the immediate. */
    RDMA_WRITE_WITH_IMM(1, WcOpcode.RDMA_WRITE),
    /** IBV_WR_SEND (2): the local SGL goes into the peer's next receive buffer. */
    SEND(2, WcOpcode.SEND),
    /** IBV_WR_SEND_WITH_IMM (3). */
    SEND_WITH_IMM(3, WcOpcode.SEND),
    /** IBV_WR_RDMA_READ (4): read the peer's memory at (remoteAddr, rkey) into the local SGL. */
    RDMA_READ(4, WcOpcode.RDMA_READ),
    /** IBV_WR_ATOMIC_CMP_AND_SWP (5): 8 bytes at (remoteAddr, rkey); the original value lands in the local SGE. */
    ATOMIC_CMP_AND_SWP(5, WcOpcode.COMP_SWAP),
    /** IBV_WR_ATOMIC_FETCH_AND_ADD (6). */
    ATOMIC_FETCH_AND_ADD(6, WcOpcode.FETCH_ADD),
    /** IBV_WR_LOCAL_INV (7). */
    LOCAL_INV(7, WcOpcode.LOCAL_INV),
    /** IBV_WR_BIND_MW (8). */
    BIND_MW(8, WcOpcode.BIND_MW),
    /** IBV_WR_SEND_WITH_INV (9). */
    SEND_WITH_INV(9, WcOpcode.SEND),
    /** IBV_WR_FLUSH (14; {@code ibv_wr_flush}, ibv_wr_post(3)): makes earlier writes to (remoteAddr, rkey) reach
     * the placement type's point (global visibility or persistence) over a range or the whole MR; carries no payload
     * (IBTA 1.6 annex A19, oA19-2). Its operands are a {@link SendWr.Flush}. */
    FLUSH(14, WcOpcode.FLUSH),
    /** IBV_WR_ATOMIC_WRITE (15; {@code ibv_wr_atomic_write}): stores 8 bytes at (remoteAddr, rkey) in one piece,
     * after every earlier operation of the QP (IBTA 1.6 annex A19); needs REMOTE_WRITE. The 8 bytes travel in the work
     * request ({@link SendWr#compareAdd()}). */
    ATOMIC_WRITE(15, WcOpcode.ATOMIC_WRITE),
    /** IB_WR_REG_MR (0x20, kernel verbs only): fast registration of a {@link FastRegMr}. */
    REG_MR(0x20, WcOpcode.REG_MR);

    private final int code;
    private final WcOpcode completion;

    WrOpcode(final int code, final WcOpcode completion)
    {
        this.code = code;
        this.completion = completion;
    }

    /**
     * @return the number in {@code enum ibv_wr_opcode}.
     */
    public int code()
    {
        return code;
    }

    /**
     * @return the opcode the send completion of this work request reports.
     */
    public WcOpcode completion()
    {
        return completion;
    }

    /**
     * @return true for the two atomics.
     */
    public boolean isAtomic()
    {
        return this == ATOMIC_CMP_AND_SWP || this == ATOMIC_FETCH_AND_ADD;
    }

    /**
     * @return true for the operations that name remote memory by (remoteAddr, rkey).
     */
    public boolean isRdma()
    {
        return this == RDMA_WRITE || this == RDMA_WRITE_WITH_IMM || this == RDMA_READ || isAtomic() || this == FLUSH
            || this == ATOMIC_WRITE;
    }
}
