package dev.rnicsim.scenarios.script;

import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.Vma;
import dev.rnicsim.simnic.ForkSafety;
import dev.rnicsim.simnic.SimHost;
import java.util.Locale;
import java.util.Map;

/**
 * Fork support in the script language: the {@code env=} option of {@code process} and {@code open}, the
 * {@code forkinit} verb (ibv_fork_init) and the {@code show forkinit} view (ibv_is_fork_initialized and what fork
 * support madvised). Stateless.
 */
final class Forks
{
    private Forks()
    {
    }

    /**
     * Reads {@code env=VAR=VALUE,VAR=VALUE} (a bare VAR means the empty string), checked before anything is created.
     *
     * @return the variables in order; empty without {@code env=}.
     */
    static Map<String, String> env(final ScriptLine l)
    {
        final Map<String, String> out = new java.util.LinkedHashMap<>();
        final String env = l.options().get("env");
        if (env == null)
        {
            return out;
        }
        for (final String item : env.split(",", -1))
        {
            if (item.isEmpty())
            {
                throw l.error("env=" + env + ": an empty entry; write env=VAR=VALUE,VAR=VALUE");
            }
            final int eq = item.indexOf('=');
            final String variable = eq < 0 ? item : item.substring(0, eq);
            if (variable.isEmpty())
            {
                throw l.error("env=" + env + ": '" + item + "' has no variable name; write env=VAR=VALUE,VAR=VALUE");
            }
            out.put(variable, eq < 0 ? "" : item.substring(eq + 1));
        }
        return out;
    }

    /** What {@code process} and {@code open} report about the environment, or "". */
    static String envNote(final UserProcess p)
    {
        if (p.environment().isEmpty())
        {
            return "";
        }
        final StringBuilder b = new StringBuilder(", env ");
        String sep = "";
        for (final Map.Entry<String, String> e : p.environment().entrySet())
        {
            b.append(sep).append(e.getKey()).append('=').append(e.getValue());
            sep = ",";
        }
        return b.toString();
    }

    /** {@code forkinit PROCESS}: ibv_fork_init() in that process; its errno is the outcome. */
    static Outcome forkInit(final Session s, final ScriptLine l)
    {
        final UserProcess p = s.get(l, l.args().get(0), UserProcess.class);
        final ForkSafety f = of(s, l, p);
        final int errno = f.forkInit();
        if (errno != 0)
        {
            return Outcome.failed(dev.rnicsim.verbs.Errno.of(errno).name(), "ibv_fork_init: pid " + p.pid()
                + " calls it too late: a registration or queue already used memory without MADV_DONTFORK (memory.c "
                + "too_late); call ibv_fork_init() or set RDMAV_FORK_SAFE=1 before the first ibv_reg_mr");
        }
        return Outcome.ok("ibv_fork_init() = 0; " + status(f));
    }

    /** {@code show forkinit PROCESS}. */
    static String view(final Session s, final ScriptLine l, final String name)
    {
        final UserProcess p = s.get(l, name, UserProcess.class);
        final ForkSafety f = of(s, l, p);
        long dontcopyVmas = 0;
        for (final Vma v : p.vmas())
        {
            dontcopyVmas += v.has(Vma.VM_DONTCOPY) ? 1 : 0;
        }
        return "pid " + p.pid() + ": " + status(f) + "\n"
            + String.format(Locale.ROOT, "  ranges held MADV_DONTFORK: %s; MADV_DONTFORK calls %d, MADV_DOFORK calls "
                + "%d (%d refused and ignored)%n", Units.bytes(f.dontforkBytes()), f.dontforkCalls(), f.doforkCalls(),
                f.refusedDoforks())
            + String.format(Locale.ROOT, "  madvise work: %d VMAs split or merged, %d page-size probes; %s of "
                + "simulated time in all%n", f.vmaChanges(), f.pageSizeProbes(),
                Units.duration(f.workNs(s.fabric.costModel())))
            + String.format(Locale.ROOT, "  VMAs: %d of vm.max_map_count=%d, %d of them VM_DONTCOPY (absent in a "
                + "child)", p.vmaCount(), p.host().config().maxMapCount(), dontcopyVmas);
    }

    private static String status(final ForkSafety f)
    {
        final String page = Units.bytes(f.basePageBytes());
        return switch (f.status())
        {
            case UNNEEDED -> "IBV_FORK_UNNEEDED: the kernel copies pinned pages at fork (host fork=modern)"
                + (f.enabled() ? "; RDMAV_USE_MADVISE keeps madvising anyway" : ", so nothing is madvised");
            case ENABLED -> "IBV_FORK_ENABLED: registrations and queue rings are MADV_DONTFORK, widened to "
                + (f.hugePagesSafe() ? "the page size of their VMA (RDMAV_HUGEPAGES_SAFE)" : page + " pages");
            case DISABLED -> "IBV_FORK_DISABLED" + (f.tooLate() ? " (too late: memory was registered first)" : "");
        };
    }

    private static ForkSafety of(final Session s, final ScriptLine l, final UserProcess p)
    {
        for (final SimHost h : s.fabric.hosts())
        {
            if (h.host() == p.host())
            {
                return h.forkSafety(p);
            }
        }
        throw l.error("process " + p.name() + " runs on no host of this script");
    }
}
