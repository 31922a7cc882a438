package dev.rnicsim.simnic;

import dev.rnicsim.dma.DmaResult;
import dev.rnicsim.dma.DmaStatus;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WrOpcode;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The requester engine of one QP: the send queue's WQEs, fetched and executed one packet a step in posting order;
 * fences and {@code max_qp_init_rd_atom} (IBA 9.4.4) hold later WQEs back; RNR NAKs (IBA 9.7) and transport retries
 * counted; READs and atomics whose responses are still coming back tracked until they complete.
 *
 * <p>Not thread safe: driven by the fabric's {@link NicEngine}.
 */
final class Requester
{
    private final SimQp qp;
    private final SimDevice device;
    private final SimPd pd;

    Requester(final SimQp qp)
    {
        this.qp = qp;
        this.device = qp.device;
        this.pd = qp.pd;
        this.peers = new PeerLookup(qp);
    }

    /** A READ or atomic whose request went out and whose responses are still coming back. */
    record Outstanding(SendWqe p, InflightMessage m)
    {
    }

    final ArrayDeque<SendWqe> sendQueue = new ArrayDeque<>();

    /** READs and atomics whose responses are coming back, oldest first (IBA 9.4.4: max_rd_atomic outstanding). */
    final ArrayDeque<Outstanding> responses = new ArrayDeque<>();

    /** True when the next turn of a QP with responses and a WQE that may start moves a response packet. */
    boolean responseTurn;

    /** RNR NAKs the head WQE took so far. */
    int rnrNaks;
    /** With rnr_retry 7: when the head WQE took its first RNR NAK (-1: it took none), and the responder's RNR timer. */
    private final RnrWait rnrWait = new RnrWait();
    /** The local ACK timeout of a request no acknowledgement answers. */
    private final AckTimeout ackTimeout = new AckTimeout();

    boolean progressing;
    SendWqe executing;

    /**
     * @param wr a work request of this QP.
     * @return the post site ({@link SendWqe#postSite()}) of the WQE executing now when it is wr's, else null.
     */
    String postSite(final SendWr wr)
    {
        final SendWqe p = executing;
        return p != null && p.wr() == wr ? p.postSite() : null;
    }

    /** True while this QP is in the engine's turn order. */
    boolean scheduled;

    /** The message of the head WQE while its packets move, or null. */
    InflightMessage inflight;

    /** Who answers at the QP's remote address, looked up once per address. */
    private final PeerLookup peers;

    boolean scheduled()
    {
        return scheduled;
    }

    void scheduled(final boolean inTurnOrder)
    {
        this.scheduled = inTurnOrder;
    }

    /**
     * @return the oldest message in flight: a READ or atomic whose responses are coming back, else the message of
     * the head WQE while its packets move; null when none.
     */
    InflightMessage inflight()
    {
        return responses.isEmpty() ? inflight : responses.peekFirst().m();
    }

    /**
     * @return every message in flight, oldest first: READs and atomics waiting for responses, then the head's.
     */
    List<InflightMessage> inflightMessages()
    {
        final List<InflightMessage> out = new ArrayList<>(responses.size() + 1);
        for (final Outstanding o : responses)
        {
            out.add(o.m());
        }
        if (inflight != null)
        {
            out.add(inflight);
        }
        return out;
    }

    /**
     * @return the WQEs on the send queue, the oldest first: READs and atomics waiting for their responses, then the
     * one executing (or waiting for a receive), then those not started.
     */
    List<SendWr> sendQueueWrs()
    {
        final List<SendWr> out = new ArrayList<>(qp.sendsWaiting());
        for (final Outstanding o : responses)
        {
            out.add(o.p().wr());
        }
        for (final SendWqe p : sendQueue)
        {
            out.add(p.wr());
        }
        return out;
    }

    boolean hasSendWork()
    {
        return !qp.closed && (!sendQueue.isEmpty() || !responses.isEmpty());
    }

