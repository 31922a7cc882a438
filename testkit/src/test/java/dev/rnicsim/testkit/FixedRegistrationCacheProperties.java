package dev.rnicsim.testkit;

import net.jqwik.api.AfterFailureMode;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.state.ActionChain;

/**
 * The property the naive cache fails ({@link NaiveRegistrationCacheTest}), with the fixed cache: it holds, with
 * strict mode clean after every action.
 */
class FixedRegistrationCacheProperties
{
    @Property(seed = NaiveCacheCheck.SEED, tries = NaiveCacheCheck.TRIES, afterFailure = AfterFailureMode.RANDOM_SEED)
    void fixedCacheKeepsStrictModeClean(@ForAll("chains") final ActionChain<VerbsState> chain)
    {
        VerbsActions.run(chain);
    }

    @Provide
    Arbitrary<ActionChain<VerbsState>> chains()
    {
        return CacheActions.chains(FixedRegistrationCache::of);
    }
}
