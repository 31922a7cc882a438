package dev.rnicsim.simnic;

import dev.rnicsim.verbs.AtomicCap;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.OdpCaps;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The state of one parse of an {@code ibv_devinfo -v} dump by the rules of {@link DevinfoReader}: its attribute lines
 * and blocks of names, the warnings, and the profile they make.
 *
 * <p>Not thread safe: one parse.
 */
final class DevinfoParser
{
    /** The lines ibv_devinfo prints only for a device with SRQs. */
    private static final Set<String> SRQ_SIZES = Set.of("max_srq_wr", "max_srq_sge");

    private static final String CAP_FLAGS = "device_cap_flags";
    private static final String UNKNOWN_FLAGS = "Unknown flags";

    /** Keys of the lines that follow the device attributes (ibv_devinfo's extended sections and the ports). */
    private static final Set<String> STOP_KEYS = Set.of("port", "completion timestamp_mask", "hca_core_clock",
        "raw packet caps", "device_cap_flags_ex", "tso_caps", "rss_caps", "max_wq_type_rq", "packet_pacing_caps",
        "max_rndv_hdr_size", "cq moderation caps", "maximum available device memory");
    /** Lines without a colon that follow the device attributes. */
    private static final Set<String> STOP_LINES = Set.of(DevinfoCompletionLines.NO_TIMESTAMP_MASK,
        DevinfoCompletionLines.NO_CORE_CLOCK, "tag matching not supported");

    private static final Map<String, Integer> GENERAL_ODP_NAMES = Map.of("ODP_SUPPORT", OdpCaps.SUPPORT,
        "ODP_SUPPORT_IMPLICIT", OdpCaps.SUPPORT_IMPLICIT);
    private static final Map<String, Integer> TRANSPORT_ODP_NAMES = Map.of("SUPPORT_SEND", OdpCaps.SEND,
        "SUPPORT_RECV", OdpCaps.RECV, "SUPPORT_WRITE", OdpCaps.WRITE, "SUPPORT_READ", OdpCaps.READ,
        "SUPPORT_ATOMIC", OdpCaps.ATOMIC, "SUPPORT_SRQ", OdpCaps.SRQ_RECV);
    private static final String NO_SUPPORT = "NO SUPPORT";
    /** max_mr above the simulator's 24-bit MPT index is refused. */
    private static final int MAX_MR_LIMIT = 1 << 24;

    private final String source;
    private final DevinfoValues syntax;
    private final Map<String, Object> values = new HashMap<>();
    private final List<String> warnings = new ArrayList<>();
    /** A warning that repeats (a key listed again, an unknown name): its place in the list and the repeats. */
    private final Map<String, int[]> repeats = new HashMap<>();
    private String hcaId;
    private int hcaIdLine;
    private DriverTraits.Transport transport;
    /** The first port's section says {@code link_layer: Ethernet}. */
    private boolean portLinkLayerEthernet;
    /** The first port's {@code max_mtu} and {@code active_mtu} as {@code enum ibv_mtu}, 0 when not read. */
    private int portMaxMtu;
    private int portActiveMtu;
    private String block;
    private int blockLine;
    private boolean blockHasLines;
    /** In the extended section (after the ODP blocks): only the completion lines are read. */
    private boolean extended;
    private final DevinfoCompletionLines completions = new DevinfoCompletionLines();

    DevinfoParser(final String source)
    {
        this.source = source;
        this.syntax = new DevinfoValues(source);
    }

