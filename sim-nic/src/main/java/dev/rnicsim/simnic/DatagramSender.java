package dev.rnicsim.simnic;

import dev.rnicsim.dma.DmaResult;
import dev.rnicsim.dma.Segment;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.UdSendWr;
import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WrOpcode;
import java.util.List;

/**
 * The UD send path of one QP: a datagram goes out in one packet and is delivered, or dropped where IBA says so.
 *
 * <p>Not thread safe: driven by the fabric's {@link NicEngine}.
 */
final class DatagramSender
{
    private final SimQp qp;
    private final SimDevice device;
    private final SimPd pd;

    DatagramSender(final SimQp qp)
    {
        this.qp = qp;
        this.device = qp.device;
        this.pd = qp.pd;
    }

    /**
     * A UD send: unreliable, so nothing the responder meets comes back to the requester, whose send completes with
     * success once the packet left (IBA 9.8.3). The datagram is dropped when it exceeds the path MTU, the port's
     * active_mtu ({@link RoceWire#datagramMtuBytes}; no packet is sent and no error raised: IBA C10-93.1.1, rxe
     * {@code fake_udp_send}), names no UD QP in RTR or later, is a RoCE v1 frame to a port that takes RoCE v2 only
     * ({@link RoceWire#datagramDropped}), carries
     * the wrong Q_Key (IBA 10.2.5), or finds no receive posted (no RNR on UD; the out_of_buffer counter rises). A
     * delivered datagram fills the receive buffer's first 40 bytes with the GRH ({@link ReceivedGrh}: on RoCE v2 over
     * IPv4 an IPv4 header in bytes 20..39) and the payload after it; byte_len
     * counts both. A receive buffer too small completes with IBV_WC_LOC_LEN_ERR at the responder. Observers see a
     * delivered datagram's DMA as {@link DeviceObserver#transferred} (its receive holds the GRH first) and a gather
     * refused at the requester as {@link DeviceObserver#failed}, as they see an RC SEND's.
     */
    WqeOutcome executeDatagram(final SendWqe p)
    {
        final SendWr wr = p.wr();
        final UdSendWr ud = p.ud();
        final long length = p.inline() != null ? p.inline().length : wr.totalBytes();
        final SimDevice pdev = ud.ah().attr().dgid() == null ? null : device.fabric().deviceByGid(ud.ah().attr()
            .dgid());
        final SimQp peer = pdev == null ? null : pdev.qp(ud.remoteQpn());
        final int qkey = ud.remoteQkey() < 0 ? qp.attrs.qkey : ud.remoteQkey();
        final int mtu = RoceWire.datagramMtuBytes(device);
        String dropped = null;
        if (length > mtu)
        {
            dropped = "the datagram of " + length + " bytes exceeds the path MTU of " + mtu + " bytes: no packet is "
                + "sent (IBA C10-93.1.1)";
        }
        else if (peer == null || peer.closed || peer.type != QpType.UD)
        {
            dropped = "no UD QP 0x" + Integer.toHexString(ud.remoteQpn()) + " at " + ud.ah().attr().dgid();
        }
        else if (RoceWire.datagramDropped(device, ud.ah().attr(), pdev) != null)
        {
            dropped = RoceWire.datagramDropped(device, ud.ah().attr(), pdev);
        }
        else if (peer.state != QpState.RTR && peer.state != QpState.RTS && peer.state != QpState.SQD)
        {
            dropped = "QP 0x" + Integer.toHexString(peer.num) + " is in " + peer.state + " and receives nothing";
        }
        else if (peer.attrs.qkey != qkey)
        {
            dropped = "Q_Key 0x" + Integer.toHexString(qkey) + " does not match QP 0x" + Integer.toHexString(peer.num)
                + "'s 0x" + Integer.toHexString(peer.attrs.qkey) + " (IBA 10.2.5: the packet is dropped)";
        }
        else if (peer.recvQueue.isEmpty())
        {
            peer.device.count(SimCounter.OUT_OF_BUFFER, 1);
            dropped = "QP 0x" + Integer.toHexString(peer.num) + " has no receive posted (UD has no RNR)";
        }
        final java.util.Map<String, Object> args = new java.util.LinkedHashMap<>();
        args.put("qp_num", qp.num);
        args.put("bytes", length);
        args.put("ud_dest_qpn", ud.remoteQpn());
        if (dropped != null)
        {
            args.put("dropped", dropped);
            device.fabric().span(device, wr.opcode().name(), "dma", device.fabric().costModel().opBaseLatencyNs(),
                args);
            return datagramSent(wr, length);
        }
        final RecvWr recv = peer.recvQueue.removeFirst();
        final List<Segment> recvSgl = DataPaths.segments(pdev, recv.sgList());
        if (recv.totalBytes() < Datagrams.GRH_BYTES + length)
        {
            peer.completions.completeRecv(recv, WcStatus.LOC_LEN_ERR, WcOpcode.RECV, 0, false, 0, false, 0, null);
            args.put("dropped", "receive wr_id " + Long.toUnsignedString(recv.wrId()) + " holds " + recv.totalBytes() + " bytes < 40 (GRH) + "
                + length);
            device.fabric().span(device, wr.opcode().name(), "dma", device.fabric().costModel().opBaseLatencyNs(),
                args);
            return datagramSent(wr, length);
        }
        final List<List<Segment>> parts = Datagrams.split(recvSgl, Datagrams.GRH_BYTES);
        final DmaResult r = p.inline() != null
            ? device.dmaEngine().sendInline(p.inline(), pdev.port(), peer.pd.pdNum(), parts.get(1))
            : device.dmaEngine().send(device.port(), pd.pdNum(), DataPaths.segments(device, wr.sgList()), pdev.port(),
                peer.pd.pdNum(), parts.get(1));
        if (!r.ok() && !r.responderError())
        {
            // The gather failed at the requester: nothing left, the receive stays posted.
            peer.recvQueue.addFirst(recv);
            device.observe(o -> o.failed(qp, wr, r));
            qp.completions.completeSend(wr, qp.responder.requesterStatus(wr, r), 0, Diagnoser.local(qp, wr,
                qp.responder.requesterStatus(wr, r),
                r.detail()));
            return WqeOutcome.ERROR;
        }
        final DmaResult g = r.ok() ? device.dmaEngine().sendInline(ReceivedGrh.of(device, ud.ah().attr(), pdev, length,
            wr.opcode() == WrOpcode.SEND_WITH_IMM),
            pdev.port(), peer.pd.pdNum(), parts.get(0)) : r;
        final boolean imm = wr.opcode() == WrOpcode.SEND_WITH_IMM;
        peer.completions.completeRecv(recv, g.ok() ? WcStatus.SUCCESS : peer.responder.responderStatus(g),
            WcOpcode.RECV,
            g.ok() ? Datagrams.GRH_BYTES + length : 0, imm, wr.immData(), false, 0, null, g.ok() ? qp : null);
        final double linkGbps = Math.min(device.profile().linkGbps(), pdev.profile().linkGbps());
        args.put("status", g.ok() ? "delivered" : peer.responder.responderStatus(g).cName());
        final long startNs = device.fabric().clock().nowNs();
        final long opNs = device.fabric().costModel().operationNs(length, linkGbps, 0);
        device.fabric().span(device, wr.opcode().name(), "dma", opNs, args);
        if (pdev != device && device.fabric().tracing())
        {
            // The scatter into the receive buffer, on the responder's device (as an RC SEND's).
            device.fabric().overlap(pdev, wr.opcode().name() + " (responder)", "dma", startNs, opNs,
                java.util.Map.of("qp_num", peer.num, "bytes", g.ok() ? Datagrams.GRH_BYTES + length : 0));
        }
        if (g.ok())
        {
            qp.responder.account(wr, r, peer);
            // As an RC SEND's: the gather and the scatter (GRH first) are DMA that observers see.
            device.observe(o -> o.transferred(qp, wr, peer, recv));
        }
        return datagramSent(wr, length);
    }

    WqeOutcome datagramSent(final SendWr wr, final long length)
    {
        if (qp.sqSigAll || wr.flags().contains(SendFlag.SIGNALED))
        {
            qp.completions.completeSend(wr, WcStatus.SUCCESS, length);
        }
        return WqeOutcome.DONE;
    }
}
