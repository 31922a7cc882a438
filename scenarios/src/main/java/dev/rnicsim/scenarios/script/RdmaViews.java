package dev.rnicsim.scenarios.script;

import dev.rnicsim.mtt.MKey;
import dev.rnicsim.simnic.HwCounters;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimCounter;
import dev.rnicsim.simnic.SimCq;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.simnic.SimQp;
import dev.rnicsim.verbs.MemoryRegion;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The views operators know from a real host: the sysfs counter files ({@code show counters DEV}: the files of
 * {@code /sys/class/infiniband/DEV/ports/1/counters} and {@code hw_counters}, with the kernel's names), and the iproute2
 * {@code rdma} tool ({@code show rdma res mr|pd|qp|cq [DEV]}, {@code show rdma statistic [DEV]}) in its output format
 * (iproute2 rdma/res-mr.c, res-pd.c, res-qp.c, res-cq.c, stat.c). Stateless.
 */
final class RdmaViews
{
    /** The port counter files (the IBA PortCounters and PortCountersExtended attributes) in sysfs order. */
    private static final List<String> PORT_FILES = List.of("excessive_buffer_overrun_errors", "link_downed",
        "link_error_recovery", "local_link_integrity_errors", "multicast_rcv_packets", "multicast_xmit_packets",
        "port_rcv_constraint_errors", "port_rcv_data", "port_rcv_errors", "port_rcv_packets",
        "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors", "port_xmit_constraint_errors",
        "port_xmit_data", "port_xmit_discards", "port_xmit_packets", "port_xmit_wait", "symbol_error",
        "unicast_rcv_packets", "unicast_xmit_packets", "VL15_dropped");

    private RdmaViews()
    {
    }

    /** The words after {@code show rdma}: iproute2's {@code rdma res show} objects and {@code rdma statistic}. */
    private static final List<String> RDMA_VIEWS = List.of("res", "statistic");
    private static final List<String> RES_OBJECTS = List.of("mr", "pd", "qp", "cq");

    /**
     * The hint for a malformed {@code show rdma} line whose word is a typo of a real one ({@code statistics},
     * {@code res mrs}).
     *
     * @param args the line's words, {@code rdma} first.
     * @return {@code "; did you mean 'show rdma ...'?"}, or "" when no word is near one.
     */
    static String showHint(final List<String> args)
    {
        if (args.size() < 2)
        {
            return "";
        }
        final String view = args.get(1).toLowerCase(Locale.ROOT);
        if (!RDMA_VIEWS.contains(view))
        {
            final String near = DidYouMean.nearest(view, RDMA_VIEWS);
            return near == null ? "" : "; did you mean 'show rdma " + near + "'?";
        }
        if (view.equals("res") && args.size() >= 3 && !RES_OBJECTS.contains(args.get(2).toLowerCase(Locale.ROOT)))
        {
            final String near = DidYouMean.nearest(args.get(2).toLowerCase(Locale.ROOT), RES_OBJECTS);
            return near == null ? "" : "; did you mean 'show rdma res " + near + "'?";
        }
        return "";
    }

    /** The value of a sysfs or hw_counters file; counters of events the model has no cause for read 0. */
    private static long value(final SimDevice d, final String file)
    {
        return switch (file)
        {
            case "unicast_xmit_packets" -> d.counter(SimCounter.PORT_XMIT_PACKETS);
            case "unicast_rcv_packets" -> d.counter(SimCounter.PORT_RCV_PACKETS);
            default -> HwCounters.value(d, file);
        };
    }

    /**
     * @param d a device.
     * @return its counter files as {@code cat} would show them, then the simulator's own counters.
     */
    static String counters(final SimDevice d)
    {
        final String dir = "/sys/class/infiniband/" + d.hcaId() + "/ports/1/";
        final StringBuilder sb = new StringBuilder(dir).append("counters/");
        for (final String f : PORT_FILES)
        {
            sb.append(String.format(Locale.ROOT, "%n  %-36s %12d", f, value(d, f)));
        }
        final HwCounters hw = d.profile().hwCounters();
        sb.append('\n').append(dir).append("hw_counters/");
        if (hw == HwCounters.NONE)
        {
            sb.append("\n  (the ").append(d.profile().driver()).append(" driver's counters are not modelled)");
        }
        for (final String f : hw.names())
        {
            sb.append(String.format(Locale.ROOT, "%n  %-36s %12d", f, value(d, f)));
        }
        sb.append("\nsimulator counters (no sysfs file; ODP ones as 'rdma statistic show mr'):");
        for (final SimCounter c : SimCounter.values())
        {
            if (!PORT_FILES.contains(c.label()) && !HwCounters.known(c.label()))
            {
                sb.append(String.format(Locale.ROOT, "%n  %-36s %12d %s", c.label(), d.counter(c), c.unit()));
            }
        }
        sb.append("\n(no packet loss, reordering or congestion is modelled: the sequence-error, duplicate-request, "
            + "link-error and CNP/ECN counters stay 0; the port counters count data packets, rxe's sent_pkts and "
            + "rcvd_pkts also count ACKs and NAKs (sim_acks_sent, sim_acks_received); a request refused with an RNR "
            + "NAK counts as a packet in both, its RNR NAK in rxe's)");
        return sb.toString();
    }

    /**
     * @param s    the session.
     * @param l    the {@code show rdma ...} line.
     * @return the view.
     */
    static String show(final Session s, final ScriptLine l)
    {
        final List<String> a = l.args();
        final boolean statistic = a.get(1).equals("statistic");
        final String filter = a.size() > (statistic ? 2 : 3) ? a.get(statistic ? 2 : 3) : null;
        final List<SimDevice> devices = new ArrayList<>();
        if (filter == null)
        {
            devices.addAll(s.fabric.devices());
        }
        else
        {
            devices.add(s.get(l, filter, SimDevice.class));
        }
        final StringBuilder sb = new StringBuilder();
        for (final SimDevice d : devices)
        {
            if (statistic)
            {
                line(sb, "link " + d.hcaId() + "/1");
                for (final String f : d.profile().hwCounters().names())
                {
                    sb.append(' ').append(f).append(' ').append(value(d, f));
                }
                continue;
            }
            switch (a.get(2))
            {
                case "mr" -> mrs(sb, d);
                case "pd" -> pds(sb, d, s.names);
                case "qp" -> qps(sb, d, s.names);
                default -> cqs(sb, d, s.names);
            }
        }
        return sb.length() == 0 ? "(none)" : sb.toString();
    }

    private static void line(final StringBuilder sb, final String start)
    {
        if (sb.length() > 0)
        {
            sb.append('\n');
        }
        sb.append(start);
    }

    private static String owner(final SimContext c)
    {
        return " pid " + c.process().pid() + " comm " + c.process().name();
    }

    private static void mrs(final StringBuilder sb, final SimDevice d)
    {
        final int bits = d.keyHistory().variantBits();
        for (final SimContext c : d.contexts())
        {
            for (final SimPd pd : c.protectionDomains())
            {
                final List<MemoryRegion> all = new ArrayList<>(pd.memoryRegions());
                all.addAll(pd.odpMemoryRegions());
                all.addAll(pd.peerMemoryRegions());
                all.sort(Comparator.comparingLong(m -> MKey.index(m.lkey(), bits)));
                for (final MemoryRegion mr : all)
                {
                    line(sb, String.format(Locale.ROOT, "dev %s mrn %d rkey 0x%x lkey 0x%x iova 0x%x mrlen %d pdn %d%s",
                        d.hcaId(), MKey.index(mr.lkey(), bits), mr.rkey(), mr.lkey(), mr.iova(), mr.lengthBytes(),
                        pd.pdNum(), owner(c)));
                }
            }
        }
    }

    private static void pds(final StringBuilder sb, final SimDevice d, final Map<String, Object> names)
    {
        for (final SimContext c : d.contexts())
        {
            for (final SimPd pd : c.protectionDomains())
            {
                long users = pd.memoryRegions().size() + pd.odpMemoryRegions().size() + pd.peerMemoryRegions().size()
                    + pd.memoryWindows().size() + pd.fastRegMrs().size();
                for (final Object o : names.values())
                {
                    if (o instanceof SimQp q && !q.isClosed() && q.pd() == pd)
                    {
                        users++;
                    }
                }
                line(sb, "dev " + d.hcaId() + " pdn " + pd.pdNum() + " users " + users + owner(c));
            }
        }
    }

    private static void qps(final StringBuilder sb, final SimDevice d, final Map<String, Object> names)
    {
        final List<SimQp> qps = new ArrayList<>();
        for (final Object o : names.values())
        {
            if (o instanceof SimQp q && !q.isClosed() && q.simDevice() == d)
            {
                qps.add(q);
            }
        }
        qps.sort(Comparator.comparingInt(SimQp::qpNum));
        for (final SimQp q : qps)
        {
            line(sb, "link " + d.hcaId() + "/1 lqpn " + q.qpNum() + (q.remoteQpNum() < 0 ? ""
                : " rqpn " + q.remoteQpNum()) + " type " + q.type() + " state " + q.state() + " sq-psn "
                + q.address().psn() + owner(q.pd().context()));
        }
    }

    private static void cqs(final StringBuilder sb, final SimDevice d, final Map<String, Object> names)
    {
        final List<SimCq> cqs = new ArrayList<>();
        for (final String name : new java.util.TreeSet<>(names.keySet()))
        {
            if (names.get(name) instanceof SimCq q && !q.isClosed() && q.context().device() == d && !cqs.contains(q))
            {
                cqs.add(q);
            }
        }
        int cqn = 0;
        for (final SimCq q : cqs)
        {
            line(sb, "dev " + d.hcaId() + " cqn " + (++cqn) + " cqe " + q.cqe() + " users " + q.users()
                + owner(q.context()));
        }
    }
}
