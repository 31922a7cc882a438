package dev.rnicsim.testkit;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChainArbitrary;

/**
 * Engine steps as chain actions (docs/async.md): a WRITE that is only queued, the fabric moving a few packets, and a
 * poll that lets everything finish. With them, jqwik interleaves deregistrations, unmaps and CPU writes with
 * messages in flight, and shrinks a failure to a minimal script.
 *
 * <p>What they check as they go, failing the chain with an {@link AssertionError}: every queued WRITE completes
 * exactly once, and a QP's completions come in the order its work requests were posted.
 */
public final class EngineActions
{
    private EngineActions()
    {
    }

    /** The queued WRITEs whose completions are still to come, in posting order; an attachment of the state. */
    public static final class Queued
    {
        private final List<Long> ids = new ArrayList<>();
        private final List<Integer> qps = new ArrayList<>();
        private long completed;

        /**
         * @return the ids of the queued WRITEs not completed yet, oldest first.
         */
        public List<Long> pending()
        {
            return List.copyOf(ids);
        }

        /**
         * @return the queued WRITEs completed so far.
         */
        public long completed()
        {
            return completed;
        }

        /** Remembers a WRITE just queued on a QP, to check its completion comes once and in order. */
        void queued(final long wrId, final int qpNum)
        {
            ids.add(wrId);
            qps.add(qpNum);
        }
    }

    /**
     * Adds {@link #queuedWrite()}, {@link #progress()} and {@link #poll()}.
     *
     * @param chains the chain arbitrary.
     * @return it, with the actions.
     */
    public static ActionChainArbitrary<VerbsState> inFlight(final ActionChainArbitrary<VerbsState> chains)
    {
        return chains.withAction(3, queuedWrite()).withAction(3, progress()).withAction(1, poll());
    }

    /**
     * {@code post write qp_a sgl=src:LEN remote=mrN+OFF} on a manual engine: queued, not run.
     *
     * @return the action.
     */
    public static Action<VerbsState> queuedWrite()
    {
        return VerbsActions.picking("queued write", s -> !s.liveMrsWith(Access.REMOTE_WRITE).isEmpty(),
            Set.of(VerbsActions.Pick.Use.INDEX, VerbsActions.Pick.Use.OFFSET, VerbsActions.Pick.Use.LENGTH), s ->
            {
                final List<VerbsState.Mr> live = s.liveMrsWith(Access.REMOTE_WRITE).stream().map(s::mr).toList();
                final long srcBytes = s.sourceBytes();
                return p ->
                {
                    final VerbsState.Mr pick = p.of(live);
                    final String name = pick.name();
                    final long[] r = p.range(Math.min(pick.lengthBytes(), srcBytes));
                    return VerbsActions.step("post write qp_a sgl=src:" + VerbsActions.size(r[1]) + " remote="
                        + VerbsActions.at(name, r[0]) + "  # queued", st ->
                        {
                            final VerbsState.Mr m = st.mr(name);
                            if (m != null && m.live() && r[0] + r[1] <= m.lengthBytes())
                            {
                                final Queued q = st.attachment(Queued.class, Queued::new);
                                q.ids.add(st.nic().queueWrite(st.source(), st.source().addr(), r[1],
                                    m.addr() + r[0], m.rkey()));
                                q.qps.add(st.nic().qp(TestNic.Side.A).qpNum());
                            }
                        });
                };
            });
    }

    /**
     * {@code progress nic_a N}: the fabric moves up to N (1 to 8) packets.
     *
     * @return the action.
     */
    public static Action<VerbsState> progress()
    {
        return VerbsActions.action("progress", s -> true, s -> Arbitraries.integers().between(1, 8)
            .map(n -> VerbsActions.step("progress nic_a " + n, st -> st.nic().progress(n))));
    }

    /**
     * {@code poll cq_a}: everything in flight finishes; the queued WRITEs' completions are checked.
     *
     * @return the action.
     */
    public static Action<VerbsState> poll()
    {
        return VerbsActions.action("poll", s -> true, s -> Arbitraries.just(VerbsActions.step("poll cq_a",
            st -> settle(st, st.attachment(Queued.class, Queued::new)))));
    }

    /**
     * Lets everything in flight finish and checks the queued WRITEs' completions, as {@link #poll()} does: the end
     * of a chain.
     *
     * @param state the state.
     * @throws AssertionError when a queued WRITE completed out of order or not at all.
     */
    public static void finish(final VerbsState state)
    {
        settle(state, state.attachment(Queued.class, Queued::new));
    }

    private static void settle(final VerbsState st, final Queued q)
    {
        final List<WorkCompletion> wcs = st.nic().drain(TestNic.Side.A);
        // A QP destroyed with WQEs queued (the pair is replaced after an error) completes none of them.
        final int current = st.nic().qp(TestNic.Side.A).qpNum();
        for (int i = q.ids.size() - 1; i >= 0; i--)
        {
            final long id = q.ids.get(i);
            if (q.qps.get(i) != current && wcs.stream().noneMatch(c -> c.wrId() == id))
            {
                q.ids.remove(i);
                q.qps.remove(i);
            }
        }
        for (final WorkCompletion wc : wcs)
        {
            if (!q.ids.contains(wc.wrId()))
            {
                continue;
            }
            if (!q.ids.get(0).equals(wc.wrId()))
            {
                throw new AssertionError("completion of wr_id=" + wc.wrId() + " before wr_id=" + q.ids.get(0)
                    + ", posted earlier on the same QP: " + wcs);
            }
            q.ids.remove(0);
            q.qps.remove(0);
            q.completed++;
            if (!wc.ok())
            {
                st.record("  -> wr_id=" + wc.wrId() + " " + wc.status());
            }
        }
        if (!q.ids.isEmpty())
        {
            throw new AssertionError("queued WRITEs " + q.ids + " never completed: " + wcs);
        }
    }
}
