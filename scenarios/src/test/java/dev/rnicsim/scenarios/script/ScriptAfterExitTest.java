package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * A process after {@code exit}: a second exit is EINVAL as mmap and fork are, the verbs on its closed objects say the
 * process exited, {@code show status} says it is gone; negative sizes and page counts are refused as a negative CQ
 * size is; control characters a script prints reach the terminal escaped.
 */
class ScriptAfterExitTest
{
    private static final String PROCESS = """
        host alpha ram=256M
        device na alpha
        open a na
        pd pa a
        cq ca a
        """;

    @Test
    void anExitedProcessCannotExitAgainAndItsObjectsSayItExited()
    {
        final ScriptRun r = ScriptRun.ok("exit.rnicsim", PROCESS + """
            exit a
            exit a
            expect EINVAL
            pd p3 a
            expect EINVAL
            poll ca
            expect EINVAL
            show status a
            """);
        assertThat(r.out()).contains("has exited already").contains("the context is closed (process 1000 exited, "
            + "which released it)").contains("the CQ is closed (process 1000 exited, which released it)")
            .contains("has exited: /proc/1000/status is gone").doesNotContain("VmPTE")
            .doesNotContain("ibv_close_device released it").doesNotContain("ibv_destroy_cq released it");
    }

    @Test
    void negativeSizesAndPageCountsAreRefused()
    {
        assertThatThrownBy(() -> ScriptRun.run("touch.rnicsim", PROCESS + "mmap b a 1M\ntouch b 0-1\n"))
            .isInstanceOf(ScriptException.class).hasMessageContaining("'0-1' is -1; expected a size in bytes of 0");
        assertThatThrownBy(() -> ScriptRun.run("reclaim.rnicsim", PROCESS + "reclaim alpha 0-1\n"))
            .isInstanceOf(ScriptException.class).hasMessageContaining("expected a number of pages of 0 or more");
    }

    @Test
    void controlCharactersReachTheTerminalEscaped()
    {
        final ScriptRun r = ScriptRun.ok("say.rnicsim", "say hi \u001b[31mred\u0007\n");
        assertThat(r.out()).contains("hi \\x1b[31mred\\x07").doesNotContain("\u001b").doesNotContain("\u0007");
    }
}
