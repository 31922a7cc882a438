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
 * Properties over chains with one kind of misuse each, which strict mode must catch: they fail, and
 * {@link MisuseTest} asserts how. Run only by it ({@link OnlyWhenAsked}).
 */
@AddLifecycleHook(OnlyWhenAsked.class)
class MisuseChecks
{
    @Property(seed = "7", tries = 100, afterFailure = AfterFailureMode.RANDOM_SEED, shrinking = ShrinkingMode.FULL)
    void munmapUnderALiveMr(@ForAll("unmapping") final ActionChain<VerbsState> chain)
    {
        VerbsActions.run(chain);
    }

    @Provide
    Arbitrary<ActionChain<VerbsState>> unmapping()
    {
        return ActionChain.startWith(MisuseChecks::state).withAction(2, VerbsActions.mmap())
            .withAction(2, VerbsActions.register()).withAction(1, VerbsActions.munmap())
            .withAction(1, VerbsActions.mmapAgain()).withAction(3, VerbsActions.remoteWrite())
            .withMaxTransformations(15);
    }

    @Property(seed = "7", tries = 100, afterFailure = AfterFailureMode.RANDOM_SEED, shrinking = ShrinkingMode.FULL)
    void writeFromTheParentAfterALegacyFork(@ForAll("forking") final ActionChain<VerbsState> chain)
    {
        VerbsActions.run(chain);
    }

    @Provide
    Arbitrary<ActionChain<VerbsState>> forking()
    {
        return ActionChain.startWith(MisuseChecks::state).withAction(2, VerbsActions.mmap())
            .withAction(2, VerbsActions.register()).withAction(1, VerbsActions.fork())
            .withAction(2, VerbsActions.cpuWrite()).withAction(3, VerbsActions.remoteWrite())
            .withMaxTransformations(15);
    }

    @Property(seed = "7", tries = 100, afterFailure = AfterFailureMode.RANDOM_SEED, shrinking = ShrinkingMode.FULL)
    void anyKeyEverIssued(@ForAll("keys") final ActionChain<VerbsState> chain)
    {
        VerbsActions.run(chain);
    }

    @Provide
    Arbitrary<ActionChain<VerbsState>> keys()
    {
        return ActionChain.startWith(MisuseChecks::state).withAction(2, VerbsActions.mmap())
            .withAction(2, VerbsActions.register()).withAction(1, VerbsActions.deregister())
            .withAction(3, VerbsActions.remoteAccessAnyKey()).withMaxTransformations(15);
    }

    private static VerbsState state()
    {
        return VerbsState.create(TestNic.builder().forkBehaviour(dev.rnicsim.pagetable.ForkBehaviour.LEGACY),
            CacheActions.MAX_BUFFER);
    }
}
