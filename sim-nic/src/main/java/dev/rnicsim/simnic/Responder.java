package dev.rnicsim.simnic;

import dev.rnicsim.dma.DmaResult;
import dev.rnicsim.dma.DmaStatus;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcDiagnosis;
import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WrOpcode;
import java.util.List;

/**
 * The responder's side of one QP's messages: the first packet's check of rkey, range and rights (rxe
 * {@code check_rkey}), the placement of the packets that follow under that check, the receive queue a SEND or WRITE
 * with immediate consumes, and the NAKs and completions a message ends with.
 *
 * <p>Not thread safe: driven by the fabric's {@link NicEngine}.
 */
final class Responder
{
    private final SimQp qp;
    private final SimDevice device;
    private final SimPd pd;

    Responder(final SimQp qp)
    {
        this.qp = qp;
        this.device = qp.device;
        this.pd = qp.pd;
    }

    /**
     * The first packet of a packetized message: the responder checks the rkey, range and rights for the whole
     * message (a SEND: the receive buffers it takes; and the requester its whole local list); a failure answers as
     * the one-step path does and moves nothing; else the first packet is placed and the message is in flight. An
     * atomic's first step is its request packet: the responder executes it; the response comes in the next step.
     */
    WqeOutcome startMessage(final SendWqe p, final SimQp peer, final long missesBefore)
    {
        final SendWr wr = p.wr();
        final dev.rnicsim.dma.DmaEngine dmaEngine = device.dmaEngine();
        final int peerPd = peer.pd.pdNum();
        final boolean atomic = wr.opcode().isAtomic();
        final boolean send = wr.opcode() == WrOpcode.SEND || wr.opcode() == WrOpcode.SEND_WITH_IMM
            || wr.opcode() == WrOpcode.SEND_WITH_INV;
        final dev.rnicsim.dma.DmaMessage dma;
        if (send)
        {
            dma = dmaEngine.openSend(device.port(), pd.pdNum(), p.inline() == null ? DataPaths.segments(device,
                wr.sgList())
                : List.of(), p.inline(), peer.device.port(), peerPd, DataPaths.segments(peer.device,
                peer.recvQueue.peekFirst().sgList()));
        }
        else
        {
            final long remoteAddr = peer.device.keyAddress(wr.rkey(), wr.remoteAddr());
            final dev.rnicsim.dma.DmaPort remotePort = peer.device.port().through(peer.num);
            if (atomic)
            {
                dma = dmaEngine.openAtomic(device.port(), pd.pdNum(), DataPaths.segments(device, wr.sgList()).get(0),
                    remotePort, peerPd, peer.qpAccessBits, remoteAddr, wr.rkey(),
                    wr.opcode() == WrOpcode.ATOMIC_CMP_AND_SWP, wr.compareAdd(), wr.swap());
            }
            else if (p.inline() != null)
            {
                dma = dmaEngine.openInlineWrite(p.inline(), remotePort, peerPd, peer.qpAccessBits, remoteAddr,
                    wr.rkey());
            }
            else
            {
                dma = dmaEngine.openMessage(wr.opcode() == WrOpcode.RDMA_READ, device.port(), pd.pdNum(),
                    DataPaths.segments(device, wr.sgList()), remotePort, peerPd, peer.qpAccessBits, remoteAddr,
                        wr.rkey());
            }
        }
        if (dma.failure() != null && dma.failure().requester() == DmaStatus.RNR_NAK)
        {
            // An atomic's request met a page fault at the responder: RNR NAK, the request is sent again.
            qp.requester.rnrNaks = OdpRnr.waitOut(qp, peer, wr, dma.failure(), qp.requester.rnrNaks);
            return qp.requester.rnrNaks < 0 ? WqeOutcome.ERROR : WqeOutcome.MORE;
        }
        if (dma.failure() != null)
        {
            return finish(wr, peer, dma.failure(), Requester.needsRecv(wr), missesBefore, null);
        }
        final long length = atomic ? Long.BYTES : p.inline() != null ? p.inline().length : wr.totalBytes();
        qp.requester.inflight = new InflightMessage(qp, wr, dma, peer.device, length,
            PacketMtu.ofMessage(qp, peer, wr.opcode()),
            missesBefore, Requester.needsRecv(wr), device.fabric().clock().nowNs());
        qp.requester.inflight.relaxed(DataPaths.relaxedPlacement(qp, wr, peer));
        if (!send)
        {
            // The responder took a reference on the MR of the rkey it checked (rxe check_rkey); a SEND's receive
            // buffers are looked up per packet (rxe copy_data), so a SEND holds no key.
            qp.engine().hold(qp.requester.inflight);
        }
        // A READ's request or an atomic's request is one packet; the responses come back in later steps.
        return atomic || wr.opcode() == WrOpcode.RDMA_READ ? WqeOutcome.OUTSTANDING : continueMessage(p,
            qp.requester.inflight);
    }

