package dev.rnicsim.scenarios.script;

import dev.rnicsim.simnic.InflightMessage;
import dev.rnicsim.simnic.PacketMtu;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimQp;
import dev.rnicsim.verbs.SendWr;
import java.util.List;
import java.util.Locale;

/**
 * The script statements and views of the NIC engine: {@code engine auto|manual}, {@code progress DEVICE [N]}, the
 * {@code queued} answer of {@code post}, {@code show inflight DEVICE} and the WQEs of {@code show qp}
 * (docs/async.md).
 */
final class Engines
{
    private Engines()
    {
    }

    /**
     * After a step: with the engine on {@code auto} (the default), lets the fabric work until nothing is left to do,
     * so a posted work request has run by the next statement; on {@code manual}, the engine moves only on
     * {@code progress}, {@code poll} and key retirements that wait (docs/async.md).
     */
    static void settle(final Session s)
    {
        if (!s.manualEngine)
        {
            s.fabric.progressAll();
        }
    }

    /** {@code engine auto|manual}. */
    static Outcome mode(final Session s, final ScriptLine l)
    {
        s.manualEngine = l.args().get(0).equals("manual");
        return Outcome.ok(s.manualEngine ? "engine manual: post queues; progress, poll and waiting key retirements "
            + "move packets" : "engine auto: the fabric works until nothing is left after every statement");
    }

    /** {@code progress DEVICE [N]}: up to N packets of the device's QPs (default: until it has nothing left). */
    static Outcome progress(final Session s, final ScriptLine l)
    {
        final SimDevice device = s.get(l, l.args().get(0), SimDevice.class);
        final long n = l.args().size() > 1 ? s.evalNum(l, l.args().get(1)) : Integer.MAX_VALUE;
        if (n < 0)
        {
            throw l.error("progress moves N >= 0 packets, got " + n);
        }
        final int moved = s.fabric.engine().progress(device, (int)Math.min(n, Integer.MAX_VALUE));
        s.lastCount = moved;
        final String left = inflightSummary(device);
        return Outcome.ok(String.format(Locale.ROOT, "moved %d packet%s on %s%s", moved, moved == 1 ? "" : "s",
            device.name(), left.isEmpty() ? "; nothing in flight" : "; " + left));
    }

    /**
     * @return why a QP's send queue still holds work after the engine settled: the head waits for ever for an
     *         acknowledgement (timeout 0), or behind a SEND the peer has no receive for (RNR, rnr_retry 7).
     */
    static String whyWaiting(final SimQp qp)
    {
        return qp.waitsForAckForever()
            ? "no acknowledgement comes and timeout 0 never gives up: the WQE holds the send queue until the QP goes "
            + "to ERR (give timeout 1-31, or connect the peer back)"
            : "the peer has no receive posted (RNR)";
    }

    /** What {@code post} answers on a manual engine. */
    static String queued(final SimQp qp, final SendWr wr)
    {
        return String.format(Locale.ROOT, "queued wr_id=%s (%s, %d bytes, %d packet%s) on QP 0x%x: %d WQE%s on "
            + "the send queue", Long.toUnsignedString(wr.wrId()), wr.opcode(), wr.totalBytes(), packets(qp, wr),
            packets(qp, wr) == 1 ? "" : "s", qp.qpNum(), qp.sendsWaiting(), qp.sendsWaiting() == 1 ? "" : "s");
    }

    private static int packets(final SimQp qp, final SendWr wr)
    {
        return InflightMessage.packets(wr.totalBytes(), PacketMtu.bytes(qp));
    }

    /** The WQEs of a QP's send queue for {@code show qp}, the head first; empty when there are none. */
    static String wqes(final SimQp qp)
    {
        final List<SendWr> wrs = qp.sendQueueWrs();
        if (wrs.isEmpty())
        {
            return "";
        }
        final StringBuilder sb = new StringBuilder();
        for (int i = 0; i < wrs.size(); i++)
        {
            final SendWr wr = wrs.get(i);
            sb.append("\n  wqe ").append(i).append(": wr_id=").append(wr.wrId()).append(' ').append(wr.opcode())
                .append(' ').append(wr.totalBytes()).append(" bytes");
            final InflightMessage m = qp.inflight();
            if (i == 0 && m != null)
            {
                sb.append(String.format(Locale.ROOT, ", in flight: %d/%d packets placed (%d bytes)",
                    m.packetsPlaced(), m.packetCount(), m.bytesPlaced()));
            }
        }
        return sb.toString();
    }

    /** {@code show inflight DEVICE}: every QP of the device with WQEs, and its message in flight. */
    static String inflight(final SimDevice device)
    {
        final StringBuilder sb = new StringBuilder();
        for (final SimQp qp : device.queuePairs())
        {
            if (qp.sendsWaiting() > 0)
            {
                sb.append(sb.length() == 0 ? "" : "\n").append(String.format(Locale.ROOT, "QP 0x%x %s:", qp.qpNum(),
                    qp.state())).append(wqes(qp));
            }
        }
        return sb.length() == 0 ? device.name() + ": nothing in flight" : sb.toString();
    }

    private static String inflightSummary(final SimDevice device)
    {
        final StringBuilder sb = new StringBuilder();
        for (final SimQp qp : device.queuePairs())
        {
            if (qp.sendsWaiting() > 0)
            {
                sb.append(sb.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "QP 0x%x: %d WQE%s",
                    qp.qpNum(), qp.sendsWaiting(), qp.sendsWaiting() == 1 ? "" : "s"));
                final InflightMessage m = qp.inflight();
                if (m != null)
                {
                    sb.append(String.format(Locale.ROOT, " (head at packet %d/%d)", m.packetsPlaced(),
                        m.packetCount()));
                }
            }
        }
        return sb.toString();
    }
}