    /**
     * One step of the engine on this QP: one packet moves. The head WQE moves its next packet (a local operation, a
     * one-packet message, an RNR NAK or a flush counts one), or the oldest READ or atomic waiting for responses
     * gets its next response packet; when both can move they take turns. A WQE starts only when the one before it
     * sent all its request packets; a READ or atomic, once its request went out, lets later WQEs start while its
     * responses come back, unless a later WQE carries IBV_SEND_FENCE (it waits until every earlier READ and atomic
     * completed: IBA vol. 1 ch. 10, fence indicator; rxe_req.c {@code wait_fence}) or the QP has
     * {@code max_qp_init_rd_atom} of them outstanding (IBA 9.4.4). Completions are reported in posting order
     * ({@link CompletionOrder}).
     *
     * @return false when the QP can do nothing now (no WQE, waiting for a receive, or re-entered).
     */
    boolean step()
    {
        if (progressing || qp.closed || (sendQueue.isEmpty() && responses.isEmpty()))
        {
            return false;
        }
        progressing = true;
        try
        {
            if (qp.state == QpState.ERR)
            {
                dropInflight();
                flushSends();
                return true;
            }
            if (qp.state == QpState.SQD && inflight == null)
            {
                return false;
            }
            final SendWqe head = sendQueue.peekFirst();
            if (!responses.isEmpty() && (head == null || responseTurn || !mayStart(head)))
            {
                responseTurn = false;
                return respond();
            }
            responseTurn = true;
            final WqeOutcome outcome;
            executing = head;
            qp.completions.currentSeq = head.seq();
            try
            {
                outcome = inflight != null ? qp.responder.continueMessage(head, inflight) : execute(head);
            }
            catch (final RuntimeException e)
            {
                faulted(head);
                throw e;
            }
            finally
            {
                executing = null;
            }
            if (outcome != WqeOutcome.BLOCKED)
            {
                rnrWait.retryLanded(device, qp, head);
            }
            return outcome == WqeOutcome.MORE || ended(head, outcome);
        }
        finally
        {
            progressing = false;
        }
    }

    /** A fault of the simulator itself while the head WQE ran: the work request does not stay queued to run again. */
    private void faulted(final SendWqe head)
    {
        executing = null;
        dropInflight();
        sendQueue.remove(head);
        qp.completions.settle(head);
        qp.completions.toError();
    }

    /**
     * The head WQE's step ended otherwise than with more packets to move: blocked (a response may move instead),
     * sent whole (a READ or atomic then waits for its responses), completed or failed.
     *
     * @return whether a packet moved.
     */
    private boolean ended(final SendWqe head, final WqeOutcome outcome)
    {
        if (outcome == WqeOutcome.BLOCKED)
        {
            return !responses.isEmpty() && respond();
        }
        sendQueue.remove(head);
        rnrNaks = 0;
        if (outcome == WqeOutcome.OUTSTANDING)
        {
            responses.addLast(new Outstanding(head, inflight));
            inflight = null;
            return true;
        }
        qp.completions.settle(head);
        if (outcome == WqeOutcome.ERROR)
        {
            // The responder executed the older READs and atomics before it NAKed this WQE: their responses
            // come back first.
            while (!responses.isEmpty() && qp.state != QpState.ERR)
            {
                respond();
            }
            qp.completions.toError();
        }
        return true;
    }

    /** True when the head WQE may start (or go on) now: no fence or max_qp_init_rd_atom holds it back. */
    boolean mayStart(final SendWqe head)
    {
        if (inflight != null || responses.isEmpty())
        {
            return true;
        }
        if (head.wr().flags().contains(SendFlag.FENCE))
        {
            return false;
        }
        return !(head.wr().opcode() == WrOpcode.RDMA_READ || head.wr().opcode().isAtomic())
            || responses.size() < device.profile().attributes().maxQpInitRdAtom();
    }

    /** The next response packet of the oldest READ or atomic waiting for its responses. */
    boolean respond()
    {
        final Outstanding o = responses.peekFirst();
        executing = o.p();
        qp.completions.currentSeq = o.p().seq();
        final WqeOutcome outcome;
        try
        {
            outcome = qp.responder.continueMessage(o.p(), o.m());
        }
        finally
        {
            executing = null;
        }
        if (outcome == WqeOutcome.MORE)
        {
            return true;
        }
        responses.remove(o);
        qp.completions.settle(o.p());
        if (outcome == WqeOutcome.ERROR)
        {
            qp.completions.toError();
        }
        return true;
    }

    void dropInflight()
    {
        if (inflight != null)
        {
            qp.engine().release(inflight);
            inflight = null;
        }
    }

