package dev.rnicsim.scenarios.cli;

import java.io.PrintWriter;
import dev.rnicsim.scenarios.script.DidYouMean;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;

/**
 * What {@code rnicsim} prints for a command line it cannot parse: picocli's message, then, for a mistyped subcommand
 * or option, the nearest names: picocli's own suggestions
 * ({@link CommandLine.UnmatchedArgumentException#printSuggestions}: "Did you mean: scenario list?", "Possible
 * solutions: --trace"), or, where its likeness of letter pairs finds none
 * (a swap of two letters: {@code rnu}), the name within two edits that a script's unknown verb gets
 * ({@link DidYouMean}); then where the full list is. {@code exec} without a program says how to name one. Anything
 * else prints the usage of the command the mistake is in.
 * Stateless.
 */
final class BadCommandLine
{
    private BadCommandLine()
    {
    }

    /**
     * @param ex  the parse failure.
     * @param err where it is reported.
     * @return the exit code, {@link Rnicsim#MALFORMED}.
     */
    static int report(final CommandLine.ParameterException ex, final PrintWriter err)
    {
        final CommandLine cl = ex.getCommandLine();
        if (ex instanceof CommandLine.MissingParameterException m && "exec".equals(cl.getCommandName())
            && m.getMissing().stream().anyMatch(a -> "PROGRAM".equals(a.paramLabel())))
        {
            err.println("rnicsim exec: no program to run: name it after exec's own options, e.g. "
                + "'rnicsim exec -- ibv_devinfo -v' or 'rnicsim exec --profile rxe ibv_devices'");
            err.println("'rnicsim exec --help' lists every option.");
            return Rnicsim.MALFORMED;
        }
        err.println(ex.getMessage());
        if (ex instanceof CommandLine.UnmatchedArgumentException u
            && (CommandLine.UnmatchedArgumentException.printSuggestions(ex, err) || nearest(u, err)))
        {
            err.println("'" + cl.getCommandSpec().qualifiedName() + " --help' lists every subcommand and option.");
        }
        else
        {
            cl.usage(err);
        }
        return Rnicsim.MALFORMED;
    }

    /** Prints the subcommand or option within two edits of the first unmatched word, in picocli's words. */
    private static boolean nearest(final CommandLine.UnmatchedArgumentException ex, final PrintWriter err)
    {
        if (ex.getUnmatched().isEmpty())
        {
            return false;
        }
        final String typed = ex.getUnmatched().get(0);
        final CommandLine cl = ex.getCommandLine();
        final List<String> known = new ArrayList<>();
        if (typed.startsWith("-"))
        {
            final String name = typed.contains("=") ? typed.substring(0, typed.indexOf('=')) : typed;
            cl.getCommandSpec().options().forEach(o -> known.addAll(List.of(o.names())));
            final String near = DidYouMean.nearest(name, known);
            if (near != null)
            {
                err.println("Possible solutions: " + near);
            }
            return near != null;
        }
        known.addAll(cl.getSubcommands().keySet());
        final String near = DidYouMean.nearest(typed, known);
        if (near != null)
        {
            final String parent = cl.getCommandSpec().qualifiedName(" ");
            final String within = parent.contains(" ") ? parent.substring(parent.indexOf(' ') + 1) + " " : "";
            err.println("Did you mean: " + within + near + "?");
        }
        return near != null;
    }
}