    void run(final String text)
    {
        final String[] lines = text.split("\\R", -1);
        for (int i = 0; i < lines.length; i++)
        {
            final int lineNo = i + 1;
            final String trimmed = (i == 0 ? lines[i].replaceFirst("^\uFEFF", "") : lines[i]).strip();
            if (trimmed.isEmpty() || trimmed.startsWith("#"))
            {
                endBlock();
                continue;
            }
            final int colon = trimmed.indexOf(':');
            if (colon < 0)
            {
                if (STOP_LINES.contains(trimmed))
                {
                    endBlock();
                    extended = true;
                    completions.notSupported(trimmed);
                    continue;
                }
                if (block != null && !extended)
                {
                    blockName(trimmed, lineNo);
                }
                continue;
            }
            final String key = trimmed.substring(0, colon).strip();
            final String value = trimmed.substring(colon + 1).strip();
            if (key.equals(UNKNOWN_FLAGS))
            {
                if (block != null)
                {
                    blockUnknownFlags(value, lineNo);
                }
                continue;
            }
            endBlock();
            if (key.equals("port"))
            {
                firstPort(lines, i + 1);
                break;
            }
            if (STOP_KEYS.contains(key) || extended && !key.equals("hca_id"))
            {
                extended = true;
                completions.line(key, value, lineNo, syntax::malformed);
                continue;
            }
            if (key.equals("hca_id"))
            {
                if (hcaId != null || !values.isEmpty())
                {
                    warnings.add(source + ":" + lineNo + ": another device (hca_id " + value
                        + ") follows; only the first device is read");
                    break;
                }
                if (value.isEmpty())
                {
                    throw syntax.malformed(lineNo, key, "a device name", value);
                }
                hcaId = value;
                hcaIdLine = lineNo;
                continue;
            }
            if (key.equals("transport"))
            {
                transport(value, lineNo);
                continue;
            }
            if (DevinfoReader.FIELDS.contains(key))
            {
                attribute(key, value, lineNo);
            }
        }
        endBlock();
    }

    /**
     * Reads the first port's {@code link_layer:}, {@code max_mtu:} and {@code active_mtu:} lines. ibv_devinfo's {@code
     * link_layer_str} prints "Ethernet" for {@code IBV_LINK_LAYER_ETHERNET} and "InfiniBand" for both InfiniBand and
     * unspecified (EFA), so only Ethernet changes the profile's link layer: a VPI part (mlx4, mlx5) whose dump was
     * taken with its port running Ethernet. The MTUs print as {@code 4096 (5)} ({@code mtu_str} and the enum); the
     * profile's port takes them ({@link PortMtus}): on Ethernet, active_mtu tells the netdev MTU the dump was taken
     * on. A value that is no IB MTU, or an active_mtu above max_mtu, is a warning and leaves both at 4096.
     */
    private void firstPort(final String[] lines, final int from)
    {
        for (int i = from; i < lines.length; i++)
        {
            final String trimmed = lines[i].strip();
            final int colon = trimmed.indexOf(':');
            if (colon < 0)
            {
                continue;
            }
            final String key = trimmed.substring(0, colon).strip();
            if (key.equals("port") || key.equals("hca_id") || key.equals("GID[  0]") || key.startsWith("GID["))
            {
                return;
            }
            final String value = trimmed.substring(colon + 1).strip();
            switch (key)
            {
                case "link_layer" -> portLinkLayerEthernet = value.equals("Ethernet");
                case "max_mtu" -> portMaxMtu = mtu(value, key, i + 1);
                case "active_mtu" -> portActiveMtu = mtu(value, key, i + 1);
                default ->
                {
                }
            }
        }
    }

