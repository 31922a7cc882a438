package dev.rnicsim.scenarios.cli;

import dev.rnicsim.scenarios.explorer.Explorer;
import dev.rnicsim.scenarios.script.StepObserver;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;

/**
 * The {@code --html FILE} option: records every step of a run and writes the explorer page when the run ends.
 */
final class HtmlOption
{
    private final Path file;
    private final Explorer explorer;

    /**
     * @param file  the page to write, or null when the option was not given.
     * @param title the script's name.
     */
    HtmlOption(final Path file, final String title)
    {
        this.file = file;
        this.explorer = file == null ? null : new Explorer(title);
    }

    /**
     * @param page    the {@code --html} file, or null.
     * @param script  one of the scripts run.
     * @param scripts how many scripts run.
     * @return the page for that script: {@code page} itself for one script, else {@code page} with the script's
     * name before its extension ({@code steps.html} and {@code a.rsim} give {@code steps-a.html}); null for null.
     */
    static Path pageFor(final Path page, final Path script, final int scripts)
    {
        if (page == null || scripts == 1)
        {
            return page;
        }
        final String name = page.getFileName().toString();
        final int dot = name.lastIndexOf('.');
        String base = script.getFileName().toString();
        base = base.endsWith(".rsim") ? base.substring(0, base.length() - ".rsim".length()) : base;
        return page.resolveSibling(dot < 0 ? name + "-" + base : name.substring(0, dot) + "-" + base
            + name.substring(dot));
    }

    /**
     * @param page    the {@code --html} file, or null.
     * @param scripts the scripts run, in order.
     * @return each script's page ({@link #pageFor}); two scripts of one name in different folders get their
     * position too ({@code steps-x-1.html}, {@code steps-x-2.html}), so no page overwrites another.
     */
    static java.util.List<Path> pagesFor(final Path page, final java.util.List<Path> scripts)
    {
        final java.util.List<Path> pages = new java.util.ArrayList<>();
        final java.util.Map<Path, Integer> seen = new java.util.HashMap<>();
        for (final Path script : scripts)
        {
            final Path p = pageFor(page, script, scripts.size());
            pages.add(p);
            if (p != null)
            {
                seen.merge(p, 1, Integer::sum);
            }
        }
        for (int i = 0; i < pages.size(); i++)
        {
            final Path p = pages.get(i);
            if (p != null && seen.get(p) > 1)
            {
                final String name = p.getFileName().toString();
                final int dot = name.lastIndexOf('.');
                pages.set(i, p.resolveSibling(dot < 0 ? name + "-" + (i + 1)
                    : name.substring(0, dot) + "-" + (i + 1) + name.substring(dot)));
            }
        }
        return pages;
    }

    /** @return the observer to run the script with, or null when the option was not given. */
    StepObserver observer()
    {
        return explorer;
    }

    /** @return false when the file could not be written (reported on err). */
    boolean write(final PrintWriter out, final PrintWriter err)
    {
        if (explorer == null)
        {
            return true;
        }
        try
        {
            final long bytes = explorer.write(file);
            out.println("explorer page written to " + file + ": " + explorer.steps() + " steps, " + bytes
                + " bytes; open it in a browser (it needs no network)");
            out.flush();
            return true;
        }
        catch (final IOException e)
        {
            err.println(OutputFile.failed("--html", file, e));
            return false;
        }
    }
}
