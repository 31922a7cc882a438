package dev.rnicsim.scenarios.errno;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * What an errno message must say (the house rule: the rule or limit it hit, the objects involved, how to fix it),
 * as checks on its text. Applied to the text of every errno site in the sources and to every message the walk
 * provokes. Stateless.
 */
final class Explains
{
    /**
     * The rule or limit: a named value or limit ({@code max_qp=}, {@code RLIMIT_MEMLOCK}), a cited source in
     * parentheses ({@code (ib_umem_get)}, {@code (ibv_reg_mr(3))}), a flag or state, a comparison, or the words a
     * broken rule is told in.
     */
    private static final Pattern CAUSE = Pattern.compile("[A-Za-z_][\\w.]*=|\\([^)]*([a-z0-9]+_[a-z0-9_]+|\\w\\(\\d\\)"
        + "|IBA|\\.h\\b|\\.c\\b|[a-z]+\\(\\))[^)]*\\)|\\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\\b|\\b[a-z]+_[a-z_]+\\b|[<>]"
        + "|\\b(RTS|RTR|INIT|RESET|ERR|VALID|FREE|INVALID|SIGSEGV|SIGBUS|no|not|never|outside|exceeds?|overflows?"
        + "|wraps?|full|exhausted|closed|destroyed|deregistered|freed|exited|negative|empty|null|overlaps?|past"
        + "|passes|leaves|differ|lacks?|cannot|would|too|must|needs?|only|expected|already|twice|used up"
        + "|out of memory|cuts through|covers|more than|unreserved)\\b");

    /** How to fix it: an imperative, or the requirement the input must meet. */
    private static final Pattern FIX = Pattern.compile("\\b(use|register|raise|deregister|destroy|free|give|create"
        + "|pass|drop|set|call|load|invalidate|unbind|boot|grant|lower|split|post|connect|close|open|reduce"
        + "|increase|move|map|mmap|munmap|touch|allocate|alloc|bind|wait|retry|add|remove|keep|choose|pick|put"
        + "|align|round|poll|modify|unpin|release|import|start|restart|check|try|dealloc|deallocate|back|fork|let"
        + "|enable|disable|select|name|prefetch|shrink|grow|read|write|send|limit|ask|advise|copy|fix|never"
        + "|munlock|lock|query|ask)\\b|\\bmust\\b|\\bneeds?\\b|\\bonly\\b|\\bis required\\b|\\brequired\\b|\\bexpected\\b"
        + "|\\baccepts\\b|\\ballowed\\b|\\bexactly\\b|\\binstead\\b|\\bfirst\\b|\\brather\\b");

    private Explains()
    {
    }

    /**
     * @param message a failure's text.
     * @return what it lacks ("a cause", "a fix"), empty when it explains itself.
     */
    static List<String> lacks(final String message)
    {
        final List<String> lacks = new ArrayList<>();
        if (!CAUSE.matcher(message).find())
        {
            lacks.add("the rule or limit");
        }
        if (!FIX.matcher(message).find())
        {
            lacks.add("how to fix it");
        }
        return lacks;
    }
}
