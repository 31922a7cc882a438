package dev.rnicsim.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

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
 * The key-lifecycle chains still find a real bug and minimize it: with a bug planted in the model of the MTT entries
 * (one entry too many once four MRs are live, {@link KeyWorld#plantedMttBug}) the property of
 * {@link KeyLifecycleProperties}, run by jqwik with its shrinking and {@link Minimize}, fails within a few hundred
 * chains, with an MTT counter mismatch, minimized to a handful of actions (four registrations and little else).
 */
class PlantedBugTest
{
    @Test
    void theChainsFindAndMinimizeABugPlantedInTheMttModel()
    {
        final List<Throwable> failures = new ArrayList<>();
        KeyWorld.plantedMttBug = true;
        try
        {
            LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                .selectors(selectMethod(WithPlantedBug.class, "everyKeyGrantsExactlyWhatTheModelSaysUnderEveryPolicy",
                    ChainParams.class.getName() + "," + ActionChain.class.getName()))
                .build(), new TestExecutionListener()
                {
                    @Override
                    public void executionFinished(final TestIdentifier id, final TestExecutionResult result)
                    {
                        if (id.isTest())
                        {
                            result.getThrowable().ifPresent(failures::add);
                        }
                    }
                });
        }
        finally
        {
            KeyWorld.plantedMttBug = false;
        }
        assertThat(failures).as("the property with the planted bug fails").hasSize(1);
        final Throwable t = failures.get(0);
        assertThat(Mismatch.kindOf(t)).as("a counter mismatch: %s", t).isEqualTo(Mismatch.Kind.STATE);
        final String message = Mismatch.messageOf(t);
        assertThat(message).contains("sim_mtt_entries_in_use");
        final Matcher m = Pattern.compile("minimized from (\\d+) to (\\d+) actions").matcher(message);
        assertThat(m.find()).as("minimized: %s", message).isTrue();
        // Four registrations make the bug show; a minimal chain needs little more (a buffer to register).
        assertThat(Integer.parseInt(m.group(2))).as("actions left after minimizing: %s", message).isBetween(4, 8);
    }

    /** The key-lifecycle property, run only by the test above (with the bug planted), seed fixed. */
    @AddLifecycleHook(WithPlantedBug.OnlyWhenPlanted.class)
    static class WithPlantedBug extends PlantedBugChains
    {
        @Property(tries = 300, seed = "42")
        @AddLifecycleHook(Minimize.class)
        void everyKeyGrantsExactlyWhatTheModelSaysUnderEveryPolicy(@ForAll("params") final ChainParams params,
            @ForAll("chains") final ActionChain<Lockstep> chain)
        {
            KeyLifecycleProperties.run(params, chain).release();
        }

        /** Skipped unless the bug is planted (when the build's test run finds the class on its own). */
        public static final class OnlyWhenPlanted extends SkipUnlessPlanted
        {
            @Override
            boolean planted()
            {
                return KeyWorld.plantedMttBug;
            }

            @Override
            String runBy()
            {
                return "PlantedBugTest";
            }
        }
    }
}
