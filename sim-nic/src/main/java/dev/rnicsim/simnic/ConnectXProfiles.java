package dev.rnicsim.simnic;

import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.OdpCaps;
import java.util.List;

/**
 * The mlx5 parts besides {@code connectx5} and {@code connectx7}: ConnectX-4, -4 Lx, -5 Ex, -6, -6 Dx, -6 Lx and
 * BlueField-2 and -3. They share mlx5's rules (drivers/infiniband/hw/mlx5/mr.c: exact MTT allocation, recycled mkeys,
 * max_mr 2^24, 64-bit page_size_cap); what differs is the identity (vendor_part_id from the kernel's
 * {@code mlx5_core_pci_table}, firmware line), max_qp and device_cap_flags, read from the dumps under
 * {@code devinfo/} where one exists. A field no dump of that part shows keeps the ConnectX-5 value and is listed in
 * the profile's defaulted fields.
 *
 * <p>The link layer is the part's: ConnectX-4 Lx, ConnectX-6 Dx and ConnectX-6 Lx are Ethernet-only adapters (NVIDIA's
 * "Linux Kernel Upstream Release Notes" v5.17 and the WinOF-2 "Supported Network Adapter Cards" table list only
 * Ethernet speeds for them), so their ports are RoCE ports ({@link #ETHERNET_ONLY}): {@code ibv_devinfo} prints
 * {@code link_layer: Ethernet}, the active MTU follows the netdev ({@link PortMtuRule#IBOE_HEADERS},
 * {@code mlx5_query_port_roce}) and the GID table lists RoCE v1 and v2 ({@code mlx5_port_immutable} with
 * {@code RDMA_CORE_PORT_IBA_ROCE | RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP}). The project's dumps of the two Lx parts
 * (connectx4lx-mlx5.txt, connectx6lx-mlx5.txt) stop before the port section. ConnectX-4, -5 Ex, -6 and the
 * BlueField-2 and -3 DPUs are VPI parts (InfiniBand or Ethernet per port, {@code mlxconfig LINK_TYPE_P1}); NVIDIA's
 * XLIO "Type Management / VPI Cards Configuration" page says ConnectX-6, ConnectX-7, BlueField-2 and BlueField-3
 * ports are initialised as InfiniBand, so those profiles keep an InfiniBand port.
 *
 * <p>Stateless and thread safe.
 */
public final class ConnectXProfiles
{
    /** The ConnectX-5 fields a partial dump (one that stops after device_cap_flags) lacks. */
    private static final List<String> AFTER_FLAGS = List.of("node_guid", "sys_image_guid", "max_sge", "max_sge_rd",
        "max_cq", "max_cqe", "max_mr", "max_pd", "max_qp_rd_atom", "max_res_rd_atom", "max_qp_init_rd_atom",
        "atomic_cap", "max_mw", "max_mcast_grp", "max_mcast_qp_attach", "max_total_mcast_qp_attach", "max_ah",
        "max_srq", "max_srq_wr", "max_srq_sge", "max_pkeys", "local_ca_ack_delay",
        "general_odp_caps", "rc_odp_caps", "uc_odp_caps", "ud_odp_caps", "xrc_odp_caps");

    /** The profiles of the Ethernet-only parts: ConnectX-4 Lx, ConnectX-6 Dx, ConnectX-6 Lx. */
    public static final java.util.Set<String> ETHERNET_ONLY = java.util.Set.of("connectx4lx", "connectx6dx",
        "connectx6lx");

    private ConnectXProfiles()
    {
    }

    /**
     * @return every profile of this class.
     */
    public static List<DeviceProfile> all()
    {
        return List.of(connectx4(), connectx4Lx(), connectx5Ex(), connectx6(), connectx6Dx(), connectx6Lx(),
            bluefield2(), bluefield3());
    }

    /**
     * The ConnectX-5 rules less device memory and tag matching: ConnectX-4 and ConnectX-4 Lx have no MEMIC, and
     * hardware tag matching came with ConnectX-5 (the ConnectX-4 parts report {@code tm_caps} 0). The kernel offers
     * {@code ibv_alloc_dm} only when the device reports the {@code memic} capability (mlx5 dm.c
     * {@code mlx5_ib_alloc_dm}: MEMIC allocations need {@code MLX5_CAP_DEV_MEM(dev, memic)}; {@code max_dm_size} of
     * {@code mlx5_ib_query_device} is {@code max_memic_size}, 0 without it), which firmware of the ConnectX-5
     * generation and later reports (mlx5_ib's device memory support, "IB/mlx5: Device memory support in mlx5_ib",
     * Linux 4.18). No ConnectX-4 dump of the project shows {@code max_dm_size}: the part's lack of MEMIC is assumed
     * (no public per-part statement was found), and a dump that shows it would say otherwise.
     *
     * @return the provider rules of a ConnectX-4 part.
     */
    static java.util.Set<ProviderRule> connectx4Rules()
    {
        final java.util.Set<ProviderRule> rules = java.util.EnumSet.copyOf(DeviceProfiles.connectx5().providerRules());
        rules.remove(ProviderRule.DEVICE_MEMORY);
        rules.remove(ProviderRule.TAG_MATCHING);
        return rules;
    }