    /** Drops a message in flight: the head's, or an outstanding READ's or atomic's (which stays listed). */
    void dropMessage(final InflightMessage m)
    {
        if (m == inflight)
        {
            dropInflight();
        }
        else
        {
            qp.engine().release(m);
        }
    }

    /**
     * True when the message moves packet by packet: an RDMA WRITE (also with immediate or inline data), READ or SEND
     * (also with immediate, invalidate or inline data) of more than one path MTU, and every atomic (a request packet,
     * then a response packet: IBA 9.4.5) — whatever memory it touches: host memory, GPU memory pinned through a
     * peer-memory client, ODP and dma-buf MRs (their page faults are taken packet by packet, {@code PacketFaults} in
     * dma-engine) and relaxed-ordering MRs (each packet's writes are placed under the write ordering).
     */
    boolean packetized(final SendWqe p)
    {
        final SendWr wr = p.wr();
        final int mtuBytes = PacketMtu.ofMessage(qp, wr.opcode() == WrOpcode.RDMA_READ ? peer() : null, wr.opcode());
        final boolean multi = p.inline() != null ? p.inline().length > mtuBytes : wr.totalBytes() > mtuBytes;
        final boolean kind = switch (wr.opcode())
        {
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM, SEND, SEND_WITH_IMM, SEND_WITH_INV -> multi;
            case RDMA_READ -> multi && p.inline() == null;
            case ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD -> true;
            default -> false;
        };
        return kind;
    }

    static boolean needsRecv(final SendWr wr)
    {
        return wr.opcode() == WrOpcode.SEND || wr.opcode() == WrOpcode.SEND_WITH_IMM
            || wr.opcode() == WrOpcode.SEND_WITH_INV || wr.opcode() == WrOpcode.RDMA_WRITE_WITH_IMM;
    }

    /** @return the QP at the remote address, or null ({@link PeerLookup#peer}). */
    SimQp peer()
    {
        return peers.peer();
    }

    /** @return the destroyed QP the remote address names, or null ({@link PeerLookup#destroyedPeer}). */
    SimQp destroyedPeer()
    {
        return peers.destroyedPeer();
    }

    /** @return true when this QP's address vector names the requester ({@link PeerLookup#connectedTo}). */
    boolean connectedTo(final SimQp requester)
    {
        return peers.connectedTo(requester);
    }

    /**
     * The head WQE's request, or a later packet of it, got no acknowledgement: see {@link AckTimeout}.
     *
     * @param p    the head WQE.
     * @param peer the QP at the remote address, or null when there is none.
     * @return BLOCKED when it waits for ever (timeout 0), else ERROR.
     */
    WqeOutcome noAcknowledgement(final SendWqe p, final SimQp peer)
    {
        return ackTimeout.noAcknowledgement(qp, p, peer);
    }

    /** @return true when the head WQE waits for ever for an acknowledgement (timeout 0, see {@link AckTimeout}). */
    boolean waitsForAckForever()
    {
        return !sendQueue.isEmpty() && ackTimeout.waitsForever(sendQueue.peekFirst());
    }

