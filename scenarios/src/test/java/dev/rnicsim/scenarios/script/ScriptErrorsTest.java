package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.scenarios.cli.Rnicsim;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Malformed scripts: the error names the file and line and says what was expected there, nothing runs, and the
 * command exits with 2 without a Java stack trace.
 */
class ScriptErrorsTest
{
    /** Lines 1 to 8: a host, a device, a context, a PD, a process, a buffer, a CQ and a QP. */
    private static final String PRELUDE = """
        host h ram=256M
        device d h profile=connectx5
        open c d
        process p h
        pd pd0 c
        mmap b c 64K
        cq cq0 c
        qp q pd0 cq0
        """;

    /** The line number of the first line after {@link #PRELUDE}. */
    private static final int NEXT = 9;

    @TempDir
    Path dir;

    static Stream<Arguments> malformedScripts()
    {
        return Stream.of(
            Arguments.of("unknown verb", "frobnicate b 4K", NEXT, "unknown verb 'frobnicate'; verbs: host, device"),
            Arguments.of("too few arguments", "reg mr0 pd0 b", NEXT, "expected: " + Spec.VERBS.get("reg").usage()),
            Arguments.of("too many arguments", "dereg mr0 mr1", NEXT, "expected: " + Spec.VERBS.get("dereg").usage()),
            Arguments.of("name used before it is defined", "pd pd1 later\nopen later d", NEXT,
                "'later' is not defined by an earlier line; expected the name of a context: pd NAME CONTEXT"),
            Arguments.of("a PD where a QP is expected", "connect q pd0", NEXT,
                "'pd0' is a PD; expected the name of a QP: " + Spec.VERBS.get("connect").usage()),
            Arguments.of("unknown option", "mmap b2 p 4K colour=red", NEXT,
                "'mmap' has no option 'colour'; expected: " + Spec.VERBS.get("mmap").usage()),
            Arguments.of("option given twice", "mmap b2 p 4K backing=4k backing=2m", NEXT,
                "option 'backing' given twice"),
            Arguments.of("bad value", "mmap b2 p 4Q", NEXT,
                "'4Q' is neither a number (e.g. 4096, 4K, 2M, 0x1000, 10us) nor a name defined by an earlier line"),
            Arguments.of("bad word", "mmap b2 p 4K backing=3m", NEXT,
                "'3m' is not one of [16g, 1g, 2m, 32m, 4k, 512m, 64k, hugetlb, thp]"),
            Arguments.of("bad new name", "pd 9lives c", NEXT, "'9lives' is no name for a new pd"),
            Arguments.of("unclosed quote", "write b \"abc", NEXT, "a double quote is not closed"),
            Arguments.of("unknown field", "reg mr0 pd0 b 4K\nexpect mr0.nope == 1", NEXT + 1,
                "'mr0.nope': an MR has the fields ["),
            Arguments.of("unknown field of last", "expect last.nope == 1", NEXT, "'last.nope': last has the fields"),
            Arguments.of("bad data", "write b hex:abc", NEXT, "expected data: a \"quoted string\" or hex:BYTES"),
            Arguments.of("malformed SGE", "reg mr0 pd0 b 4K\npost write q sgl=mr0 remote=b", NEXT + 1,
                "SGE 'mr0': expected ADDR:LEN or ADDR:LEN:LKEY"),
            Arguments.of("SGE with four parts", "reg mr0 pd0 b 4K\npost send q sgl=mr0:4:1:2", NEXT + 1,
                "SGE 'mr0:4:1:2': expected ADDR:LEN or ADDR:LEN:LKEY"),
            Arguments.of("repeat without a count", "repeat reg mr0 pd0 b 4K", NEXT,
                "expected 'repeat N' with a count N"),
            Arguments.of("repeat of an expect", "repeat 3 expect ok", NEXT,
                "'repeat N' needs a statement after the count"),
            Arguments.of("repeat block without a count", "repeat x\nmmap m p 4K\nend", NEXT,
                "expected 'repeat N' with a count N from 0 to 100000000, got 'x'"),
            Arguments.of("repeat block without end", "repeat 3\nmmap m p 4K\n# no end", NEXT,
                "the 'repeat 3' block has no 'end'"),
            Arguments.of("empty repeat block", "repeat 3\n# nothing\nend", NEXT, "the 'repeat 3' block is empty"),
            Arguments.of("nested repeat block", "repeat 2\nrepeat 3\nmmap m p 4K\nend\nend", NEXT + 1,
                "repeat blocks do not nest; end the block at line " + NEXT + " first"),
            Arguments.of("end without repeat", "mmap m p 4K\nend", NEXT + 1, "'end' without a 'repeat N' block"),
            Arguments.of("error inside a repeat block", "repeat 2\nmmap m p 4K\nfrobnicate m\nend", NEXT + 2,
                "unknown verb 'frobnicate'"),
            Arguments.of("expect with a bad operator", "expect b.length ~ 4K", NEXT,
                "expected 'expect ok', 'expect ERRNO', 'expect STATUS', 'expect EXPR OP EXPR'"),
            Arguments.of("expect of an unknown outcome", "expect maybe", NEXT,
                "'maybe' is not ok, an errno name (EINVAL, ENOMEM, ...) or a work-completion status"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedScripts")
    void malformedScriptShouldFailBeforeRunningWithFileLineAndWhatWasExpected(final String what,
        final String lines, final int line, final String expected)
    {
        final StringWriter out = new StringWriter();
        final ScriptRunner runner = new ScriptRunner(new PrintWriter(out, true), ScriptRunner.Detail.FULL);

        assertThatThrownBy(() -> runner.run("bad.rsim", PRELUDE + lines + "\n", dir))
            .isInstanceOfSatisfying(ScriptException.class, e ->
            {
                assertThat(e.getMessage()).startsWith("bad.rsim:" + line + ": ").contains(expected);
                assertThat(e.file()).isEqualTo("bad.rsim");
                assertThat(e.line()).isEqualTo(line);
            });
        assertThat(out.toString()).as("nothing runs before the whole script is checked").isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedScripts")
    void malformedScriptShouldExitTwoFromTheCommandWithFileLineAndNoStackTrace(final String what,
        final String lines, final int line, final String expected) throws Exception
    {
        final Path file = dir.resolve("bad.rsim");
        Files.writeString(file, PRELUDE + lines + "\n", StandardCharsets.UTF_8);
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();

        final int code = Rnicsim.execute(new String[] {"run", file.toString()}, new PrintWriter(out, true),
            new PrintWriter(err, true));

        assertThat(code).isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).startsWith(file + ":" + line + ": ").contains(expected);
        assertNoJavaTrace(out.toString(), err.toString());
    }

    @Test
    void parserShouldCheckWithoutRunningAndKeepLineNumbersAcrossCommentsAndBlankLines()
    {
        final String text = "# a comment\n\nhost h ram=256M   # trailing comment\n\n  \nfrobnicate\n";

        assertThatThrownBy(() -> new ScriptParser().parse("c.rsim", text)).isInstanceOf(ScriptException.class)
            .hasMessageStartingWith("c.rsim:6: unknown verb 'frobnicate'");
    }

    @Test
    void missingDevinfoFileShouldFailWhenItsLineRunsWithFileLine()
    {
        final String text = "host h ram=256M\nsay before\ndevice d h devinfo=no-such-dump.txt\nsay after\n";
        final StringWriter out = new StringWriter();
        final ScriptRunner runner = new ScriptRunner(new PrintWriter(out, true), ScriptRunner.Detail.FULL);

        assertThatThrownBy(() -> runner.run("dev.rsim", text, dir)).isInstanceOfSatisfying(ScriptException.class,
            e -> assertThat(e.getMessage()).startsWith("dev.rsim:3: ")
                .contains("cannot read devinfo file 'no-such-dump.txt'"));
        assertThat(out.toString()).as("the lines before it ran").contains("host h ram=256M")
            .doesNotContain("after");
    }

    @Test
    void missingDevinfoFileShouldExitTwoFromTheCommandWithFileLineAndNoStackTrace() throws Exception
    {
        final Path file = dir.resolve("dev.rsim");
        Files.writeString(file, "host h ram=256M\n\ndevice d h devinfo=no-such-dump.txt\n", StandardCharsets.UTF_8);
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();

        final int code = Rnicsim.execute(new String[] {"run", file.toString()}, new PrintWriter(out, true),
            new PrintWriter(err, true));

        assertThat(code).isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).startsWith(file + ":3: ").contains("cannot read devinfo file 'no-such-dump.txt'");
        assertNoJavaTrace(out.toString(), err.toString());
    }

    @Test
    void devinfoFileShouldBeResolvedAgainstTheScriptsFolder() throws Exception
    {
        try (InputStream in = ScriptErrorsTest.class.getResourceAsStream("/devinfo/connectx4-mlx5.txt"))
        {
            Files.write(dir.resolve("cx4.txt"), in.readAllBytes());
        }
        final StringWriter out = new StringWriter();
        final RunResult r = new ScriptRunner(new PrintWriter(out, true), ScriptRunner.Detail.FULL)
            .run("dev.rsim", "host h ram=256M\ndevice d h devinfo=cx4.txt\nexpect d.mtt_capacity > 0\n", dir);

        assertThat(r.exitCode()).as(out.toString()).isZero();
        assertThat(out.toString()).contains("(mlx5)").contains("defaulted (not in the dump): ").contains("max_mr");
    }

    private static void assertNoJavaTrace(final String out, final String err)
    {
        for (final String s : new String[] {out, err})
        {
            assertThat(s).doesNotContain("\tat ").doesNotContainPattern("[A-Za-z]*Exception\\b")
                .doesNotContain("java.");
        }
    }
}
