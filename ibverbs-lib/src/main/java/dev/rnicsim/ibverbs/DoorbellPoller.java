package dev.rnicsim.ibverbs;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * How the server's threads wait for doorbells that come through shared memory ({@link DoorbellRing}). Each session's
 * thread carries out what its process published, then, if no other thread of the fabric does, polls the doorbell
 * rings of <em>every</em> process for {@link DoorbellReader#SPIN_NS} after the last doorbell it found, carrying out
 * each as it comes; then it asks each process for a kick and sleeps on its own socket. A session's thread that finds
 * its ring covered by the poller sleeps without asking for kicks; the poller hands each ring back with
 * {@link DoorbellRing#uncover()}, which asks for them and carries out what came meanwhile, so a doorbell always finds
 * a poller, an armed ring, or a kick on its way. One poller for the whole fabric,
 * not one per session: in a ping-pong the next doorbell comes from the other process, whose session's thread would
 * have to be woken, and two threads polling would take a core each from the two programs on a small machine.
 *
 * <p>Thread safety: {@link #serve} runs on each session's thread; the rings are read under the fabric's lock.
 */
final class DoorbellPoller
{
    /** How often the polling thread looks whether its own process has gone. */
    private static final long SELF_CHECK_NS = 1_000_000;

    private final Object lock;
    private final List<Session> sessions = new CopyOnWriteArrayList<>();
    private final AtomicBoolean polling = new AtomicBoolean();

    DoorbellPoller(final Object lock)
    {
        this.lock = lock;
    }

    /**
     * Serves a session whose doorbells come through its ring, until its process closes the socket.
     *
     * @param s the session, on its own thread.
     * @throws IOException when the socket fails.
     */
    void serve(final Session s) throws IOException
    {
        sessions.add(s);
        try
        {
            while (true)
            {
                synchronized (lock)
                {
                    s.drainDoorbells();
                }
                poll(s);
                if (s.doorbellRing.armUnlessCovered())
                {
                    s.doorbellRing.disarm();
                    continue;
                }
                if (!s.doorbells.sleepUntilKicked())
                {
                    break;
                }
                s.wakeUps++;
                s.doorbellRing.disarm();
            }
        }
        finally
        {
            sessions.remove(s);
        }
        synchronized (lock)
        {
            s.drainDoorbells(); // the last doorbells a process rang before it exited
        }
    }

    /**
     * Polls every ring until none had a doorbell for {@link DoorbellReader#SPIN_NS}; at once when another thread
     * does. Every {@link #SELF_CHECK_NS} it looks at its own session's socket too, and stops when that process has
     * gone, so that a fabric kept busy by others still releases a process that exited.
     *
     * @param self the session whose thread polls.
     */
    private void poll(final Session self)
    {
        if (DoorbellReader.SPIN_NS <= 0 || !polling.compareAndSet(false, true))
        {
            return;
        }
        final List<Session> covered = new ArrayList<>();
        try
        {
            long last = System.nanoTime();
            long selfChecked = last;
            boolean armed = false;
            while (true)
            {
                for (final Session t : sessions)
                {
                    if (!covered.contains(t) && cover(t))
                    {
                        covered.add(t);
                    }
                }
                if (armed)
                {
                    covered.removeIf(t -> !disarm(t));
                    armed = false;
                }
                boolean found = false;
                for (final Session t : covered)
                {
                    if (pending(t))
                    {
                        synchronized (lock)
                        {
                            found |= t.drainDoorbells();
                        }
                    }
                }
                final long now = System.nanoTime();
                if (now - selfChecked >= SELF_CHECK_NS)
                {
                    selfChecked = now;
                    if (self.doorbells.endOfStream())
                    {
                        return; // the rings are handed back below
                    }
                }
                if (found)
                {
                    last = now;
                }
                else if (now - last >= DoorbellReader.SPIN_NS)
                {
                    // ask for kicks; a doorbell published meanwhile keeps the poll going
                    boolean late = false;
                    for (final Session t : covered)
                    {
                        late |= arm(t);
                    }
                    if (!late)
                    {
                        return;
                    }
                    armed = true;
                    last = now;
                }
                else
                {
                    // a spin without yields takes a core from the two programs of a ping-pong on 2 cores: measured
                    // with perftest, docs/c-programs.md, "Speed"
                    Thread.yield();
                }
            }
        }
        finally
        {
            // kicks from now on; what was published before a ring asked for them is carried out here
            for (final Session t : covered)
            {
                if (uncover(t))
                {
                    synchronized (lock)
                    {
                        t.drainDoorbells();
                    }
                }
            }
            polling.set(false);
        }
    }

    /**
     * Asks the session's doorbell ring {@code question}; a ring whose session has ended (its mapping released: {@link
     * IllegalStateException}) answers false, and the poller lets it go.
     */
    private static boolean ask(final Session t, final java.util.function.Predicate<DoorbellRing> question)
    {
        try
        {
            return question.test(t.doorbellRing);
        }
        catch (final IllegalStateException e)
        {
            return false;
        }
    }

    /** @return false when the session has ended (its ring is closed). */
    private static boolean disarm(final Session t)
    {
        return ask(t, r ->
        {
            r.disarm();
            return true;
        });
    }

    private static boolean pending(final Session t)
    {
        return ask(t, DoorbellRing::pending);
    }

    /** @return whether this poller took the ring over (false when the session has ended). */
    private static boolean cover(final Session t)
    {
        return ask(t, DoorbellRing::cover);
    }

    /** @return whether doorbells were published before the ring asked for kicks again (false once ended). */
    private static boolean uncover(final Session t)
    {
        return ask(t, DoorbellRing::uncover);
    }

    private static boolean arm(final Session t)
    {
        return ask(t, DoorbellRing::arm);
    }
}