    WqeOutcome execute(final SendWqe p)
    {
        if (ackTimeout.waitsForever(p))
        {
            return WqeOutcome.BLOCKED;
        }
        final SendWr wr = p.wr();
        qp.localFailure = null;
        final String typeRefused = QpTypeOpcodes.deviceRefusal(device.profile(), qp.type, wr.opcode());
        if (typeRefused != null)
        {
            qp.completions.completeSend(wr, WcStatus.LOC_QP_OP_ERR, 0, Diagnoser.local(qp, wr, WcStatus.LOC_QP_OP_ERR,
                typeRefused));
            return WqeOutcome.ERROR;
        }
        if (wr.opcode() == WrOpcode.BIND_MW || wr.opcode() == WrOpcode.LOCAL_INV || wr.opcode() == WrOpcode.REG_MR)
        {
            return LocalWqe.execute(qp, wr, postSite(wr));
        }
        if (wr.opcode() == WrOpcode.RDMA_READ && ReadSinkRule.refuses(qp, wr))
        {
            return WqeOutcome.ERROR;
        }
        if (p.ud() != null)
        {
            return qp.datagrams.executeDatagram(p);
        }
        final SimQp peer = peer();
        if (peer == null || peer.closed || (peer.state != QpState.RTR && peer.state != QpState.RTS)
            || !peer.requester.connectedTo(qp))
        {
            return ackTimeout.noAcknowledgement(qp, p, peer);
        }
        final String lostOnWire = RoceWire.dropped(qp, peer, wr);
        if (lostOnWire != null)
        {
            return ackTimeout.noAcknowledgement(qp, p, RoceWire.diagnosis(qp, wr, lostOnWire));
        }
        final String otherTransport = TransportCheck.mismatch(qp, peer);
        if (otherTransport != null)
        {
            return TransportCheck.dropped(qp, p, otherTransport, ackTimeout);
        }
        final String xrcRefused = XrcRules.route(qp, peer, wr);
        if (xrcRefused != null)
        {
            return XrcRules.invalidRequest(qp, wr, peer, xrcRefused);
        }
        final boolean needsRecv = wr.opcode() == WrOpcode.SEND || wr.opcode() == WrOpcode.SEND_WITH_IMM
            || wr.opcode() == WrOpcode.SEND_WITH_INV || wr.opcode() == WrOpcode.RDMA_WRITE_WITH_IMM;
        if (needsRecv)
        {
            TagArrivals.arrive(peer, p); // a tag-matching SRQ decides before a receive is taken
        }
        if (needsRecv && peer.recvQueue.isEmpty())
        {
            return receiverNotReady(wr, peer);
        }
        final long missesBefore = device.tables().cache().misses() + peer.device.tables().cache().misses();
        final DmaResult noResource = ResponderResources.check(peer.attrs.maxDestRdAtomic, wr);
        if (noResource != null)
        {
            return qp.responder.finish(wr, peer, noResource, false, missesBefore, null);
        }
        final DmaResult tooLong = PlacementOps.responderLength(device, pd.pdNum(), wr, PacketMtu.bytes(qp));
        if (tooLong != null)
        {
            return qp.responder.finish(wr, peer, tooLong, false, missesBefore, null);
        }
        if (packetized(p))
        {
            return qp.responder.startMessage(p, peer, missesBefore);
        }
        peer.device.takeRemoteFaultNs();
        DmaResult attempt = run(p, peer);
        int rnrWaits = 0;
        while (attempt.requester() == DmaStatus.RNR_NAK)
        {
            // The responder met a page fault on an ODP MR and answers RNR NAK until it is resolved.
            rnrWaits = OdpRnr.waitOut(qp, peer, wr, attempt, rnrWaits);
            if (rnrWaits < 0)
            {
                return WqeOutcome.ERROR;
            }
            attempt = run(p, peer);
        }
        return qp.responder.finish(wr, peer, attempt, needsRecv, missesBefore, null);
    }

    DmaResult run(final SendWqe p, final SimQp peer)
    {
        final SendWr wr = p.wr();
        final SimDevice pdev = peer.device;
        final int peerPd = peer.pd.pdNum();
        final long remoteAddr = pdev.keyAddress(wr.rkey(), wr.remoteAddr());
        return switch (wr.opcode())
        {
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> p.inline() != null
                ? device.dmaEngine().writeInline(p.inline(), pdev.port().through(peer.num), peerPd,
                    peer.qpAccessBits, remoteAddr, wr.rkey())
                : device.dmaEngine().write(device.port(), pd.pdNum(), DataPaths.segments(device, wr.sgList()),
                    pdev.port().through(peer.num), peerPd, peer.qpAccessBits, remoteAddr, wr.rkey());
            case SEND, SEND_WITH_IMM, SEND_WITH_INV -> p.inline() != null
                ? device.dmaEngine().sendInline(p.inline(), pdev.port(), peerPd,
                    DataPaths.segments(pdev, peer.recvQueue.peekFirst().sgList()))
                : device.dmaEngine().send(device.port(), pd.pdNum(), DataPaths.segments(device, wr.sgList()),
                    pdev.port(),
                    peerPd, DataPaths.segments(pdev, peer.recvQueue.peekFirst().sgList()));
            case RDMA_READ -> device.dmaEngine().read(device.port(), pd.pdNum(), DataPaths.segments(device,
                wr.sgList()),
                pdev.port().through(peer.num), peerPd, peer.qpAccessBits, remoteAddr, wr.rkey());
            case ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD -> device.dmaEngine().atomic(device.port(), pd.pdNum(),
                DataPaths.segments(device, wr.sgList()).get(0), pdev.port().through(peer.num), peerPd,
                    peer.qpAccessBits,
                remoteAddr, wr.rkey(),
                wr.opcode() == WrOpcode.ATOMIC_CMP_AND_SWP, wr.compareAdd(), wr.swap());
            case FLUSH, ATOMIC_WRITE -> PlacementOps.run(wr, pdev.port().through(peer.num), peerPd,
                peer.qpAccessBits, remoteAddr);
            default -> throw new IllegalStateException("opcode " + wr.opcode() + " refused at post time");
        };
    }

