package dev.rnicsim.simnic;

import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * A simulated completion queue. Its ring is pinned process memory. A completion that finds the CQ full is lost
 * and the CQ is marked overrun, raising IBV_EVENT_CQ_ERR on its context's {@link AsyncEventQueue}; the QP that produced it goes to
 * the error state.
 *
 * <p>Not thread safe.
 */
public final class SimCq implements CompletionQueue
{
    private final SimContext context;
    private int cqe;
    private Ring ring;
    private final ArrayDeque<WorkCompletion> entries = new ArrayDeque<>();
    private int users;
    private boolean overrun;
    /** The QP of the last send completion polled ({@link SendSlots#polled}), or null. */
    private SimQp lastSender;
    private boolean closed;
    private int wanted;
    private final java.util.function.BooleanSupplier hasEntries = () -> entries.size() >= wanted || closed;

    SimCq(final SimContext context, final int cqe, final Ring ring)
    {
        this.context = context;
        this.cqe = cqe;
        this.ring = ring;
    }

    @Override
    public SimContext context()
    {
        return context;
    }

    @Override
    public int cqe()
    {
        return cqe;
    }

    @Override
    public List<WorkCompletion> poll(final int maxEntries)
    {
        final EngineThread held = context.device().fabric().enter();
        try
        {
            if (closed)
            {
                throw new VerbsException("ibv_poll_cq", Errno.EINVAL.code(), "the CQ is closed (" + (context.process()
                    .exited() ? "process " + context.process().pid() + " exited, which released it"
                    : "ibv_destroy_cq released it") + "); poll a live CQ");
            }
            if (maxEntries <= 0)
            {
                // ibv_poll_cq with num_entries <= 0 polls nothing and returns 0.
                return List.of();
            }
            if (entries.size() < maxEntries)
            {
                // Polling lets the devices work until this CQ has the completions asked for or nothing is left to do.
                wanted = maxEntries;
                context.device().fabric().runUntil(hasEntries, held);
            }
            final List<WorkCompletion> out = new ArrayList<>(Math.min(maxEntries, entries.size()));
            while (out.size() < maxEntries && !entries.isEmpty())
            {
                final WorkCompletion wc = entries.removeFirst();
                out.add(wc);
                lastSender = SendSlots.polled(context.device(), wc, lastSender);
            }
            return out;
        }
        finally
        {
            SimFabric.exit(held);
        }
    }

    /**
     * @return completions waiting to be polled.
     */
    public int depth()
    {
        return entries.size();
    }

    /**
     * @return true once a completion was lost because the CQ was full.
     */
    public boolean overrun()
    {
        return overrun;
    }

    /** Adds a completion; false when the CQ was full and it was lost. */
    boolean push(final WorkCompletion wc)
    {
        // the CQ overflows once it holds what the driver's ring holds (CqDepth.held: hns one more than it reports)
        if (closed || entries.size() >= CqDepth.held(context.device().profile(), cqe))
        {
            if (!closed && !overrun)
            {
                AsyncEventQueue.cqOverrun(this);
            }
            overrun = true;
            return false;
        }
        // the device stamps each CQE with its clock as it writes it (the CQE's timestamp field)
        entries.addLast(wc.withCompletionTime(context.device().fabric().clock().nowNs()));
        return true;
    }

    /**
     * {@code ibv_resize_cq}, with the completions the process already holds: see {@link CqResize}.
     *
     * @param newCqe          the least number of entries wanted.
     * @param heldByProcess   completions already handed to the process's own copy of the CQ and not yet polled
     *                        there (the library of {@code rnicsim exec} keeps them), 0 through this API.
     * @throws VerbsException see {@link CqResize#resize}.
     */
    public void resize(final int newCqe, final int heldByProcess)
    {
        final EngineThread held = context.device().fabric().enter();
        try
        {
            // The devices finish the work already posted before the completions are counted: a NIC writes them while
            // the process runs (rdma-core tests/test_cq.py test_resize_cq sleeps a second for the sends it posted,
            // then expects EINVAL for a size below them); the simulated devices work only when asked.
            context.device().fabric().runUntil(() -> closed || entries.size() >= cqe, held);
            CqResize.resize(this, newCqe, entries.size() + heldByProcess);
        }
        finally
        {
            SimFabric.exit(held);
        }
    }

    @Override
    public void resize(final int newCqe)
    {
        resize(newCqe, 0);
    }

    boolean closedForResize()
    {
        return closed;
    }

    Ring ring()
    {
        return ring;
    }

    void resized(final int newCqe, final Ring newRing)
    {
        cqe = newCqe;
        ring = newRing;
    }

    /**
     * Removes the completions of one QP not yet polled, keeping the others in order: the provider's clean of the CQ
     * when that QP goes to RESET ({@link ProviderRule#RESET_CLEANS_CQ}).
     *
     * @return how many were removed.
     */
    int removeCompletionsOf(final int qpNum)
    {
        final int before = entries.size();
        if (before == 0)
        {
            return 0;
        }
        entries.removeIf(wc -> wc.qpNum() == qpNum);
        return before - entries.size();
    }

    /**
     * @return the QPs and XRC SRQs using this CQ (a QP using it for both queues counts once).
     */
    public int users()
    {
        return users;
    }

    void attach()
    {
        users++;
    }

    void detach()
    {
        users--;
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        if (users > 0)
        {
            throw new VerbsException("ibv_destroy_cq", Errno.EBUSY.code(), users + " QP(s) or XRC SRQ(s) still "
                + "use this CQ (ib_destroy_cq_user refuses while they hold it); destroy them first");
        }
        closed = true;
        AsyncEventQueue.objectDestroyed(context, this);
        ring.release();
        context.device().count(SimCounter.PINNED_BYTES, -ring.lengthBytes());
        context.cqClosed(this);
    }
}
