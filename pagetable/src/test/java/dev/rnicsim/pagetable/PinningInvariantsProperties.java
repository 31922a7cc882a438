package dev.rnicsim.pagetable;

import dev.rnicsim.pagetable.HostModelPropertiesSupport.Model;
import dev.rnicsim.pagetable.HostModelPropertiesSupport.Setup;
import java.util.Arrays;
import java.util.function.BiConsumer;
import java.util.function.Predicate;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.ActionChainArbitrary;
import net.jqwik.api.state.Transformer;

/**
 * Stateful properties of pinning on a small host (64 or 128 MiB, a quarter of it ZONE_MOVABLE, 64 MiB of swap,
 * four 2 MiB hugetlb pages) with one to three processes. Random chains of mmap (anonymous in 2 MiB multiples so
 * that THP happens, sometimes ragged, sometimes MAP_HUGETLB), writes of byte patterns, touches, pins (write or
 * read, long-term or not), unpins, partial munmap, madvise (DONTNEED, HUGEPAGE, NOHUGEPAGE, DONTFORK, DOFORK),
 * mprotect, reclaim, compaction, fork, exit and read-back run against {@link HostModelPropertiesSupport.Model},
 * which checks after every step:
 * <ol>
 *   <li>every frame's pin count is never negative and equals what the live pins hold on its folio;</li>
 *   <li>{@code pinnedVmPages()} of every process equals the page count of its live pins;</li>
 *   <li>a pinned frame stays allocated, is never split out of its folio, keeps its bytes through reclaim,
 *       compaction, migration and THP splits, and its virtual address keeps translating to it (see the support
 *       class for the legacy-fork exception);</li>
 *   <li>every page written through a virtual address holds those bytes (read back through the process, which
 *       swaps in what reclaim took; DONTNEED and munmap reset the expectation to zeros);</li>
 *   <li>free frames + used frames = total frames, and the VMAs are exactly the modelled mappings;</li>
 *   <li>at the end, with every pin dropped and every process gone, no pin count and no pinned_vm remain and only
 *       the hugetlb pool is in use.</li>
 * </ol>
 * Calls that must fail (ENOMEM past the hugetlb pool or RLIMIT_MEMLOCK, EFAULT, EINVAL, SIGSEGV) are checked to
 * fail with the right errno and to change nothing observable. A failure message ends with the calls of the run
 * as plain Java.
 */
class PinningInvariantsProperties
{
    private static final long INF = UserProcess.RLIM_INFINITY;

    /** The boot settings of the current try; the chain's initial state is built from it when the chain runs. */
    private Setup setup;

    @Property(tries = 120)
    void pinCountsPinnedVmAndWrittenDataSurviveAnySequenceOnModernKernel(
        @ForAll("modernSetups") final Setup boot, @ForAll("chains") final ActionChain<Model> chain)
    {
        runWithInvariants(boot, chain);
    }

    @Property(tries = 120)
    void pinCountsPinnedVmAndWrittenDataSurviveAnySequenceOnLegacyKernel(
        @ForAll("legacySetups") final Setup boot, @ForAll("chains") final ActionChain<Model> chain)
    {
        runWithInvariants(boot, chain);
    }

    @Property(tries = 80)
    void pinsPastMemlockLimitFailWithoutSideEffects(
        @ForAll("limitedSetups") final Setup boot, @ForAll("pinHeavyChains") final ActionChain<Model> chain)
    {
        runWithInvariants(boot, chain);
    }

    private void runWithInvariants(final Setup boot, final ActionChain<Model> chain)
    {
        setup = boot;
        final Model model = chain
            .withInvariant("pinCountNeverNegativeAndEqualsLivePins", Model::checkPinCounts)
            .withInvariant("pinnedVmEqualsSumOfLivePins", Model::checkPinnedVm)
            .withInvariant("pinnedFramesStayAllocatedUnsplitUnmovedAndUnchanged", Model::checkPinnedFrames)
            .withInvariant("writtenBytesReadBackFromPresentPages", Model::checkPresentDataReadsBack)
            .withInvariant("freePlusUsedFramesEqualsTotal", Model::checkFrameAccounting)
            .withInvariant("vmasMatchModelledMappings", Model::checkMappings)
            .run();
        model.finish();
    }

    // ------------------------------------------------------------------ generators

    @Provide
    Arbitrary<Setup> modernSetups()
    {
        return setups(Arbitraries.just(ForkBehaviour.MODERN), Arbitraries.just(INF));
    }

    @Provide
    Arbitrary<Setup> legacySetups()
    {
        return setups(Arbitraries.just(ForkBehaviour.LEGACY), Arbitraries.just(INF));
    }

    @Provide
    Arbitrary<Setup> limitedSetups()
    {
        return setups(Arbitraries.of(ForkBehaviour.class), Arbitraries.of(256L << 10, 1L << 20));
    }

