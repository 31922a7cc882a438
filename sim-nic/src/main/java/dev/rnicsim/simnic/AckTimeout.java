package dev.rnicsim.simnic;

import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcDiagnosis;
import dev.rnicsim.verbs.WcStatus;

/**
 * The requester's local ACK timeout when no acknowledgement comes (the peer QP is gone, in the error state, not
 * connected to this one, or there is none at the address). IBA vol. 1 9.7.6.1.3: the requester sends, waits
 * {@code 4.096 µs × 2^timeout}, sends again, and after {@code retry_cnt} retries gives up with
 * IBV_WC_RETRY_EXC_ERR: {@code retry_cnt + 1} timeouts in all (rxe {@code rxe_completer}: each expiry of
 * {@code retrans_timer} takes one of {@code comp.retry_cnt} until none is left). This class counts the waits; the
 * {@link CostModel} prices them ({@link CostModel#localAckTimeoutNs}, {@link CostModel#noAckNs}).
 *
 * <p>A {@code timeout} of 0 is infinite (the IBA's Local ACK Timeout QP attribute: 0 disables the transport timer):
 * rxe sets no
 * retransmit timer at all ({@code rxe_qp_from_attr}: {@code qp_timeout_jiffies = 0}, and {@code rxe_requester} arms
 * {@code retrans_timer} only when it is not 0), so the request is never sent again and never completes; the work
 * request stays at the head of the send queue, holding the ones behind it, until the QP leaves RTS for the error
 * state (flushed, IBV_WC_WR_FLUSH_ERR) or is destroyed. The device answer is modelled the same (the IBA's; mlx5's
 * firmware is not public). Where the drivers differ is the timer's grain ({@link ProviderRule#RETRANSMIT_TIMER_IN_JIFFIES}).
 *
 * <p>Not thread safe: one per requester, driven by its engine.
 */
final class AckTimeout
{
    /** The work request that waits for an acknowledgement for ever (timeout 0), or null. */
    private SendWqe waitingForever;

    /**
     * @param head the head WQE about to run.
     * @return true when it waits for ever for an acknowledgement that will not come: it stays blocked.
     */
    boolean waitsForever(final SendWqe head)
    {
        return head == waitingForever;
    }

    /**
     * The head WQE went out and no acknowledgement will come.
     *
     * @param qp   the requester QP.
     * @param head the WQE.
     * @return the simulated ns until the requester gives up, or -1 when it never does (timeout 0): the WQE is then
     *         held for ever.
     */
    long noAck(final SimQp qp, final SendWqe head)
    {
        final int timeout = qp.attrs.timeout;
        if (timeout == 0)
        {
            waitingForever = head;
            return -1;
        }
        final long grainNs = qp.device.profile().follows(ProviderRule.RETRANSMIT_TIMER_IN_JIFFIES)
            ? CostModel.DEFAULT_JIFFY_NS : 0;
        final long waits = qp.retryCount + 1L;
        return qp.device.fabric().costModel().noAckNs(waits, CostModel.localAckTimeoutNs(timeout, grainNs));
    }

    /**
     * Runs the head WQE to a peer that never acknowledges (none at the address, destroyed, not in RTR or RTS, or
     * connected to another QP): the requester retries {@code retry_cnt} times, then completes it with
     * IBV_WC_RETRY_EXC_ERR naming why; with timeout 0 it waits for ever.
     *
     * @param qp   the requester QP.
     * @param p    the head WQE.
     * @param peer the QP at the remote address, or null when there is none.
     * @return BLOCKED when it waits for ever, else ERROR.
     */
    WqeOutcome noAcknowledgement(final SimQp qp, final SendWqe p, final SimQp peer)
    {
        return noAcknowledgement(qp, p, peer, null);
    }

    /**
     * As {@link #noAcknowledgement(SimQp, SendWqe, SimQp)} for a request the link lost ({@link RoceWire}).
     *
     * @param qp   the requester QP.
     * @param p    the head WQE.
     * @param lost the diagnosis naming why nothing arrived.
     * @return BLOCKED when it waits for ever, else ERROR.
     */
    WqeOutcome noAcknowledgement(final SimQp qp, final SendWqe p, final WcDiagnosis lost)
    {
        return noAcknowledgement(qp, p, null, lost);
    }

