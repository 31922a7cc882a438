package dev.rnicsim.verbs;

/**
 * Queue-pair transport types ({@code enum ibv_qp_type}, libibverbs/verbs.h).
 *
 * <p>Immutable and thread safe.
 */
public enum QpType
{
    /** IBV_QPT_RC (2): reliable connected. */
    RC(2),
    /** IBV_QPT_UC (3): unreliable connected. */
    UC(3),
    /** IBV_QPT_UD (4): unreliable datagram. */
    UD(4);

    private final int code;

    QpType(final int code)
    {
        this.code = code;
    }

    /**
     * @return the number in {@code enum ibv_qp_type}.
     */
    public int code()
    {
        return code;
    }
}
