package dev.rnicsim.simnic;

import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.GidEntry;
import dev.rnicsim.verbs.GidType;
import java.util.List;

/**
 * The 40 bytes a UD receive buffer starts with, as the receiving port writes them from the packet's network header
 * (IBA 11.4.1.1 and Annex A17 "RoCE v2", ibv_post_recv(3); the kernel's {@code union rdma_network_hdr}). The header is
 * the one the sender's address vector chose by its source GID ({@code sgid_index}):
 *
 * <ul>
 * <li>InfiniBand, or a RoCE v1 source GID: the GRH, an IPv6-shaped header whose next header is 0x1B (the BTH);</li>
 * <li>a RoCE v2 source GID of IPv6 form (the link-local {@code fe80::} GID): the packet's IPv6 header, next header UDP
 * (17);</li>
 * <li>a RoCE v2 source GID that is IPv4-mapped ({@code ::ffff:a.b.c.d}): the packet is IPv4, so bytes 0..19 are zero
 * and bytes 20..39 hold its IPv4 header (rxe {@code build_rdma_network_hdr}: the reserved 20 bytes cleared, then
 * {@code ip_hdr(skb)}; mlx5 scatters the same): version 4 and IHL 5, total length, DF, TTL 64, protocol UDP, a valid
 * header checksum, the source and destination addresses. {@code ibv_init_ah_from_wc} tells the forms apart by the
 * version nibbles and that checksum ({@code get_grh_header_version}; the kernel's {@code ib_get_rdma_header_version})
 * and takes the source address back as {@code ::ffff:a.b.c.d}.</li>
 * </ul>
 *
 * <p>Stateless.
 */
public final class ReceivedGrh
{
    /** Next header of a GRH that a BTH follows (IB, RoCE v1). */
    private static final byte NEXT_HEADER_BTH = 0x1b;
    /** IP protocol UDP: RoCE v2's next header (IPv6) or protocol (IPv4). */
    private static final byte UDP = 17;
    /** The hop limit (TTL) the model's address vectors carry. */
    private static final byte HOP_LIMIT = 64;
    /** Bytes after the IPv4 header of a UD SEND: UDP 8, BTH 12, DETH 8 and the ICRC 4 around the payload. */
    private static final int UD_HEADERS_AFTER_IP_BYTES = 8 + 12 + 8 + 4;
    /** The UDP header of RoCE v2. */
    private static final int UDP_BYTES = 8;
    /** BTH 12 and DETH 8: the transport headers of a UD SEND. */
    private static final int UD_TRANSPORT_HEADER_BYTES = 12 + 8;
    /** The immediate data header (ImmDt) of a SEND_WITH_IMM. */
    private static final int IMMDT_BYTES = 4;
    /** The invariant CRC that ends the packet. */
    private static final int ICRC_BYTES = 4;

    private ReceivedGrh()
    {
    }

    /**
     * @param sender       the sending device.
     * @param av           the address vector of the send (its destination GID and source GID index).
     * @param receiver     the receiving device.
     * @param payloadBytes the datagram's payload.
     * @param withImm      true for SEND_WITH_IMM (the ImmDt header adds 4 bytes to an IPv4 packet's length).
     * @return the 40 bytes the receive buffer starts with.
     */
    public static byte[] of(final SimDevice sender, final AhAttr av, final SimDevice receiver, final long payloadBytes,
        final boolean withImm)
    {
        final String dgid = av.dgid() == null ? receiver.gid() : av.dgid();
        final GidEntry source = sourceGid(sender, av);
        if (source == null || source.gidType() == GidType.IB)
        {
            return Datagrams.grh(source == null ? sender.gid() : GidTable.text(source.gid()), dgid,
                payLen(payloadBytes, withImm, false));
        }
        final byte[] sgid = source.gid();
        if (source.gidType() == GidType.ROCE_V2 && ipv4Mapped(sgid))
        {
            return ipv4(sgid, destinationIpv4(dgid, receiver), payloadBytes, withImm);
        }
        final byte[] g = Datagrams.grh(GidTable.text(sgid), dgid,
            payLen(payloadBytes, withImm, source.gidType() == GidType.ROCE_V2));
        g[6] = source.gidType() == GidType.ROCE_V2 ? UDP : NEXT_HEADER_BTH;
        return g;
    }