    /**
     * The next packet of the message in flight: placed by the responder under the check of the first packet. A key
     * retired since then (mlx5: the mkey is destroyed) fails the packet with a remote access error; the packets
     * before it stay placed. A responder that is gone answers nothing: the requester's retries run out. Each packet
     * advances the simulated clock by its share of the message's price ({@link CostModel#packetNs}).
     */
    WqeOutcome continueMessage(final SendWqe p, final InflightMessage m)
    {
        final SendWr wr = p.wr();
        final SimQp peer = qp.requester.peer();
        if (peer == null || peer.closed || (peer.state != QpState.RTR && peer.state != QpState.RTS)
            || !peer.requester.connectedTo(qp))
        {
            return noAck(p, m, peer);
        }
        if (m.pendingRnrNaks() > 0)
        {
            return rnrNakPacket(p, peer, m);
        }
        // The packet moves under the keys' check of the first packet; the message keeps its place in both lists.
        final long packetBytes = m.packetBytes();
        final long startNs = device.fabric().clock().nowNs();
        final DmaResult r = device.dmaEngine().movePacket(m.dma(), packetBytes);
        if (r == null)
        {
            final double linkGbps = Math.min(device.profile().linkGbps(), peer.device.profile().linkGbps());
            long ns = m.packetNs(device.fabric().costModel(), packetBytes, linkGbps);
            if (m.relaxed())
            {
                ns -= device.fabric().costModel().relaxedOrderingPacketSavingNs(m.offset(), packetBytes, linkGbps);
            }
            device.fabric().clock().advance(ns);
            m.advanced(ns);
        }
        else if (r.requester() == DmaStatus.RNR_NAK)
        {
            // The responder met a page fault on an ODP MR: RNR NAK; the requester sends the packet again after
            // min_rnr_timer, NAKed again (one engine step each) until the fault is resolved; the packets before it
            // stay placed.
            m.rnrNak(r, OdpRnr.naksFor(peer));
            return rnrNakPacket(p, peer, m);
        }
        if (device.fabric().tracing())
        {
            tracePacket(wr, peer, m, startNs, packetBytes, r);
        }
        if (r != null)
        {
            // A later packet is NAKed: what the packets before it placed stays placed.
            qp.requester.dropMessage(m);
            return finish(wr, peer, r, m.needsRecv(), m.missesBefore(), m);
        }
        final boolean last = m.lastPacket();
        m.advance();
        if (!last)
        {
            return WqeOutcome.MORE;
        }
        qp.requester.dropMessage(m);
        return finish(wr, peer, DmaResult.success(m.lengthBytes(), m.dma().atomicOriginal()), m.needsRecv(),
            m.missesBefore(), m);
    }

    /**
     * A later packet of a message whose responder is gone (destroyed, its process exited, moved out of RTR/RTS or
     * connected elsewhere since the first packet): no ACK comes, and the requester retries {@code retry_cnt} times
     * and gives up as it does for a request sent to a peer that was gone before it ({@link AckTimeout}, IBA vol. 1
     * 9.7.6.1.3): {@code retry_cnt + 1} local ACK timeouts on the clock and the same diagnosis; the packets placed
     * before stay placed.
     */
    private WqeOutcome noAck(final SendWqe p, final InflightMessage m, final SimQp peer)
    {
        qp.requester.dropMessage(m);
        return qp.requester.noAcknowledgement(p, peer);
    }

