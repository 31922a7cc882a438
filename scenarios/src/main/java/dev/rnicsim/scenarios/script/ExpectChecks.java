package dev.rnicsim.scenarios.script;

import dev.rnicsim.simnic.StrictWarning;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * Checks of the {@code expect} statement before anything runs: an outcome ({@code ok}, an errno, a work-completion
 * status), a comparison of values, bytes in memory, a warning of strict mode, or an asynchronous event. Stateless.
 */
final class ExpectChecks
{
    private static final Set<String> OPS = Set.of("==", "!=", "<", "<=", ">", ">=");

    private ExpectChecks()
    {
    }

    /**
     * @param l      the expect line.
     * @param checks the names bound so far, for the values it compares.
     * @throws ScriptException when the line is no form of expect, or names something unknown.
     */
    static void check(final ScriptLine l, final StatementChecks checks)
    {
        final List<String> a = l.args();
        if (EventVerbs.isEventExpect(l))
        {
            EventVerbs.check(l, checks.names());
            return;
        }
        if (a.size() == 2 && a.get(0).equals("warning"))
        {
            if (!StrictScript.isKind(a.get(1)))
            {
                throw l.error("'" + a.get(1) + "' is no warning kind; kinds: " + Arrays.toString(
                    StrictWarning.Kind.values()) + StrictScript.kindHint(a.get(1)));
            }
            return;
        }
        if (a.size() == 1 && a.get(0).equals("warning"))
        {
            throw l.error(StrictScript.missingKind());
        }
        if (a.size() == 2 && a.get(0).equals("no") && a.get(1).equals("warnings"))
        {
            return;
        }
        if (a.size() == 1)
        {
            final String w = a.get(0);
            if (w.equals("ok") || ScriptParser.isErrno(w) || ScriptParser.isStatus(w))
            {
                return;
            }
            throw l.error("'" + w + "' is not ok, an errno name (EINVAL, ENOMEM, ...) or a work-completion status"
                + " (SUCCESS, REM_ACCESS_ERR, ...)");
        }
        if (a.size() == 3 && a.get(0).equals("bytes"))
        {
            checks.expr(l, a.get(1), "expect bytes ADDR DATA");
            StatementChecks.data(l, a.get(2));
            return;
        }
        if (a.size() == 3 && OPS.contains(a.get(1)))
        {
            checks.expr(l, a.get(0), "expect EXPR OP EXPR");
            if (!a.get(2).matches("[A-Z_]+"))
            {
                checks.expr(l, a.get(2), "expect EXPR OP EXPR");
            }
            return;
        }
        throw l.error("expected 'expect ok', 'expect ERRNO', 'expect STATUS', 'expect EXPR OP EXPR' (OP one of == !="
            + " < <= > >=), 'expect bytes ADDR DATA', 'expect warning KIND', 'expect no warnings',"
            + " 'expect event KIND [OBJECT]' or 'expect no events'");
    }
}
