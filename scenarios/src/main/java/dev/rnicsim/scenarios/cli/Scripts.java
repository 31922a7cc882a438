package dev.rnicsim.scenarios.cli;

import dev.rnicsim.scenarios.script.RunResult;
import dev.rnicsim.scenarios.script.ScriptException;
import dev.rnicsim.scenarios.script.ScriptRunner;
import dev.rnicsim.scenarios.script.StepObserver;
import dev.rnicsim.scenarios.script.Units;
import dev.rnicsim.simnic.SimFabric;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * Runs one script for a command and turns its end into an exit code and a summary line. Stateless.
 */
final class Scripts
{
    private Scripts()
    {
    }

    static int run(final String name, final String text, final Path baseDir, final ScriptRunner.Detail detail,
        final Consumer<SimFabric> hook, final PrintWriter out, final PrintWriter err)
    {
        return run(name, text, baseDir, detail, hook, false, null, out, err);
    }

    /**
     * As above, in strict mode from the first line when asked, with an observer of every step (null for none).
     */
    static int run(final String name, final String text, final Path baseDir, final ScriptRunner.Detail detail,
        final Consumer<SimFabric> hook, final boolean strict, final StepObserver steps, final PrintWriter out,
        final PrintWriter err)
    {
        try
        {
            final RunResult r = new ScriptRunner(out, detail).onFabric(hook).strict(strict).onStep(steps)
                .run(name, text, baseDir);
            if (r.exitCode() == 0)
            {
                out.println("== " + name + ": " + r.steps() + " steps, " + r.expectsHeld() + " expects held, "
                    + "simulated time " + Units.duration(r.simulatedNs()));
            }
            else
            {
                final String first = r.failure().lines().findFirst().orElse("");
                out.println("== " + name + ": FAILED: " + first + (first.equals(r.failure()) ? "" : " (listed above)"));
            }
            out.flush();
            return r.exitCode();
        }
        catch (final ScriptException e)
        {
            out.flush();
            err.println(e.getMessage());
            err.flush();
            return Rnicsim.MALFORMED;
        }
    }
}