    /** The trace's span of one packet, placed or failed ({@code r}). */
    private void tracePacket(final SendWr wr, final SimQp peer, final InflightMessage m, final long startNs,
        final long packetBytes, final DmaResult r)
    {
        device.fabric().overlap(peer.device, wr.opcode() == WrOpcode.RDMA_READ ? "read_response"
            : wr.opcode().isAtomic() ? "atomic_response" : "packet", "packet", startNs,
            device.fabric().clock().nowNs() - startNs, java.util.Map.of("qp_num", qp.num, "wr_id", wr.wrId(),
                "packet", m.packetsPlaced() + 1, "of", m.packetCount(), "bytes", packetBytes, "status",
                r == null ? "placed" : status(r.requester()).cName()));
    }

    /**
     * One RNR NAK of a packet whose page fault the responder is still resolving: the requester waits
     * {@code min_rnr_timer} and sends the packet again ({@link OdpRnr}); after {@code rnr_retry} of them the work
     * request ends with IBV_WC_RNR_RETRY_EXC_ERR.
     */
    private WqeOutcome rnrNakPacket(final SendWqe p, final SimQp peer, final InflightMessage m)
    {
        final int naks = OdpRnr.waitOut(qp, peer, p.wr(), m.rnrNak(), m.rnrNaks(), 1);
        if (naks < 0)
        {
            qp.requester.dropMessage(m);
            return WqeOutcome.ERROR;
        }
        m.rnrNaks(naks);
        m.rnrNakTaken();
        return WqeOutcome.MORE;
    }

