package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** A mistyped subcommand or option names the nearest ones (picocli's suggestions), as a script's unknown verb does. */
class DidYouMeanTest
{
    private record Result(int code, String out, String err)
    {
    }

    private static Result rnicsim(final String... args)
    {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final int code = Rnicsim.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Result(code, out.toString(), err.toString());
    }

    @Test
    void aMistypedSubcommandShouldNameTheNearestOne()
    {
        final Result r = rnicsim("rnu", "demo.rsim");

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("'rnu'").contains("Did you mean: run?").contains("'rnicsim --help'")
            .doesNotContain("Usage:");
    }

    @Test
    void aMistypedNestedSubcommandShouldNameTheNearestOneWithItsParent()
    {
        final Result r = rnicsim("scenario", "lst");

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("Did you mean: scenario list?").contains("'rnicsim scenario --help'");
    }

    @Test
    void aMistypedOptionShouldNameTheNearestOptions()
    {
        final Result r = rnicsim("run", "--trce", "t.json", "demo.rsim");

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("Unknown option: '--trce'").contains("Possible solutions: ").contains("--trace")
            .contains("'rnicsim run --help'");
    }

    @Test
    void aSwappedLetterInAnOptionShouldNameTheOption()
    {
        final Result r = rnicsim("run", "--verbsoe", "demo.rsim");

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("Possible solutions: ").contains("--verbose");
    }

    @Test
    void aWordLikeNoSubcommandShouldStillPrintTheUsage()
    {
        final Result r = rnicsim("frobnicate");

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("frobnicate").contains("Usage:").doesNotContain("Did you mean");
    }

    @Test
    void aNumberPastItsRangeShouldSayTooLargeWithTheBoundNotAJavaType()
    {
        final Result r = rnicsim("plan", "--hugepages2m", "99999999999999999999");

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("too large: at most 9223372036854775807 (2^63 - 1)").doesNotContain("a long");
    }
}
