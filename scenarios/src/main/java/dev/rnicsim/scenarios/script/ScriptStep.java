package dev.rnicsim.scenarios.script;

import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One statement of a run as a {@link StepObserver} sees it: the line, its outcome, the narration that led to it,
 * the addresses it named and what every script name is bound to afterwards. Valid during the callback only (the
 * objects it names go on changing). Not thread safe.
 *
 * @param where       {@code file:line}.
 * @param verb        the statement's verb.
 * @param text        the line after the verb, as written.
 * @param outcome     what it did.
 * @param narration   the {@code say} text since the previous statement, joined with spaces ("" when none).
 * @param nowNs       the simulated clock after it, in ns.
 * @param durationNs  the simulated time it took, in ns.
 * @param fabric      the run's fabric.
 * @param names       each script name and its binding, sorted by name: model objects as they are (a process's
 *                    context, an MR, a QP), a buffer as a {@link Buffer}, a host as its {@code SimHost}.
 * @param touched     the addresses in a process's memory (not a GPU's) that its arguments name, remote addresses
 *                    first, at most {@link #MAX_TOUCHED}.
 * @param completions the work completions it polled ({@code poll}), else empty.
 */
public record ScriptStep(String where, String verb, String text, Outcome outcome, String narration, long nowNs,
    long durationNs, SimFabric fabric, Map<String, Object> names, List<Address> touched,
    List<WorkCompletion> completions)
{
    /** Most addresses a step reports as touched. */
    public static final int MAX_TOUCHED = 4;

    /**
     * A buffer of a process, as {@code mmap} binds it.
     *
     * @param process     the process.
     * @param addr        its first byte.
     * @param lengthBytes its length in bytes.
     */
    public record Buffer(UserProcess process, long addr, long lengthBytes)
    {
    }

    /**
     * An address a statement names.
     *
     * @param expr    the expression as written (e.g. {@code mr_b+4096}).
     * @param process the process it is in.
     * @param va      the virtual address.
     */
    public record Address(String expr, UserProcess process, long va)
    {
    }

    /** The step of a statement that just ran in a session. */
    static ScriptStep of(final Session s, final ScriptLine l, final Outcome o, final String narration)
    {
        final Map<String, Object> names = new TreeMap<>();
        for (final Map.Entry<String, Object> e : s.names.entrySet())
        {
            final Object v = e.getValue();
            names.put(e.getKey(), switch (v)
            {
                case Session.Buffer b -> new Buffer(b.process(), b.addr(), b.lengthBytes());
                case Session.HostBinding h -> h.host();
                default -> v;
            });
        }
        return new ScriptStep(l.where(), l.verb(), l.text(), o, narration, s.fabric.clock().nowNs(),
            s.lastDurationNs, s.fabric, Collections.unmodifiableMap(names), touched(s, l),
            l.verb().equals("poll") ? List.copyOf(s.lastCompletions) : List.of());
    }

    /**
     * The addresses a line names: each argument and option value (and each SGE's address in a list such as
     * {@code mr_a:16,mr_c:8}) that evaluates to an address in a process; {@code remote=} first.
     */
    private static List<Address> touched(final Session s, final ScriptLine l)
    {
        final List<String> exprs = new ArrayList<>();
        final String remote = l.options().get("remote");
        if (remote != null)
        {
            exprs.add(remote);
        }
        exprs.addAll(l.args());
        for (final Map.Entry<String, String> e : l.options().entrySet())
        {
            if (!e.getKey().equals("remote"))
            {
                exprs.add(e.getValue());
            }
        }
        final List<Address> out = new ArrayList<>();
        for (final String expr : exprs)
        {
            for (final String part : expr.split(","))
            {
                final String e = part.contains(":") ? part.substring(0, part.indexOf(':')) : part;
                final Address a = address(s, l, e.strip());
                if (a != null && out.size() < MAX_TOUCHED && out.stream()
                    .noneMatch(x -> x.process() == a.process() && x.va() == a.va()))
                {
                    out.add(a);
                }
            }
        }
        return List.copyOf(out);
    }

    /** An expression's address in a process, or null when it is none (a number, a key, a name of no address). */
    private static Address address(final Session s, final ScriptLine l, final String expr)
    {
        if (expr.isEmpty() || expr.startsWith("\""))
        {
            return null;
        }
        try
        {
            final Session.Val v = s.eval(l, expr);
            if (!v.numeric() || v.process() == null || v.process().exited() || v.gpu() != null)
            {
                // GPU memory is reached through the GPU's BAR or a dma-buf, not through the process's page table.
                return null;
            }
            // An MR's name stands for its iova; the page table is walked at the virtual address behind it.
            final long va = v.mr() == null ? v.num() : v.mr().addr() + (v.num() - v.mr().iova());
            return new Address(expr, v.process(), va);
        }
        catch (final RuntimeException e)
        {
            // Not an expression of an address (a verb's word, a state name): the step touched no address there.
            return null;
        }
    }
}
