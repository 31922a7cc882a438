package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

/**
 * One script run for the script-language tests: its result and everything it printed (FULL detail).
 *
 * @param result the runner's result.
 * @param out    the output.
 */
record ScriptRun(RunResult result, String out)
{
    /** Lines 1 to 13: two ConnectX-5 hosts, a PD, CQ and QP each, the QPs connected. */
    static final String TWO_CONNECTED_HOSTS = """
        host alpha ram=256M
        host beta ram=256M
        device nic_a alpha profile=connectx5
        device nic_b beta profile=connectx5
        open app_a nic_a
        open app_b nic_b
        pd pd_a app_a
        pd pd_b app_b
        cq cq_a app_a
        cq cq_b app_b
        qp qp_a pd_a cq_a
        qp qp_b pd_b cq_b
        connect qp_a qp_b
        """;

    /**
     * @param source the script's file name, for messages.
     * @param text   the script.
     * @return the run.
     */
    static ScriptRun run(final String source, final String text)
    {
        final StringWriter out = new StringWriter();
        final RunResult r = new ScriptRunner(new PrintWriter(out, true), ScriptRunner.Detail.FULL)
            .run(source, text, Path.of("."));
        return new ScriptRun(r, out.toString());
    }

    /**
     * @param source the script's file name.
     * @param text   the script.
     * @return the run, checked to have exited 0 (the failure and output shown otherwise).
     */
    static ScriptRun ok(final String source, final String text)
    {
        final ScriptRun r = run(source, text);
        assertThat(r.result().exitCode()).as("%s%n%s", r.result().failure(), r.out()).isZero();
        return r;
    }

    /**
     * @param out  a run's output.
     * @param name a {@code let} variable.
     * @return the last value the run printed for it ({@code "    NAME = VALUE"}).
     */
    static long figure(final String out, final String name)
    {
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^    " + name + " = (-?\\d+)")
            .matcher(out);
        long last = 0;
        boolean found = false;
        while (m.find())
        {
            last = Long.parseLong(m.group(1));
            found = true;
        }
        assertThat(found).as("%s in%n%s", name, out).isTrue();
        return last;
    }
}