    /**
     * The end of a message, in one step or at its last (or failed) packet ({@code packets}, whose packets advanced
     * the clock already): prices it, completes it.
     */
    WqeOutcome finish(final SendWr wr, final SimQp peer, final DmaResult r, final boolean needsRecv,
        final long missesBefore, final InflightMessage packets)
    {
        if (r.ok() || r.responderError())
        {
            AsyncEventQueue.messageArrived(peer);
        }
        if (qp.type == QpType.UC && r.responderError())
        {
            return ucDropped(wr, peer, r);
        }
        final WcDiagnosis why = r.ok() ? null : Diagnoser.dma(qp, wr, peer, needsRecv ? peer.recvQueue.peekFirst()
            : null, r, requesterStatus(wr, r));
        final long misses = device.tables().cache().misses() + peer.device.tables().cache().misses() - missesBefore;
        // The span's arguments are built only for a trace listener (the clock advances either way).
        final boolean tracing = device.fabric().tracing();
        final java.util.Map<String, Object> args = tracing ? new java.util.LinkedHashMap<>() : null;
        if (tracing)
        {
            args.put("qp_num", qp.num);
            args.put("bytes", r.byteLen());
            args.put("cache_misses", misses);
            args.put("status", r.ok() ? "IBV_WC_SUCCESS" : status(r.requester()).cName());
            if (why != null)
            {
                args.put("diagnosis", why.summary());
            }
        }
        final long startNs = packets == null ? device.fabric().clock().nowNs() : packets.startNs();
        final double linkGbps = Math.min(device.profile().linkGbps(), peer.device.profile().linkGbps());
        long opNs = device.fabric().costModel().operationNs(r.byteLen(), linkGbps, misses);
        // Data read from or placed into GPU memory crosses the GPUs' peer-to-peer paths to their NICs; the slowest path
        // sets the pace of the whole transfer.
        if (r.ok())
        {
            GpuTopology slowest = null;
            for (final SimGpu gpu : DataPaths.gpusTouched(qp, wr, peer, needsRecv))
            {
                if (tracing)
                {
                    args.put("p2p_" + gpu.name(), gpu.topology().name());
                }
                if (slowest == null || gpu.topology().crossesSockets())
                {
                    slowest = gpu.topology();
                }
            }
            if (slowest != null)
            {
                opNs += device.fabric().costModel().peerToPeerNs(r.byteLen(), linkGbps, slowest);
            }
        }
        if (r.ok() && DataPaths.relaxedPlacement(qp, wr, peer))
        {
            opNs -= device.fabric().costModel().relaxedOrderingSavingNs(r.byteLen(), linkGbps);
            if (tracing)
            {
                args.put("relaxed_ordering", true);
            }
        }
        if (packets == null)
        {
            device.fabric().span(device, wr.opcode().name(), "dma", opNs, tracing ? args : java.util.Map.of());
        }
        else
        {
            if (tracing)
            {
                args.put("packets", packets.packetCount());
            }
            device.fabric().spanSince(device, wr.opcode().name(), "dma", startNs, opNs, packets.advancedNs(),
                tracing ? args : java.util.Map.of());
        }
        if (peer.device != device && tracing)
        {
            device.fabric().overlap(peer.device, wr.opcode().name() + " (responder)", "dma", startNs, opNs,
                java.util.Map.of("qp_num", peer.num, "bytes", r.byteLen()));
        }
        if (r.ok() && wr.opcode() == WrOpcode.SEND_WITH_INV && !LocalOps.invalidate(peer, wr.invalidateRkey()))
        {
            // rxe_resp.c: the data is placed, the invalidation fails (RESPST_ERR_INVALIDATE_RKEY): the receive
            // completes with REM_INV_REQ_ERR, the responder QP goes to error, the requester gets a NAK.
            final RecvWr recv = peer.recvQueue.removeFirst();
            final WcDiagnosis invalid = Diagnoser.local(qp, wr, WcStatus.REM_INV_REQ_ERR, "the responder could "
                + "not invalidate rkey 0x" + Integer.toHexString(wr.invalidateRkey()) + ": " + peer.lastLocalFailure());
            peer.completions.completeRecv(recv, WcStatus.REM_INV_REQ_ERR, WcOpcode.RECV, 0, false, 0, false, 0,
                invalid);
            device.count(SimCounter.REQ_REMOTE_INVALID_REQUEST, 1);
            peer.completions.toError();
            qp.completions.completeSend(wr, WcStatus.REM_INV_REQ_ERR, 0, invalid);
            return WqeOutcome.ERROR;
        }
        RecvWr consumed = null;
        if (needsRecv && (r.ok() || r.responderError()))
        {
            final RecvWr recv = peer.recvQueue.removeFirst();
            consumed = recv;
            final boolean imm = wr.opcode() == WrOpcode.SEND_WITH_IMM || wr.opcode() == WrOpcode.RDMA_WRITE_WITH_IMM;
            final boolean inv = wr.opcode() == WrOpcode.SEND_WITH_INV && r.ok();
            final WcOpcode opcode = wr.opcode() == WrOpcode.RDMA_WRITE_WITH_IMM ? WcOpcode.RECV_RDMA_WITH_IMM
                : WcOpcode.RECV;
            peer.completions.completeRecv(recv, r.ok() ? WcStatus.SUCCESS : peer.responder.responderStatus(r), opcode,
                r.byteLen(), imm,
                wr.immData(), inv, inv ? wr.invalidateRkey() : 0, why);
        }
        account(wr, r, peer);
        acknowledge(wr, r, peer);
        final RecvWr received = consumed;
        if (r.ok())
        {
            device.observe(o -> o.transferred(qp, wr, peer, received));
        }
        else
        {
            device.observe(o -> o.failed(qp, wr, r));
        }
        if (r.responderError())
        {
            if (peer.state != QpState.ERR && why != null)
            {
                final int qpNum = qp.num;
                peer.completions.errorCause = new LazyText(() -> "it answered " + status(r.requester()).cName()
                    + " to QP 0x" + Integer.toHexString(qpNum) + ": " + why.summary());
            }
            AsyncEventQueue.responderRefused(peer, wr, r, received != null, why);
            peer.completions.toError();
        }
        if (r.requester() != DmaStatus.SUCCESS)
        {
            qp.completions.completeSend(wr, requesterStatus(wr, r), 0, why);
            return WqeOutcome.ERROR;
        }
        if (qp.sqSigAll || wr.flags().contains(SendFlag.SIGNALED))
        {
            qp.completions.completeSend(wr, WcStatus.SUCCESS, r.byteLen());
        }
        return WqeOutcome.DONE;
    }

