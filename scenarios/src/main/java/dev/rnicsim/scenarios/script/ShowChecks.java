package dev.rnicsim.scenarios.script;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Checks of the {@code show} statement before anything runs: {@code show rdma res|statistic} as the rdma tool spells
 * it, a name for every view but {@code clock}, and a device's name for the device views. Stateless.
 */
final class ShowChecks
{
    /** The {@code show} views of one device. */
    private static final Set<String> DEVICE_VIEWS = Set.of("counters", "mtt", "trace", "devinfo", "inflight");

    private ShowChecks()
    {
    }

    /**
     * {@code show VIEW NAME}: every view but {@code clock} needs a name, and a device view (counters, mtt, trace,
     * devinfo, inflight) a device's.
     */
    static void check(final ScriptLine l, final Map<String, Kind> names)
    {
        if (l.args().size() == 1 && !l.args().get(0).equals("clock"))
        {
            throw l.error("show " + l.args().get(0) + " needs a name" + (l.args().get(0).equals("walk")
                ? " or an address" : "") + " (only show clock stands alone)");
        }
        if (l.args().size() == 2 && DEVICE_VIEWS.contains(l.args().get(0)))
        {
            deviceView(l, names);
        }
    }

    /** {@code show counters X} (and the other device views): X, when it names something, must name a device. */
    private static void deviceView(final ScriptLine l, final Map<String, Kind> names)
    {
        final Kind k = names.get(l.args().get(1));
        if (k != null && k != Kind.DEVICE && k != Kind.VALUE)
        {
            throw l.error("'show " + l.args().get(0) + "' shows a device, and '" + l.args().get(1) + "' names "
                + Articles.a(k) + "; give the name of a 'device' line");
        }
    }

    /** {@code show rdma res mr|pd|qp|cq [DEVICE]} and {@code show rdma statistic [DEVICE]}. */
    static void rdma(final ScriptLine l, final Map<String, Kind> names)
    {
        final List<String> a = l.args();
        final boolean res = a.size() >= 3 && a.size() <= 4 && a.get(1).equals("res")
            && List.of("mr", "pd", "qp", "cq").contains(a.get(2));
        final boolean stat = a.size() >= 2 && a.size() <= 3 && a.get(1).equals("statistic");
        if (!res && !stat || !l.options().isEmpty() || !l.flags().isEmpty())
        {
            throw l.error("expected 'show rdma res mr|pd|qp|cq [DEVICE]' or 'show rdma statistic [DEVICE]'"
                + RdmaViews.showHint(a));
        }
        final String device = a.size() == (res ? 4 : 3) ? a.get(a.size() - 1) : null;
        if (device != null && names.get(device) != Kind.DEVICE)
        {
            throw l.error("'" + device + "' is no device" + (names.containsKey(device) ? " (it names a "
                + names.get(device).name().toLowerCase(Locale.ROOT) + ")" : " named before this line"));
        }
    }
}
