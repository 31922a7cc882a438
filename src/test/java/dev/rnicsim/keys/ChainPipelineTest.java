package dev.rnicsim.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import dev.rnicsim.mtt.VariantPolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.state.ActionChain;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * A failure found late in a world beside the first, in the soak's pipeline ({@link ChainPipeline}), is still
 * reported, with the chain that failed: a bug planted in the end checks of the RANDOM worlds only
 * ({@link Lockstep#plantedEndBug}), which run on a thread of their own after the chain's try has returned, fails the
 * property with that world's script, minimized from that chain's own actions (not from the sample of the later try
 * the failure surfaced in), and a failure in the last chain's end checks fails the property at its end.
 */
class ChainPipelineTest
{
    /** The nested properties the tests run. */
    private static final String MANY_TRIES = "aFailureBesideSurfacesInALaterTry";
    private static final String ONE_TRY = "aFailureInTheLastChainFailsTheProperty";

    @Test
    void aFailureInAWorldBesideIsReportedWithItsOwnChainAndMinimized()
    {
        final Throwable t = runPlanted(MANY_TRIES, 4);
        assertThat(Mismatch.kindOf(t)).as("a counter mismatch: %s", t).isEqualTo(Mismatch.Kind.STATE);
        final String message = Mismatch.messageOf(t);
        assertThat(message).contains("sim_mtt_entries_in_use at the chain's end")
            .contains("failed in a world beside after its try had returned");
        final Mismatch reported = Mismatch.withScript(t);
        assertThat(reported).as("the failure carries a script: %s", message).isNotNull();
        assertThat(reported.policy).as("the failing world's own policy").isEqualTo(VariantPolicy.RANDOM);
        assertThat(reported.late).isTrue();
        assertThat(reported.script).as("the RANDOM world's run").contains("keys=random");
        final Matcher m = Pattern.compile("minimized from (\\d+) to (\\d+) actions").matcher(message);
        assertThat(m.find()).as("minimized: %s", message).isTrue();
        // Four registrations make the bug show (and a buffer to register): little more is left.
        assertThat(Integer.parseInt(m.group(2))).as("actions left after minimizing: %s", message).isBetween(4, 8);
        // The actions carried are the failing chain's: run again on a fresh RANDOM world, they fail the same way,
        // and on a GENERATION world (no bug planted there) they pass.
        assertThat(reported.ops).hasSize(Integer.parseInt(m.group(2)));
        Lockstep.plantedEndBug = VariantPolicy.RANDOM;
        try
        {
            final Throwable again = new Minimize.Minimizer(reported.params, VariantPolicy.RANDOM,
                Mismatch.Kind.STATE).run(reported.ops);
            assertThat(again).as("the minimal chain fails again on its own").isNotNull();
            assertThat(Mismatch.messageOf(again)).contains("sim_mtt_entries_in_use at the chain's end");
            assertThat(new Minimize.Minimizer(reported.params, VariantPolicy.GENERATION, Mismatch.Kind.STATE)
                .run(reported.ops)).as("no bug in the GENERATION world").isNull();
        }
        finally
        {
            Lockstep.plantedEndBug = null;
        }
    }

    @Test
    void aFailureInTheLastChainsEndChecksFailsThePropertyAtItsEnd()
    {
        // Every chain's end fails in the RANDOM world; the only try's worlds beside end after it has returned.
        final Throwable t = runPlanted(ONE_TRY, 0);
        assertThat(Mismatch.kindOf(t)).as("a counter mismatch: %s", t).isEqualTo(Mismatch.Kind.STATE);
        final Mismatch reported = Mismatch.withScript(t);
        assertThat(reported).isNotNull();
        assertThat(reported.policy).isEqualTo(VariantPolicy.RANDOM);
        assertThat(reported.late).isTrue();
        assertThat(Mismatch.messageOf(t)).contains("sim_mtt_entries_in_use at the chain's end").contains("minimized");
    }

    /** Runs a property of {@link Pipelined} with the bug planted in the RANDOM worlds; returns its one failure. */
    private static Throwable runPlanted(final String property, final int mrs)
    {
        final List<Throwable> failures = new ArrayList<>();
        final List<String> events = new ArrayList<>();
        Lockstep.plantedEndBug = VariantPolicy.RANDOM;
        Lockstep.plantedEndBugMrs = mrs;
        try
        {
            LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                .selectors(selectMethod(Pipelined.class, property,
                    ChainParams.class.getName() + "," + ActionChain.class.getName()))
                .build(), new TestExecutionListener()
                {
                    @Override
                    public void executionSkipped(final TestIdentifier id, final String reason)
                    {
                        events.add(id.getDisplayName() + " skipped: " + reason);
                    }

                    @Override
                    public void executionFinished(final TestIdentifier id, final TestExecutionResult result)
                    {
                        events.add(id.getDisplayName() + " " + result.getStatus());
                        if (id.isTest())
                        {
                            result.getThrowable().ifPresent(failures::add);
                        }
                    }
                });
        }
        finally
        {
            Lockstep.plantedEndBug = null;
            Lockstep.plantedEndBugMrs = 4;
        }
        assertThat(failures).as("the property with the planted bug fails (%s)", events).hasSize(1);
        return failures.get(0);
    }

    /** The soak's property in the pipeline, run only by the tests above (with the bug planted), seed fixed. */
    @AddLifecycleHook(Pipelined.OnlyWhenPlanted.class)
    static class Pipelined extends PlantedBugChains
    {
        @Property(tries = 300, seed = "42")
        @AddLifecycleHook(ChainPipeline.On.class)
        @AddLifecycleHook(Minimize.class)
        void aFailureBesideSurfacesInALaterTry(@ForAll("params") final ChainParams params,
            @ForAll("chains") final ActionChain<Lockstep> chain)
        {
            run(params, chain);
        }

        @Property(tries = 1, seed = "42")
        @AddLifecycleHook(ChainPipeline.On.class)
        @AddLifecycleHook(Minimize.class)
        void aFailureInTheLastChainFailsTheProperty(@ForAll("params") final ChainParams params,
            @ForAll("chains") final ActionChain<Lockstep> chain)
        {
            run(params, chain);
        }

        private static void run(final ChainParams params, final ActionChain<Lockstep> chain)
        {
            if (!ChainPipeline.failedEarlier())
            {
                KeyLifecycleProperties.run(params, chain).release();
            }
        }

        /** Skipped unless the bug is planted (when the build's test run finds the class on its own). */
        public static final class OnlyWhenPlanted extends SkipUnlessPlanted
        {
            @Override
            boolean planted()
            {
                return Lockstep.plantedEndBug != null;
            }

            @Override
            String runBy()
            {
                return "ChainPipelineTest";
            }
        }
    }
}