    /**
     * The peer has no receive posted: it answers RNR NAK (IBA vol. 1 ch. 9.7). Each NAK is one engine step: the
     * requester waits the peer's min_rnr_timer and sends again, up to {@code rnr_retry} times (a receive posted in
     * between lets the next try land); the NAK after that fails the WQE with IBV_WC_RNR_RETRY_EXC_ERR. With {@code
     * rnr_retry} 7 the requester retries without end: the WQE waits at the head until the peer posts a receive
     * (rxe_comp.c {@code rnr_nak} handling, {@code qp->comp.rnr_retry != 7}).
     */
    WqeOutcome receiverNotReady(final SendWr wr, final SimQp peer)
    {
        if (qp.rnrRetry == 7)
        {
            // rnr_retry 7 retries for ever: one more dropped request and one more RNR NAK retried per attempt
            peer.device.count(SimCounter.OUT_OF_BUFFER, 1);
            device.count(SimCounter.RNR_NAK_RETRY_ERR, 1);
            Responder.rnrRefused(qp, peer.device, 1, wr);
            rnrWait.naked(device, CostModel.rnrTimerNs(peer.minRnrTimer), executing);
            return WqeOutcome.BLOCKED;
        }
        peer.device.count(SimCounter.OUT_OF_BUFFER, 1);
        Responder.rnrRefused(qp, peer.device, 1, wr);
        final long timerNs = CostModel.rnrTimerNs(peer.minRnrTimer);
        if (rnrNaks < qp.rnrRetry)
        {
            rnrNaks++;
            // mlx5 counts each RNR NAK answered with a retry in rnr_nak_retry_err (HwCounters)
            device.count(SimCounter.RNR_NAK_RETRY_ERR, 1);
            device.count(SimCounter.RNR_RETRIES, 1);
            device.fabric().span(device, "rnr_wait", "dma", timerNs, java.util.Map.of("qp_num", qp.num, "wr_id",
                wr.wrId(), "rnr_retry", rnrNaks, "of", qp.rnrRetry));
            return WqeOutcome.MORE;
        }
        device.fabric().span(device, wr.opcode().name(), "dma", 0, java.util.Map.of("qp_num", qp.num, "status",
            WcStatus.RNR_RETRY_EXC_ERR.cName(), "rnr_retries", qp.rnrRetry));
        HwCounters.rnrExhausted(device, 0);
        qp.completions.completeSend(wr, WcStatus.RNR_RETRY_EXC_ERR, 0, Diagnoser.rnr(qp, wr, qp.rnrRetry,
            "no receive was posted "
            + "on QP 0x" + Integer.toHexString(peer.num)));
        return WqeOutcome.ERROR;
    }

    void flushSends()
    {
        final List<SendWqe> doomed = new ArrayList<>();
        for (final java.util.Iterator<Outstanding> it = responses.iterator(); it.hasNext();)
        {
            final Outstanding o = it.next();
            if (o.p() != executing)
            {
                qp.engine().release(o.m());
                it.remove();
                doomed.add(o.p());
            }
        }
        sendQueue.removeIf(p -> p != executing && doomed.add(p));
        final long was = qp.completions.currentSeq;
        try
        {
            for (final SendWqe p : doomed)
            {
                qp.completions.currentSeq = p.seq();
                qp.completions.completeSend(p.wr(), WcStatus.WR_FLUSH_ERR, 0);
            }
        }
        finally
        {
            qp.completions.currentSeq = was;
        }
    }
}
