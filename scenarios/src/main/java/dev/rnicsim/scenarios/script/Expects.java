package dev.rnicsim.scenarios.script;

import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.verbs.VerbsException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

/**
 * The {@code expect} statement: the outcome of the last step ({@code ok} or an errno), the status of the last
 * poll's first completion, warnings of strict mode, asynchronous events, bytes in memory, and comparisons of
 * values. Each check returns null when it holds, else what was expected and what was found. Stateless.
 */
final class Expects
{
    private Expects()
    {
    }

    /** @return null when the expect holds, else what was expected and what was found. */
    static String expect(final Session s, final ScriptLine l, final Outcome last)
    {
        final List<String> a = l.args();
        if (EventVerbs.isEventExpect(l))
        {
            return EventVerbs.expect(s, l);
        }
        if (a.size() == 2 && a.get(0).equals("warning"))
        {
            return s.strict.expectWarning(a.get(1));
        }
        if (a.size() == 2 && a.get(0).equals("no") && a.get(1).equals("warnings"))
        {
            return s.strict.expectNone();
        }
        if (a.size() == 1)
        {
            final String w = a.get(0);
            if (w.equals("ok") || ScriptParser.isErrno(w))
            {
                return w.equals(last.name()) ? null : "expected " + w + ", got " + last.name()
                    + (last.ok() ? "" : ": " + last.shown());
            }
            final String status = w.startsWith("IBV_WC_") ? w.substring(7) : w;
            if (s.lastCompletions.isEmpty())
            {
                return "expected a completion with " + status + ", but the last poll returned none";
            }
            final String got = s.lastCompletions.get(0).status().name();
            return got.equals(status) ? null : "expected IBV_WC_" + status + ", got IBV_WC_" + got;
        }
        if (a.get(0).equals("bytes"))
        {
            final byte[] want = ProcessVerbs.data(a.get(2));
            final Gpus.At gpuAt = Gpus.at(s, l, s.eval(l, a.get(1)));
            if (gpuAt != null)
            {
                final byte[] got;
                try
                {
                    got = gpuAt.gpu().read(gpuAt.va(), want.length);
                }
                catch (final VerbsException e)
                {
                    return "reading " + want.length + " bytes of GPU memory at 0x" + Long.toHexString(gpuAt.va())
                        + " failed: " + e.getMessage();
                }
                return Arrays.equals(want, got) ? null : "expected bytes " + printable(want) + ", got "
                    + printable(got);
            }
            final Session.Val at = ProcessVerbs.address(s, l, a.get(1));
            final byte[] got;
            try
            {
                got = at.process().read(at.num(), want.length);
            }
            catch (final KernelException e)
            {
                return "reading " + want.length + " bytes at 0x" + Long.toHexString(at.num()) + " failed: "
                    + e.getMessage();
            }
            return Arrays.equals(want, got) ? null : "expected bytes " + printable(want) + ", got " + printable(got);
        }
        final Session.Val left = s.eval(l, a.get(0));
        final String op = a.get(1);
        final String rightText = a.get(2);
        if (rightText.matches("[A-Z_]+") && !s.names.containsKey(rightText))
        {
            final String want = rightText.startsWith("IBV_WC_") ? rightText.substring(7) : rightText;
            if (left.numeric())
            {
                return a.get(0) + " is the number " + left.show() + ", not a text like " + rightText;
            }
            final String got = left.text();
            final boolean eq = want.equals(got);
            if (op.equals("==") ? eq : op.equals("!=") && !eq)
            {
                return null;
            }
            return a.get(0) + " is " + got + ", expected " + op + " " + want;
        }
        final Session.Val right = s.eval(l, rightText);
        if (left.numeric() != right.numeric())
        {
            return a.get(0) + " is " + left.show() + " and " + rightText + " is " + right.show()
                + ": a text is compared only with a text";
        }
        if (!left.numeric())
        {
            final boolean eq = left.text().equals(right.text());
            if (op.equals("==") || op.equals("!="))
            {
                return op.equals("==") == eq ? null : a.get(0) + " is " + left.text() + ", expected " + op + " "
                    + right.text();
            }
            return a.get(0) + " is the text " + left.text() + ": texts compare only with == and !=";
        }
        final long x = left.num();
        final long y = right.num();
        final boolean holds = switch (op)
        {
            case "==" -> x == y;
            case "!=" -> x != y;
            case "<" -> x < y;
            case "<=" -> x <= y;
            case ">" -> x > y;
            default -> x >= y;
        };
        return holds ? null : a.get(0) + " is " + left.show() + ", expected " + op + " " + right.show();
    }

    /** @return bytes as a quoted string when printable, else as {@code hex:}. */
    private static String printable(final byte[] b)
    {
        final String text = new String(b, StandardCharsets.UTF_8);
        return text.chars().allMatch(c -> c >= 32 && c < 127) ? "\"" + text + "\"" : "hex:" + HexFormat.of()
            .formatHex(b);
    }
}
