package dev.rnicsim.verbs;

/**
 * {@code enum ibv_transport_type} (libibverbs/verbs.h): the transport of a device, {@code transport_type} of
 * {@code struct ibv_device}. It goes with the node type: InfiniBand and RoCE devices are node type CA, iWARP devices
 * (siw, cxgb4, irdma in iWARP mode, erdma) node type RNIC, and efa and mana report neither.
 *
 * <p>Immutable and thread safe.
 */
public enum TransportType
{
    /** IBV_TRANSPORT_IB (0): InfiniBand and RoCE (node type CA). */
    IB(0),
    /** IBV_TRANSPORT_IWARP (1): iWARP (node type RNIC). */
    IWARP(1),
    /** IBV_TRANSPORT_USNIC (2). */
    USNIC(2),
    /** IBV_TRANSPORT_USNIC_UDP (3). */
    USNIC_UDP(3),
    /** IBV_TRANSPORT_UNSPECIFIED (4): efa, mana. */
    UNSPECIFIED(4);

    private final int code;

    TransportType(final int code)
    {
        this.code = code;
    }

    /**
     * @return its value in {@code enum ibv_transport_type}.
     */
    public int code()
    {
        return code;
    }

    /**
     * @param code a value of {@code enum ibv_transport_type}.
     * @return the transport; UNSPECIFIED for a value verbs.h does not name (IBV_TRANSPORT_UNKNOWN, -1, included).
     */
    public static TransportType of(final int code)
    {
        for (final TransportType t : values())
        {
            if (t.code == code)
            {
                return t;
            }
        }
        return UNSPECIFIED;
    }
}
