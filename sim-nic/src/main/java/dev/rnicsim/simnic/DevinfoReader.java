package dev.rnicsim.simnic;

import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.OdpCaps;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

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
        "max_qp_init_rd_atom", "atomic_cap", "max_mw", "max_mcast_grp", "max_mcast_qp_attach",
        "max_total_mcast_qp_attach", "max_ah", "max_srq", "max_srq_wr", "max_srq_sge", "max_pkeys",
        "local_ca_ack_delay", "general_odp_caps", "rc_odp_caps", "uc_odp_caps", "ud_odp_caps", "xrc_odp_caps");

    /** Vendor id ibv_devinfo reports for Mellanox/NVIDIA (the IEEE OUI, not the PCI vendor id 0x15b3). */
    static final int VENDOR_MELLANOX = 0x02c9;
    /** Vendor id of Intel. */
    static final int VENDOR_INTEL = 0x8086;

    /** The ODP fields a dump gives as blocks of names. */
    static final String GENERAL_ODP = "general_odp_caps";
    static final Set<String> TRANSPORT_ODP = Set.of("rc_odp_caps", "uc_odp_caps", "ud_odp_caps",
        "xrc_odp_caps");

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
        final DevinfoParser parser = new DevinfoParser(sourceName);
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
            final DevinfoParser parser = new DevinfoParser(a);
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
            DevinfoParser.apply(b, odp, name, v);
        }
        b.odpCaps(new OdpCaps(odp[0], odp[1], odp[2], odp[3], odp[4]));
        if (cacheEntries % cacheWays != 0)
        {
            throw new IllegalArgumentException("cache_entries=" + cacheEntries + " must be a multiple of cache_ways="
                + cacheWays);
        }
        return base.withAttributes(b.build()).withCache(cacheEntries, cacheWays);
    }
}
