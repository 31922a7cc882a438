package dev.rnicsim.scenarios.script;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.WcStatus;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Reads a scenario script: one statement a line, {@code #} starts a comment, words separated by blanks, double
 * quotes around text with blanks. Every line is checked against the grammar ({@link Spec#VERBS}) and every name
 * against the names bound by earlier lines, before anything runs, so a malformed script fails with file:line and
 * what was expected there. Not thread safe.
 */
public final class ScriptParser
{
    private static final Pattern OPTION = Pattern.compile("[a-z_][a-z0-9_]*=.*");

    /** The names bound so far, and the checks of statements against them. */
    private final StatementChecks checks = new StatementChecks();

    /**
     * Parses and checks a whole script.
     *
     * @param file the script's name, for messages.
     * @param text its text.
     * @return the statements in order.
     * @throws ScriptException at the first malformed line.
     */
    public List<ScriptLine> parse(final String file, final String text)
    {
        final List<ScriptLine> out = new ArrayList<>();
        // A UTF-8 byte-order mark (written by some Windows editors) is no part of a line: at the start of the file,
        // or of any line (scripts joined with cat carry one per file).
        final String[] lines = text.replaceAll("(?m)^\uFEFF+", "").split("\r?\n", -1);
        for (int i = 0; i < lines.length; i++)
        {
            final ScriptLine line = statement(file, i + 1, lines[i]);
            if (line == null)
            {
                continue;
            }
            if (line.verb().equals("repeat") && line.text().matches("\\S+"))
            {
                // A block: 'repeat N' alone on its line, the statements, then 'end'.
                checkCount(line, line.text());
                final long times = Units.parse(line.text());
                final StatementChecks.Scope before = checks.scope();
                final List<ScriptLine> body = new ArrayList<>();
                int j = i + 1;
                for (; j < lines.length; j++)
                {
                    final ScriptLine inner = statement(file, j + 1, lines[j]);
                    if (inner == null)
                    {
                        continue;
                    }
                    if (inner.verb().equals("end"))
                    {
                        break;
                    }
                    if (inner.verb().equals("repeat"))
                    {
                        throw inner.error("repeat blocks do not nest; end the block at line " + line.line() + " first");
                    }
                    check(inner);
                    checkRepeated(line, times, inner);
                    body.add(inner);
                }
                if (j >= lines.length)
                {
                    throw line.error("the 'repeat " + line.text() + "' block has no 'end'");
                }
                if (body.isEmpty())
                {
                    throw line.error("the 'repeat " + line.text() + "' block is empty");
                }
                if (times == 0)
                {
                    // Nothing in the block runs: the names it would bind do not exist after it.
                    checks.restore(before);
                }
                out.add(new ScriptLine(file, line.line(), "repeat", line.args(), line.options(), line.flags(),
                    line.text(), List.copyOf(body)));
                i = j;
                continue;
            }
            if (line.verb().equals("end"))
            {
                throw line.error("'end' without a 'repeat N' block");
            }
            if (line.verb().equals("repeat") && !line.text().matches("\\S+\\s+\\S.*"))
            {
                throw line.error("expected 'repeat N STATEMENT', or 'repeat N' alone on its line to start a block");
            }
            check(line);
            out.add(line);
        }
        return out;
    }

    /**
     * Splits one line into a statement (not checked).
     *
     * @param file the script's name.
     * @param lineNo the line number.
     * @param raw  the line.
     * @return the statement, or null for a blank or comment line.
     * @throws ScriptException for an unterminated quote.
     */
    public static ScriptLine statement(final String file, final int lineNo, final String raw)
    {
        final List<String> words = tokens(file, lineNo, raw);
        if (words.isEmpty())
        {
            return null;
        }
        final String verb = words.get(0);
        final String rest = restAfterVerb(raw, verb);
        final List<String> args = new ArrayList<>();
        final Map<String, String> options = new LinkedHashMap<>();
        final List<String> flags = new ArrayList<>();
        final Spec spec = Spec.VERBS.get(verb);
        for (final String w : words.subList(1, words.size()))
        {
            if (!w.startsWith("\"") && OPTION.matcher(w).matches() && !verb.equals("expect") && !verb.equals("say")
                && !verb.equals("repeat"))
            {
                final int eq = w.indexOf('=');
                if (options.put(w.substring(0, eq), w.substring(eq + 1)) != null)
                {
                    throw new ScriptException(file, lineNo, "option '" + w.substring(0, eq) + "' given twice");
                }
            }
            else if (spec != null && spec.flags().contains(w) && args.size() >= spec.required())
            {
                flags.add(w);
            }
            else
            {
                args.add(w);
            }
        }
        return new ScriptLine(file, lineNo, verb, List.copyOf(args), options, List.copyOf(flags), rest, List.of());
    }

    private static String restAfterVerb(final String raw, final String verb)
    {
        final String t = raw.strip();
        return t.length() > verb.length() ? stripComment(t.substring(verb.length()).strip()) : "";
    }

    private static String stripComment(final String s)
    {
        boolean quoted = false;
        for (int i = 0; i < s.length(); i++)
        {
            final char c = s.charAt(i);
            if (c == '"' && (i == 0 || s.charAt(i - 1) != '\\'))
            {
                quoted = !quoted;
            }
            else if (c == '#' && !quoted)
            {
                return s.substring(0, i).strip();
            }
        }
        return s;
    }

    private static List<String> tokens(final String file, final int lineNo, final String raw)
    {
        final List<String> out = new ArrayList<>();
        final StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        boolean inToken = false;
        for (int i = 0; i < raw.length(); i++)
        {
            final char c = raw.charAt(i);
            if (quoted)
            {
                if (c == '\\' && i + 1 < raw.length())
                {
                    cur.append(c).append(raw.charAt(++i));
                }
                else
                {
                    cur.append(c);
                    if (c == '"')
                    {
                        quoted = false;
                    }
                }
            }
            else if (c == '"')
            {
                quoted = true;
                inToken = true;
                cur.append(c);
            }
            else if (c == '#')
            {
                break;
            }
            else if (Character.isWhitespace(c))
            {
                if (inToken)
                {
                    out.add(cur.toString());
                    cur.setLength(0);
                    inToken = false;
                }
            }
            else
            {
                inToken = true;
                cur.append(c);
            }
        }
        if (quoted)
        {
            throw new ScriptException(file, lineNo, "a double quote is not closed");
        }
        if (inToken)
        {
            out.add(cur.toString());
        }
        return out;
    }

    /**
     * @param quoted a token in double quotes.
     * @return its text, with {@code \"}, {@code \\} and {@code \n} undone.
     */
    public static String unquote(final String quoted)
    {
        final String body = quoted.substring(1, quoted.length() - 1);
        final StringBuilder sb = new StringBuilder(body.length());
        for (int i = 0; i < body.length(); i++)
        {
            final char c = body.charAt(i);
            if (c == '\\' && i + 1 < body.length())
            {
                final char n = body.charAt(++i);
                sb.append(n == 'n' ? '\n' : n == 't' ? '\t' : n);
            }
            else
            {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    // ------------------------------------------------------------------ checks

    private void check(final ScriptLine l)
    {
        switch (l.verb())
        {
            case "say" ->
            {
            }
            case "expect" -> ExpectChecks.check(l, checks);
            case "repeat" -> checkRepeat(l);
            default -> checks.statement(l);
        }
    }

    /** Largest repeat count: enough for every limit of the model, small enough to end. */
    public static final long MAX_REPEAT = 100_000_000L;

    /**
     * @param l     the repeat line.
     * @param count its count text.
     * @throws ScriptException when the count is no number in 0..{@link #MAX_REPEAT}.
     */
    static void checkCount(final ScriptLine l, final String count)
    {
        final Long n = count.matches("[0-9_]+[kKmMgG]?|0x[0-9a-fA-F]+") ? Units.parse(count) : null;
        if (n == null || n < 0 || n > MAX_REPEAT)
        {
            throw l.error("expected 'repeat N' with a count N from 0 to " + MAX_REPEAT + ", got '" + count + "'");
        }
    }

    private void checkRepeat(final ScriptLine l)
    {
        final String t = l.text();
        final String[] parts = t.split("\\s+", 2);
        if (parts.length < 2)
        {
            throw l.error("expected 'repeat N STATEMENT' with a count N");
        }
        checkCount(l, parts[0]);
        final ScriptLine inner = statement(l.file(), l.line(), parts[1]);
        if (inner == null || inner.verb().equals("repeat") || inner.verb().equals("expect")
            || inner.verb().equals("say"))
        {
            throw l.error("'repeat N' needs a statement after the count (not expect, say or repeat)");
        }
        final long times = Units.parse(parts[0]);
        final StatementChecks.Scope before = checks.scope();
        checks.statement(inner);
        checkRepeated(l, times, inner);
        if (times == 0)
        {
            // The statement never runs: the name it would bind does not exist after it.
            checks.restore(before);
        }
    }

    /**
     * A host, device or GPU named in a statement repeated twice or more would be created twice: refused before
     * anything runs, as the second creation would fail.
     */
    private static void checkRepeated(final ScriptLine repeat, final long times, final ScriptLine inner)
    {
        final Spec spec = Spec.VERBS.get(inner.verb());
        if (times >= 2 && spec != null && !inner.args().isEmpty() && !spec.args().isEmpty()
            && spec.args().get(0) instanceof Spec.NewName n
            && (n.kind() == Kind.HOST || n.kind() == Kind.DEVICE || n.kind() == Kind.GPU))
        {
            throw inner.error("'repeat " + times + "' (line " + repeat.line() + ") would create "
                + n.kind().name().toLowerCase(Locale.ROOT) + " '" + inner.args().get(0) + "' " + times + " times; "
                + "hosts, devices and GPUs need names of their own: create it before the repeat");
        }
    }

    /**
     * @param w a word.
     * @return true when it names an errno.
     */
    public static boolean isErrno(final String w)
    {
        for (final Errno e : Errno.values())
        {
            if (e != Errno.UNKNOWN && e.name().equals(w))
            {
                return true;
            }
        }
        return false;
    }

    /**
     * @param w a word.
     * @return true when it names a work-completion status, with or without {@code IBV_WC_}.
     */
    public static boolean isStatus(final String w)
    {
        final String n = w.startsWith("IBV_WC_") ? w.substring(7) : w;
        for (final WcStatus s : WcStatus.values())
        {
            if (s != WcStatus.UNKNOWN && s.name().equals(n))
            {
                return true;
            }
        }
        return false;
    }
}
