package dev.rnicsim.simnic;

import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The send queue's completions in posting order. A WQE may end before an older one (a WRITE posted after a READ
 * whose responses are still coming back), but its completion is reported only after theirs: the completions of one
 * work queue are returned in the order its work requests were posted (IBA vol. 1 ch. 10, work request processing;
 * rxe_comp.c completes WQEs from the head of the send queue only). A WQE that ends without a completion (an
 * unsignaled success) still takes its turn.
 *
 * <p>Not thread safe.
 */
final class CompletionOrder
{
    /** One WQE's end: its work request and its completion, or null when it ends without one. */
    record End(SendWr wr, WorkCompletion wc)
    {
    }

    private final TreeMap<Long, End> held = new TreeMap<>();
    private long posted;
    private long next;

    /** @return the sequence number of a WQE being posted. */
    long post()
    {
        return posted++;
    }

    /** @return WQEs posted since the QP was created. */
    long postedCount()
    {
        return posted;
    }

    /**
     * The QP went to RESET, dropping its queued WQEs without completions: none of them is waited for any more, so the
     * WQEs posted after the reset complete in their own turn.
     */
    void dropAll()
    {
        held.clear();
        next = posted;
    }

    /**
     * @param seq a WQE's sequence number.
     * @return true when it ended (reported or held).
     */
    boolean ended(final long seq)
    {
        return seq < next || held.containsKey(seq);
    }

    /**
     * Records the end of a WQE.
     *
     * @param seq its sequence number.
     * @param end its work request and completion.
     * @return the ends now due, in posting order (possibly none).
     */
    List<End> end(final long seq, final End end)
    {
        if (seq == next && held.isEmpty())
        {
            // The oldest WQE ended with nothing held behind it (the usual case): due at once, nothing to hold.
            next++;
            return List.of(end);
        }
        held.put(seq, end);
        if (held.firstKey() != next)
        {
            return List.of();
        }
        final List<End> due = new ArrayList<>(1);
        while (!held.isEmpty() && held.firstKey() == next)
        {
            due.add(held.pollFirstEntry().getValue());
            next++;
        }
        return due;
    }

    /**
     * @param seq a WQE's sequence number.
     * @return the ends held behind it (younger WQEs that ended first), oldest first; a failed WQE flushes them.
     */
    List<Map.Entry<Long, End>> heldAfter(final long seq)
    {
        // Most failures have nothing held behind them: no copy then.
        if (held.isEmpty() || held.lastKey() <= seq)
        {
            return List.of();
        }
        return new ArrayList<>(held.tailMap(seq, false).entrySet());
    }

    /** Replaces a held end (a success behind a failure becomes a flush). */
    void replace(final long seq, final End end)
    {
        held.put(seq, end);
    }

    /** @return WQEs ended and waiting for an older one. */
    int heldCount()
    {
        return held.size();
    }
}
