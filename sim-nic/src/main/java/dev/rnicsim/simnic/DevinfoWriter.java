package dev.rnicsim.simnic;

import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.OdpCaps;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Writes device attributes as {@code ibv_devinfo -v} prints them (rdma-core libibverbs/examples/devinfo.c,
 * {@code print_hca_cap}): {@code hca_id:<TAB>name}, then one tab-indented {@code name:<TABs>value} line per
 * attribute with ibv_devinfo's tab counts and number formats ({@code vendor_id} {@code 0x%04x}, {@code hw_ver}
 * {@code 0x%X}, {@code max_mr_size} and {@code page_size_cap} {@code 0x%llx}, {@code device_cap_flags}
 * {@code 0x%08x} followed by the flag names one per line and {@code Unknown flags: 0x%X} for bits without a name,
 * {@code atomic_cap: ATOMIC_HCA (1)}, GUIDs as {@code 0000:0000:0000:0000}, the five ODP blocks with
 * {@code ODP_SUPPORT} ... {@code SUPPORT_SRQ} or {@code NO SUPPORT}).
 *
 * <p>Differences from the real output, all so that {@link DevinfoReader} reads the text back to equal attributes:
 * the lines of attributes {@link DeviceAttributes} does not hold ({@code board_id}, {@code max_ee},
 * {@code max_rdd}, {@code max_raw_ipv6_qp}, {@code max_fmr}, ...), the extended sections after the ODP blocks and the port sections are
 * left out; {@code transport} is the driver's ({@code InfiniBand (0)} unless given); {@code fw_ver} is written
 * even when empty (ibv_devinfo skips an empty one); {@code device_cap_flags} is written with as many hex digits
 * as the 64-bit value needs (the C field has 32 bits).
 *
 * <p>Stateless and thread safe.
 */
public final class DevinfoWriter
{
    private static final String FLAG_INDENT = "\t\t\t\t\t";
    private static final Pattern LINE_BREAK_OR_CONTROL = Pattern.compile("\\R|\\p{Cc}");
    private static final int GENERAL_ODP_KNOWN = OdpCaps.SUPPORT | OdpCaps.SUPPORT_IMPLICIT;
    private static final int TRANSPORT_ODP_KNOWN = OdpCaps.SEND | OdpCaps.RECV | OdpCaps.WRITE | OdpCaps.READ
        | OdpCaps.ATOMIC | OdpCaps.SRQ_RECV;

    private DevinfoWriter()
    {
    }

    /**
     * @param hcaId device name for the {@code hca_id} line, e.g. {@code mlx5_0}.
     * @param a     the attributes.
     * @return the dump text, lines ending in {@code \n}.
     * @throws NullPointerException     when an argument is null.
     * @throws IllegalArgumentException when {@code hcaId} is empty or has whitespace or control characters, or
     *                                  {@code fw_ver} has control characters or leading or trailing whitespace
     *                                  (either would not read back unchanged).
     */
    public static String write(final String hcaId, final DeviceAttributes a)
    {
        return write(hcaId, a, DriverTraits.Transport.INFINIBAND);
    }

