package dev.rnicsim.scenarios.script;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.WcStatus;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads a scenario script: one statement a line, {@code #} starts a comment, words separated by blanks, double
 * quotes around text with blanks. Every line is checked against the grammar ({@link Spec#VERBS}) and every name
 * against the names bound by earlier lines, before anything runs, so a malformed script fails with file:line and
 * what was expected there. Not thread safe.
 */
public final class ScriptParser
{
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Pattern OPTION = Pattern.compile("[a-z_][a-z0-9_]*=.*");
    private static final Set<String> OPS = Set.of("==", "!=", "<", "<=", ">", ">=");

    private final Map<String, Kind> names = new HashMap<>();
    /** The type ({@code 1} or {@code 2}) of each window name, as its {@code mw} line gave it. */
    private final Map<String, String> mwTypes = new HashMap<>();

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
                final Map<String, Kind> namesBefore = new HashMap<>(names);
                final Map<String, String> typesBefore = new HashMap<>(mwTypes);
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
                    names.clear();
                    names.putAll(namesBefore);
                    mwTypes.clear();
                    mwTypes.putAll(typesBefore);
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
            case "expect" -> checkExpect(l);
            case "repeat" -> checkRepeat(l);
            default -> checkStatement(l);
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
        final Map<String, Kind> namesBefore = new HashMap<>(names);
        final Map<String, String> typesBefore = new HashMap<>(mwTypes);
        checkStatement(inner);
        checkRepeated(l, times, inner);
        if (times == 0)
        {
            // The statement never runs: the name it would bind does not exist after it.
            names.clear();
            names.putAll(namesBefore);
            mwTypes.clear();
            mwTypes.putAll(typesBefore);
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

    private void checkStatement(final ScriptLine l)
    {
        final Spec spec = Spec.VERBS.get(l.verb());
        if (spec == null)
        {
            final String near = DidYouMean.nearest(l.verb(), Spec.VERBS.keySet());
            throw l.error("unknown verb '" + l.verb() + "'" + (near == null ? "" : "; did you mean '" + near + "'?")
                + "; verbs: " + String.join(", ", Spec.VERBS.keySet()));
        }
        if (l.verb().equals("show") && !l.args().isEmpty() && l.args().get(0).equals("rdma"))
        {
            checkRdmaShow(l);
            return;
        }
        if (l.args().size() < spec.required() || l.args().size() > spec.args().size())
        {
            throw l.error("expected: " + spec.usage());
        }
        if (l.verb().equals("show") && l.args().size() == 1 && !l.args().get(0).equals("clock"))
        {
            throw l.error("show " + l.args().get(0) + " needs a name" + (l.args().get(0).equals("walk")
                ? " or an address" : "") + " (only show clock stands alone)");
        }
        if (l.verb().equals("show") && l.args().size() == 2 && DEVICE_VIEWS.contains(l.args().get(0)))
        {
            checkDeviceView(l);
        }
        if (l.verb().equals("strict"))
        {
            checkStrict(l, spec);
        }
        final boolean dmabuf = l.verb().equals("reg") && l.options().containsKey("dmabuf");
        if (dmabuf && l.args().size() != 4)
        {
            throw l.error("reg with dmabuf= is ibv_reg_dmabuf_mr: give OFFSET and SIZE, the range of the dma-buf to "
                + "register; expected: " + spec.usage());
        }
        final boolean implicit = l.verb().equals("reg") && l.args().size() == 3;
        if (implicit)
        {
            checkImplicit(l, spec);
        }
        if (l.verb().equals("advise") && l.args().size() == 3)
        {
            throw l.error("advise takes ADDR and SIZE together (or neither, for the whole MR); expected: "
                + spec.usage());
        }
        if (l.verb().equals("dmabuf") && l.args().size() == 3)
        {
            throw l.error("dmabuf takes OFFSET and SIZE together (or neither, for the whole buffer); expected: "
                + spec.usage());
        }
        if (l.verb().equals("watch"))
        {
            for (final String k : List.of("flag", "data", "length"))
            {
                if (!l.options().containsKey(k))
                {
                    throw l.error("watch needs " + k + "=: the 8-byte flag the CPU polls, the data it reads once the "
                        + "flag holds the value, and the data's length; expected: " + spec.usage());
                }
            }
        }
        final List<Runnable> binds = new ArrayList<>();
        for (int i = 0; i < l.args().size(); i++)
        {
            final Spec.Arg a = spec.args().get(i);
            final String v = l.args().get(i);
            if (implicit && i == 2)
            {
                continue;
            }
            if (a instanceof Spec.NewName n)
            {
                if (!NAME.matcher(v).matches() || v.equals("last") || v.equals("now"))
                {
                    throw l.error("'" + v + "' is no name for a new " + n.kind().name().toLowerCase(Locale.ROOT)
                        + " (letters, digits and _, not 'last' or 'now'); expected: " + spec.usage());
                }
                final Kind before = names.get(v);
                if (before != null && (before != n.kind() || n.kind() == Kind.HOST || n.kind() == Kind.DEVICE
                    || n.kind() == Kind.GPU))
                {
                    throw l.error("'" + v + "' names " + Articles.a(before) + " already; "
                        + (before == n.kind() ? "hosts, devices and GPUs need names of their own"
                        : "give the new " + n.kind().name().toLowerCase(Locale.ROOT) + " another name"));
                }
                binds.add(() -> names.put(v, n.kind()));
            }
            else
            {
                checkArg(l, spec, a, v);
                if (a instanceof Spec.Expr && !l.verb().equals("let"))
                {
                    checkNotNegative(l, spec, "argument " + (i + 1), v);
                }
            }
        }
        if (l.verb().equals("device") && l.options().containsKey("profile")
            && !dev.rnicsim.simnic.DeviceProfiles.builtIn().containsKey(l.options().get("profile")))
        {
            throw l.error("no built-in profile '" + l.options().get("profile") + "'; built-in: "
                + dev.rnicsim.simnic.DeviceProfiles.builtIn().keySet());
        }
        if (l.verb().equals("device") && l.options().containsKey("profile") && l.options().containsKey("devinfo"))
        {
            throw l.error("give profile= or devinfo=, not both");
        }
        if (l.verb().equals("post"))
        {
            checkPost(l, spec);
        }
        if (l.verb().equals("bind") && l.options().containsKey("rkey") && "1".equals(mwTypes.get(l.args().get(0))))
        {
            throw l.error("'" + l.args().get(0) + "' is a type 1 window: ibv_bind_mw picks its new rkey"
                + " (ibv_inc_rkey), so rkey= is only for type 2 windows; expected: " + spec.usage());
        }
        if (l.verb().equals("mw"))
        {
            final String type = l.options().getOrDefault("type", "1");
            if (!type.matches("-?[0-9]{1,9}"))
            {
                throw l.error("type=" + type + ": the window type is a number (1 or 2; ibv_alloc_mw answers EINVAL "
                    + "for other numbers); expected: " + spec.usage());
            }
            binds.add(() -> mwTypes.put(l.args().get(0), type));
        }
        for (final Map.Entry<String, String> o : l.options().entrySet())
        {
            final Spec.Arg a = spec.options().get(o.getKey());
            if (a == null)
            {
                throw l.error("'" + l.verb() + "' has no option '" + o.getKey() + "'; expected: " + spec.usage());
            }
            checkArg(l, spec, a, o.getValue());
            if (a instanceof Spec.Expr && !(l.verb().equals("post") && SIGNED_OPTIONS.contains(o.getKey())))
            {
                checkNotNegative(l, spec, o.getKey() + "=", o.getValue());
            }
        }
        binds.forEach(Runnable::run);
    }

    /** The {@code show} views of one device. */
    private static final Set<String> DEVICE_VIEWS = Set.of("counters", "mtt", "trace", "devinfo", "inflight");

    /** {@code show counters X} (and the other device views): X, when it names something, must name a device. */
    private void checkDeviceView(final ScriptLine l)
    {
        final Kind k = names.get(l.args().get(1));
        if (k != null && k != Kind.DEVICE && k != Kind.VALUE)
        {
            throw l.error("'show " + l.args().get(0) + "' shows a device, and '" + l.args().get(1) + "' names "
                + Articles.a(k) + "; give the name of a 'device' line");
        }
    }

    /**
     * {@code strict off} takes no options, and {@code strict on max_reg_rate=N} needs N of 1 or more (a rate of 0 would
     * report every registration); a number written out is checked here, an expression when the line runs.
     */
    private static void checkStrict(final ScriptLine l, final Spec spec)
    {
        if (l.args().get(0).equals("off") && !l.options().isEmpty())
        {
            throw l.error("'strict off' takes no options (" + String.join(", ", l.options().keySet()) + "= is for "
                + "'strict on'); expected: " + spec.usage());
        }
        final String rate = l.options().get("max_reg_rate");
        if (rate != null && rate.strip().matches("-?\\s*[0-9_]{1,18}")
            && Long.parseLong(rate.replaceAll("[\\s_]", "")) < 1)
        {
            throw l.error(maxRegRateError(rate.strip()) + "; expected: " + spec.usage());
        }
    }

    /**
     * @param rate the max_reg_rate= value given.
     * @return why it is refused, the same words at parse and at run time.
     */
    static String maxRegRateError(final String rate)
    {
        return "max_reg_rate=" + rate + ": give 1 or more registrations per simulated second";
    }

    /** Options whose negative values mean something: the immediate data and the atomic operands (two's complement). */
    private static final Set<String> SIGNED_OPTIONS = Set.of("imm", "compare", "swap", "add");

    /**
     * A negative number where only sizes, counts, addresses and keys go is refused before anything runs (a key of -1
     * is no key, a size of -1 no size, and no limit is written {@code unlimited}).
     */
    private static void checkNotNegative(final ScriptLine l, final Spec spec, final String where, final String v)
    {
        if (v.strip().matches("-\\s*(0x[0-9a-fA-F_]+|[0-9_]+[kKmMgGtTpP]?)"))
        {
            throw l.error(where + " is " + v + ": negative values mean nothing here" + (where.equals("memlock=")
                ? "; for no limit write memlock=unlimited" : "; give 0 or more") + "; expected: " + spec.usage());
        }
    }

    /** {@code show rdma res mr|pd|qp|cq [DEVICE]} and {@code show rdma statistic [DEVICE]}. */
    private void checkRdmaShow(final ScriptLine l)
    {
        final List<String> a = l.args();
        final boolean res = a.size() >= 3 && a.size() <= 4 && a.get(1).equals("res")
            && List.of("mr", "pd", "qp", "cq").contains(a.get(2));
        final boolean stat = a.size() >= 2 && a.size() <= 3 && a.get(1).equals("statistic");
        if (!res && !stat || !l.options().isEmpty() || !l.flags().isEmpty())
        {
            throw l.error("expected 'show rdma res mr|pd|qp|cq [DEVICE]' or 'show rdma statistic [DEVICE]'"
                + RdmaViews.showHint(a));
        }
        final String device = a.size() == (res ? 4 : 3) ? a.get(a.size() - 1) : null;
        if (device != null && names.get(device) != Kind.DEVICE)
        {
            throw l.error("'" + device + "' is no device" + (names.containsKey(device) ? " (it names a "
                + names.get(device).name().toLowerCase(Locale.ROOT) + ")" : " named before this line"));
        }
    }

    /**
     * {@code reg NAME PD implicit access=odp,...}: the third word must be {@code implicit} (ADDR without SIZE is a
     * missing argument), and the access flags must ask for on-demand paging.
     */
    private static void checkImplicit(final ScriptLine l, final Spec spec)
    {
        if (!l.args().get(2).equals(Spec.IMPLICIT))
        {
            throw l.error("reg needs ADDR and SIZE, or the word implicit for an implicit ODP MR; expected: "
                + spec.usage());
        }
        final String access = l.options().getOrDefault("access", "");
        if (!List.of(access.toLowerCase(Locale.ROOT).split(",")).stream().anyMatch(w -> w.equals("odp")
            || w.equals("on_demand")))
        {
            throw l.error("an implicit MR is an on-demand-paging MR over the whole address space (ibv_reg_mr with "
                + "addr NULL, length SIZE_MAX and IBV_ACCESS_ON_DEMAND): give access=odp,... ; expected: "
                + spec.usage());
        }
    }

    /** The options each operation of {@code post} needs or refuses. */
    private static void checkPost(final ScriptLine l, final Spec spec)
    {
        final String op = l.args().get(0);
        final Map<String, String> o = l.options();
        if (Spec.REMOTE_WORDS.contains(op) && !o.containsKey("remote"))
        {
            throw l.error("post " + op + " needs remote=ADDR (and rkey=KEY unless ADDR starts at an MR or a window)");
        }
        if ((op.equals("local_inv") || op.equals("send_inv")) && !o.containsKey("rkey"))
        {
            throw l.error("post " + op + " needs rkey=KEY: the key to invalidate (a type 2 window's rkey or a"
                + " fast-registration MR's key); expected: " + spec.usage());
        }
        if (op.equals("reg_mr") && !o.containsKey("mr"))
        {
            throw l.error("post reg_mr needs mr=FASTMR (a name from 'fastmr'); expected: " + spec.usage());
        }
        for (final String k : List.of("sgl", "remote"))
        {
            if (o.containsKey(k) && (op.equals("local_inv") || op.equals("reg_mr")))
            {
                throw l.error("post " + op + " runs on the local device and moves no data: it takes no " + k + "="
                    + (op.equals("reg_mr") ? " (its pages come from 'map')" : "") + "; expected: " + spec.usage());
            }
        }
        for (final String k : List.of("mr", "key", "access"))
        {
            if (o.containsKey(k) && !op.equals("reg_mr"))
            {
                throw l.error("option '" + k + "' is for post reg_mr, not post " + op + "; expected: "
                    + spec.usage());
            }
        }
        for (final String k : List.of("length", "type", "level"))
        {
            if (o.containsKey(k) && !op.equals("flush"))
            {
                throw l.error("option '" + k + "' is for post flush, not post " + op + "; expected: "
                    + spec.usage());
            }
        }
        if (op.equals("atomic_write") && !o.containsKey("value"))
        {
            throw l.error("post atomic_write needs value=N: the 8 bytes it stores (ibv_wr_atomic_write's atomic_wr); "
                + "expected: " + spec.usage());
        }
        if (o.containsKey("value") && !op.equals("atomic_write"))
        {
            throw l.error("option 'value' is for post atomic_write (the 8 bytes it stores), not post " + op
                + "; expected: " + spec.usage());
        }
    }

    private void checkArg(final ScriptLine l, final Spec spec, final Spec.Arg a, final String v)
    {
        switch (a)
        {
            case Spec.Ref r ->
            {
                final Kind k = names.get(v);
                if (k == null || !r.kinds().contains(k)
                    && !(k == Kind.CONTEXT && r.kinds().contains(Kind.PROCESS)))
                {
                    throw l.error("'" + v + "' " + (k == null ? "is not defined by an earlier line"
                        : "is " + Articles.a(k)) + "; expected the name of "
                        + Articles.oneOf(r.kinds().stream().sorted(Articles.BY_WORD).map(Articles::a).toList()) + ": "
                        + spec.usage());
                }
            }
            case Spec.Expr e -> checkExpr(l, v, spec.usage());
            case Spec.Word w ->
            {
                for (final String part : w.list() ? v.split(",") : new String[] {v})
                {
                    if (!w.choices().contains(part.toLowerCase(Locale.ROOT)))
                    {
                        throw l.error("'" + part + "' is not one of " + new java.util.TreeSet<>(w.choices())
                            + DidYouMean.hint(part.toLowerCase(Locale.ROOT), w.choices()) + "; expected: "
                            + spec.usage());
                    }
                }
            }
            case Spec.Data d -> checkData(l, v);
            case Spec.Sgl s ->
            {
                for (final String sge : v.split(","))
                {
                    final String[] parts = sge.split(":");
                    if (parts.length == 1 && (names.get(sge) == Kind.FRAGMENT || names.get(sge) == Kind.HANDLE))
                    {
                        // A fragment or a handle alone: its whole range with its lkey.
                        continue;
                    }
                    if (parts.length < 2 || parts.length > 3)
                    {
                        throw l.error("SGE '" + sge
                            + "': expected ADDR:LEN or ADDR:LEN:LKEY (ADDR an MR or an address), or a fragment or"
                            + " handle name alone");
                    }
                    for (final String p : parts)
                    {
                        checkExpr(l, p, "SGE ADDR:LEN[:LKEY]");
                        checkNotNegative(l, spec, "SGE '" + sge + "'", p);
                    }
                }
            }
            case Spec.Word1 f ->
            {
            }
            case Spec.NewName n -> throw l.error("internal: a new name as an option");
        }
    }

    private static void checkData(final ScriptLine l, final String v)
    {
        if (v.startsWith("\"") && v.endsWith("\"") && v.length() >= 2)
        {
            return;
        }
        if (v.startsWith("hex:") && v.length() % 2 == 0 && v.substring(4).matches("[0-9a-fA-F]+"))
        {
            return;
        }
        throw l.error("expected data: a \"quoted string\" or hex:BYTES (an even number of hex digits), got '" + v
            + "'");
    }

    /**
     * Checks an expression: terms joined by + and -, each a number (with a size or time unit), a name, or
     * name.field.
     */
    private void checkExpr(final ScriptLine l, final String v, final String usage)
    {
        for (final String term : Expressions.factors(v))
        {
            if (term.isEmpty())
            {
                throw l.error("'" + v + "' is no value (empty term); expected: " + usage);
            }
            if (Units.parse(term) != null)
            {
                continue;
            }
            final int dot = term.indexOf('.');
            final String base = dot < 0 ? term : term.substring(0, dot);
            final String field = dot < 0 ? null : term.substring(dot + 1);
            if (base.equals("now") && field == null || base.equals("unlimited") && field == null)
            {
                continue;
            }
            if (base.equals("last"))
            {
                if (field == null || !Fields.LAST.contains(field))
                {
                    throw l.error("'" + term + "': last has the fields " + new java.util.TreeSet<>(Fields.LAST));
                }
                continue;
            }
            final Kind k = names.get(base);
            final String big = Units.tooLarge(term);
            if (big != null)
            {
                throw l.error("'" + term + "' is " + big + "; expected: " + usage);
            }
            if (k == null)
            {
                throw l.error("'" + term + "' is neither a number (e.g. 4096, 4K, 2M, 0x1000, 10us) nor a name "
                    + "defined by an earlier line; expected: " + usage);
            }
            if (field != null && !Fields.of(k).contains(field))
            {
                throw l.error("'" + term + "': " + Articles.a(k) + " has the fields "
                    + new java.util.TreeSet<>(Fields.of(k)));
            }
        }
    }

    private void checkExpect(final ScriptLine l)
    {
        final List<String> a = l.args();
        if (EventVerbs.isEventExpect(l))
        {
            EventVerbs.check(l, names);
            return;
        }
        if (a.size() == 2 && a.get(0).equals("warning"))
        {
            if (!StrictScript.isKind(a.get(1)))
            {
                throw l.error("'" + a.get(1) + "' is no warning kind; kinds: " + java.util.Arrays.toString(
                    dev.rnicsim.simnic.StrictWarning.Kind.values()) + StrictScript.kindHint(a.get(1)));
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
            if (w.equals("ok") || isErrno(w) || isStatus(w))
            {
                return;
            }
            throw l.error("'" + w + "' is not ok, an errno name (EINVAL, ENOMEM, ...) or a work-completion status"
                + " (SUCCESS, REM_ACCESS_ERR, ...)");
        }
        if (a.size() == 3 && a.get(0).equals("bytes"))
        {
            checkExpr(l, a.get(1), "expect bytes ADDR DATA");
            checkData(l, a.get(2));
            return;
        }
        if (a.size() == 3 && OPS.contains(a.get(1)))
        {
            checkExpr(l, a.get(0), "expect EXPR OP EXPR");
            if (!a.get(2).matches("[A-Z_]+"))
            {
                checkExpr(l, a.get(2), "expect EXPR OP EXPR");
            }
            return;
        }
        throw l.error("expected 'expect ok', 'expect ERRNO', 'expect STATUS', 'expect EXPR OP EXPR' (OP one of == !="
            + " < <= > >=), 'expect bytes ADDR DATA', 'expect warning KIND', 'expect no warnings',"
            + " 'expect event KIND [OBJECT]' or 'expect no events'");
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
