package dev.rnicsim.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.testkit.Violation.Kind;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.state.ActionChain;

/**
 * The actions themselves: correct use keeps strict mode clean; every action, misuse included, runs in any order
 * without throwing (refusals are outcomes), and prints a line of the script language.
 */
class VerbsActionsProperties
{
    /** The verbs the actions print, with the shape of their arguments. */
    private static final Pattern SCRIPT_LINE = Pattern.compile("(mmap buf\\d+ app_b \\w+"
        + "|munmap buf\\d+ \\w+|reg mr\\d+ pd_b buf\\d+(\\+\\w+)? \\w+ access=[a-z,]+|dereg mr\\d+"
        + "|post (write|read) qp_a sgl=src:\\w+ remote=(mr|buf)\\d+([+-]\\w+)?( rkey=(mr\\d+\\.rkey|0x[0-9a-f]+))?"
        + "|write buf\\d+(\\+\\w+)? \"[a-z0-9]*\"|fork child\\d+ app_b|madvise buf\\d+ \\w+ dontfork)(  # .*)?");

    @Property(tries = 25, seed = "11")
    void correctUseKeepsStrictModeClean(@ForAll("correct") final ActionChain<VerbsState> chain)
    {
        final VerbsState state = VerbsActions.run(chain);
        assertThat(state.isClosed()).isTrue();
        for (final String line : chain.transformations())
        {
            assertThat(line).matches(SCRIPT_LINE);
        }
    }

    @Provide
    Arbitrary<ActionChain<VerbsState>> correct()
    {
        return VerbsActions.correctUse(ActionChain.startWith(() -> VerbsState.create(TestNic.builder(),
            CacheActions.MAX_BUFFER))).withMaxTransformations(25);
    }

    @Property(tries = 25, seed = "12")
    void everyActionRunsInAnyOrder(@ForAll("everything") final ActionChain<VerbsState> chain)
    {
        final VerbsState state = chain.run();
        try
        {
            assertThat(state.log()).isNotEmpty();
            for (final String line : chain.transformations())
            {
                assertThat(line).matches(SCRIPT_LINE);
            }
            assertThat(state.strict().violations()).extracting(Violation::kind)
                .allMatch(k -> k == Kind.STALE_MAPPING || k == Kind.STALE_RKEY);
        }
        finally
        {
            state.closeQuietly();
        }
    }

    @Provide
    Arbitrary<ActionChain<VerbsState>> everything()
    {
        return VerbsActions.misuse(VerbsActions.correctUse(ActionChain.startWith(() -> VerbsState.create(
            TestNic.builder().forkBehaviour(dev.rnicsim.pagetable.ForkBehaviour.LEGACY), CacheActions.MAX_BUFFER))))
            .withAction(1, VerbsActions.dontFork()).withMaxTransformations(30);
    }
}