    @Provide
    Arbitrary<ActionChain<Model>> chains()
    {
        return chains(1);
    }

    @Provide
    Arbitrary<ActionChain<Model>> pinHeavyChains()
    {
        return chains(3);
    }

    private static Arbitrary<Setup> setups(final Arbitrary<ForkBehaviour> fork, final Arbitrary<Long> rlimit)
    {
        final Arbitrary<ThpMode> thp = Arbitraries.frequency(
            Tuple.of(4, ThpMode.ALWAYS), Tuple.of(1, ThpMode.MADVISE), Tuple.of(1, ThpMode.NEVER));
        final Arbitrary<Long> phys = Arbitraries.of(64L << 20, 128L << 20);
        return Combinators.combine(phys, thp, fork, rlimit)
            .as((p, t, f, r) -> new Setup(p, t, f, r, 16L << 20));
    }

    private ActionChainArbitrary<Model> chains(final int pinWeight)
    {
        return ActionChain.<Model>startWith(() -> new Model(setup))
            .withAction(1, act("spawn", 0, m -> true, (m, c) -> m.spawnRootIfFew()))
            .withAction(4, act("mmapAnonymous", 3, m -> !m.procs.isEmpty(),
                (m, c) -> m.mmap(c[0], c[1], false, c[2] % 4 == 3)))
            .withAction(1, act("mmapHugetlb", 2, m -> !m.procs.isEmpty(), (m, c) -> m.mmap(c[0], c[1], true, false)))
            .withAction(6, act("write", 6, Model::hasRegions, (m, c) -> m.write(c[0], c[1], c[2], c[3], c[4], c[5])))
            .withAction(3, act("touch", 5, Model::hasRegions,
                (m, c) -> m.touch(c[0], c[1], c[2], c[3], c[4] % 2 == 1)))
            .withAction(3 * pinWeight, act("pin", 7, Model::hasRegions,
                (m, c) -> m.pin(c[0], c[1], c[2], c[3], c[4] % 2 == 1, c[5] % 2 == 1, extend(c[6]))))
            .withAction(2, act("unpin", 1, m -> !m.pins.isEmpty(), (m, c) -> m.unpin(c[0])))
            .withAction(2, act("munmap", 5, Model::hasRegions,
                (m, c) -> m.munmap(c[0], c[1], c[2], c[3], c[4] % 4 == 3, extend(c[4] / 4))))
            .withAction(3, act("madvise", 6, Model::hasRegions,
                (m, c) -> m.madvise(c[0], c[1], c[2], c[3], Madvice.values()[c[4] % Madvice.values().length],
                    c[5] % 4 == 3, extend(c[5] / 4))))
            .withAction(1, act("mprotect", 6, Model::hasRegions,
                (m, c) -> m.mprotect(c[0], c[1], c[2], c[3], c[4] % 2 == 0, c[5] % 4 == 3, extend(c[5] / 4))))
            .withAction(3, act("reclaim", 1, m -> true,
                (m, c) -> m.reclaim(new long[] {32, 512, 4096, 1L << 20}[c[0] % 4])))
            .withAction(2, act("compact", 0, m -> true, (m, c) -> m.compact()))
            .withAction(2, act("fork", 1, m -> !m.procs.isEmpty() && m.procs.size() < 3, (m, c) -> m.fork(c[0])))
            .withAction(1, act("exit", 2, m -> !m.procs.isEmpty(), (m, c) -> m.exit(c[0], c[1] % 4 != 3)))
            .withAction(2, act("readBack", 2, m -> !m.procs.isEmpty(), (m, c) -> m.readBack(c[0], c[1])))
            .withMaxTransformations(40);
    }

    /** Mostly 0; sometimes a few pages past the chosen region, to reach unmapped or neighbouring memory. */
    private static int extend(final int choice)
    {
        return choice % 8 == 7 ? 1 + (choice / 8) % 600 : 0;
    }

    /**
     * An action with {@code choices} random ints, resolved against the state when it runs, so that a chain
     * shrunk by dropping earlier steps still runs (a choice that finds nothing to act on does nothing).
     */
    private static Action.Independent<Model> act(final String name, final int choices, final Predicate<Model> when,
        final BiConsumer<Model, int[]> body)
    {
        final Arbitrary<int[]> args = Arbitraries.integers().between(0, 1 << 16).array(int[].class).ofSize(choices);
        return new Action.Independent<>()
        {
            @Override
            public boolean precondition(final Model state)
            {
                return when.test(state);
            }

            @Override
            public Arbitrary<Transformer<Model>> transformer()
            {
                return args.map(c -> Transformer.mutate(name + Arrays.toString(c), m -> body.accept(m, c)));
            }
        };
    }
}
