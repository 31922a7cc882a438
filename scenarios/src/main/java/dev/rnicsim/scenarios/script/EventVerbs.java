package dev.rnicsim.scenarios.script;

import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.verbs.AsyncEvent;
import dev.rnicsim.verbs.AsyncEventType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The script forms of the asynchronous event queue (ibv_get_async_event(3)): {@code events CONTEXT} returns and
 * acknowledges every pending event of a context and prints them; {@code expect event KIND [OBJECT]} and
 * {@code expect no events} check what the last {@code events} returned. Stateless.
 */
final class EventVerbs
{
    private EventVerbs()
    {
    }

    /**
     * {@code events CONTEXT}: ibv_get_async_event until none is pending, ibv_ack_async_event for each.
     */
    static Outcome events(final Session s, final ScriptLine l)
    {
        final SimContext ctx = s.get(l, l.args().get(0), SimContext.class);
        final List<AsyncEvent> got = new ArrayList<>();
        for (Optional<AsyncEvent> e = ctx.getAsyncEvent(); e.isPresent(); e = ctx.getAsyncEvent())
        {
            got.add(e.get());
            ctx.ackAsyncEvent(e.get());
        }
        s.lastEvents = List.copyOf(got);
        final StringBuilder b = new StringBuilder(got.isEmpty() ? "ibv_get_async_event: no event pending"
            : "ibv_get_async_event: " + got.size() + " event(s), each acknowledged (ibv_ack_async_event)");
        for (final AsyncEvent e : got)
        {
            b.append("\n  ").append(e.type().cName()).append(" on ").append(element(s, e)).append(": ")
                .append(e.cause());
        }
        return Outcome.ok(b.toString());
    }

    private static String element(final Session s, final AsyncEvent e)
    {
        final Object o = switch (e.type().element())
        {
            case QP -> e.qp();
            case CQ -> e.cq();
            case SRQ -> e.srq();
            default -> null;
        };
        if (o != null)
        {
            for (final Map.Entry<String, Object> n : s.names.entrySet())
            {
                if (n.getValue() == o)
                {
                    return e.type().element().name() + " " + n.getKey()
                        + (e.qp() != null ? " (0x" + Integer.toHexString(e.qp().qpNum()) + ")" : "");
                }
            }
        }
        return e.element();
    }

    /**
     * @param l an expect line.
     * @return true when it is {@code expect event ...} or {@code expect no events}.
     */
    static boolean isEventExpect(final ScriptLine l)
    {
        final List<String> a = l.args();
        return !a.isEmpty() && a.get(0).equals("event") || a.size() == 2 && a.get(0).equals("no")
            && a.get(1).equals("events");
    }

    /**
     * Checks the form before anything runs.
     *
     * @param l     the expect line.
     * @param names the names the script defined so far, with their kinds.
     * @throws ScriptException for a kind that names no event or an object that is no QP, CQ or SRQ.
     */
    static void check(final ScriptLine l, final Map<String, Kind> names)
    {
        final List<String> a = l.args();
        if (a.get(0).equals("no"))
        {
            return;
        }
        if (a.size() < 2 || a.size() > 3 || AsyncEventType.parse(a.get(1)) == null)
        {
            throw l.error("expected 'expect event KIND [OBJECT]' with KIND one of "
                + Arrays.toString(AsyncEventType.values()) + " (IBV_EVENT_ optional)"
                + (a.size() >= 2 ? ", got '" + a.get(1) + "'" : ""));
        }
        if (a.size() == 3)
        {
            final Kind k = names.get(a.get(2));
            if (k != Kind.QP && k != Kind.CQ && k != Kind.SRQ)
            {
                throw l.error("'" + a.get(2) + "' is no QP, CQ or SRQ of this script; an event's object is the QP, "
                    + "CQ or SRQ it is affiliated with");
            }
        }
    }

    /**
     * @return null when the last {@code events} returned such an event (or none, for {@code expect no events}),
     * else why not.
     */
    static String expect(final Session s, final ScriptLine l)
    {
        final List<String> a = l.args();
        if (a.get(0).equals("no"))
        {
            return s.lastEvents.isEmpty() ? null : "expected no events, the last 'events' returned "
                + s.lastEvents.stream().map(e -> e.type().cName()).toList();
        }
        final AsyncEventType want = AsyncEventType.parse(a.get(1));
        final Object object = a.size() == 3 ? s.names.get(a.get(2)) : null;
        for (final AsyncEvent e : s.lastEvents)
        {
            if (e.type() == want && (object == null || e.qp() == object || e.cq() == object || e.srq() == object))
            {
                return null;
            }
        }
        return "expected " + want.cName() + (object == null ? "" : " on " + a.get(2)) + ", the last 'events' "
            + "returned " + (s.lastEvents.isEmpty() ? "none" : s.lastEvents.stream()
            .map(e -> e.type().cName() + " on " + element(s, e)).toList());
    }
}
