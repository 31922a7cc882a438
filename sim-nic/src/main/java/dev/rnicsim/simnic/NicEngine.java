package dev.rnicsim.simnic;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * The fabric's NIC engine: the work that devices do while the program runs. {@code ibv_post_send} only writes a WQE
 * to the send queue (as a real provider writes it to the ring and rings the doorbell); the engine then fetches WQEs,
 * segments each RC message into packets of the path MTU, lets the responder check and place them, and writes the
 * completions (IBA 9.7, 9.9). It is deterministic: the QPs with work take turns, one packet each, in the order they
 * got work; it never reads wall time (the cost model prices each step on the simulated clock).
 *
 * <p>Who drives it: {@link SimFabric#progress(int)} moves a number of packets; polling an empty CQ moves packets
 * until that CQ has a completion or nothing is left to do ({@link SimCq#poll(int)}), so a program that posts and
 * polls sees what it always saw; and the retirement of a key that a responder holds waits for the message that
 * holds it ({@link #awaitKeyHolders}).
 *
 * <p>Not thread safe: driven by the simulator's single thread.
 */
public final class NicEngine
{
    /** Most steps one key retirement may wait for before the model calls it a livelock. */
    private static final int MAX_AWAIT_STEPS = 1 << 24;

    private final ArrayDeque<SimQp> runnable = new ArrayDeque<>();
    /** Messages whose responder holds a reference on the key it checked at the first packet. */
    private final List<InflightMessage> holders = new ArrayList<>();
    private long packets;
    /** QPs taken out of the turn order while they move a packet, innermost last (a retirement inside a step drives
     * the QPs that hold its key). */
    private SimQp[] stepping = new SimQp[4];
    private int steppingDepth;

    NicEngine()
    {
    }

    /** Puts a QP that got work (a WQE, or a receive at its blocked peer) in the turn order once. */
    void schedule(final SimQp qp)
    {
        if (!qp.scheduled())
        {
            qp.scheduled(true);
            runnable.addLast(qp);
        }
    }

    /** Takes a destroyed QP out of the turn order and drops the references its message held. */
    void forget(final SimQp qp)
    {
        if (qp.scheduled())
        {
            runnable.remove(qp);
            qp.scheduled(false);
        }
        holders.removeIf(m -> m.requester() == qp);
    }

    /**
     * Moves up to {@code maxPackets} packets (a message of one packet, a local operation such as BIND_MW or
     * LOCAL_INV and a flush each count one).
     *
     * @param maxPackets most packets to move; 0 or less moves nothing.
     * @return the packets moved (less than asked when nothing was left to do).
     */
    public int progress(final int maxPackets)
    {
        int moved = 0;
        while (moved < maxPackets && step())
        {
            moved++;
        }
        return moved;
    }

    /**
     * Moves up to {@code maxPackets} packets of the QPs of one device, in their turn order; the other devices' QPs
     * keep their turns.
     *
     * @param device     the device whose QPs move.
     * @param maxPackets most packets to move.
     * @return the packets moved.
     */
    public int progress(final SimDevice device, final int maxPackets)
    {
        int moved = 0;
        while (moved < maxPackets)
        {
            SimQp next = null;
            for (final SimQp qp : runnable)
            {
                if (qp.simDevice() == device)
                {
                    next = qp;
                    break;
                }
            }
            if (next == null)
            {
                break;
            }
            runnable.remove(next);
            next.scheduled(false);
            final boolean stepped = stepOne(next);
            if (stepped)
            {
                moved++;
                packets++;
                if (next.hasSendWork())
                {
                    schedule(next);
                }
            }
        }
        return moved;
    }

    /**
     * Moves packets until {@code done} holds or nothing is left to do.
     *
     * @param done checked before every packet.
     * @return true when {@code done} holds.
     */
    public boolean runUntil(final BooleanSupplier done)
    {
        while (!done.getAsBoolean())
        {
            if (!step())
            {
                return done.getAsBoolean();
            }
        }
        return true;
    }

    /**
     * @return true when no QP has work it can do now (a send waiting for a receive, rnr_retry 7, is not work).
     */
    public boolean idle()
    {
        return runnable.isEmpty();
    }

    /**
     * @return packets moved since the fabric was made.
     */
    public long packetsMoved()
    {
        return packets;
    }

    /**
     * @return the messages in flight: started (first packet placed) and not yet completed — also those of a QP that
     * is in the middle of moving a packet (out of the turn order while it does), which a key retirement during that
     * step must see.
     */
    public List<InflightMessage> inflight()
    {
        final List<InflightMessage> out = new ArrayList<>();
        for (int i = 0; i < steppingDepth; i++)
        {
            final SimQp qp = stepping[i];
            if (!qp.scheduled() && !contains(out, qp))
            {
                out.addAll(qp.inflightMessages());
            }
        }
        for (final SimQp qp : runnable)
        {
            out.addAll(qp.inflightMessages());
        }
        return out;
    }

    private static boolean contains(final List<InflightMessage> messages, final SimQp qp)
    {
        for (final InflightMessage m : messages)
        {
            if (m.requester() == qp)
            {
                return true;
            }
        }
        return false;
    }

    /** Moves one packet of a QP, which counts as in flight while it does ({@link #inflight()}). */
    private boolean stepOne(final SimQp qp)
    {
        if (steppingDepth == stepping.length)
        {
            stepping = java.util.Arrays.copyOf(stepping, steppingDepth * 2);
        }
        stepping[steppingDepth++] = qp;
        try
        {
            return qp.step();
        }
        finally
        {
            stepping[--steppingDepth] = null;
        }
    }

    /** One turn: the first QP with work moves one packet; false when no QP could. */
    private boolean step()
    {
        while (!runnable.isEmpty())
        {
            final SimQp qp = runnable.pollFirst();
            qp.scheduled(false);
            final boolean moved = stepOne(qp);
            if (qp.hasSendWork() && moved)
            {
                schedule(qp);
            }
            if (moved)
            {
                packets++;
                return true;
            }
        }
        return false;
    }

    void hold(final InflightMessage m)
    {
        holders.add(m);
    }

    void release(final InflightMessage m)
    {
        holders.remove(m);
    }

    /**
     * Waits, driving the engine, until no message in flight holds a reference on one of the keys (by MPT index) of
     * {@code device}. Called by a key's retirement on a device whose responder holds its keys
     * ({@link ProviderRule#RESPONDER_HOLDS_KEY_REFERENCE}): rxe's {@code rxe_dereg_mr} ends in {@code rxe_cleanup},
     * which waits for the references to drop, and its responder takes one in {@code check_rkey} on the first packet
     * and drops it when the message is done. On other devices nothing waits.
     */
    void awaitKeyHolders(final SimDevice device, final String retirement, final int... keys)
    {
        device.observe(o -> tellInFlight(o, device, retirement, keys));
        if (!device.profile().follows(ProviderRule.RESPONDER_HOLDS_KEY_REFERENCE))
        {
            return;
        }
        int guard = 0;
        InflightMessage m;
        while ((m = holderOf(device, keys)) != null)
        {
            final SimQp qp = m.requester();
            if (!stepOne(qp))
            {
                // The requester cannot go on (destroyed or in error): its message ends here.
                release(m);
            }
            if (++guard > MAX_AWAIT_STEPS)
            {
                throw new IllegalStateException("a key retirement waited " + guard + " steps for " + m);
            }
        }
    }

    /** Tells an observer of every message in flight through one of the keys (by MPT index) of {@code device}. */
    private void tellInFlight(final DeviceObserver o, final SimDevice device, final String retirement,
        final int[] keys)
    {
        for (final InflightMessage m : inflight())
        {
            for (final int k : keys)
            {
                if (m.responderDevice() == device && (m.wr().opcode().isRdma() || m.wr().opcode().isAtomic())
                    && k >>> 8 == m.rkey() >>> 8)
                {
                    o.retiredInFlight(retirement, k, m);
                    break;
                }
                if (m.requester().simDevice() == device && usesLkey(m, k))
                {
                    o.retiredInFlight(retirement, k, m);
                    break;
                }
            }
        }
    }

    private static boolean usesLkey(final InflightMessage m, final int key)
    {
        for (final dev.rnicsim.verbs.Sge s : m.wr().sgList())
        {
            if (s.lkey() >>> 8 == key >>> 8)
            {
                return true;
            }
        }
        return false;
    }

    private InflightMessage holderOf(final SimDevice device, final int[] keys)
    {
        for (final InflightMessage m : holders)
        {
            if (m.responderDevice() != device)
            {
                continue;
            }
            for (final int k : keys)
            {
                if (k >>> 8 == m.rkey() >>> 8)
                {
                    return m;
                }
            }
        }
        return null;
    }
}
