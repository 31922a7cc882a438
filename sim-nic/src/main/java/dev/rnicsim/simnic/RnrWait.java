package dev.rnicsim.simnic;

/**
 * The time a requester with {@code rnr_retry} 7 spends between the RNR NAK that stopped its head WQE and the retry that
 * lands. After an RNR NAK the requester sends the request again only when the responder's RNR timer
 * ({@code min_rnr_timer}, carried in the NAK's AETH) has run out (IBA vol. 1 9.7.5.2.8; rxe_comp.c {@code rnr_nak}
 * arms {@code rnr_nak_timer} with the NAK's timer and the requester resumes only when it fires). So its retries go out
 * at the first NAK plus whole timers, and the one that finds a receive posted lands at the first such tick at or after
 * the post: never sooner than one timer after the NAK. With {@code min_rnr_timer} 0 (655.36 ms) a SEND that raced its
 * peer's receive stalls that long, which is why a small timer (13: 0.96 ms) is the fix. With {@code rnr_retry} below 7
 * the engine already waits each timer out as it counts the NAKs ({@link Requester}).
 *
 * <p>Not thread safe: one per requester, driven by its engine.
 */
final class RnrWait
{
    private SendWqe blocked;
    private long firstNakNs = -1;
    private long timerNs;

    /**
     * The head WQE took an RNR NAK and stays blocked until the peer posts a receive.
     *
     * @param device  the requester's device (its fabric's clock).
     * @param timerNs the responder's RNR timer in ns.
     * @param head    the WQE refused.
     */
    void naked(final SimDevice device, final long timerNs, final SendWqe head)
    {
        if (head != blocked || firstNakNs < 0)
        {
            blocked = head;
            firstNakNs = device.fabric().clock().nowNs();
        }
        this.timerNs = timerNs;
    }

    /**
     * The head WQE went on (its retry landed, or it ended otherwise): when it was blocked by an RNR NAK, the clock
     * moves to the retry tick at which it went, the first whole timer after the first NAK that is not before now.
     *
     * @param device the requester's device.
     * @param qp     the requester's QP, for the trace.
     * @param head   the WQE that went on.
     */
    void retryLanded(final SimDevice device, final SimQp qp, final SendWqe head)
    {
        if (head != blocked || firstNakNs < 0)
        {
            clear();
            return;
        }
        final long now = device.fabric().clock().nowNs();
        final long waited = now - firstNakNs;
        final long ticks = Math.max(1, (waited + timerNs - 1) / timerNs);
        final long retryAtNs = firstNakNs + ticks * timerNs;
        if (retryAtNs > now)
        {
            device.fabric().span(device, "rnr_wait", "dma", retryAtNs - now, java.util.Map.of("qp_num", qp.num,
                "wr_id", head.wr().wrId(), "rnr_retry", 7, "timer_ns", timerNs));
        }
        clear();
    }

    private void clear()
    {
        blocked = null;
        firstNakNs = -1;
    }
}