    /**
     * The destroyed QP a requester's address names: the one it talked to, or one the remote device destroyed before
     * this requester ever sent to it (a peer that tore down right after connecting: the same teardown race as
     * openucx/ucx issue 844, seen on an E810 in rdma-core pull request 1106's status), or null.
     */
    private static SimQp destroyedPeer(final SimQp qp)
    {
        final SimQp talkedTo = qp.requester.destroyedPeer();
        if (talkedTo != null || qp.remote == null)
        {
            return talkedTo;
        }
        final SimDevice d = qp.device.fabric().deviceByGid(qp.remote.gid());
        return d == null ? null : d.destroyedQp(qp.remote.qpNum());
    }

    private WqeOutcome noAcknowledgement(final SimQp qp, final SendWqe p, final SimQp peer, final WcDiagnosis given)
    {
        final SendWr wr = p.wr();
        if (qp.type == QpType.UC)
        {
            return unacknowledged(qp, wr, peer, given);
        }
        final long noAckNs = noAck(qp, p);
        if (noAckNs < 0)
        {
            qp.device.fabric().span(qp.device, "ack_wait", "dma", 0, java.util.Map.of("qp_num", qp.num, "wr_id",
                wr.wrId(), "timeout", 0));
            return WqeOutcome.BLOCKED;
        }
        HwCounters.noAck(qp, qp.retryCount, wr);
        qp.device.count(SimCounter.TRANSPORT_RETRIES, qp.retryCount);
        final SimQp destroyed = peer != null && peer.closed ? peer : peer == null ? destroyedPeer(qp) : null;
        final WcDiagnosis lost = given != null ? given : destroyed != null
            ? Diagnoser.peerDestroyed(qp, wr, qp.retryCount, destroyed) : peer == null && qp.remote != null
            && !qp.device.fabric().anyDeviceHasQp(qp.remote.qpNum())
            ? Diagnoser.noQpOnFabric(qp, wr, qp.retryCount, qp.remote.qpNum())
            : Diagnoser.noAck(qp, wr, qp.retryCount, peer == null
            ? "no QP " + (qp.remote == null ? "" : "0x" + Integer.toHexString(qp.remote.qpNum()) + " ")
                + "at the remote "
            + "address" : peer.closed ? "the peer QP is destroyed"
            : peer.state != QpState.RTR && peer.state != QpState.RTS
            ? "the peer QP is in " + peer.state + ", not RTR or RTS" : "the peer QP is connected to another QP");
        qp.device.fabric().span(qp.device, wr.opcode().name(), "dma", noAckNs,
            java.util.Map.of("qp_num", qp.num, "status", WcStatus.RETRY_EXC_ERR.cName(), "diagnosis",
                lost.summary()));
        qp.completions.completeSend(wr, WcStatus.RETRY_EXC_ERR, 0, lost);
        return WqeOutcome.ERROR;
    }

    /**
     * A UC requester whose packets reach no responder that takes them: UC is unacknowledged (IBA vol. 1 9.7.7 and
     * table 9-1: no ACKs, no retries, no local ACK timer), so the work request is done once its packets are sent and
     * completes successfully when signaled; the bytes never land (rxe {@code rxe_requester}: a UC WQE completes after
     * its last packet, {@code rxe_completer} waits for no ACK). Nothing counts a retry.
     */
    private static WqeOutcome unacknowledged(final SimQp qp, final SendWr wr, final SimQp peer,
        final WcDiagnosis given)
    {
        final String why = given != null ? given.summary() : peer == null ? "no QP at the remote address"
            : peer.closed ? "the peer QP is destroyed" : peer.state != QpState.RTR && peer.state != QpState.RTS
            ? "the peer QP is in " + peer.state + ", not RTR or RTS" : "the peer QP is connected to another QP";
        qp.device.fabric().span(qp.device, wr.opcode().name(), "dma", qp.device.fabric().costModel()
            .opBaseLatencyNs(), java.util.Map.of("qp_num", qp.num, "dropped", why
            + "; UC expects no acknowledgement, so the work request completes and the data is lost"));
        if (qp.sqSigAll || wr.flags().contains(dev.rnicsim.verbs.SendFlag.SIGNALED))
        {
            qp.completions.completeSend(wr, WcStatus.SUCCESS, 0);
        }
        return WqeOutcome.DONE;
    }
}
