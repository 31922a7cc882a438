package dev.rnicsim.simnic;

import dev.rnicsim.dma.Segment;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.WrOpcode;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The rules that differ between QP types (IBA 9.8.3 and 10.2.5; libibverbs ibv_post_send(3)), and the global route
 * header a UD receive starts with. Stateless.
 */
public final class Datagrams
{
    /** Bytes of the global route header a UD receive buffer holds before the payload (IBA 9.8.3, ibv_post_recv(3)). */
    public static final int GRH_BYTES = 40;

    private static final Set<WrOpcode> UD_OPCODES = EnumSet.of(WrOpcode.SEND, WrOpcode.SEND_WITH_IMM);
    private static final Set<WrOpcode> UC_OPCODES = EnumSet.of(WrOpcode.SEND, WrOpcode.SEND_WITH_IMM,
        WrOpcode.RDMA_WRITE, WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.LOCAL_INV, WrOpcode.BIND_MW,
        WrOpcode.SEND_WITH_INV, WrOpcode.REG_MR);

    private Datagrams()
    {
    }

    /**
     * Which opcodes a QP type posts: UD SEND and SEND_WITH_IMM only; UC adds RDMA WRITE (with and without immediate)
     * and the local operations, but neither RDMA READ nor atomics (IBA 9.8.3 table of the services' operations; rxe
     * answers EINVAL at post through its per-type opcode mask, {@code rxe_opcode.c wr_opcode_mask}).
     *
     * @return why the opcode is refused (EINVAL), or null.
     */
    static String opcodeRefusal(final QpType type, final WrOpcode opcode)
    {
        if (type == QpType.UD && !UD_OPCODES.contains(opcode))
        {
            return "opcode " + opcode + " on a UD QP: datagrams carry SEND and SEND_WITH_IMM only (no RDMA, no "
                + "atomics, no memory windows; IBA 9.8.3)";
        }
        if (type == QpType.UC && !UC_OPCODES.contains(opcode))
        {
            return "opcode " + opcode + " on a UC QP: unreliable connections carry SEND and RDMA WRITE (with "
                + "immediate) but no RDMA READ and no atomics (IBA 9.8.3); use an RC QP";
        }
        return null;
    }

    /**
     * What {@code ibv_post_send} answers for the opcode on this device: see {@link QpTypeOpcodes#postRefusal}.
     *
     * @return why the opcode is refused at post (EINVAL), or null.
     */
    static String opcodeRefusal(final DeviceProfile profile, final QpType type, final WrOpcode opcode)
    {
        return QpTypeOpcodes.postRefusal(profile, type, opcode);
    }

    /**
     * The 40-byte GRH a UD receive starts with: IP version 6, the payload length field (PayLen), next header 0x1B (IBA
     * BTH), hop limit 64, source and destination GID (IBA 8.3; the content is what a RoCE v1 port writes).
     *
     * @param sgid        the source GID.
     * @param dgid        the destination GID.
     * @param payLenBytes the PayLen field: the bytes of the packet after the GRH ({@link ReceivedGrh#payLen}), not
     *                    the message's payload alone.
     * @return the 40 bytes.
     */
    public static byte[] grh(final String sgid, final String dgid, final long payLenBytes)
    {
        final byte[] g = new byte[GRH_BYTES];
        g[0] = 0x60;
        g[4] = (byte)(payLenBytes >>> 8);
        g[5] = (byte)payLenBytes;
        g[6] = 0x1b;
        g[7] = 64;
        gidBytes(sgid, g, 8);
        gidBytes(dgid, g, 24);
        return g;
    }

    private static void gidBytes(final String gid, final byte[] out, final int at)
    {
        final String hex = gid == null ? "" : gid.replace(":", "");
        if (hex.length() != 32)
        {
            return;
        }
        for (int i = 0; i < 16; i++)
        {
            out[at + i] = (byte)Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
    }

    /**
     * The fields {@code struct ibv_wc} has for a datagram received on a UD QP (ibv_poll_cq(3)): {@code src_qp} is the
     * sending QP's number, IBV_WC_GRH is set because the datagram came with a GRH (the simulated fabric routes every
     * address handle by GID, as RoCE does, so every datagram carries one, and its 40 bytes lead the buffer); slid,
     * sl, pkey_index and dlid_path_bits are 0: the ports have no LIDs (RoCE has none: mlx5 and rxe report slid 0
     * there), address handles carry service level 0 and every QP uses P_Key index 0.
     *
     * @param wc       the receive's successful completion.
     * @param senderQp the sending QP's number.
     * @return the completion with the datagram fields.
     */
    static dev.rnicsim.verbs.WorkCompletion received(final dev.rnicsim.verbs.WorkCompletion wc, final int senderQp)
    {
        return wc.withDatagram(senderQp, true, 0, 0, 0, 0);
    }

    /**
     * @param sgl a scatter list.
     * @param n   bytes to take from its start.
     * @return two lists: the first n bytes, and the rest.
     */
    static List<List<Segment>> split(final List<Segment> sgl, final long n)
    {
        final List<Segment> head = new ArrayList<>();
        final List<Segment> tail = new ArrayList<>();
        long left = n;
        for (final Segment s : sgl)
        {
            if (left >= s.lengthBytes())
            {
                head.add(s);
                left -= s.lengthBytes();
            }
            else if (left > 0)
            {
                head.add(new Segment(s.addr(), left, s.key()));
                tail.add(new Segment(s.addr() + left, s.lengthBytes() - left, s.key()));
                left = 0;
            }
            else
            {
                tail.add(s);
            }
        }
        return List.of(head, tail);
    }
}
