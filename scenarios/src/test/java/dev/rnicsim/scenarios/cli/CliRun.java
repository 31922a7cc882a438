package dev.rnicsim.scenarios.cli;

import java.io.PrintWriter;
import java.io.StringWriter;

/**
 * One run of the {@code rnicsim} command line in the test's own JVM ({@link Rnicsim#execute}), with what it printed.
 *
 * @param code the exit status.
 * @param out  what it printed on stdout.
 * @param err  what it printed on stderr.
 */
record CliRun(int code, String out, String err)
{
    /** @return the run of {@code rnicsim ARGS...}. */
    static CliRun of(final String... args)
    {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final int code = Rnicsim.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new CliRun(code, out.toString(), err.toString());
    }
}