    /**
     * As {@link #write(String, DeviceAttributes)}, with the transport line of the device's driver
     * ({@code iWARP (1)} for siw, cxgb4 and irdma in iWARP mode, {@code unspecified (4)} for efa), so that the text
     * reads back as the same driver.
     *
     * @param hcaId     device name for the {@code hca_id} line.
     * @param a         the attributes.
     * @param transport the transport line.
     * @return the dump text, lines ending in {@code \n}.
     * @throws NullPointerException     when an argument is null.
     * @throws IllegalArgumentException as {@link #write(String, DeviceAttributes)}.
     */
    public static String write(final String hcaId, final DeviceAttributes a, final DriverTraits.Transport transport)
    {
        Objects.requireNonNull(transport, "transport");
        Objects.requireNonNull(hcaId, "hcaId");
        Objects.requireNonNull(a, "a");
        if (hcaId.isEmpty() || hcaId.chars().anyMatch(c -> Character.isWhitespace(c) || Character.isISOControl(c)))
        {
            throw new IllegalArgumentException("hca_id '" + visible(hcaId) + "' must be a non-empty name without "
                + "whitespace or control characters (ibv_devinfo's device name); give a name such as mlx5_0");
        }
        final String fwVer = a.fwVer();
        if (!fwVer.equals(fwVer.strip()) || LINE_BREAK_OR_CONTROL.matcher(fwVer).find())
        {
            throw new IllegalArgumentException("fw_ver '" + visible(fwVer)
                + "' must not have control characters or leading or trailing whitespace; give a version such as "
                + "16.35.2000");
        }
        final StringBuilder sb = new StringBuilder(2048);
        sb.append("hca_id:\t").append(hcaId).append('\n');
        line(sb, "transport:\t\t\t", transport.devinfo());
        line(sb, "fw_ver:\t\t\t\t", fwVer);
        line(sb, "node_guid:\t\t\t", guid(a.nodeGuid()));
        line(sb, "sys_image_guid:\t\t\t", guid(a.sysImageGuid()));
        line(sb, "vendor_id:\t\t\t", String.format(Locale.ROOT, "0x%04x", a.vendorId()));
        line(sb, "vendor_part_id:\t\t\t", Integer.toString(a.vendorPartId()));
        line(sb, "hw_ver:\t\t\t\t", "0x" + Integer.toHexString(a.hwVer()).toUpperCase(Locale.ROOT));
        line(sb, "phys_port_cnt:\t\t\t", Integer.toString(a.physPortCnt()));
        line(sb, "max_mr_size:\t\t\t", "0x" + Long.toHexString(a.maxMrSizeBytes()));
        line(sb, "page_size_cap:\t\t\t", "0x" + Long.toHexString(a.pageSizeCap()));
        line(sb, "max_qp:\t\t\t\t", Integer.toString(a.maxQp()));
        line(sb, "max_qp_wr:\t\t\t", Integer.toString(a.maxQpWr()));
        line(sb, "device_cap_flags:\t\t", String.format(Locale.ROOT, "0x%08x", a.deviceCapFlags()));
        deviceCapFlags(sb, a.deviceCapFlags());
        line(sb, "max_sge:\t\t\t", Integer.toString(a.maxSge()));
        line(sb, "max_sge_rd:\t\t\t", Integer.toString(a.maxSgeRd()));
        line(sb, "max_cq:\t\t\t\t", Integer.toString(a.maxCq()));
        line(sb, "max_cqe:\t\t\t", Integer.toString(a.maxCqe()));
        line(sb, "max_mr:\t\t\t\t", Integer.toString(a.maxMr()));
        line(sb, "max_pd:\t\t\t\t", Integer.toString(a.maxPd()));
        line(sb, "max_qp_rd_atom:\t\t\t", Integer.toString(a.maxQpRdAtom()));
        line(sb, "max_res_rd_atom:\t\t", Integer.toString(a.maxResRdAtom()));
        line(sb, "max_qp_init_rd_atom:\t\t", Integer.toString(a.maxQpInitRdAtom()));
        line(sb, "atomic_cap:\t\t\t", "ATOMIC_" + a.atomicCap().name() + " (" + a.atomicCap().code() + ")");
        line(sb, "max_mw:\t\t\t\t", Integer.toString(a.maxMw()));
        line(sb, "max_mcast_grp:\t\t\t", Integer.toString(a.maxMcastGrp()));
        line(sb, "max_mcast_qp_attach:\t\t", Integer.toString(a.maxMcastQpAttach()));
        line(sb, "max_total_mcast_qp_attach:\t", Integer.toString(a.maxTotalMcastQpAttach()));
        line(sb, "max_ah:\t\t\t\t", Integer.toString(a.maxAh()));
        line(sb, "max_srq:\t\t\t", Integer.toString(a.maxSrq()));
        if (a.maxSrq() != 0 || a.maxSrqWr() != a.maxQpWr() || a.maxSrqSge() != a.maxSge())
        {
            // devinfo.c prints them only for max_srq > 0; DevinfoReader takes them as max_qp_wr and max_sge then.
            line(sb, "max_srq_wr:\t\t\t", Integer.toString(a.maxSrqWr()));
            line(sb, "max_srq_sge:\t\t\t", Integer.toString(a.maxSrqSge()));
        }
        line(sb, "max_pkeys:\t\t\t", Integer.toString(a.maxPkeys()));
        line(sb, "local_ca_ack_delay:\t\t", Integer.toString(a.localCaAckDelay()));
        odpCaps(sb, a.odpCaps());
        return sb.toString();
    }

