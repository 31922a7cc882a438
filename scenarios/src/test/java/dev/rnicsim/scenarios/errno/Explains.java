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

    /**
     * How to fix it: a clause that starts with an imperative (after the start, a {@code ;}, {@code :}, {@code .},
     * a parenthesis, a dash, a comma, or {@code or}/{@code and}/{@code then}/{@code to}/{@code first}: "; raise
     * vm.max_map_count", "(use an empty set for none)", "deregister and register again"), or the requirement the
     * input must meet ("must be 1-16", "needs LOCAL_WRITE", "only LOCAL_WRITE"). A verb in the middle of a
     * description ("the read of ...") is not a fix.
     */
    private static final Pattern FIX = Pattern.compile("(^|[;:.]\\s*…?\\s*|\\(\\s*|—\\s*|,\\s+(?:or|and|then)?\\s*"
        + "|\\b(?:or|and|then|to)\\s+|\\bfirst\\s+)(use|register|raise|deregister|destroy|free|give|create|pass|drop"
        + "|set|call|load|invalidate|unbind|boot|grant|lower|split|post|connect|close|open|reduce|increase|move|map"
        + "|mmap|munmap|touch|allocate|alloc|bind|wait|retry|add|remove|keep|choose|pick|put|align|round|poll|modify"
        + "|unpin|release|import|start|restart|check|try|dealloc|deallocate|back|fork|let|enable|disable|select|name"
        + "|prefetch|shrink|grow|read|write|send|limit|ask|advise|copy|fix|never|munlock|lock|query|attach|export"
        + "|delete|run|make|leave|replace|swap|install|build|present|do|unmap|receive|reserve|clear|arm|flush|advance"
        + "|stop|fill|widen|shorten|request|resize)\\b"
        + "|\\b(must|needs?|only|is required|required|expected|accepts|allowed|exactly|instead|rather)\\b");

    /**
     * The object involved: a value (a {@code …} in a site's text, an address), a field or flag name
     * ({@code qp_access_flags}, {@code MAP_SHARED}, {@code lengthBytes}), or the noun of a verbs or kernel object.
     */
    private static final Pattern OBJECT = Pattern.compile("…|0x|[0-9]|\\b[a-z]+[A-Z]\\w*\\b|\\b[a-z]+_[a-z_]+\\b"
        + "|\\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\\b|\\b(MRs?|QPs?|CQs?|PDs?|SRQs?|AHs?|windows?|keys?|lkey|rkey|range|pages?"
        + "|VMAs?|device|process|buffer|pool|cache|context|fd|dma-buf|GPU|MTT|MPT|port|GID|address|addr|iova|length"
        + "|lengthBytes|entry|entries|frame|folio|mapping|ring|queue|work requests?|SGEs?|sg_list|access|flags|attr"
        + "|type|opcode|backend|provider|handle|memory|VRAM|pfn|backing|data|bytes|src|dst)\\b");

    private Explains()
    {
    }

    /**
     * @param message a failure's text.
     * @return what it lacks (the rule, a fix, the object), empty when it explains itself.
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
            lacks.add("how to fix it (a clause that starts with what to do, or the requirement)");
        }
        if (!OBJECT.matcher(message).find())
        {
            lacks.add("the object involved (a value, a field or the object's name)");
        }
        return lacks;
    }
}
