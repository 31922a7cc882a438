package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.scenarios.script.RunResult;
import dev.rnicsim.scenarios.script.ScriptRunner;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The built-in scenarios of memory windows, invalidation and rereg: each runs with every expect held, prints the
 * same output twice, and shows what its title promises.
 */
class WindowScenariosTest
{
    private static String run(final String name)
    {
        final Catalogue.Entry e = Catalogue.entry(name).orElseThrow();
        final StringWriter out = new StringWriter();
        final RunResult r = new ScriptRunner(new PrintWriter(out, true), ScriptRunner.Detail.FULL)
            .run(name + ".rsim", e.script(), Path.of("."));
        assertThat(r.exitCode()).as("%s: %s%n%s", name, r.failure(), out).isZero();
        assertThat(out.toString()).doesNotContain("FAILED");
        return out.toString();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"window-rights", "window-rebind", "send-with-invalidate", "hot-path-invalidation",
        "dereg-with-bound-window", "rereg-keys"})
    void scenarioShouldRunWithEveryExpectHeldAndTheSameOutputTwice(final String name)
    {
        assertThat(run(name)).isEqualTo(run(name));
    }

    @Test
    void windowRightsShouldRefuseEachWindowsOtherOperationAndAllocMwOnDevicesWithout()
    {
        final String out = run("window-rights");

        assertThat(out).contains("rights [REMOTE_READ]").contains("rights [REMOTE_WRITE]");
        assertThat(out.split("IBV_WC_REM_ACCESS_ERR", -1)).hasSize(4);
        assertThat(out).contains("2 memory window(s) bound");
        for (final String p : new String[] {"e810", "rxe-legacy"})
        {
            assertThat(out).contains("-> EOPNOTSUPP: ibv_alloc_mw: " + p + " has no memory windows");
        }
        // mlx4 never fills max_mw, yet allocates windows (WINDOWS_WITHOUT_MAX_MW)
        assertThat(out).doesNotContain("connectx3 has no memory windows");
    }

    @Test
    void windowRebindShouldRefuseTheOldKeyAndABoundType2Window()
    {
        final String out = run("window-rebind");

        assertThat(out).containsPattern("rkey (0x[0-9a-f]{8}) -> 0x[0-9a-f]{8} \\(set at post\\)");
        assertThat(out).contains("IBV_WC_REM_ACCESS_ERR").contains("IBV_WC_MW_BIND_ERR")
            .contains("type 2 window is bound: invalidate it before binding again").contains("opcode=LOCAL_INV");
    }

    @Test
    void sendWithInvalidateShouldShowTheInvalidatedKeyAndTheRefusals()
    {
        final String out = run("send-with-invalidate");

        final Matcher posted = Pattern.compile("SEND_WITH_INV, 4 bytes, invalidates rkey (0x[0-9a-f]{8})")
            .matcher(out);
        assertThat(posted.find()).isTrue();
        assertThat(out).contains("opcode=RECV byte_len=4 invalidated_rkey=" + posted.group(1));
        assertThat(out).contains("IBV_WC_REM_INV_REQ_ERR").contains("IBV_WC_LOC_QP_OP_ERR").contains("opcode=REG_MR")
            .contains("-> EINVAL: ib_map_mr_sg: ");
    }

    @Test
    void hotPathInvalidationShouldPriceTheInvalidatingRunHigherPerWrite()
    {
        final String out = run("hot-path-invalidation");
        final long plain = figure(out, "plain_per_write");
        final long inv = figure(out, "inv_per_write");

        assertThat(plain).isPositive();
        assertThat(inv).isGreaterThan(plain * 2);
        assertThat(figure(out, "extra_per_write")).isEqualTo(inv - plain);
        assertThat(figure(out, "stalls")).isEqualTo(200);
    }

    @Test
    void deregWithBoundWindowShouldFailThenSucceedAfterClose()
    {
        final String out = run("dereg-with-bound-window");

        assertThat(out).contains("-> EINVAL: ibv_dereg_mr: 1 memory window(s) are bound to MR");
        assertThat(out.indexOf("-> EINVAL: ibv_dereg_mr")).isLessThan(out.indexOf("16 pages unpinned"));
    }

    @Test
    void reregKeysShouldKeepKeysForAccessAndOnConnectX3AndChangeThemOnConnectX5()
    {
        final String out = run("rereg-keys");

        assertThat(out).containsPattern("CHANGE_ACCESS: lkey (0x[0-9a-f]{8}) -> \\1, rkey (0x[0-9a-f]{8}) -> \\2 "
            + "\\(keys kept\\)");
        assertThat(out).containsPattern("CHANGE_TRANSLATION: lkey 0x[0-9a-f]{8} -> 0x[0-9a-f]{8}, rkey 0x[0-9a-f]{8} "
            + "-> 0x[0-9a-f]{8} \\(new keys: the old ones no longer translate\\)");
        assertThat(out).containsPattern("CHANGE_TRANSLATION: lkey (0x[0-9a-f]{8}) -> \\1, rkey (0x[0-9a-f]{8}) -> \\2 "
            + "\\(keys kept\\)");
        assertThat(out).contains("(IBV_REREG_MR_ERR_INPUT: ").contains("(IBV_REREG_MR_ERR_CMD: ");
    }

    private static long figure(final String out, final String name)
    {
        final Matcher m = Pattern.compile("(?m)^    " + name + " = (\\d+)").matcher(out);
        assertThat(m.find()).as("%s in%n%s", name, out).isTrue();
        return Long.parseLong(m.group(1));
    }
}