    /**
     * UC has no acknowledgements: a message the responder refuses (a bad rkey, a length or receive-buffer error) is
     * dropped there without a completion and without moving its QP to ERR, and the requester, which never hears of
     * it, completes the work request with success (IBA 9.8.3, 9.9.3.x for UC; rxe {@code rxe_receiver}: UC without an
     * SRQ drops the packet in its error states).
     */
    WqeOutcome ucDropped(final SendWr wr, final SimQp peer, final DmaResult r)
    {
        device.fabric().span(device, wr.opcode().name(), "dma", device.fabric().costModel().opBaseLatencyNs(),
            java.util.Map.of("qp_num", qp.num, "dropped", "QP 0x" + Integer.toHexString(peer.num) + " refused it ("
                + status(r.responder() == null ? r.requester() : r.responder()).cName() + ": " + r.detail()
                + "); UC sends no NAK"));
        if (qp.sqSigAll || wr.flags().contains(SendFlag.SIGNALED))
        {
            qp.completions.completeSend(wr, WcStatus.SUCCESS, 0);
        }
        return WqeOutcome.DONE;
    }

    /**
     * The ACK and NAK packets of an RC message's end: the responder acknowledges each packet that asked for it — the
     * last of the message and every 66th before it (rxe_req.c {@code init_req_packet}: {@code noack_pkts} above
     * RXE_MAX_PKT_PER_ACK, 64) — a FLUSH or ATOMIC_WRITE with an RDMA READ response of no payload; a NAK is one
     * packet. A READ's responses and an atomic's ATOMIC ACKNOWLEDGE carry data and count as data packets.
     */
    private void acknowledge(final SendWr wr, final DmaResult r, final SimQp peer)
    {
        if (qp.type != QpType.RC)
        {
            return;
        }
        final long acks;
        if (r.responderError())
        {
            acks = 1;
        }
        else if (!r.ok())
        {
            acks = 0;
        }
        else
        {
            acks = switch (wr.opcode())
            {
                case RDMA_WRITE, RDMA_WRITE_WITH_IMM, SEND, SEND_WITH_IMM, SEND_WITH_INV ->
                    (InflightMessage.packets(r.byteLen(), PacketMtu.bytes(qp)) - 1) / 66 + 1;
                case FLUSH, ATOMIC_WRITE -> 1;
                default -> 0;
            };
        }
        if (acks > 0)
        {
            peer.device.count(SimCounter.ACKS_SENT, acks);
            device.count(SimCounter.ACKS_RECEIVED, acks);
        }
    }

    /**
     * The packets of requests a responder refused with an RNR NAK, and the NAKs: each refused request is a packet
     * the requester sent and the responder received (its payload on the wire: the first packet of the message), and
     * each RNR NAK an acknowledgement packet the other way. rxe counts both in {@code sent_pkts} / {@code rcvd_pkts}
     * ({@code rxe_xmit_packet} and {@code rxe_rcv} count every packet; the RNR NAK is sent by {@code send_ack} in
     * rxe_resp.c, state RESPST_ERR_RNR); the IBA port counters PortXmitPkts / PortRcvPkts and PortXmitData /
     * PortRcvData (IBA 16.1.3.5, in 4-byte words) count the request like any packet on the link.
     *
     * @param requesterQp the QP that sent the refused requests (its device counts, its path MTU sizes them).
     * @param responder the device that refused them.
     * @param requests  refused requests, one RNR NAK each.
     * @param wr        the work request whose first packet was refused.
     */
    static void rnrRefused(final SimQp requesterQp, final SimDevice responder, final long requests,
        final SendWr wr)
    {
        if (requests <= 0)
        {
            return;
        }
        final SimDevice requester = requesterQp.device;
        final long payload = Math.min(wr.totalBytes(), PacketMtu.bytes(requesterQp));
        requester.count(SimCounter.PORT_XMIT_PACKETS, requests);
        requester.count(SimCounter.PORT_XMIT_DATA, requests * payload / 4);
        responder.count(SimCounter.PORT_RCV_PACKETS, requests);
        responder.count(SimCounter.PORT_RCV_DATA, requests * payload / 4);
        responder.count(SimCounter.ACKS_SENT, requests);
        requester.count(SimCounter.ACKS_RECEIVED, requests);
    }