    /** @return an MTU line's {@code enum ibv_mtu} (1..5), from {@code 4096 (5)} or {@code 4096}; 0 with a warning. */
    private int mtu(final String value, final String key, final int lineNo)
    {
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+)(?:\\s*\\((\\d+)\\))?")
            .matcher(value);
        if (m.matches())
        {
            final int bytes = Integer.parseInt(m.group(1));
            final int e = m.group(2) != null ? Integer.parseInt(m.group(2)) : Integer.numberOfTrailingZeros(bytes) - 7;
            if (e >= 1 && e <= 5 && PortMtuRule.bytesOf(e) == bytes)
            {
                return e;
            }
        }
        warnings.add(source + ":" + lineNo + ": port " + key + " '" + value + "' is no IB MTU (256 (1), 512 (2), "
            + "1024 (3), 2048 (4) or 4096 (5)); the port keeps 4096");
        return 0;
    }

    /** @return the first port's MTUs as read, or both 4096 when either is missing, bad or inconsistent. */
    private PortMtus portMtus()
    {
        if (portMaxMtu == 0 && portActiveMtu == 0)
        {
            return PortMtus.FULL;
        }
        final int max = portMaxMtu == 0 ? PortMtus.FULL.maxMtu() : portMaxMtu;
        if (portActiveMtu == 0 || portActiveMtu > max)
        {
            if (portActiveMtu > max)
            {
                warnings.add(source + ": port active_mtu " + PortMtuRule.bytesOf(portActiveMtu) + " is above max_mtu "
                    + PortMtuRule.bytesOf(max) + " (ibv_query_port never reports that); the port keeps 4096");
            }
            return PortMtus.FULL;
        }
        return new PortMtus(max, portActiveMtu, true);
    }

    private void transport(final String value, final int lineNo)
    {
        final DriverTraits.Transport t = DriverTraits.Transport.parse(value);
        if (t == null)
        {
            warnings.add(source + ":" + lineNo + ": transport '" + value + "' is none of InfiniBand (0), iWARP (1),"
                + " unspecified (4); ignored");
        }
        else if (transport == null)
        {
            transport = t;
        }
    }

    private void attribute(final String key, final String value, final int lineNo)
    {
        if (values.containsKey(key))
        {
            warnOnce("again " + key, source + ":" + lineNo + ": " + key + " appears again; the first value is "
                + "kept");
            return;
        }
        switch (key)
        {
            case "fw_ver" -> values.put(key, value);
            case "node_guid", "sys_image_guid" -> values.put(key, syntax.guid(key, value, lineNo));
            case "max_mr_size" ->
            {
                final long size = syntax.unsigned64(key, value, lineNo);
                if (size == 0)
                {
                    throw syntax.malformed(lineNo, key, "a size of 1 byte or more (max_mr_size 0 admits no MR)",
                        value);
                }
                values.put(key, size);
            }
            case "page_size_cap" ->
            {
                // ib_umem_find_best_pgsz keeps only the sizes of PAGE_SIZE and up (mlx4 reports 0xfffffe00, from
                // 512 bytes): a bitmap without a bit at 12 or above leaves no page size to register with.
                final long cap = syntax.unsigned64(key, value, lineNo);
                if ((cap & ~0xfffL) == 0)
                {
                    throw syntax.malformed(lineNo, key, "a bitmap with a page size of 4 KiB or more (a bit at "
                        + "12 or above)", value);
                }
                values.put(key, cap);
            }
            case CAP_FLAGS ->
            {
                values.put(key, syntax.unsigned64(key, value, lineNo));
                openBlock(key, lineNo);
            }
            case "atomic_cap" -> values.put(key, syntax.atomic(key, value, lineNo));
            case "max_mr" ->
            {
                final int maxMr = syntax.int32(key, value, lineNo);
                if (maxMr < 2 || maxMr > MAX_MR_LIMIT)
                {
                    throw syntax.malformed(lineNo, key, "2.." + MAX_MR_LIMIT
                        + " (the simulator's 24-bit MPT index)", value);
                }
                values.put(key, maxMr);
            }
            case DevinfoReader.GENERAL_ODP, "rc_odp_caps", "uc_odp_caps", "ud_odp_caps", "xrc_odp_caps" ->
            {
                values.put(key, 0);
                openBlock(key, lineNo);
                if (!value.isEmpty())
                {
                    blockName(value, lineNo);
                }
            }
            default -> values.put(key, syntax.count(key, value, lineNo));
        }
    }


    /** One value by the rules of {@link #attribute}, for an override (no blocks). */
    Object parseValue(final String key, final String value)
    {
        attribute(key, value, 0);
        block = null;
        return values.get(key);
    }

    private void openBlock(final String key, final int lineNo)
    {
        block = key;
        blockLine = lineNo;
        blockHasLines = false;
    }

    private void endBlock()
    {
        if (block != null && DevinfoReader.TRANSPORT_ODP.contains(block) && !blockHasLines)
        {
            values.remove(block);
            warnings.add(source + ":" + blockLine + ": " + block + " has no capability line under it (the dump"
                + " is cut there?); treated as missing");
        }
        block = null;
    }

    private void blockName(final String name, final int lineNo)
    {
        blockHasLines = true;
        if (block.equals(CAP_FLAGS))
        {
            return;
        }
        if (block.equals(DevinfoReader.GENERAL_ODP))
        {
            orBits(GENERAL_ODP_NAMES, name, lineNo);
        }
        else if (!name.equals(NO_SUPPORT))
        {
            orBits(TRANSPORT_ODP_NAMES, name, lineNo);
        }
    }

    private void orBits(final Map<String, Integer> names, final String name, final int lineNo)
    {
        final Integer bit = names.get(name);
        if (bit == null)
        {
            warnOnce("unknown " + block + " " + name, source + ":" + lineNo + ": unknown " + block + " name '"
                + name + "' ignored");
            return;
        }
        values.put(block, (Integer) values.get(block) | bit);
    }

    private void blockUnknownFlags(final String value, final int lineNo)
    {
        blockHasLines = true;
        if (block.equals(CAP_FLAGS))
        {
            return;
        }
        final long bits = syntax.unsigned64(block + " " + UNKNOWN_FLAGS, value, lineNo);
        if (bits >>> 32 != 0)
        {
            throw syntax.malformed(lineNo, block + " " + UNKNOWN_FLAGS, "a 32-bit hex value", value);
        }
        values.put(block, (Integer) values.get(block) | (int) bits);
    }





    /** Adds a warning once per kind; later ones of the kind are counted on the first (a dump of a million
     * repeated lines gives one warning, not a million). */
    private void warnOnce(final String kind, final String text)
    {
        final int[] r = repeats.get(kind);
        if (r == null)
        {
            repeats.put(kind, new int[] {warnings.size(), 0});
            warnings.add(text);
        }
        else
        {
            r[1]++;
        }
    }


    DevinfoResult result()
    {
        if (values.isEmpty())
        {
            throw new IllegalArgumentException(source + ": not an ibv_devinfo dump (no device attribute line"
                + " such as max_qp: or page_size_cap:)");
        }
        final DeviceRecognizer.Recognition recognition = recognize();
        final DeviceProfile base = recognition.profile();
        final DeviceAttributes.Builder b = base.attributes().toBuilder();
        final OdpCaps baseOdp = base.attributes().odpCaps();
        final int[] odp = {baseOdp.generalCaps(), baseOdp.rcOdpCaps(), baseOdp.ucOdpCaps(), baseOdp.udOdpCaps(),
            baseOdp.xrcOdpCaps()};
        final List<String> defaulted = new ArrayList<>();
        // ibv_devinfo prints max_srq_wr and max_srq_sge only for max_srq > 0 (devinfo.c print_hca_cap): after
        // max_srq 0 their absence is the device's answer, and they are taken as max_qp_wr and max_sge.
        final boolean noSrqs = Integer.valueOf(0).equals(values.get("max_srq"));
        for (final String field : DevinfoReader.FIELDS)
        {
            final Object v = values.get(field);
            if (v == null && noSrqs && SRQ_SIZES.contains(field))
            {
                final DeviceAttributes sofar = b.build();
                b.maxSrqWr(sofar.maxQpWr()).maxSrqSge(sofar.maxSge());
            }
            else if (v == null)
            {
                defaulted.add(field);
            }
            else
            {
                apply(b, odp, field, v);
            }
        }
        b.odpCaps(new OdpCaps(odp[0], odp[1], odp[2], odp[3], odp[4]));
        final String name = hcaId != null ? hcaId : baseName(source);
        final DriverTraits traits = transport == null ? base.traits() : base.traits().withTransport(transport);
        final DeviceProfile profile = new DeviceProfile(name, base.driver(), b.build(), base.mtt(),
            base.variantPolicy(), base.indexPolicy(), base.cacheEntries(), base.cacheWays(),
            base.providerRules(), base.relaxedOrdering(), base.linkGbps(), base.seed(), defaulted, traits,
            completions.applyTo(base.completions()), portLinkLayerEthernet
                ? dev.rnicsim.verbs.PortAttributes.LINK_LAYER_ETHERNET : base.linkLayer(), portMtus());
        for (final int[] r : repeats.values())
        {
            if (r[1] > 0)
            {
                warnings.set(r[0], warnings.get(r[0]) + " (and " + r[1] + " more line" + (r[1] == 1 ? "" : "s")
                    + " like it)");
            }
        }
        return new DevinfoResult(profile, hcaId, defaulted, warnings, base.name());
    }

    static void apply(final DeviceAttributes.Builder b, final int[] odp, final String field,
        final Object v)
    {
        switch (field)
        {
            case "fw_ver" -> b.fwVer((String) v);
            case "node_guid" -> b.nodeGuid((Long) v);
            case "sys_image_guid" -> b.sysImageGuid((Long) v);
            case "vendor_id" -> b.vendorId((Integer) v);
            case "vendor_part_id" -> b.vendorPartId((Integer) v);
            case "hw_ver" -> b.hwVer((Integer) v);
            case "phys_port_cnt" -> b.physPortCnt((Integer) v);
            case "max_mr_size" -> b.maxMrSizeBytes((Long) v);
            case "page_size_cap" -> b.pageSizeCap((Long) v);
            case "max_qp" -> b.maxQp((Integer) v);
            case "max_qp_wr" -> b.maxQpWr((Integer) v);
            case CAP_FLAGS -> b.deviceCapFlags((Long) v);
            case "max_sge" -> b.maxSge((Integer) v);
            case "max_sge_rd" -> b.maxSgeRd((Integer) v);
            case "max_cq" -> b.maxCq((Integer) v);
            case "max_cqe" -> b.maxCqe((Integer) v);
            case "max_mr" -> b.maxMr((Integer) v);
            case "max_pd" -> b.maxPd((Integer) v);
            case "max_qp_rd_atom" -> b.maxQpRdAtom((Integer) v);
            case "max_res_rd_atom" -> b.maxResRdAtom((Integer) v);
            case "max_qp_init_rd_atom" -> b.maxQpInitRdAtom((Integer) v);
            case "atomic_cap" -> b.atomicCap((AtomicCap) v);
            case "max_mw" -> b.maxMw((Integer) v);
            case "max_mcast_grp" -> b.maxMcastGrp((Integer) v);
            case "max_mcast_qp_attach" -> b.maxMcastQpAttach((Integer) v);
            case "max_total_mcast_qp_attach" -> b.maxTotalMcastQpAttach((Integer) v);
            case "max_ah" -> b.maxAh((Integer) v);
            case "max_srq" -> b.maxSrq((Integer) v);
            case "max_srq_wr" -> b.maxSrqWr((Integer) v);
            case "max_srq_sge" -> b.maxSrqSge((Integer) v);
            case "max_pkeys" -> b.maxPkeys((Integer) v);
            case "local_ca_ack_delay" -> b.localCaAckDelay((Integer) v);
            case DevinfoReader.GENERAL_ODP -> odp[0] = (Integer) v;
            case "rc_odp_caps" -> odp[1] = (Integer) v;
            case "uc_odp_caps" -> odp[2] = (Integer) v;
            case "ud_odp_caps" -> odp[3] = (Integer) v;
            case "xrc_odp_caps" -> odp[4] = (Integer) v;
            default -> throw new IllegalStateException("field " + field);
        }
    }

    /** The recognised driver's built-in profile ({@link DeviceRecognizer}); its evidence and warnings join
     * the result's warnings. */
    private DeviceRecognizer.Recognition recognize()
    {
        final DeviceRecognizer.Recognition r = DeviceRecognizer.recognize(hcaId, (Integer) values.get("vendor_id"),
            (Integer) values.get("vendor_part_id"), transport);
        for (final String w : r.warnings())
        {
            warnings.add(source + ": " + w);
        }
        if (hcaId == null || DeviceRecognizer.driverOfHcaId(hcaId) == null)
        {
            if (!r.evidence().isEmpty())
            {
                warnings.add(source + ": driver " + r.driver() + " chosen: " + String.join("; ", r.evidence()));
            }
        }
        // Old kernels' rxe reports vendor_id 0 and no windows or ODP; current ones 0xFFFFFF (rxe_param.h).
        if ("rxe".equals(r.driver()) && Integer.valueOf(0).equals(values.get("vendor_id")))
        {
            final List<String> evidence = new ArrayList<>(r.evidence());
            evidence.add("vendor_id 0 is an older kernel's rxe: profile rxe-legacy");
            return new DeviceRecognizer.Recognition(r.driver(), DeviceProfiles.rxeLegacy(), evidence,
                r.warnings());
        }
        return r;
    }

    private static String baseName(final String sourceName)
    {
        final int slash = Math.max(sourceName.lastIndexOf('/'), sourceName.lastIndexOf('\\'));
        final String file = sourceName.substring(slash + 1);
        final int dot = file.lastIndexOf('.');
        return dot > 0 ? file.substring(0, dot) : file;
    }
}
