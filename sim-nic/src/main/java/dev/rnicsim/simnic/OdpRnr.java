package dev.rnicsim.simnic;

import dev.rnicsim.dma.DmaResult;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;

/**
 * The RNR NAKs a responder answers while the driver resolves a page fault on one of its on-demand-paging MRs (mlx5
 * {@code mlx5_ib_mr_rdma_pfault_handler} / {@code mlx5_ib_mr_wqe_pfault_handler}: the request is answered with an RNR
 * NAK and the requester retries it after {@code min_rnr_timer}, IBA 9.7.5.2.8). The requester waits out as many
 * timers as the fault takes to resolve; each NAK uses one of its {@code rnr_retry} attempts (7: unlimited, IBA
 * 9.7.5.2.8 / rxe_comp.c {@code rnr_nak} handling, {@code qp->comp.rnr_retry != 7}). Used by a message in one step
 * and by a packet of a message that moves packet by packet (the packet is sent again; what earlier packets placed
 * stays placed).
 */
final class OdpRnr
{
    /** Most RNR NAKs one work request may take for responder page faults before the model calls it a livelock. */
    static final int MAX_RNR_ROUNDS = 1 << 20;

    private OdpRnr()
    {
    }

    /**
     * Waits out the RNR NAKs of the responder's page fault behind {@code nak}, or ends the work request with
     * IBV_WC_RNR_RETRY_EXC_ERR when they exceed what is left of {@code rnr_retry}.
     *
     * @param qp        the requester QP.
     * @param peer      the responder QP.
     * @param wr        the work request.
     * @param nak       the RNR NAK outcome.
     * @param naksSoFar RNR NAKs this work request took before.
     * @return the RNR NAKs taken so far, these included; -1 when rnr_retry ran out (the WQE completed in error).
     */
    static int waitOut(final SimQp qp, final SimQp peer, final SendWr wr, final DmaResult nak, final int naksSoFar)
    {
        return waitOut(qp, peer, wr, nak, naksSoFar, naksFor(peer));
    }

    /**
     * @param peer the responder QP whose device just met page faults.
     * @return the RNR NAKs the requester takes while the responder resolves them: the faults' time in
     * {@code min_rnr_timer} waits, at least one.
     */
    static long naksFor(final SimQp peer)
    {
        final long timerNs = CostModel.rnrTimerNs(peer.minRnrTimer);
        return Math.max(1, (peer.device.takeRemoteFaultNs() + timerNs - 1) / timerNs);
    }

    /**
     * {@link #waitOut(SimQp, SimQp, SendWr, DmaResult, int)} of a given number of RNR NAKs (a packet of a message
     * takes them one engine step each).
     *
     * @param naks RNR NAKs to wait out now.
     * @return the RNR NAKs taken so far, these included; -1 when rnr_retry ran out (the WQE completed in error).
     */
    static int waitOut(final SimQp qp, final SimQp peer, final SendWr wr, final DmaResult nak, final int naksSoFar,
        final long naks)
    {
        final SimDevice device = qp.device;
        final long timerNs = CostModel.rnrTimerNs(peer.minRnrTimer);
        if (qp.rnrRetry != 7 && naksSoFar + naks > qp.rnrRetry)
        {
            final int left = qp.rnrRetry - naksSoFar;
            peer.device.count(SimCounter.ODP_RNR_NAKS, left + 1L);
            Responder.rnrRefused(qp, peer.device, left + 1L, wr);
            HwCounters.rnrExhausted(device, left);
            device.count(SimCounter.RNR_RETRIES, left);
            device.fabric().span(device, wr.opcode().name(), "dma", timerNs * left, java.util.Map.of("qp_num",
                qp.num, "status", WcStatus.RNR_RETRY_EXC_ERR.cName(), "rnr_retries", qp.rnrRetry, "why",
                nak.detail()));
            device.observe(o -> o.failed(qp, wr, nak));
            qp.completions.completeSend(wr, WcStatus.RNR_RETRY_EXC_ERR, 0, Diagnoser.rnrOdp(qp, wr, qp.rnrRetry,
                "an on-demand-paging page fault at the responder did not settle in time: " + nak.detail()));
            return -1;
        }
        final int taken = (int)Math.min(naksSoFar + naks, Integer.MAX_VALUE);
        peer.device.count(SimCounter.ODP_RNR_NAKS, naks);
        Responder.rnrRefused(qp, peer.device, naks, wr);
        device.count(SimCounter.RNR_NAK_RETRY_ERR, naks);
        device.count(SimCounter.RNR_RETRIES, naks);
        device.fabric().span(device, "rnr_wait", "odp", timerNs * naks, java.util.Map.of("qp_num", qp.num,
            "rnr_naks", naks, "why", nak.detail()));
        if (taken > MAX_RNR_ROUNDS)
        {
            throw new IllegalStateException("a responder page fault never settled after " + taken + " RNR NAKs: "
                + nak.detail());
        }
        return taken;
    }
}
