package dev.rnicsim.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.statistics.StatisticsReport;

/**
 * The invariant of key retirement on every step of chains that mix messages in flight (queued WRITEs, through MRs
 * and through a type 2 window, packets moved a few at a time, polls) with every kind of retirement and the process
 * events around it: dereg, window bind and rebind, LOCAL_INV, dealloc_mw, munmap, CPU writes, fork and a child's
 * exit. Each step ends with {@link DmaInvariant#assertHeld}, so a failure names the step after which a DMA went
 * through a retired key, and jqwik shrinks the chain to the shortest such script.
 */
class RetirementInvariantProperties
{
    @Property(tries = 40, seed = "1919")
    @StatisticsReport(onFailureOnly = true)
    void onMlx5NoDmaUsesAKeyAfterItsRetirementReturned(@ForAll("mlx5") final ActionChain<VerbsState> chain)
    {
        runAndCheck(chain);
        coverage();
    }

    @Property(tries = 25, seed = "1920")
    @StatisticsReport(onFailureOnly = true)
    void onRxeNoDmaUsesAKeyAfterItsRetirementReturned(@ForAll("rxe") final ActionChain<VerbsState> chain)
    {
        runAndCheck(chain);
        coverage();
    }

    /** The chains do what they are for: DMA happens, and windows are rebound (retiring rkeys) in some of them. */
    private static void coverage()
    {
        Statistics.label("DMA accesses checked").coverage(c -> c.check(true).percentage(p -> p > 50));
        Statistics.label("window rebound").coverage(c -> c.check(true).percentage(p -> p > 10));
    }

    private static void runAndCheck(final ActionChain<VerbsState> chain)
    {
        final VerbsState state = chain.run();
        try
        {
            EngineActions.finish(state);
            state.nic().dmaInvariant().assertHeld("the last poll");
            Statistics.label("DMA accesses checked").collect(state.nic().dmaInvariant().accesses() > 0);
            Statistics.label("window rebound").collect(state.attachment(RetirementActions.Window.class,
                RetirementActions.Window::new).binds() > 1);
            assertThat(state.attachment(EngineActions.Queued.class, EngineActions.Queued::new).pending())
                .as("queued WRITEs without a completion after the last poll").isEmpty();
        }
        finally
        {
            state.closeQuietly();
        }
    }

    @Provide
    Arbitrary<ActionChain<VerbsState>> mlx5()
    {
        return chains(TestNic.builder());
    }

    @Provide
    Arbitrary<ActionChain<VerbsState>> rxe()
    {
        return chains(TestNic.builder().profile("rxe"));
    }

    private static Arbitrary<ActionChain<VerbsState>> chains(final TestNic.Builder nic)
    {
        return RetirementActions.withRetirements(EngineActions.inFlight(VerbsActions.correctUse(ActionChain
            .startWith(() -> VerbsState.create(nic, CacheActions.MAX_BUFFER))))).withAction(2, EngineActions.poll())
            .withMaxTransformations(30);
    }
}
