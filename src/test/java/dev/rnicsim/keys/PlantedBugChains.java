package dev.rnicsim.keys;

import net.jqwik.api.Arbitrary;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.BeforeProperty;
import net.jqwik.api.lifecycle.LifecycleContext;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.SkipExecutionHook;
import net.jqwik.api.state.ActionChain;

/**
 * What the key-lifecycle properties run with a planted bug share ({@link PlantedBugTest}, {@link ChainPipelineTest}):
 * the suite's parameters and chains, and no failure remembered from an earlier property.
 */
abstract class PlantedBugChains
{
    @BeforeProperty
    void forgetEarlierFailures()
    {
        Mismatch.reset();
    }

    @Provide
    Arbitrary<ChainParams> params()
    {
        return KeyChains.params();
    }

    @Provide
    Arbitrary<ActionChain<Lockstep>> chains()
    {
        return KeyChains.chains(KeyLifecycleProperties.MAX_ACTIONS, new ReuseStats());
    }

    /** Skips a container unless its bug is planted: the build's test run finds the container on its own. */
    abstract static class SkipUnlessPlanted implements SkipExecutionHook
    {
        /** @return whether the bug is planted now. */
        abstract boolean planted();

        /** @return the test that plants the bug and runs the container. */
        abstract String runBy();

        @Override
        public PropagationMode propagateTo()
        {
            return PropagationMode.ALL_DESCENDANTS;
        }

        @Override
        public SkipResult shouldBeSkipped(final LifecycleContext context)
        {
            return planted() ? SkipResult.doNotSkip() : SkipResult.skip("run by " + runBy() + " with the bug planted");
        }
    }
}