    private static void line(final StringBuilder sb, final String nameAndTabs, final String value)
    {
        sb.append('\t').append(nameAndTabs).append(value).append('\n');
    }

    private static String guid(final long guid)
    {
        return String.format(Locale.ROOT, "%04x:%04x:%04x:%04x", guid >>> 48 & 0xffff, guid >>> 32 & 0xffff,
            guid >>> 16 & 0xffff, guid & 0xffff);
    }

    /** Flag names as {@code print_device_cap_flags} prints them, in bit order, then the unnamed bits. */
    private static void deviceCapFlags(final StringBuilder sb, final long flags)
    {
        long known = 0;
        for (final DeviceCap cap : DeviceCap.values())
        {
            known |= cap.bit();
            if ((flags & cap.bit()) != 0)
            {
                sb.append(FLAG_INDENT).append(cap.name()).append('\n');
            }
        }
        unknownFlags(sb, flags & ~known);
    }

    private static void unknownFlags(final StringBuilder sb, final long bits)
    {
        if (bits != 0)
        {
            sb.append(FLAG_INDENT).append("Unknown flags: 0x").append(Long.toHexString(bits).toUpperCase(Locale.ROOT))
                .append('\n');
        }
    }

    /** As {@code print_odp_caps}: the general block (empty for 0), then one block per transport. */
    private static void odpCaps(final StringBuilder sb, final OdpCaps odp)
    {
        sb.append("\tgeneral_odp_caps:\n");
        final int general = odp.generalCaps();
        if ((general & OdpCaps.SUPPORT) != 0)
        {
            sb.append(FLAG_INDENT).append("ODP_SUPPORT\n");
        }
        if ((general & OdpCaps.SUPPORT_IMPLICIT) != 0)
        {
            sb.append(FLAG_INDENT).append("ODP_SUPPORT_IMPLICIT\n");
        }
        unknownFlags(sb, Integer.toUnsignedLong(general & ~GENERAL_ODP_KNOWN));
        transportCaps(sb, "rc_odp_caps", odp.rcOdpCaps());
        transportCaps(sb, "uc_odp_caps", odp.ucOdpCaps());
        transportCaps(sb, "ud_odp_caps", odp.udOdpCaps());
        transportCaps(sb, "xrc_odp_caps", odp.xrcOdpCaps());
    }

    /** As {@code print_odp_trans_caps}. */
    private static void transportCaps(final StringBuilder sb, final String name, final int caps)
    {
        sb.append('\t').append(name).append(":\n");
        if (caps == 0)
        {
            sb.append(FLAG_INDENT).append("NO SUPPORT\n");
            return;
        }
        transportCap(sb, caps, OdpCaps.SEND, "SUPPORT_SEND");
        transportCap(sb, caps, OdpCaps.RECV, "SUPPORT_RECV");
        transportCap(sb, caps, OdpCaps.WRITE, "SUPPORT_WRITE");
        transportCap(sb, caps, OdpCaps.READ, "SUPPORT_READ");
        transportCap(sb, caps, OdpCaps.ATOMIC, "SUPPORT_ATOMIC");
        transportCap(sb, caps, OdpCaps.SRQ_RECV, "SUPPORT_SRQ");
        unknownFlags(sb, Integer.toUnsignedLong(caps & ~TRANSPORT_ODP_KNOWN));
    }

    private static void transportCap(final StringBuilder sb, final int caps, final int bit, final String name)
    {
        if ((caps & bit) != 0)
        {
            sb.append(FLAG_INDENT).append(name).append('\n');
        }
    }

    /** The text with control characters shown as backslash escapes (a line feed as backslash-n), so a message shows them. */
    static String visible(final String text)
    {
        final StringBuilder sb = new StringBuilder();
        for (int i = 0; i < text.length(); i++)
        {
            final char c = text.charAt(i);
            switch (c)
            {
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> sb.append(Character.isISOControl(c) ? String.format("\\u%04x", (int)c) : String.valueOf(c));
            }
        }
        return sb.toString();
    }
}
