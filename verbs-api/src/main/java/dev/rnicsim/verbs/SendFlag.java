package dev.rnicsim.verbs;

/**
 * Flags of a send work request, with the values of {@code enum ibv_send_flags} (libibverbs/verbs.h).
 *
 * <p>Immutable and thread safe.
 */
public enum SendFlag
{
    /** IBV_SEND_FENCE (1): wait for earlier READs and atomics before starting. RC only. */
    FENCE(1),
    /** IBV_SEND_SIGNALED (2): generate a completion when it succeeds (failures always complete). */
    SIGNALED(2),
    /** IBV_SEND_SOLICITED (4). */
    SOLICITED(4),
    /** IBV_SEND_INLINE (8): the payload is copied at post time and the lkeys are not checked. SEND and
     * RDMA_WRITE only, up to the QP's max_inline_data. */
    INLINE(8);

    private final int bit;

    SendFlag(final int bit)
    {
        this.bit = bit;
    }

    /**
     * @return the flag's value.
     */
    public int bit()
    {
        return bit;
    }
}
