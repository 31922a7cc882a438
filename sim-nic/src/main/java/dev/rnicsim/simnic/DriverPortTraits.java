package dev.rnicsim.simnic;

import dev.rnicsim.verbs.PortAttributes;
import java.util.Objects;

/**
 * What a driver's {@code query_port} and its port checks report where drivers differ: the port's table lengths and
 * message size, its usual link layer, how its MTUs follow the netdev, which RoCE GIDs it lists and whether
 * {@code ibv_modify_qp} refuses a path_mtu above active_mtu. Part of the driver's traits
 * ({@link DriverVerbTraits#port()}), so that the profile asks them instead of testing driver names. Immutable and
 * thread safe.
 *
 * <p>The sources:
 * <ul>
 * <li>rxe: rxe_param.h ({@code RXE_PORT_GID_TBL_LEN} 1024, {@code RXE_PORT_MAX_MSG_SZ} 2^31 and
 * {@code RXE_PORT_PKEY_TBL_LEN} 1 in current kernels, 0x800000 and 64 in old ones, whose rxe reports vendor_id 0:
 * rxe-legacy); Ethernet whatever the profile says; {@link PortMtuRule#RXE_HEADERS}; RoCE v2 GIDs only.</li>
 * <li>irdma ({@code irdma_query_port}): Ethernet whatever the profile says, {@link PortMtuRule#NETDEV}, RoCE v2
 * GIDs only; table lengths assumed as for the rest.</li>
 * <li>The others: no port section in the dumps, so gid_tbl_len 256, max_msg_sz 2^30 and the device's max_pkeys
 * (assumed); the link layer the kernel's {@code rdma_port_get_link_layer} answers: Ethernet for the RoCE drivers
 * ({@code bnxt_re_get_link_layer}, hns, qedr, mana) and the iWARP ones (siw, cxgb4, erdma: an iWARP node's transport
 * gives Ethernet), unspecified for EFA ({@code efa_port_link_layer}), InfiniBand for hfi1, mlx4 and mlx5 (whose VPI
 * parts initialise their ports as InfiniBand) and any driver no rule knows. The MTU rule: {@code iboe_get_mtu}'s
 * headers on mlx4, mlx5, bnxt_re, hns, qedr and any driver no rule knows; the netdev MTU itself on mana, cxgb4;
 * max_mtu too on siw, erdma ({@link PortMtuRule} gives each function). RoCE v2 GIDs only on mana too; v1 and v2 on
 * the other RoCE drivers (mlx4, mlx5, bnxt_re, hns, qedr). hns refuses a path_mtu above active_mtu
 * ({@code check_mtu_validate} in hns_roce_hw_v2.c compares it with {@code iboe_get_mtu} of the netdev); the others
 * take any path_mtu up to max_mtu (mlx5 {@code __mlx5_ib_modify_qp}, rxe {@code rxe_qp_chk_attr}).</li>
 * </ul>
 *
 * @param gidTblLen                 {@code gid_tbl_len} of a RoCE or IB port (an iWARP port has 1 whatever the
 *                                  driver: {@link DeviceProfile#IWARP_GID_TBL_LEN}).
 * @param maxMsgSzBytes             {@code max_msg_sz}.
 * @param pkeyTblLen                {@code pkey_tbl_len}; 0 for the device's {@code max_pkeys}.
 * @param linkLayer                 the driver's usual {@code IBV_LINK_LAYER_*}.
 * @param linkLayerFixed            the port reports {@code linkLayer} whatever link layer the profile gives (rxe,
 *                                  irdma); false: the profile's.
 * @param mtuRule                   how an Ethernet port's MTUs follow its netdev.
 * @param roceV2Only                an Ethernet RoCE port lists RoCE v2 GIDs only (rxe, irdma, mana); false: v1 and
 *                                  v2.
 * @param pathMtuAboveActiveRefused {@code ibv_modify_qp} refuses a path_mtu above active_mtu with EINVAL (hns).
 * @param vendorZero                the port of an older kernel's device of this driver, which reports vendor_id 0
 *                                  (rxe-legacy); null where no such device is modelled.
 */
public record DriverPortTraits(int gidTblLen, long maxMsgSzBytes, int pkeyTblLen, int linkLayer,
                               boolean linkLayerFixed, PortMtuRule mtuRule, boolean roceV2Only,
                               boolean pathMtuAboveActiveRefused, DriverPortTraits vendorZero)
{
    /** gid_tbl_len assumed where the driver's was not read. */
    static final int ASSUMED_GID_TBL_LEN = 256;
    /** max_msg_sz assumed where the driver's was not read (2^30). */
    static final long ASSUMED_MAX_MSG_SZ_BYTES = 1L << 30;

    /**
     * @throws NullPointerException for a null {@code mtuRule}.
     */
    public DriverPortTraits
    {
        Objects.requireNonNull(mtuRule, "mtuRule");
    }

    /**
     * A port of the assumed table lengths and the profile's link layer.
     *
     * @param linkLayer  the driver's usual link layer.
     * @param mtuRule    its MTU rule.
     * @param roceV2Only it lists RoCE v2 GIDs only.
     * @return the port traits.
     */
    static DriverPortTraits assumed(final int linkLayer, final PortMtuRule mtuRule, final boolean roceV2Only)
    {
        return new DriverPortTraits(ASSUMED_GID_TBL_LEN, ASSUMED_MAX_MSG_SZ_BYTES, 0, linkLayer, false, mtuRule,
            roceV2Only, false, null);
    }

    /**
     * The table of the drivers' ports (see the class comment for each fact's source).
     *
     * @param driver a driver name.
     * @return its port traits.
     */
    public static DriverPortTraits of(final String driver)
    {
        final int ethernet = PortAttributes.LINK_LAYER_ETHERNET;
        return switch (driver)
        {
            case "rxe" -> new DriverPortTraits(1024, 1L << 31, 1, ethernet, true, PortMtuRule.RXE_HEADERS, true,
                false, new DriverPortTraits(1024, 0x800000, 64, ethernet, true, PortMtuRule.RXE_HEADERS, true, false,
                null));
            case "irdma" -> new DriverPortTraits(ASSUMED_GID_TBL_LEN, ASSUMED_MAX_MSG_SZ_BYTES, 0, ethernet, true,
                PortMtuRule.NETDEV, true, false, null);
            case "mana" -> assumed(ethernet, PortMtuRule.NETDEV, true);
            case "cxgb4" -> assumed(ethernet, PortMtuRule.NETDEV, false);
            case "siw", "erdma" -> assumed(ethernet, PortMtuRule.NETDEV_MAX_TOO, false);
            case "bnxt_re", "qedr" -> assumed(ethernet, PortMtuRule.IBOE_HEADERS, false);
            case "hns" -> new DriverPortTraits(ASSUMED_GID_TBL_LEN, ASSUMED_MAX_MSG_SZ_BYTES, 0, ethernet, false,
                PortMtuRule.IBOE_HEADERS, false, true, null);
            case "efa" -> assumed(PortAttributes.LINK_LAYER_UNSPECIFIED, PortMtuRule.IBOE_HEADERS, false);
            // mlx4, mlx5, hfi1 and any driver no rule knows
            default -> assumed(PortAttributes.LINK_LAYER_INFINIBAND, PortMtuRule.IBOE_HEADERS, false);
        };
    }

    /**
     * @param vendorId the device's vendor_id.
     * @return the port traits of a device of that vendor_id: {@link #vendorZero} for 0 where there is one.
     */
    DriverPortTraits forVendor(final int vendorId)
    {
        return vendorId == 0 && vendorZero != null ? vendorZero : this;
    }
}
