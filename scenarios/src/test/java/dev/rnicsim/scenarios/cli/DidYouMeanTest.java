package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A mistyped subcommand or option names the nearest ones (picocli's suggestions), as a script's unknown verb does. */
class DidYouMeanTest
{
    @Test
    void aMistypedSubcommandShouldNameTheNearestOne()
    {
        final CliRun r = CliRun.of("rnu", "demo.rsim");

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("'rnu'").contains("Did you mean: run?").contains("'rnicsim --help'")
            .doesNotContain("Usage:");
    }

    @Test
    void aMistypedNestedSubcommandShouldNameTheNearestOneWithItsParent()
    {
        final CliRun r = CliRun.of("scenario", "lst");

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("Did you mean: scenario list?").contains("'rnicsim scenario --help'");
    }

    @Test
    void aMistypedOptionShouldNameTheNearestOptions()
    {
        final CliRun r = CliRun.of("run", "--trce", "t.json", "demo.rsim");

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("Unknown option: '--trce'").contains("Possible solutions: ").contains("--trace")
            .contains("'rnicsim run --help'");
    }

    @Test
    void aSwappedLetterInAnOptionShouldNameTheOption()
    {
        final CliRun r = CliRun.of("run", "--verbsoe", "demo.rsim");

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("Possible solutions: ").contains("--verbose");
    }

    @Test
    void aWordLikeNoSubcommandShouldStillPrintTheUsage()
    {
        final CliRun r = CliRun.of("frobnicate");

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("frobnicate").contains("Usage:").doesNotContain("Did you mean");
    }

    @Test
    void aNumberPastItsRangeShouldSayTooLargeWithTheBoundNotAJavaType()
    {
        final CliRun r = CliRun.of("plan", "--hugepages2m", "99999999999999999999");

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("too large: at most 9223372036854775807 (2^63 - 1)").doesNotContain("a long");
    }
}
