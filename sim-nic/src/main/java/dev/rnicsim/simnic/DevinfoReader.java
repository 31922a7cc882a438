package dev.rnicsim.simnic;

import dev.rnicsim.verbs.AtomicCap;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.OdpCaps;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the first device of an {@code ibv_devinfo -v} dump (rdma-core's libibverbs/examples/devinfo.c) into a
 * {@link DeviceProfile}.
 *
 * <p>Format accepted: one {@code name: value} line per attribute, indented with tabs, spaces or not at all; flag
 * names one per line under {@code device_cap_flags:} (ignored: the hex value on the header line is taken), with
 * {@code Unknown flags: 0x...} lines; {@code atomic_cap: ATOMIC_HCA (1)}; ODP capability blocks
 * ({@code general_odp_caps:} followed by {@code ODP_SUPPORT} / {@code ODP_SUPPORT_IMPLICIT}, the per-transport
 * {@code rc_odp_caps:} ... {@code xrc_odp_caps:} followed by {@code SUPPORT_SEND}, {@code SUPPORT_RECV},
 * {@code SUPPORT_WRITE}, {@code SUPPORT_READ}, {@code SUPPORT_ATOMIC}, {@code SUPPORT_SRQ} or {@code NO SUPPORT});
 * GUIDs as four groups of 16-bit hex ({@code 0000:0000:0000:0000}). Lines starting with {@code #} (comments and
 * {@code # [... not retrieved ...]} gap markers) and blank lines end a block of names. Lines the simulator does not
 * model ({@code transport}, {@code board_id}, {@code max_ee}, ...) are ignored. After the ODP blocks comes the
 * extended section ({@code completion timestamp_mask ...}, {@code hca_core_clock}, {@code device_cap_flags_ex},
 * {@code tso_caps}, ... whose sub-fields reuse attribute names such as {@code max_sge}): of it only
 * {@code completion timestamp_mask: 0x...} (or {@code completion_timestamp_mask not supported}: 0),
 * {@code hca_core_clock: NkHZ} (or {@code core clock not supported}: 0) and {@code num_comp_vectors: N} are read, into
 * the profile's {@link CompletionAttributes}; a dump without them keeps the base profile's. Reading stops at the first
 * {@code port:} line or at a second {@code hca_id} line. An attribute listed twice keeps its first value (with a
 * warning).
 *
 * <p><b>Driver.</b> {@link DeviceRecognizer} decides from the {@code hca_id} prefix, the {@code vendor_id} and
 * {@code vendor_part_id} table, and the {@code transport} line (the node type). How it decided goes into the
 * warnings when the hca_id did not name the driver; a vendor or transport that contradicts the driver is warned
 * about. A device no rule recognises is never given another vendor's properties: it becomes a
 * {@link DeviceProfiles#GENERIC} device, with a warning.
 *
 * <p><b>Defaults.</b> The recognised driver selects a built-in <em>base profile</em> (by part id among the mlx5
 * and EFA generations, by transport for irdma's RoCE and iWARP modes, else the driver's one profile; the generic
 * profile for an unknown device). The properties no dump shows (MTT configuration, key policy, cache geometry,
 * provider rules, driver traits, link rate, seed) come from the base profile, the transport from the dump when it
 * has one. <em>Every attribute missing from the dump gets the base profile's value of that attribute</em>, never
 * another driver's; its devinfo name goes into {@link DevinfoResult#defaultedFields()} (and the profile's
 * {@link DeviceProfile#defaultedFields()}) and the base profile's name into
 * {@link DevinfoResult#defaultsFrom()}. Each of the five ODP fields ({@code general_odp_caps},
 * {@code rc_odp_caps}, {@code uc_odp_caps}, {@code ud_odp_caps}, {@code xrc_odp_caps}) is missing only when its
 * header line is absent: an empty {@code general_odp_caps:} block means no general ODP (ibv_devinfo prints no
 * name for 0). A per-transport header with no line under it (ibv_devinfo always prints at least
 * {@code NO SUPPORT}) means the dump was cut there; that field counts as missing, with a warning.
 *
 * <p><b>Name.</b> The profile is named after the {@code hca_id}, or, without one, after the source name without
 * directories and extension ({@code dumps/connectx6lx-mlx5.txt} → {@code connectx6lx-mlx5}).
 *
 * <p><b>Errors.</b> A value that does not parse throws {@link IllegalArgumentException} with
 * {@code source:line: field: expected ..., got '...'}; so does a {@code max_mr} outside the simulator's 24-bit MPT
 * index (2..2^24). Text without any attribute line (for example an empty file) is not an ibv_devinfo dump and
 * throws too.
 *
 * <p>Stateless and thread safe.
 */
public final class DevinfoReader
{
    /** The devinfo names of the attributes, in the order ibv_devinfo prints them. */
    static final List<String> FIELDS = List.of("fw_ver", "node_guid", "sys_image_guid", "vendor_id", "vendor_part_id",
        "hw_ver", "phys_port_cnt", "max_mr_size", "page_size_cap", "max_qp", "max_qp_wr", "device_cap_flags",
        "max_sge", "max_sge_rd", "max_cq", "max_cqe", "max_mr", "max_pd", "max_qp_rd_atom", "max_res_rd_atom",
        "max_qp_init_rd_atom", "atomic_cap", "max_mw", "max_srq", "max_srq_wr", "max_srq_sge", "max_pkeys",
        "local_ca_ack_delay", "general_odp_caps", "rc_odp_caps", "uc_odp_caps", "ud_odp_caps", "xrc_odp_caps");

    /** Vendor id ibv_devinfo reports for Mellanox/NVIDIA (the IEEE OUI, not the PCI vendor id 0x15b3). */
    static final int VENDOR_MELLANOX = 0x02c9;
    /** Vendor id of Intel. */
    static final int VENDOR_INTEL = 0x8086;

    private static final String CAP_FLAGS = "device_cap_flags";
    private static final String GENERAL_ODP = "general_odp_caps";
    private static final Set<String> TRANSPORT_ODP = Set.of("rc_odp_caps", "uc_odp_caps", "ud_odp_caps",
        "xrc_odp_caps");
    private static final String UNKNOWN_FLAGS = "Unknown flags";
    /** The lines ibv_devinfo prints only for a device with SRQs. */
    private static final Set<String> SRQ_SIZES = Set.of("max_srq_wr", "max_srq_sge");

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


    private static final int MAX_MR_LIMIT = 1 << 24;

    private DevinfoReader()
    {
    }

    /**
     * Reads a dump file (UTF-8).
     *
     * @param file an {@code ibv_devinfo -v} dump.
     * @return the profile of its first device, the defaulted fields and warnings.
     * @throws IOException              when the file cannot be read.
     * @throws IllegalArgumentException when the text is not a dump or a value is malformed ({@code file:line:}
     *                                  prefixes the message).
     */
    public static DevinfoResult read(final Path file) throws IOException
    {
        return parse(Files.readString(file, StandardCharsets.UTF_8), file.toString());
    }

    /**
     * Parses dump text.
     *
     * @param text       the output of {@code ibv_devinfo -v}, possibly cut short or with {@code #} comments.
     * @param sourceName where the text came from, for messages and, without an {@code hca_id}, the profile name.
     * @return the profile of the first device, the defaulted fields and warnings.
     * @throws IllegalArgumentException when the text is not a dump or a value is malformed ({@code sourceName:line:}
     *                                  prefixes the message).
     */
    public static DevinfoResult parse(final String text, final String sourceName)
    {
        final Parser parser = new Parser(sourceName);
        parser.run(text);
        return parser.result();
    }

    /**
     * Changes attributes of a profile by their devinfo names, with the same value syntax and checks as a dump line
     * ({@code max_mr=100000}, {@code page_size_cap=0x1000}, {@code max_mr_size=0x200000000},
     * {@code atomic_cap=ATOMIC_NONE}); also {@code cache_entries} and {@code cache_ways} for the translation cache.
     * The ODP fields, which a dump gives as blocks of names, take a number ({@code rc_odp_caps=0x2f}).
     *
     * @param base        the profile.
     * @param assignments {@code name=value} pairs, applied in order (a later one wins).
     * @return the changed profile (same name and driver).
     * @throws IllegalArgumentException naming the assignment, for an unknown name or a malformed value.
     */
    public static DeviceProfile withOverrides(final DeviceProfile base, final List<String> assignments)
    {
        final DeviceAttributes.Builder b = base.attributes().toBuilder();
        final OdpCaps o = base.attributes().odpCaps();
        final int[] odp = {o.generalCaps(), o.rcOdpCaps(), o.ucOdpCaps(), o.udOdpCaps(), o.xrcOdpCaps()};
        int cacheEntries = base.cacheEntries();
        int cacheWays = base.cacheWays();
        for (final String a : assignments)
        {
            final int eq = a.indexOf('=');
            final String name = eq < 0 ? a.strip() : a.substring(0, eq).strip();
            final String value = eq < 0 ? "" : a.substring(eq + 1).strip();
            final Parser parser = new Parser(a);
            final DevinfoValues syntax = new DevinfoValues(a);
            if (eq < 0 || value.isEmpty())
            {
                throw new IllegalArgumentException(a + ": expected NAME=VALUE, e.g. max_mr=100000");
            }
            if (name.equals("cache_entries") || name.equals("cache_ways"))
            {
                final int n = syntax.int32(name, value, 0);
                if (n < 1)
                {
                    throw syntax.malformed(0, name, "a count of 1 or more", value);
                }
                if (name.equals("cache_entries"))
                {
                    cacheEntries = n;
                }
                else
                {
                    cacheWays = n;
                }
                continue;
            }
            if (!FIELDS.contains(name))
            {
                throw new IllegalArgumentException(a + ": no attribute '" + name + "'; expected one of " + FIELDS
                    + ", cache_entries or cache_ways");
            }
            final Object v = GENERAL_ODP.equals(name) || TRANSPORT_ODP.contains(name)
                ? (Object) syntax.int32(name, value, 0) : parser.parseValue(name, value);
            if (name.equals("page_size_cap") && (((Long) v) == 0 || (((Long) v) & 0xfffL) != 0))
            {
                throw syntax.malformed(0, name, "a bitmap of page sizes of 4 KiB or more (bits 12 and up, not 0)",
                    value);
            }
            Parser.apply(b, odp, name, v);
        }
        b.odpCaps(new OdpCaps(odp[0], odp[1], odp[2], odp[3], odp[4]));
        if (cacheEntries % cacheWays != 0)
        {
            throw new IllegalArgumentException("cache_entries=" + cacheEntries + " must be a multiple of cache_ways="
                + cacheWays);
        }
        return base.withAttributes(b.build()).withCache(cacheEntries, cacheWays);
    }

    /** The state of one parse. */
    private static final class Parser
    {
        private final String source;
        private final DevinfoValues syntax;
        private final Map<String, Object> values = new HashMap<>();
        private final List<String> warnings = new ArrayList<>();
        /** A warning that repeats (a key listed again, an unknown name): its place in the list and the repeats. */
        private final Map<String, int[]> repeats = new HashMap<>();
        private String hcaId;
        private int hcaIdLine;
        private DriverTraits.Transport transport;
        private String block;
        private int blockLine;
        private boolean blockHasLines;
        /** In the extended section (after the ODP blocks): only the completion lines are read. */
        private boolean extended;
        private final DevinfoCompletionLines completions = new DevinfoCompletionLines();

        Parser(final String source)
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
                if (FIELDS.contains(key))
                {
                    attribute(key, value, lineNo);
                }
            }
            endBlock();
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
                case GENERAL_ODP, "rc_odp_caps", "uc_odp_caps", "ud_odp_caps", "xrc_odp_caps" ->
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
            if (block != null && TRANSPORT_ODP.contains(block) && !blockHasLines)
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
            if (block.equals(GENERAL_ODP))
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
            for (final String field : FIELDS)
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
                completions.applyTo(base.completions()));
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

        private static void apply(final DeviceAttributes.Builder b, final int[] odp, final String field,
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
                case "max_srq" -> b.maxSrq((Integer) v);
                case "max_srq_wr" -> b.maxSrqWr((Integer) v);
                case "max_srq_sge" -> b.maxSrqSge((Integer) v);
                case "max_pkeys" -> b.maxPkeys((Integer) v);
                case "local_ca_ack_delay" -> b.localCaAckDelay((Integer) v);
                case GENERAL_ODP -> odp[0] = (Integer) v;
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
}
