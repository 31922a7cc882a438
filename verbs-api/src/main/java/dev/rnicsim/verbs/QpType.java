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
    UD(4),
    /** IBV_QPT_XRC_SEND (9): the initiator of an XRC connection (the kernel's IB_QPT_XRC_INI): a send queue only, no
     * receive queue and no receive CQ; each send names the XRC SRQ at the target ({@link SendWr#remoteSrqn}). */
    XRC_SEND(9),
    /** IBV_QPT_XRC_RECV (10): the target of an XRC connection (IB_QPT_XRC_TGT): created in an XRC domain, with no
     * PD, no CQ and no queues of its own; each message goes to the XRC SRQ of its domain it names. */
    XRC_RECV(10);

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
