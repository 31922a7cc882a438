package dev.rnicsim.simnic;

import dev.rnicsim.verbs.GidEntry;
import dev.rnicsim.verbs.GidType;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcDiagnosis;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WrOpcode;
import java.util.List;

/**
 * What the Ethernet between two RoCE ports lets through. Two rules, both ending the same way for an RC requester: its
 * packets never arrive, no acknowledgement comes, and after {@code retry_cnt} retries the work request completes with
 * IBV_WC_RETRY_EXC_ERR ({@link AckTimeout}), the QP moving to the error state.
 *
 * <ul>
 * <li><b>Frames larger than the netdev's MTU.</b> {@code ibv_modify_qp} takes any path_mtu up to max_mtu (4096) on
 * most drivers, whatever the port's active_mtu (mlx5 {@code __mlx5_ib_modify_qp}, rxe {@code rxe_qp_chk_attr}; hns
 * refuses it, {@link DeviceProfile#pathMtuAboveActiveRefused()}). A QP whose path_mtu does not fit the netdev then
 * sends packets whose frames exceed the Ethernet MTU of the link: the receiving port drops them. A message that fits
 * in one smaller packet still goes through. Seen on mlx5 RoCE with a 1500-byte netdev: path_mtu 4096 (IBV_MTU_4096,
 * or {@code ibv_srq_pingpong -m 4096}) fails with "transport retry counter exceeded (12)" after the first small
 * message passed, and IBV_MTU_1024 works (a public write-up, "IBV_WC_RETRY_EXC_ERR", 2024-09-14, with
 * {@code iboe_get_mtu}). A packet's frame is its payload and at most {@link PortMtuRule#RXE_HEADER_BYTES} bytes of
 * headers (GRH or IP 40, UDP 8, BTH 12, RETH 16, ICRC 4: rxe's {@code RXE_MAX_HDR_LENGTH}); the largest packet of a
 * message carries min(length, path_mtu) bytes, a READ's responses the responder's path_mtu. Both ends' netdevs are
 * the link's: the smaller MTU decides.</li>
 * <li><b>RoCE v1 to a port without RoCE v1.</b> A QP whose source GID (its address vector's sgid_index) is a RoCE v1
 * entry sends RoCE v1 frames (Ethertype 0x8915); a port whose driver lists RoCE v2 GIDs only (rxe, irdma, mana:
 * {@link GidTable.Kinds#ROCE_V2}) receives UDP-encapsulated packets only, so they never arrive. A port with both types
 * takes either whatever the QP's own type (mlx4: the receive path's ICRC check does not depend on the QP's RoCE mode,
 * kernel commit "IB/mlx4: Create and use another QP1 for RoCEv2"), so a v1/v2 mismatch between two such ports is
 * not an error.</li>
 * </ul>
 *
 * <p>Stateless.
 */
final class RoceWire
{
    private RoceWire()
    {
    }

    /**
     * @param qp   the requester QP (RC, UC, XRC).
     * @param peer the responder QP, live and connected back.
     * @param wr   the work request about to go out.
     * @return why its packets never arrive, or null when they do.
     */
    static String dropped(final SimQp qp, final SimQp peer, final SendWr wr)
    {
        final SimDevice local = qp.device;
        final SimDevice remote = peer.device;
        final GidTable.Kinds localKinds = local.profile().gidKinds();
        final GidTable.Kinds remoteKinds = remote.profile().gidKinds();
        if (!localKinds.roce() || !remoteKinds.roce())
        {
            return null;
        }
        // only a port with RoCE v1 entries sends v1, and only a v2-only port refuses it: the table is read then alone
        if (localKinds.types().contains(GidType.ROCE_V1) && !remoteKinds.types().contains(GidType.ROCE_V1)
            && sourceGidType(qp) == GidType.ROCE_V1)
        {
            return "QP 0x" + Integer.toHexString(qp.num) + " sends RoCE v1 (its sgid_index "
                + qp.attrs.av.sgidIndex() + " is a RoCE v1 GID) and " + remote.name() + "'s port ("
                + remote.profile().driver() + ") receives RoCE v2 only: no packet arrives";
        }
        final boolean read = wr.opcode() == WrOpcode.RDMA_READ;
        final SimQp sender = read ? peer : qp;
        final long payload = wr.opcode() == WrOpcode.ATOMIC_CMP_AND_SWP || wr.opcode() == WrOpcode.ATOMIC_FETCH_AND_ADD
            ? 8 : Math.min(wr.totalBytes(), pathMtuBytes(sender));
        final int mtu = Math.min(local.netdev().mtuBytes(), remote.netdev().mtuBytes());
        if (payload + PortMtuRule.RXE_HEADER_BYTES > mtu)
        {
            return (read ? "the responder QP 0x" + Integer.toHexString(peer.num) + "'s READ responses" : "its packets")
                + " carry " + payload + " bytes (path_mtu " + pathMtuBytes(sender) + "), with headers more than the "
                + "netdev MTU of " + mtu + " bytes: the frames are dropped";
        }
        return null;
    }

