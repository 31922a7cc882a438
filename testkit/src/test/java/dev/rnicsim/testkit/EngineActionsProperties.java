package dev.rnicsim.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.testkit.Violation.Kind;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.state.ActionChain;

/**
 * Engine steps interleaved with correct use: queued WRITEs, packets moved a few at a time, deregistrations, unmaps
 * and CPU writes in any order. Every queued WRITE completes once, in order; a deregistration under a WRITE in flight
 * is reported by strict mode as the use of a stale rkey, and by nothing else.
 */
class EngineActionsProperties
{
    @Property(tries = 30, seed = "19")
    void queuedWritesCompleteOnceInOrderWhateverRunsBetweenTheirPackets(
        @ForAll("withEngineSteps") final ActionChain<VerbsState> chain)
    {
        final VerbsState state = chain.run();
        try
        {
            EngineActions.finish(state);
            assertThat(state.strict().violations()).extracting(Violation::kind).allMatch(k -> k == Kind.STALE_RKEY);
            final EngineActions.Queued q = state.attachment(EngineActions.Queued.class);
            net.jqwik.api.statistics.Statistics.label("queued WRITEs completed").collect(q.completed() > 0);
            assertThat(q.pending()).as("queued WRITEs without a "
                + "completion after the last poll").isEmpty();
        }
        finally
        {
            state.closeQuietly();
        }
    }

    @Provide
    Arbitrary<ActionChain<VerbsState>> withEngineSteps()
    {
        return EngineActions.inFlight(VerbsActions.correctUse(ActionChain.startWith(() -> VerbsState.create(
            TestNic.builder(), CacheActions.MAX_BUFFER)))).withAction(2, EngineActions.poll())
            .withMaxTransformations(30);
    }
}