    private static DeviceProfile part(final String name, final String fw, final int part, final int maxQp,
        final long flags, final double linkGbps, final List<String> defaulted)
    {
        final DeviceProfile cx5 = DeviceProfiles.connectx5();
        final long guid = 0x0c42a10300000000L | part;
        final DeviceAttributes a = DeviceProfiles.mlx5Base().fwVer(fw).vendorPartId(part).maxQp(maxQp)
            .deviceCapFlags(flags).maxSge(30).maxSgeRd(30).maxPd(16777216).nodeGuid(guid).sysImageGuid(guid)
            .build();
        return new DeviceProfile(name, "mlx5", a, cx5.mtt(), cx5.variantPolicy(), cx5.indexPolicy(),
            cx5.cacheEntries(), cx5.cacheWays(), cx5.providerRules(), true, linkGbps, part, defaulted, cx5.traits());
    }

    /**
     * @return ConnectX-4 (4115), from devinfo/connectx4-mlx5.txt (fw 12.18.1000, flags 0xe97e1c36); 100 Gbit/s; no
     * device memory ({@link #connectx4Rules()}).
     */
    public static DeviceProfile connectx4()
    {
        return part("connectx4", "12.18.1000", 4115, 262144, 0xe97e1c36L, 100.0, AFTER_FLAGS)
            .withProviderRules(connectx4Rules());
    }

    /**
     * @return ConnectX-4 Lx (4117), from devinfo/connectx4lx-mlx5.txt (fw 14.29.1016, flags 0x25321c36); 25 Gbit/s;
     * no device memory ({@link #connectx4Rules()}); an Ethernet (RoCE) port, the part being Ethernet-only.
     */
    public static DeviceProfile connectx4Lx()
    {
        return part("connectx4lx", "14.29.1016", 4117, 262144, 0x25321c36L, 25.0, AFTER_FLAGS)
            .withProviderRules(connectx4Rules())
            .withLinkLayer(dev.rnicsim.verbs.PortAttributes.LINK_LAYER_ETHERNET);
    }

    /**
     * @return ConnectX-5 Ex (4121), from devinfo/connectx5ex-mlx5.txt (fw 16.29.1436, max_qp 131072,
     * flags 0xed721c36); 100 Gbit/s.
     */
    public static DeviceProfile connectx5Ex()
    {
        return part("connectx5ex", "16.29.1436", 4121, 131072, 0xed721c36L, 100.0, AFTER_FLAGS);
    }

    /**
     * @return ConnectX-6 (4123), from devinfo/connectx6-mlx5.txt (fw 20.29.1016, flags 0xe97e1c36; that board
     * reports vendor_id 0x119f, Bull, the profile the Mellanox id); 200 Gbit/s.
     */
    public static DeviceProfile connectx6()
    {
        return part("connectx6", "20.29.1016", 4123, 262144, 0xe97e1c36L, 200.0, AFTER_FLAGS);
    }

    /**
     * @return ConnectX-6 Dx (4125). No dump: the ConnectX-6 values with firmware line 22 (assumed); 100 Gbit/s; an
     * Ethernet (RoCE) port, the part being Ethernet-only.
     */
    public static DeviceProfile connectx6Dx()
    {
        return part("connectx6dx", "22.31.1014", 4125, 262144, 0xe97e1c36L, 100.0,
            concat(List.of("fw_ver", "max_qp", "device_cap_flags"), AFTER_FLAGS))
            .withLinkLayer(dev.rnicsim.verbs.PortAttributes.LINK_LAYER_ETHERNET);
    }

    /**
     * @return ConnectX-6 Lx (4127), from devinfo/connectx6lx-mlx5.txt (max_mw 16777216, max_qp 131072, max_pd 8388608
     * ({@code 1 << log_max_pd} of that firmware), ODP with implicit ODP); 25 Gbit/s; an Ethernet (RoCE) port, the
     * part being Ethernet-only.
     */
    public static DeviceProfile connectx6Lx()
    {
        final DeviceProfile p = part("connectx6lx", "26.31.1014", 4127, 131072, 0x25321c36L, 25.0,
            List.of("fw_ver", "node_guid", "sys_image_guid", "max_sge", "max_sge_rd", "rc_odp_caps", "uc_odp_caps",
                "ud_odp_caps", "xrc_odp_caps"));
        return p.withAttributes(p.attributes().toBuilder().maxPd(8388608).build())
            .withLinkLayer(dev.rnicsim.verbs.PortAttributes.LINK_LAYER_ETHERNET);
    }

    /**
     * @return BlueField-2 (41686 = 0xa2d6). In the configuration DEVICES.md records it reports no ODP, so this
     * profile has none: ON_DEMAND registrations are EOPNOTSUPP; 100 Gbit/s.
     */
    public static DeviceProfile bluefield2()
    {
        final DeviceProfile p = part("bluefield2", "24.35.1012", 41686, 262144, 0xe97e1c36L, 100.0,
            concat(List.of("fw_ver", "max_qp", "device_cap_flags"), AFTER_FLAGS));
        return p.withAttributes(p.attributes().toBuilder().odpCaps(OdpCaps.NONE).build());
    }

    /**
     * @return BlueField-3 (41692 = 0xa2dc). No dump: the ConnectX-7 link rate, ConnectX-5 attributes (assumed).
     */
    public static DeviceProfile bluefield3()
    {
        return part("bluefield3", "32.38.1002", 41692, 131072, 0x25321c36L, 400.0,
            concat(List.of("fw_ver", "max_qp", "device_cap_flags"), AFTER_FLAGS));
    }

    private static List<String> concat(final List<String> a, final List<String> b)
    {
        final List<String> out = new java.util.ArrayList<>(a);
        out.addAll(b);
        return out;
    }
}