    /**
     * @param qp   the requester QP.
     * @param wr   its work request.
     * @param why  what {@link #dropped} answered.
     * @return the diagnosis of the IBV_WC_RETRY_EXC_ERR that follows.
     */
    static WcDiagnosis diagnosis(final SimQp qp, final SendWr wr, final String why)
    {
        final boolean v1 = why.contains("RoCE v1");
        return new WcDiagnosis(WcDiagnosis.Check.NO_ACK, Diagnoser.vendorErr(qp.device.profile(),
            WcStatus.RETRY_EXC_ERR), 0, -1, -1, Diagnoser.posted(qp, wr) + ": no acknowledgement after retry_cnt="
            + qp.retryCount + " retries: " + why, List.of(v1
            ? "fix: give both QPs the sgid_index of a RoCE v2 GID (ibv_devinfo -v lists each GID's type)"
            : "fix: set path_mtu to the port's active_mtu (ibv_query_port; ibv_rc_pingpong -m), or raise both "
                + "netdevs' MTU (ip link set DEV mtu 9000)"));
    }

    /**
     * @param qp a QP.
     * @return the bytes of its path MTU: its path_mtu once a modify set it, else the path's, at most the fabric's
     *         ({@link SimFabric#pathMtuBytes()}, the links between the ports). A path_mtu a modify set is not capped
     *         by the ports' active_mtu: a larger one sends frames the netdev drops ({@link #dropped}).
     */
    static int pathMtuBytes(final SimQp qp)
    {
        final int fabric = qp.device.fabric().pathMtuBytes();
        if (qp.attrs.pathMtu > 0)
        {
            return Math.min(fabric, PortMtuRule.bytesOf(qp.attrs.pathMtu));
        }
        final SimDevice peer = qp.remote == null ? null : qp.device.fabric().deviceByGid(qp.remote.gid());
        return PortMtuRule.bytesOf(connectPathMtu(qp.device, peer));
    }

    /**
     * @param device a device.
     * @return the largest UD message its port sends: the active MTU (rxe {@code get_mtu}: a UD QP's MTU is the port's
     *         {@code mtu_cap}), at most the fabric's path MTU.
     */
    static int datagramMtuBytes(final SimDevice device)
    {
        return Math.min(device.fabric().pathMtuBytes(), PortMtuRule.bytesOf(device.portAttributes().activeMtu()));
    }

    /**
     * The path MTU of a connection between two ports, as a path record gives it: the fabric's, at most each port's
     * active_mtu (IBA 15.2.5.16: a PathRecord's MTU is the largest every link of the path carries; on RoCE the
     * connection manager's route takes the netdev's, {@code cma_resolve_iboe_route} sets the path record's MTU to
     * {@code iboe_get_mtu} of the netdev, and the passive side takes the REQ's, {@code cm_req_handler}).
     *
     * @param device a device.
     * @param peer   the device at the connection's other end, or null when not known.
     * @return the path MTU the one-call transitions give, as {@code enum ibv_mtu}.
     */
    static int connectPathMtu(final SimDevice device, final SimDevice peer)
    {
        final int fabric = Integer.numberOfTrailingZeros(device.fabric().pathMtuBytes()) - 7;
        final int local = Math.min(fabric, device.portAttributes().activeMtu());
        return peer == null || peer == device ? local : Math.min(local, peer.portAttributes().activeMtu());
    }

    /**
     * The RoCE v1 rule for a datagram: a UD send whose address handle leaves from a RoCE v1 GID sends a RoCE v1 frame,
     * which a port that takes RoCE v2 only never receives (as for a connected QP's packets, {@link #dropped}).
     *
     * @param sender   the sending device.
     * @param av       the send's address vector.
     * @param receiver the device the address vector names.
     * @return why the datagram never arrives, or null.
     */
    static String datagramDropped(final SimDevice sender, final dev.rnicsim.verbs.AhAttr av, final SimDevice receiver)
    {
        final GidTable.Kinds localKinds = sender.profile().gidKinds();
        final GidTable.Kinds remoteKinds = receiver.profile().gidKinds();
        if (!localKinds.roce() || !remoteKinds.roce() || !localKinds.types().contains(GidType.ROCE_V1)
            || remoteKinds.types().contains(GidType.ROCE_V1) || !av.isGlobal())
        {
            return null;
        }
        final List<GidEntry> table = GidTable.entries(sender, av.portNum() < 1 ? 1 : av.portNum());
        final int i = av.sgidIndex();
        if (i < 0 || i >= table.size() || table.get(i).gidType() != GidType.ROCE_V1)
        {
            return null;
        }
        return "the address handle's sgid_index " + i + " is a RoCE v1 GID, so the datagram is a RoCE v1 frame, and "
            + receiver.name() + "'s port (" + receiver.profile().driver() + ") receives RoCE v2 only";
    }

    private static GidType sourceGidType(final SimQp qp)
    {
        if (qp.attrs.av == null || !qp.attrs.av.isGlobal())
        {
            return null;
        }
        final List<GidEntry> table = GidTable.entries(qp.device, 1);
        final int i = qp.attrs.av.sgidIndex();
        return i >= 0 && i < table.size() ? table.get(i).gidType() : null;
    }
}
