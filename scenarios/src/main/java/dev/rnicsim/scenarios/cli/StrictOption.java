package dev.rnicsim.scenarios.cli;

import picocli.CommandLine.Option;

/**
 * The {@code --strict} option of the commands that run a script ({@code tour}, {@code run}, {@code scenario run}): one
 * option, meaning the same on each.
 */
final class StrictOption
{
    @Option(names = "--strict", description = "Strict mode from the first line (as 'strict on'): stale keys and "
        + "mappings, leaks, unused MRs, flags seen before their data and hot-path registration are printed as "
        + "warnings.")
    private boolean strict;

    /** @return true when strict mode is asked for. */
    boolean on()
    {
        return strict;
    }
}