    void account(final SendWr wr, final DmaResult r, final SimQp peer)
    {
        final SimDevice pdev = peer.device;
        switch (r.requester())
        {
            case REM_ACCESS_ERR -> device.count(SimCounter.REQ_REMOTE_ACCESS_ERRORS, 1);
            case REM_INV_REQ_ERR -> device.count(SimCounter.REQ_REMOTE_INVALID_REQUEST, 1);
            default ->
            {
            }
        }
        if (r.responderError())
        {
            if (r.responder() == DmaStatus.REM_ACCESS_ERR)
            {
                pdev.count(SimCounter.RESP_REMOTE_ACCESS_ERRORS, 1);
            }
            else if (r.responder() == DmaStatus.LOC_LEN_ERR)
            {
                pdev.count(SimCounter.RESP_LOCAL_LENGTH_ERROR, 1);
            }
        }
        if (!r.ok())
        {
            return;
        }
        final long bytes = r.byteLen();
        final boolean fromPeer = wr.opcode() == WrOpcode.RDMA_READ || wr.opcode().isAtomic();
        final SimDevice sender = fromPeer ? pdev : device;
        final SimDevice receiver = fromPeer ? device : pdev;
        final long packets = InflightMessage.packets(bytes, PacketMtu.ofMessage(qp, peer, wr.opcode()));
        sender.count(SimCounter.PORT_XMIT_DATA, bytes / 4);
        sender.count(SimCounter.PORT_XMIT_PACKETS, packets);
        receiver.count(SimCounter.PORT_RCV_DATA, bytes / 4);
        receiver.count(SimCounter.PORT_RCV_PACKETS, packets);
        switch (wr.opcode())
        {
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> pdev.count(SimCounter.RX_WRITE_REQUESTS, 1);
            case RDMA_READ -> pdev.count(SimCounter.RX_READ_REQUESTS, 1);
            case ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD -> pdev.count(SimCounter.RX_ATOMIC_REQUESTS, 1);
            default ->
            {
            }
        }
    }

    /** The work-completion status of each DMA status of the same name, by ordinal (null where there is none). */
    private static final WcStatus[] STATUS_OF = statusOf();

    private static WcStatus[] statusOf()
    {
        final WcStatus[] out = new WcStatus[DmaStatus.values().length];
        for (final WcStatus w : WcStatus.values())
        {
            for (final DmaStatus d : DmaStatus.values())
            {
                if (d.name().equals(w.name()))
                {
                    out[d.ordinal()] = w;
                }
            }
        }
        return out;
    }

    static WcStatus status(final DmaStatus s)
    {
        final WcStatus w = STATUS_OF[s.ordinal()];
        return w != null ? w : WcStatus.valueOf(s.name());
    }

    /** The requester's status, with the provider's choice for a gather through an unknown or stale lkey and for a SEND
     * longer than the receive buffers ({@link SendOverflow}). */
    WcStatus requesterStatus(final SendWr wr, final DmaResult r)
    {
        if (SendOverflow.is(r))
        {
            return SendOverflow.requesterStatus(device.profile());
        }
        final boolean gather = wr.opcode() == WrOpcode.SEND || wr.opcode() == WrOpcode.SEND_WITH_IMM
            || wr.opcode() == WrOpcode.SEND_WITH_INV
            || wr.opcode() == WrOpcode.RDMA_WRITE || wr.opcode() == WrOpcode.RDMA_WRITE_WITH_IMM;
        if (r.requester() == DmaStatus.LOC_PROT_ERR && gather
            && PlacementOps.gatherErrorIsQpOpErr(device.profile(), r.keyCheck()))
        {
            return WcStatus.LOC_QP_OP_ERR;
        }
        return status(r.requester());
    }

    /** The responder's receive status, with the provider's choice for a bad receive buffer and for a SEND longer than
     * the receive buffers ({@link SendOverflow}). */
    WcStatus responderStatus(final DmaResult r)
    {
        if (SendOverflow.is(r))
        {
            return SendOverflow.receiveStatus(device.profile());
        }
        if (r.responder() == DmaStatus.LOC_PROT_ERR
            && device.profile().follows(ProviderRule.LOCAL_KEY_ERRORS_AS_QP_OP_ERR))
        {
            return WcStatus.LOC_QP_OP_ERR;
        }
        return status(r.responder());
    }
}
