package dev.rnicsim.scenarios.script;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Checks the statements of a script against the grammar of their verbs ({@link Spec#VERBS}) and every name against
 * the names bound by earlier lines, binding the names each statement creates; {@link ShowChecks},
 * {@link VerbChecks} and {@link ExpectChecks} add the rules of single statements. Not thread safe.
 */
final class StatementChecks
{
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    /** Options whose negative values mean something: the immediate data and the atomic operands (two's complement). */
    private static final Set<String> SIGNED_OPTIONS = Set.of("imm", "compare", "swap", "add");

    private final Map<String, Kind> names = new HashMap<>();
    /** The type ({@code 1} or {@code 2}) of each window name, as its {@code mw} line gave it. */
    private final Map<String, String> mwTypes = new HashMap<>();

    /** The names bound so far and the type of each window, as a {@code repeat 0} restores them. */
    record Scope(Map<String, Kind> names, Map<String, String> mwTypes)
    {
    }

    /** @return a copy of the names bound so far. */
    Scope scope()
    {
        return new Scope(new HashMap<>(names), new HashMap<>(mwTypes));
    }

    /**
     * Forgets the names bound since a scope was taken: the lines of a {@code repeat 0} never run.
     *
     * @param before the scope taken before them.
     */
    void restore(final Scope before)
    {
        names.clear();
        names.putAll(before.names());
        mwTypes.clear();
        mwTypes.putAll(before.mwTypes());
    }

    /** @return the kind of each name bound so far. */
    Map<String, Kind> names()
    {
        return names;
    }

    /**
     * Checks a statement (not {@code say}, {@code expect} or {@code repeat}) against its verb's grammar and the names
     * bound so far, then binds the names it creates.
     *
     * @throws ScriptException at the first thing wrong with it.
     */
    void statement(final ScriptLine l)
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
            ShowChecks.rdma(l, names);
            return;
        }
        if (l.args().size() < spec.required() || l.args().size() > spec.args().size())
        {
            throw l.error("expected: " + spec.usage());
        }
        if (l.verb().equals("show"))
        {
            ShowChecks.check(l, names);
        }
        VerbChecks.beforeNames(l, spec);
        final boolean implicit = VerbChecks.isImplicitReg(l);
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
                arg(l, spec, a, v);
                if (a instanceof Spec.Expr && !l.verb().equals("let"))
                {
                    notNegative(l, spec, "argument " + (i + 1), v);
                }
            }
        }
        VerbChecks.afterNames(l, spec);
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
            arg(l, spec, a, o.getValue());
            if (a instanceof Spec.Expr && !(l.verb().equals("post") && SIGNED_OPTIONS.contains(o.getKey())))
            {
                notNegative(l, spec, o.getKey() + "=", o.getValue());
            }
            if (o.getKey().equals("netdev_mtu"))
            {
                plainByteCount(l, spec, o.getValue());
            }
        }
        binds.forEach(Runnable::run);
    }

    private void arg(final ScriptLine l, final Spec spec, final Spec.Arg a, final String v)
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
            case Spec.Expr e -> expr(l, v, spec.usage());
            case Spec.Word w ->
            {
                for (final String part : w.list() ? v.split(",") : new String[] {v})
                {
                    if (!w.choices().contains(part.toLowerCase(Locale.ROOT)))
                    {
                        throw l.error("'" + part + "' is not one of " + new TreeSet<>(w.choices())
                            + DidYouMean.hint(part.toLowerCase(Locale.ROOT), w.choices()) + "; expected: "
                            + spec.usage());
                    }
                }
            }
            case Spec.Data d -> data(l, v);
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
                        expr(l, p, "SGE ADDR:LEN[:LKEY]");
                        notNegative(l, spec, "SGE '" + sge + "'", p);
                    }
                }
            }
            case Spec.Word1 f ->
            {
            }
            case Spec.NewName n -> throw l.error("internal: a new name as an option");
        }
    }

    /**
     * Checks an expression: terms joined by + and -, each a number (with a size or time unit), a name, or
     * name.field.
     *
     * @param usage what the line expects, for the message.
     * @throws ScriptException for an empty term, an unknown name or field, or a number too large.
     */
    void expr(final ScriptLine l, final String v, final String usage)
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
                    throw l.error("'" + term + "': last has the fields " + new TreeSet<>(Fields.LAST));
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
                    + new TreeSet<>(Fields.of(k)));
            }
        }
    }

    /** Checks DATA: a quoted string or {@code hex:BYTES}. */
    static void data(final ScriptLine l, final String v)
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
     * A netdev's MTU is a byte count without size suffixes ({@code ip link set DEV mtu N} takes a plain number, and
     * no MTU is a power of 1024: {@code 9k} would be 9216, not the 9000 of jumbo frames), refused before anything
     * runs.
     */
    private static void plainByteCount(final ScriptLine l, final Spec spec, final String v)
    {
        if (java.util.regex.Pattern.compile("\\b(?!0[xX])[0-9][0-9_]*[A-Za-z]").matcher(v).find())
        {
            throw l.error("netdev_mtu=" + v + ": an MTU takes no size suffix (ip link set DEV mtu takes a plain "
                + "number of bytes); give the MTU in bytes, e.g. 9000; expected: " + spec.usage());
        }
    }

    /**
     * A negative number where only sizes, counts, addresses and keys go is refused before anything runs (a key of -1
     * is no key, a size of -1 no size, and no limit is written {@code unlimited}).
     */
    private static void notNegative(final ScriptLine l, final Spec spec, final String where, final String v)
    {
        if (v.strip().matches("-\\s*(0x[0-9a-fA-F_]+|[0-9_]+[kKmMgGtTpP]?)"))
        {
            throw l.error(where + " is " + v + ": negative values mean nothing here" + (where.equals("memlock=")
                ? "; for no limit write memlock=unlimited" : where.equals("netdev_mtu=")
                ? "; give the netdev's MTU in bytes, 68 to 65535 (ETH_MIN_MTU..ETH_MAX_MTU), e.g. 1500 or 9000"
                : "; give 0 or more") + "; expected: " + spec.usage());
        }
    }
}
