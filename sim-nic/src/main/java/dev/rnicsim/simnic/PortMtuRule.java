package dev.rnicsim.simnic;

/**
 * How a driver's {@code query_port} turns its netdev's MTU into the port's {@code active_mtu} (and for some, its
 * {@code max_mtu}), as {@code enum ibv_mtu}: 1 = 256, 2 = 512, 3 = 1024, 4 = 2048, 5 = 4096 bytes. An IB MTU is the
 * payload of one packet; on Ethernet the RoCE headers travel in the same frame, so the drivers that subtract them
 * report 1024 on the usual 1500-byte netdev (2048 does not fit with its headers) and 4096 on a 9000-byte jumbo one.
 * Where the drivers differ it is this property of the profile.
 */
public enum PortMtuRule
{
    /**
     * The link's own MTU, not a netdev's: InfiniBand ports (mlx4 and mlx5 on an IB link, hfi1; negotiated with the
     * subnet manager) and EFA (the device's MTU, {@code efa_query_port}). active_mtu is max_mtu.
     */
    LINK,
    /**
     * {@code iboe_get_mtu} (include/rdma/ib_addr.h): the netdev MTU less the largest RoCE headers (GRH 40, UDP 8, BTH
     * 12, XRC ETH 4, AtomicETH 28, ICRC 4: 96 bytes), then the largest IB MTU that fits, at most max_mtu 4096: mlx4
     * ({@code eth_link_query_port}), mlx5 on Ethernet ({@code mlx5_query_port_roce}), bnxt_re ({@code
     * bnxt_re_query_port}), hns ({@code hns_roce_query_port}: 256 when nothing fits), qedr ({@code qedr_query_port}).
     */
    IBOE_HEADERS,
    /**
     * rxe ({@code rxe_set_mtu}, {@code eth_mtu_int_to_enum} in rxe_param.h): the netdev MTU less {@code
     * RXE_MAX_HDR_LENGTH} (80 bytes), then the largest IB MTU that fits ({@code rxe_mtu_int_to_enum}), at most 4096
     * and at least 256; max_mtu stays 4096 ({@code RXE_PORT_MAX_MTU}).
     */
    RXE_HEADERS,
    /**
     * {@code ib_mtu_int_to_enum(netdev->mtu)}: the largest IB MTU not above the netdev MTU itself, headers not
     * subtracted; max_mtu 4096. irdma ({@code irdma_query_port}, RoCE and iWARP), mana ({@code mana_ib_query_port})
     * and the core's {@code iw_query_port} for iWARP devices (cxgb4).
     */
    NETDEV,
    /**
     * As {@link #NETDEV}, and max_mtu too follows the netdev: siw ({@code siw_query_port}) and erdma ({@code
     * erdma_query_port}) set both from {@code ib_mtu_int_to_enum(netdev->mtu)}.
     */
    NETDEV_MAX_TOO;

    /** The largest RoCE headers {@code iboe_get_mtu} subtracts (IB_GRH_BYTES ... IB_ICRC_BYTES, ib_addr.h). */
    static final int IBOE_HEADER_BYTES = 40 + 8 + 12 + 4 + 28 + 4;
    /** rxe's {@code RXE_MAX_HDR_LENGTH} (rxe_hdr.h): the largest headers of an rxe packet. */
    static final int RXE_HEADER_BYTES = 80;

    /**
     * @param netdevMtuBytes the netdev's MTU.
     * @param linkMaxMtu     the port's max_mtu without a netdev (the profile's, as {@code enum ibv_mtu}).
     * @return the port's active_mtu as {@code enum ibv_mtu}.
     */
    public int activeMtu(final int netdevMtuBytes, final int linkMaxMtu)
    {
        return switch (this)
        {
            case LINK -> linkMaxMtu;
            case IBOE_HEADERS -> Math.min(linkMaxMtu, Math.max(1, fit(netdevMtuBytes - IBOE_HEADER_BYTES)));
            case RXE_HEADERS -> Math.min(linkMaxMtu, Math.max(1, fit(netdevMtuBytes - RXE_HEADER_BYTES)));
            case NETDEV, NETDEV_MAX_TOO -> Math.min(linkMaxMtu, Math.max(1, fit(netdevMtuBytes)));
        };
    }

    /**
     * @param netdevMtuBytes the netdev's MTU.
     * @param linkMaxMtu     the profile's max_mtu.
     * @return the port's max_mtu as {@code enum ibv_mtu}: the profile's, or for {@link #NETDEV_MAX_TOO} the netdev's.
     */
    public int maxMtu(final int netdevMtuBytes, final int linkMaxMtu)
    {
        return this == NETDEV_MAX_TOO ? activeMtu(netdevMtuBytes, linkMaxMtu) : linkMaxMtu;
    }

    /**
     * @return true when the netdev's MTU decides the port's MTU.
     */
    public boolean followsNetdev()
    {
        return this != LINK;
    }

    /**
     * @param bytes room for a packet's payload.
     * @return the largest IB MTU (enum ibv_mtu) of at most that many bytes, 0 when not even 256 fit.
     */
    static int fit(final int bytes)
    {
        for (int e = 5; e >= 1; e--)
        {
            if (bytes >= bytesOf(e))
            {
                return e;
            }
        }
        return 0;
    }

    /**
     * @param mtu an IB MTU as {@code enum ibv_mtu} (1..5).
     * @return its bytes: 256 to 4096.
     */
    public static int bytesOf(final int mtu)
    {
        return 128 << mtu;
    }
}
