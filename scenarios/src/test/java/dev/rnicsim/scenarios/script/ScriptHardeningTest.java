package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.scenarios.cli.Rnicsim;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Inputs that once slipped through the script language: texts compared with numbers, names reused across kinds,
 * unknown profiles found late, overflow, expects inside repeat blocks, unbounded repeats, special files.
 */
class ScriptHardeningTest
{
    private static final String BASE = """
        host a ram=1G
        device nic a
        open app nic
        pd pd0 app
        cq cq0 app
        qp q0 pd0 cq0
        mmap buf app 64K
        """;

    private static RunResult run(final String text, final StringWriter out)
    {
        return new ScriptRunner(new PrintWriter(out, true), ScriptRunner.Detail.FULL).run("t.rsim", text, Path.of("."));
    }

    @Test
    void shouldFailAnExpectThatComparesAQpStateWithANumber()
    {
        final StringWriter out = new StringWriter();
        final RunResult r = run(BASE + "expect q0.state == 0\n", out);
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.failure()).contains("a text is compared only with a text");
    }

    @Test
    void shouldCompareTextsWithTextsOnly()
    {
        final StringWriter out = new StringWriter();
        assertThat(run(BASE + "expect q0.state == RESET\nexpect q0.state != ERR\n", out).exitCode()).isZero();
        assertThat(run(BASE + "expect q0.state > RESET\n", new StringWriter()).exitCode()).isEqualTo(1);
    }

    @Test
    void shouldRefuseReusingAHostNameBeforeAnythingRuns()
    {
        assertThatThrownBy(() -> run("host a\nlet x 1\nhost a\n", new StringWriter()))
            .isInstanceOf(ScriptException.class).hasMessageStartingWith("t.rsim:3:").hasMessageContaining("names a host");
        assertThatThrownBy(() -> run("host a\nlet a 5\n", new StringWriter()))
            .isInstanceOf(ScriptException.class).hasMessageStartingWith("t.rsim:2:");
    }

    @Test
    void shouldRefuseAnUnknownProfileBeforeAnythingRuns()
    {
        final StringWriter out = new StringWriter();
        assertThatThrownBy(() -> run("host a\ndevice nic a profile=bogus\n", out))
            .isInstanceOf(ScriptException.class).hasMessageStartingWith("t.rsim:2:")
            .hasMessageContaining("no built-in profile 'bogus'");
        assertThat(out.toString()).isEmpty();
    }

    @Test
    void shouldReportOverflowWithFileAndLine()
    {
        assertThatThrownBy(() -> run(BASE + "let big 4T*4T\n", new StringWriter()))
            .isInstanceOf(ScriptException.class).hasMessageContaining("overflows 64 bits");
    }

    @Test
    void shouldHonourAnExpectOfTheErrorInsideARepeatBlock()
    {
        final StringWriter out = new StringWriter();
        final RunResult r = run(BASE + """
            repeat 3
                reg m pd0 buf+1G 4K
                expect EFAULT
            end
            expect last.count == 3
            """, out);
        assertThat(r.exitCode()).as(out.toString()).isZero();
    }

    @Test
    void shouldRefuseRepeatCountsOutsideItsBounds()
    {
        assertThatThrownBy(() -> run(BASE + "repeat 200000000 let x 1\n", new StringWriter()))
            .isInstanceOf(ScriptException.class).hasMessageContaining("from 0 to 100000000");
        assertThatThrownBy(() -> run(BASE + "repeat -5 let x 1\n", new StringWriter()))
            .isInstanceOf(ScriptException.class);
    }

    @Test
    void shouldTreatNamesStartingWithAnUnderscoreAsNames()
    {
        assertThat(run(BASE + "let _1 5\nexpect _1 == 5\n", new StringWriter()).exitCode()).isZero();
    }

    @Test
    void shouldRefuseASpecialFileAsAScriptWithExitTwo()
    {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final int code = Rnicsim.execute(new String[] {"run", "/dev/zero"}, new PrintWriter(out), new PrintWriter(err));
        assertThat(code).isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).contains("not a regular file").doesNotContain("Exception");
    }

    @Test
    void shouldKeepABackslashFollowedByNInData()
    {
        final StringWriter out = new StringWriter();
        assertThat(run(BASE + "write buf \"a\\\\nb\"\nexpect bytes buf hex:615c6e62\n", out).exitCode())
            .as(out.toString()).isZero();
    }

    @Test
    void shouldRegisterFourKibPagesWithOneMttEntryEachOnAnAgedHost()
    {
        final StringWriter out = new StringWriter();
        final RunResult r = run("""
            host a ram=1G aged=yes
            device nic a
            open app nic
            pd pd0 app
            mmap buf app 1M
            reg mr pd0 buf 1M
            expect mr.page_size == 4K
            expect mr.mtt_entries == 256
            """, out);
        assertThat(r.exitCode()).as(out.toString()).isZero();
        assertThat(out.toString()).contains("aged (scattered 4 KiB frames)");
    }

    @Test
    void shouldNameEveryKindAnArgumentMayBeInOneStableMessage()
    {
        assertThatThrownBy(() -> run("host a\nclose a\n", new StringWriter())).isInstanceOf(ScriptException.class)
            .hasMessageContaining("expected the name of an AH, a cache, a context, a CQ, a DM, a dma-buf, "
                + "a fast-registration MR, an MR, an MW, a PD, a pool, a QP, an SRQ, a watch or an XRC domain: close NAME");
    }
}
