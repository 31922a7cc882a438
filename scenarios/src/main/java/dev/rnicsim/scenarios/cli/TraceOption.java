package dev.rnicsim.scenarios.cli;

import dev.rnicsim.scenarios.charts.ChromeTrace;
import dev.rnicsim.simnic.SimFabric;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;

/**
 * The {@code --trace FILE} option: records a run's timeline and writes it when the run ends.
 */
final class TraceOption
{
    private final Path file;
    private ChromeTrace trace;

    TraceOption(final Path file)
    {
        this.file = file;
    }

    /**
     * @return why the file cannot be written, found before the run, or null.
     */
    String problem()
    {
        return OutputFile.problem("--trace", file);
    }

    void attach(final SimFabric fabric)
    {
        if (file != null)
        {
            trace = ChromeTrace.attach(fabric);
        }
    }

    /** @return false when the file could not be written (reported on err). */
    boolean write(final PrintWriter err)
    {
        if (trace == null)
        {
            return true;
        }
        try
        {
            trace.write(file);
            return true;
        }
        catch (final IOException e)
        {
            err.println(OutputFile.failed("--trace", file, e));
            return false;
        }
    }
}
