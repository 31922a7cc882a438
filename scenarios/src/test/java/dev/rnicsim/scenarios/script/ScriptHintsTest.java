package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;

/**
 * A mistyped word in a script names the word meant, as a mistyped verb does: a view of {@code show} ({@code show
 * counter}), a view of {@code show rdma} ({@code statistics}, {@code res mrs}), a warning kind of {@code expect
 * warning}; an {@code expect warning} without a kind lists the kinds; the usage of {@code show} names its
 * {@code rdma} views. Each is refused before anything runs.
 */
class ScriptHintsTest
{
    private static final String DEVICE = """
        host h ram=256M
        device d h profile=connectx5
        """;

    private static AbstractThrowableAssert<?, ? extends Throwable> refused(final String line)
    {
        return assertThatThrownBy(() -> new ScriptParser().parse("h.rsim", DEVICE + line + "\n"))
            .isInstanceOf(ScriptException.class).hasMessageContaining("h.rsim:3");
    }

    @Test
    void aMistypedViewOfShowShouldNameTheViewMeant()
    {
        refused("show counter d").hasMessageContaining("'counter' is not one of [")
            .hasMessageContaining("; did you mean 'counters'?; expected: show ");
    }

    @Test
    void aWordNearNoViewShouldGetNoGuess()
    {
        refused("show zzzzzzzz d").hasMessageContaining("'zzzzzzzz' is not one of [")
            .hasMessageNotContaining("did you mean");
    }

    @Test
    void theUsageOfShowShouldNameItsRdmaViews()
    {
        refused("show").hasMessageContaining("expected: show mr|odp|")
            .hasMessageContaining("| show rdma res mr|pd|qp|cq [DEVICE] | show rdma statistic [DEVICE]");
    }

    @Test
    void aMistypedRdmaViewShouldNameTheViewMeant()
    {
        refused("show rdma statistics d")
            .hasMessageContaining("expected 'show rdma res mr|pd|qp|cq [DEVICE]' or 'show rdma statistic [DEVICE]'"
                + "; did you mean 'show rdma statistic'?");
        refused("show rdma res mrs").hasMessageContaining("; did you mean 'show rdma res mr'?");
        refused("show rdma ress mr").hasMessageContaining("; did you mean 'show rdma res'?");
    }

    @Test
    void anExpectWarningWithoutAKindShouldListTheKinds()
    {
        refused("expect warning").hasMessageContaining("'expect warning' needs the kind of warning expected, one of [")
            .hasMessageContaining("STALE_LKEY").hasMessageContaining("KEY_RETIRED_IN_FLIGHT")
            .hasMessageContaining("'expect no warnings'").hasMessageNotContaining("errno");
    }

    @Test
    void aMistypedWarningKindShouldNameTheKindMeantInTheCaseTyped()
    {
        refused("expect warning stale_lkeys").hasMessageContaining("'stale_lkeys' is no warning kind")
            .hasMessageContaining("; did you mean 'stale_lkey'?");
        refused("expect warning UNUSED_MT").hasMessageContaining("; did you mean 'UNUSED_MR'?");
    }
}
