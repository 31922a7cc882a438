package dev.rnicsim.scenarios.cli;

import dev.rnicsim.scenarios.script.ScriptRunner;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Option;

/**
 * The {@code -q}/{@code -v} options of the commands that run a script ({@code tour}, {@code run},
 * {@code scenario run}): the same two options, meaning the same on each; only the default differs.
 */
final class Verbosity
{
    /** The two options; at most one of them. */
    static final class Choice
    {
        @Option(names = {"-q", "--quiet"}, required = true,
            description = "Print only the narration, failures and the summary.")
        private boolean quiet;

        @Option(names = {"-v", "--verbose"}, required = true,
            description = "Print every statement, its outcome and every expect.")
        private boolean verbose;
    }

    @ArgGroup(exclusive = true, multiplicity = "0..1")
    private Choice choice;

    /**
     * @param byDefault what the command prints without either option.
     * @return what to print.
     */
    ScriptRunner.Detail detail(final ScriptRunner.Detail byDefault)
    {
        if (choice == null)
        {
            return byDefault;
        }
        return choice.quiet ? ScriptRunner.Detail.NARRATION : ScriptRunner.Detail.FULL;
    }
}
