package dev.rnicsim.scenarios.errno;

import java.util.ArrayList;
import java.util.List;

/**
 * More errno paths a user reaches through a script, in a class of their own so that {@link ErrnoWalk}'s list grows
 * without edits here and there. Stateless.
 */
final class ErrnoWalkScripts
{
    private ErrnoWalkScripts()
    {
    }

    private static ErrnoWalk.Case c(final String name, final String setUp, final String lines, final String errno,
        final String... fragments)
    {
        return new ErrnoWalk.Case(name, setUp, lines, errno, List.of(fragments));
    }

    /** @return every case. */
    static List<ErrnoWalk.Case> cases()
    {
        final List<ErrnoWalk.Case> c = new ArrayList<>();
        return c;
    }
}
