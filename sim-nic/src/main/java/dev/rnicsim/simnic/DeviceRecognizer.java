package dev.rnicsim.simnic;

import dev.rnicsim.simnic.DriverTraits.Transport;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Says which driver and which built-in profile an {@code ibv_devinfo} dump describes, from its {@code hca_id}
 * prefix, {@code vendor_id} and {@code vendor_part_id}, and {@code transport} (which stands for the node type:
 * libibverbs derives the transport from it, CA → InfiniBand, RNIC → iWARP, UNSPECIFIED → unspecified).
 *
 * <p>Order: the {@code hca_id} prefix decides the driver when it names one (the kernel names each device after its
 * driver: {@code ib_register_device(ibdev, "mlx5_%d")}, {@code "efa_%d"}, {@code "bnxt_re%d"}, ...). Otherwise the
 * vendor table decides ({@link #VENDORS}, each row with the kernel PCI table it comes from). Then the part id picks
 * the profile within the driver (ConnectX generation, EFA generation; a part in no table takes the driver's main
 * profile, said in the evidence) and the transport picks irdma's RoCE or iWARP profile. A vendor id that belongs
 * to another driver is noted in the evidence (the hca_id decides: an OEM board may carry its own vendor id, as
 * devinfo/connectx6-mlx5.txt does); a transport the driver never reports is a warning. A dump
 * no rule recognises is {@link DeviceProfiles#GENERIC}, with a warning: it is never simulated as another
 * vendor's device.
 *
 * <p>Stateless and thread safe.
 */
public final class DeviceRecognizer
{
    /** A driver recognised from a vendor id, with the part ids that narrow it (empty: every part). */
    record VendorRule(int vendorId, Set<Integer> parts, String driver, String source)
    {
    }

    /** hca_id prefixes in the order they are tried, with the driver each names. */
    static final List<Map.Entry<String, String>> HCA_PREFIXES = List.of(Map.entry("mlx4_", "mlx4"),
        Map.entry("mlx5_", "mlx5"), Map.entry("rxe", "rxe"), Map.entry("irdma", "irdma"),
        Map.entry("siw", "siw"), Map.entry("efa", "efa"), Map.entry("bnxt_re", "bnxt_re"),
        Map.entry("hns", "hns"), Map.entry("qedr", "qedr"), Map.entry("erdma", "erdma"),
        Map.entry("mana", "mana"), Map.entry("cxgb4", "cxgb4"), Map.entry("iwcm_cxgb4", "cxgb4"),
        Map.entry("hfi1", "hfi1"));

    /**
     * The vendor table: IEEE or PCI vendor id, part ids, driver, source. Tried in order; the first match wins.
     */
    static final List<VendorRule> VENDORS = List.of(
        new VendorRule(0x02c9, Set.of(4099, 4103), "mlx4",
            "drivers/net/ethernet/mellanox/mlx4/main.c mlx4_pci_table (0x1003 ConnectX-3, 0x1007 -3 Pro)"),
        new VendorRule(0x15b3, Set.of(4099, 4103), "mlx4", "the same, with the PCI vendor id"),
        new VendorRule(0x02c9, Set.of(), "mlx5",
            "drivers/net/ethernet/mellanox/mlx5/core/main.c mlx5_core_pci_table (0x1011 and up, 0xa2d2 and up)"),
        new VendorRule(0x15b3, Set.of(), "mlx5", "the same, with the PCI vendor id"),
        new VendorRule(0x8086, Set.of(0x24f0, 0x24f1), "hfi1", "drivers/infiniband/hw/hfi1/init.c hfi1_pci_tbl"),
        new VendorRule(0x1175, Set.of(), "hfi1", "Cornelis Networks parts of the hfi1 PCI table"),
        new VendorRule(0x8086, Set.of(), "irdma",
            "drivers/infiniband/hw/irdma/main.c (E810 0x1591-0x159b, X722 0x37d0-0x37d3 through i40e)"),
        new VendorRule(0x1d0f, Set.of(0xefa0, 0xefa1, 0xefa2, 0xefa3, 0xefa4), "efa",
            "drivers/infiniband/hw/efa/efa_main.c efa_pci_tbl (PCI_DEV_ID_EFA0_VF .. EFA4_VF)"),
        new VendorRule(0x14e4, Set.of(), "bnxt_re", "drivers/infiniband/hw/bnxt_re/main.c (Broadcom NetXtreme-C/E)"),
        new VendorRule(0x19e5, Set.of(), "hns", "drivers/infiniband/hw/hns/hns_roce_hw_v2.c hns_roce_hw_v2_pci_tbl"),
        new VendorRule(0x1077, Set.of(), "qedr", "drivers/infiniband/hw/qedr/main.c (QLogic FastLinQ through qed)"),
        new VendorRule(0x1ded, Set.of(), "erdma", "drivers/infiniband/hw/erdma/erdma_main.c erdma_pci_tbl"),
        new VendorRule(0x1414, Set.of(), "mana", "drivers/net/ethernet/microsoft/mana/gdma_main.c mana_id_table"),
        new VendorRule(0x1425, Set.of(), "cxgb4", "drivers/net/ethernet/chelsio/cxgb4/t4_pci_id_tbl.h"),
        new VendorRule(0x626d74, Set.of(), "siw", "drivers/infiniband/sw/siw/siw.h SIW_VENDOR_ID ('bmt')"),
        new VendorRule(0xffffff, Set.of(), "rxe", "drivers/infiniband/sw/rxe/rxe_param.h RXE_VENDOR_ID"),
        new VendorRule(0, Set.of(), "rxe", "older rxe reported vendor_id 0 (devinfo/rxe.txt)"));

    /** The profile of an mlx5 part id. */
    static final Map<Integer, String> MLX5_PARTS = Map.of(4115, "connectx4", 4117, "connectx4lx", 4119, "connectx5",
        4121, "connectx5ex", 4123, "connectx6", 4125, "connectx6dx", 4127, "connectx6lx", 4129, "connectx7",
        41686, "bluefield2", 41692, "bluefield3");

    /** The profile of an EFA part id. */
    static final Map<Integer, String> EFA_PARTS = Map.of(0xefa0, "efa-gen1", 0xefa1, "efa", 0xefa2, "efa-gen3",
        0xefa3, "efa-gen3", 0xefa4, "efa-gen3");

    /** The single profile of each driver that has one. */
    static final Map<String, String> DRIVER_PROFILE = Map.ofEntries(Map.entry("mlx4", "connectx3"),
        Map.entry("rxe", "rxe"), Map.entry("siw", "siw"), Map.entry("bnxt_re", "bnxt_re"), Map.entry("hns", "hns"),
        Map.entry("qedr", "qedr"), Map.entry("erdma", "erdma"), Map.entry("mana", "mana"),
        Map.entry("cxgb4", "cxgb4"), Map.entry("hfi1", "hfi1"));

    /** The transports each driver's devices report (node types they register). */
    static final Map<String, Set<Transport>> TRANSPORTS = Map.ofEntries(
        Map.entry("siw", Set.of(Transport.IWARP)), Map.entry("cxgb4", Set.of(Transport.IWARP)),
        Map.entry("irdma", Set.of(Transport.INFINIBAND, Transport.IWARP)),
        Map.entry("qedr", Set.of(Transport.INFINIBAND, Transport.IWARP)),
        Map.entry("erdma", Set.of(Transport.INFINIBAND, Transport.IWARP)),
        Map.entry("efa", Set.of(Transport.UNSPECIFIED)));

    /**
     * What the recognizer concluded.
     *
     * @param driver   the driver, or {@link DeviceProfiles#GENERIC}.
     * @param profile  the built-in profile whose values fill what the dump lacks.
     * @param evidence the rules that decided, one line each (for the output).
     * @param warnings contradictions and guesses, one line each.
     */
    public record Recognition(String driver, DeviceProfile profile, List<String> evidence, List<String> warnings)
    {
        /**
         * @throws NullPointerException when a reference is null.
         */
        public Recognition
        {
            evidence = List.copyOf(evidence);
            warnings = List.copyOf(warnings);
        }

        /**
         * @return true when no rule recognised the device.
         */
        public boolean generic()
        {
            return driver.equals(DeviceProfiles.GENERIC);
        }
    }

    private DeviceRecognizer()
    {
    }

    /**
     * @param hcaId     the dump's hca_id, or null.
     * @param vendorId  its vendor_id, or null.
     * @param partId    its vendor_part_id, or null.
     * @param transport its transport, or null when the dump has no transport line.
     * @return the driver and base profile, with the evidence and any warning.
     */
    public static Recognition recognize(final String hcaId, final Integer vendorId, final Integer partId,
        final Transport transport)
    {
        final List<String> evidence = new ArrayList<>();
        final List<String> warnings = new ArrayList<>();
        final String byName = hcaId == null ? null : driverOfHcaId(hcaId);
        final VendorRule byVendor = vendorId == null ? null : vendorRule(vendorId, partId);
        String driver = null;
        if (byName != null)
        {
            driver = byName;
            evidence.add("hca_id '" + hcaId + "' names driver " + driver);
            if (byVendor != null && !byVendor.driver().equals(driver))
            {
                evidence.add("vendor_id " + hex(vendorId) + " is " + byVendor.driver() + "'s (" + byVendor.source()
                    + "), the hca_id " + driver + "'s; the hca_id decides");
            }
        }
        else if (byVendor != null)
        {
            driver = byVendor.driver();
            evidence.add("vendor_id " + hex(vendorId) + (partId == null ? "" : " vendor_part_id " + partId)
                + " is " + driver + " (" + byVendor.source() + ")" + (hcaId == null ? "; the dump has no hca_id"
                : "; hca_id '" + hcaId + "' names no driver"));
        }
        if (driver == null)
        {
            warnings.add("no rule recognises this device (hca_id " + (hcaId == null ? "missing" : "'" + hcaId + "'")
                + ", vendor_id " + (vendorId == null ? "missing" : hex(vendorId)) + ", vendor_part_id "
                + (partId == null ? "missing" : partId) + ", transport " + (transport == null ? "missing"
                : transport.devinfo()) + "); simulating a 'generic' device with only what the dump shows: a field it"
                + " lacks gets the generic profile's conservative value (4 KiB pages, no memory windows, atomics,"
                + " ODP or fast registration), not another vendor's");
            return new Recognition(DeviceProfiles.GENERIC, DeviceProfiles.generic(), evidence, warnings);
        }
        final Set<Transport> transports = TRANSPORTS.getOrDefault(driver, Set.of(Transport.INFINIBAND));
        if (transport != null && !transports.contains(transport))
        {
            warnings.add("transport " + transport.devinfo() + " is not one " + driver + " reports (" + transports
                + ")");
        }
        if (transport != null)
        {
            evidence.add("transport " + transport.devinfo());
        }
        return new Recognition(driver, DeviceProfiles.byName(profileOf(driver, partId, transport, evidence,
            warnings)), evidence, warnings);
    }

    private static String profileOf(final String driver, final Integer partId, final Transport transport,
        final List<String> evidence, final List<String> warnings)
    {
        final Map<Integer, String> parts = switch (driver)
        {
            case "mlx5" -> MLX5_PARTS;
            case "efa" -> EFA_PARTS;
            default -> Map.of();
        };
        if (!parts.isEmpty())
        {
            final String byPart = partId == null ? null : parts.get(partId);
            final String fallback = driver.equals("mlx5") ? "connectx5" : "efa";
            if (byPart != null)
            {
                evidence.add("vendor_part_id " + partId + " is profile " + byPart);
                return byPart;
            }
            evidence.add("vendor_part_id " + (partId == null ? "missing" : partId) + " is in no " + driver
                + " part table; missing fields take " + driver + "'s profile " + fallback);
            return fallback;
        }
        if (driver.equals("irdma"))
        {
            return transport == Transport.IWARP ? "e810-iwarp" : "e810";
        }
        return DRIVER_PROFILE.get(driver);
    }

    /**
     * @param id an hca_id.
     * @return the driver its prefix names, or null.
     */
    static String driverOfHcaId(final String id)
    {
        for (final Map.Entry<String, String> e : HCA_PREFIXES)
        {
            if (id.startsWith(e.getKey()))
            {
                return e.getValue();
            }
        }
        return null;
    }

    private static VendorRule vendorRule(final int vendorId, final Integer partId)
    {
        for (final VendorRule r : VENDORS)
        {
            if (r.vendorId() == vendorId && (r.parts().isEmpty() || partId != null && r.parts().contains(partId)))
            {
                return r;
            }
        }
        return null;
    }

    private static String hex(final int v)
    {
        return String.format(Locale.ROOT, "0x%04x", v);
    }
}
