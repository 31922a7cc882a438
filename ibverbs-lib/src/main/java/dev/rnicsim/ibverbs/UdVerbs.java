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
        final AddressHandle ah = pd.createAh(new AhAttr(global || !ethernet ? dev.gid() : null, p.getInt(4), port,
            sgidIndex));
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putInt(0, s.add(new AhInfo(ah, peer)));
    }

    /** DESTROY_AH: wire_handle. */
    ByteBuffer destroyAh(final int h)
    {
        s.get(h, AhInfo.class).ah().close();
        s.handles.set(h, null);
        return null;
    }

    /** The next header of a RoCE v2 packet's IPv6 header: UDP (IBA annex A17); IB and RoCE v1 carry 0x1B (BTH). */
    private static final byte NEXT_HEADER_UDP = 17;

    /**
     * The GRH a receive buffer holds as the receiving port writes it: on an Ethernet port (RoCE v2, the GIDs
     * {@code ibv_query_gid_type} reports) the IPv6 header's next header is UDP, so that {@code ibv_init_ah_from_wc}
     * finds the GID of the right kind.
     */
    static void asReceivedOn(final SimDevice receiver, final byte[] grh)
    {
        if (receiver.profile().portAttributes().linkLayer() == dev.rnicsim.verbs.PortAttributes.LINK_LAYER_ETHERNET)
        {
            grh[6] = NEXT_HEADER_UDP;
        }
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
