package dev.rnicsim.ibverbs;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongPredicate;

/**
 * The sends of UD QPs go to the model one at a time per QP, so that the fate of each datagram is known before the
 * next: the receive completion that names its QP (src_qp) in the same step of the device, or none when the model
 * dropped it (above the path MTU, a wrong Q_Key, no receive posted, no such QP: IBA 10.2.5 and C10-93.1.1), in which
 * case its bytes are never placed. (With several datagrams of one QP in one step a dropped one could not be told
 * from a delivered one, and a later receive would get the dropped one's bytes.) The send queue's depth is the
 * library's to check ({@code post_rules.c}); the model's queue holds one datagram of the QP at a time.
 *
 * <p>Not thread safe: called under the fabric's lock.
 */
final class DatagramSteps
{
    private static final class Held
    {
        final ArrayDeque<Long> ids = new ArrayDeque<>();
        final ArrayDeque<Runnable> posts = new ArrayDeque<>();
        long inFlight = -1;
    }

    private final Map<Session.QpInfo, Held> held = new LinkedHashMap<>();

    /** Holds a datagram's post (under the server's number {@code id}) until the QP's previous one completed. */
    void hold(final Session.QpInfo q, final long id, final Runnable post)
    {
        final Held h = held.computeIfAbsent(q, k -> new Held());
        h.ids.addLast(id);
        h.posts.addLast(post);
    }

    /**
     * Posts to the model the next datagram of each UD QP whose previous one is done.
     *
     * @param pending whether a server number is still waiting for its completion.
     * @return true when it posted one or more.
     */
    boolean postNext(final LongPredicate pending)
    {
        if (held.isEmpty())
        {
            return false;
        }
        boolean posted = false;
        for (final Iterator<Map.Entry<Session.QpInfo, Held>> it = held.entrySet().iterator(); it.hasNext();)
        {
            final Held h = it.next().getValue();
            if (h.inFlight >= 0 && pending.test(h.inFlight))
            {
                continue;
            }
            h.inFlight = -1;
            if (h.posts.isEmpty())
            {
                it.remove();
                continue;
            }
            h.inFlight = h.ids.removeFirst();
            h.posts.removeFirst().run();
            posted = true;
        }
        return posted;
    }
}
