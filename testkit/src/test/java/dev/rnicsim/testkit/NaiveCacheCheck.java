package dev.rnicsim.testkit;

import net.jqwik.api.AfterFailureMode;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.state.ActionChain;

/**
 * The property as a user would write it, with the naive cache: it fails. Not a test class of its own (its name
 * is outside the build's test patterns, and it skips itself unless asked): {@link NaiveRegistrationCacheTest} runs
 * it through the jqwik engine and asserts how it fails.
 */
@AddLifecycleHook(OnlyWhenAsked.class)
class NaiveCacheCheck
{
    /** A fixed seed, so that the run, its shrinking and its report are always the same. */
    static final String SEED = "20250601";
    /** Chains tried. */
    static final int TRIES = 60;

    @Property(seed = SEED, tries = TRIES, afterFailure = AfterFailureMode.RANDOM_SEED, shrinking = ShrinkingMode.FULL)
    void naiveCacheKeepsStrictModeClean(@ForAll("chains") final ActionChain<VerbsState> chain)
    {
        VerbsActions.run(chain);
    }

    @Provide
    Arbitrary<ActionChain<VerbsState>> chains()
    {
        return CacheActions.chains(NaiveRegistrationCache::of);
    }
}
