package dev.rnicsim.ibverbs;

import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.verbs.AddressHandle;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.PortAttributes;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpAttrMask;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * UD queue pairs through the library: {@code ibv_create_ah} and {@code ibv_destroy_ah} on the model's address
 * handles, and the UD state transitions, which carry a Q_Key and no address vector (ibv_modify_qp(3): INIT takes
 * PKEY_INDEX, PORT and QKEY; RTR only the state; RTS the SQ_PSN).
 *
 * <p>Not thread safe: called under the fabric's lock.
 */
final class UdVerbs
{
    private static final int EINVAL = 22;
    private final Session s;

    UdVerbs(final Session session)
    {
        this.s = session;
    }

    /** An address handle and the device of the fabric its address vector names. */
    record AhInfo(AddressHandle ah, int peerDeviceIndex)
    {
    }

    /** CREATE_AH: pd, dlid, is_global, port_num, dgid[16], sgid_index. */
    ByteBuffer createAh(final ByteBuffer p)
    {
        final ProtectionDomain pd = s.get(p.getInt(0), ProtectionDomain.class);
        final int peer = resolve(p.getInt(8) != 0, p, 16, p.getInt(4));
        // port_num as given: 0 is no port (mlx5_create_ah and rdma_check_ah_attr refuse it; the model's AH check)
        final int port = p.getInt(12);
        final SimDevice dev = s.server.devices.get(peer);
        // The model routes a datagram by the destination's GID, so an InfiniBand AV gets it even without a GRH (the
        // LID named the same device). On an Ethernet (RoCE) port the GRH is the address: an AV without one, or with
        // an sgid_index past the GID table, is the model's to refuse (EINVAL, rdma_check_ah_attr, mlx5_create_ah).
        final boolean ethernet = ((SimPd) pd).context().device().profile().portAttributes().linkLayer()
            == PortAttributes.LINK_LAYER_ETHERNET;
        final boolean global = p.getInt(8) != 0;
        final int sgidIndex = ethernet && p.limit() >= 40 ? p.getInt(32) : 0;
        // the program's own destination GID (an IPv4-mapped one makes a RoCE v2 packet IPv4, ReceivedGrh)
        final AddressHandle ah = pd.createAh(new AhAttr(global ? ModifyQpCall.gid(p, 16) : !ethernet ? dev.gid()
            : null, p.getInt(4), port, sgidIndex));
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putInt(0, s.add(new AhInfo(ah, peer)));
    }

    /** DESTROY_AH: wire_handle. */
    ByteBuffer destroyAh(final int h)
    {
        s.get(h, AhInfo.class).ah().close();
        s.handles.set(h, null);
        return null;
    }

    /**
     * The 40 bytes a UD receive starts with, as the receiving port writes them from the packet the sender's address
     * handle made ({@link dev.rnicsim.simnic.ReceivedGrh}: a GRH for IB and RoCE v1, the IPv6 header for RoCE v2, an
     * IPv4 header in bytes 20..39 for RoCE v2 from an IPv4-mapped GID), so that {@code ibv_init_ah_from_wc} finds the
     * GID of the right kind and address.
     *
     * @param sender       the sending QP (its session holds the address handle by the handle the send named).
     * @param send         the send (wr.ud's AH handle in its remote address).
     * @param receiver     the receiving device.
     * @param payloadBytes the datagram's payload.
     */
    static byte[] grhAsReceived(final Session.QpInfo sender, final Completions.PostedSend send,
        final SimDevice receiver, final long payloadBytes)
    {
        final SimDevice from = sender.session.server.devices.get(sender.deviceIndex);
        final Object info = send.remoteAddr() > 0 && send.remoteAddr() < sender.session.handles.size()
            ? sender.session.handles.get((int) send.remoteAddr()) : null;
        final AhAttr av = info instanceof AhInfo a ? a.ah().attr() : AhAttr.toGid(receiver.gid());
        return dev.rnicsim.simnic.ReceivedGrh.of(from, av, receiver, payloadBytes,
            send.opcode() == dev.rnicsim.verbs.WrOpcode.SEND_WITH_IMM.code());
    }

    /** The address handle a UD send names by its handle. */
    AddressHandle ah(final int h)
    {
        return s.get(h, AhInfo.class).ah();
    }

    /** MODIFY_QP of a UD QP: the attributes the transition takes, to the model's ibv_modify_qp. */
    void modify(final QueuePair qp, final ByteBuffer p)
    {
        final int mask = p.getInt(4);
        final QpAttr.Builder b = QpAttr.builder();
        for (final QpState st : QpState.values())
        {
            if (st.ordinal() == p.getInt(8))
            {
                b.state(st);
            }
        }
        if ((mask & QpAttrMask.PKEY_INDEX.bit()) != 0)
        {
            b.pkeyIndex(0);
        }
        if ((mask & QpAttrMask.PORT.bit()) != 0)
        {
            b.port(1);
        }
        if ((mask & QpAttrMask.QKEY.bit()) != 0 && p.limit() >= 80)
        {
            b.qkey(p.getInt(72));
        }
        if ((mask & QpAttrMask.SQ_PSN.bit()) != 0)
        {
            b.sqPsn(p.getInt(24));
        }
        qp.modify(b.build(), b.mask());
    }

    /** The device an address vector names: by GID when it has a GRH, else by LID (LIDs 1..n, one per device). */
    private int resolve(final boolean global, final ByteBuffer p, final int gidAt, final int dlid)
    {
        final List<SimDevice> devs = s.server.devices;
        if (global)
        {
            final StringBuilder gid = new StringBuilder();
            for (int i = 0; i < 16; i += 2)
            {
                if (i > 0)
                {
                    gid.append(':');
                }
                gid.append(String.format("%02x%02x", p.get(gidAt + i), p.get(gidAt + i + 1)));
            }
            for (int i = 0; i < devs.size(); i++)
            {
                if (dev.rnicsim.simnic.GidTable.holds(devs.get(i), gid.toString()))
                {
                    return i;
                }
            }
            throw new VerbsException("ibv_create_ah", EINVAL, "no device of the fabric has GID " + gid);
        }
        if (dlid < 1 || dlid > devs.size())
        {
            throw new VerbsException("ibv_create_ah", EINVAL, "no port of the fabric has LID " + dlid + " (LIDs 1.."
                + devs.size() + "): give the LID ibv_query_port reports, or a GRH with the peer's GID");
        }
        return dlid - 1;
    }
}
