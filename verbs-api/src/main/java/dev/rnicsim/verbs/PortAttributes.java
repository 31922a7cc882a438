package dev.rnicsim.verbs;

/**
 * What {@code ibv_query_port} reports ({@code struct ibv_port_attr}), the fields the simulator models.
 *
 * <p>Immutable.
 *
 * @param state         port state: 4 is IBV_PORT_ACTIVE.
 * @param maxMtu        largest MTU the port supports, as {@code enum ibv_mtu} (5: 4096 bytes).
 * @param activeMtu     MTU in use, as {@code enum ibv_mtu}.
 * @param gidTblLen     entries of the GID table.
 * @param portCapFlags  {@code port_cap_flags}.
 * @param maxMsgSzBytes largest message.
 * @param pkeyTblLen    entries of the P_Key table.
 * @param linkLayer     0 IBV_LINK_LAYER_UNSPECIFIED, 1 IBV_LINK_LAYER_INFINIBAND, 2 IBV_LINK_LAYER_ETHERNET.
 */
public record PortAttributes(int state, int maxMtu, int activeMtu, int gidTblLen, long portCapFlags,
                             long maxMsgSzBytes, int pkeyTblLen, int linkLayer)
{
    /** IBV_PORT_ACTIVE. */
    public static final int STATE_ACTIVE = 4;
    /** IBV_MTU_4096. */
    public static final int MTU_4096 = 5;
    /** IBV_LINK_LAYER_UNSPECIFIED: a port that is neither (EFA's, {@code efa_port_link_layer}). */
    public static final int LINK_LAYER_UNSPECIFIED = 0;
    /** IBV_LINK_LAYER_INFINIBAND. */
    public static final int LINK_LAYER_INFINIBAND = 1;
    /** IBV_LINK_LAYER_ETHERNET. */
    public static final int LINK_LAYER_ETHERNET = 2;
}