    /**
     * The PayLen field of a UD SEND's GRH or IPv6 header: the bytes of the packet after that header, up to and
     * including the ICRC (IBA 8.3.1, PayLen; RFC 8200's Payload Length for RoCE v2 over IPv6): the UDP header on RoCE
     * v2, BTH and DETH, ImmDt for a SEND_WITH_IMM, the payload padded to a multiple of 4 bytes (BTH PadCnt) and the
     * ICRC. The kernel's {@code ib_ud_header_init} (drivers/infiniband/core/ud_header.c) computes the same,
     * {@code (udp + IB_BTH_BYTES + IB_DETH_BYTES + payload_bytes + 4 + 3) & ~3}, for the headers it builds (its
     * callers count no ImmDt); rxe's {@code prepare_ipv6_hdr} sets it from the packet's length after the IPv6 header.
     *
     * @param payloadBytes the message's payload.
     * @param withImm      true for SEND_WITH_IMM.
     * @param udp          true on RoCE v2 (a UDP header follows the IPv6 header).
     * @return the PayLen field's value.
     */
    public static long payLen(final long payloadBytes, final boolean withImm, final boolean udp)
    {
        final long headers = (udp ? UDP_BYTES : 0) + UD_TRANSPORT_HEADER_BYTES + (withImm ? IMMDT_BYTES : 0);
        return (headers + payloadBytes + 3 & ~3L) + ICRC_BYTES;
    }

    /**
     * @param grh 40 bytes of a receive buffer.
     * @return true when they hold an IPv4 header in bytes 20..39 (RoCE v2 over IPv4), as {@code
     *         get_grh_header_version} decides: the first nibble is not 6 and the IPv4 header's is 4.
     */
    public static boolean holdsIpv4(final byte[] grh)
    {
        return (grh[0] >>> 4 & 0xf) != 6 && (grh[20] >>> 4 & 0xf) == 4;
    }

    /** The source GID entry the address vector names, or null on a port without RoCE GIDs. */
    private static GidEntry sourceGid(final SimDevice sender, final AhAttr av)
    {
        if (!sender.profile().gidKinds().roce())
        {
            return null;
        }
        final List<GidEntry> table = GidTable.entries(sender, av.portNum() < 1 ? 1 : av.portNum());
        final int i = av.sgidIndex();
        return i >= 0 && i < table.size() ? table.get(i) : table.getFirst();
    }

    private static boolean ipv4Mapped(final byte[] gid)
    {
        for (int i = 0; i < 10; i++)
        {
            if (gid[i] != 0)
            {
                return false;
            }
        }
        return gid[10] == (byte)0xff && gid[11] == (byte)0xff;
    }

    /** The destination address: the IPv4-mapped GID's, else the receiving netdev's (a v4 source sends IPv4). */
    private static byte[] destinationIpv4(final String dgid, final SimDevice receiver)
    {
        final byte[] raw = new byte[16];
        final String hex = dgid.replace(":", "");
        for (int i = 0; i < 16 && hex.length() == 32; i++)
        {
            raw[i] = (byte)Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        final byte[] own = receiver.netdev().ipv4();
        return ipv4Mapped(raw) || own == null ? java.util.Arrays.copyOfRange(raw, 12, 16) : own;
    }

    private static byte[] ipv4(final byte[] sgid, final byte[] daddr, final long payloadBytes, final boolean withImm)
    {
        final byte[] g = new byte[Datagrams.GRH_BYTES];
        final int ip = 20;
        final long total = 20 + UD_HEADERS_AFTER_IP_BYTES + (withImm ? 4 : 0) + payloadBytes;
        g[ip] = 0x45;
        g[ip + 2] = (byte)(total >>> 8);
        g[ip + 3] = (byte)total;
        g[ip + 6] = 0x40; // DF: RoCE packets are not fragmented
        g[ip + 8] = HOP_LIMIT;
        g[ip + 9] = UDP;
        System.arraycopy(sgid, 12, g, ip + 12, 4);
        System.arraycopy(daddr, 0, g, ip + 16, 4);
        int sum = 0;
        for (int i = 0; i < 20; i += 2)
        {
            sum += (g[ip + i] & 0xff) << 8 | g[ip + i + 1] & 0xff;
        }
        while (sum >>> 16 != 0)
        {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        final int check = ~sum & 0xffff;
        g[ip + 10] = (byte)(check >>> 8);
        g[ip + 11] = (byte)check;
        return g;
    }
}
