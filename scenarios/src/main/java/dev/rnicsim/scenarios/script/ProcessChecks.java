package dev.rnicsim.scenarios.script;

import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.Vma;
import dev.rnicsim.pagetable.VmaKind;
import dev.rnicsim.simnic.SimDevice;

/**
 * What the process verbs check and report beyond the kernel's answer: a name that already names a live process is
 * not taken again, an environment given to a process whose libibverbs read its environment already is refused, and
 * {@code mmap} reports the length the kernel mapped (rounded up to whole pages). Stateless.
 */
final class ProcessChecks
{
    private ProcessChecks()
    {
    }

    /**
     * {@code process NAME HOST} where NAME names a live process: refused, since the new process would hide the old
     * one, whose buffers, contexts and pins stay behind it.
     *
     * @throws ScriptException when NAME names a process that has not exited.
     */
    static void refuseSecondProcess(final Session s, final ScriptLine l)
    {
        final String name = l.args().get(0);
        if (s.names.get(name) instanceof UserProcess old && !old.exited())
        {
            throw l.error("process '" + name + "' exists already (pid " + old.pid() + "): a second 'process " + name
                + "' would hide it while its mappings, contexts and pins live on; give the new process another name, "
                + "or 'exit " + name + "' first");
        }
    }

    /**
     * {@code open NAME DEVICE process=P env=...} where P opened a device already: refused, since libibverbs reads
     * RDMAV_FORK_SAFE, IBV_FORK_SAFE and RDMAV_HUGEPAGES_SAFE once, in {@code ibverbs_init} at the process's first
     * device open (libibverbs/init.c), so a variable set later would be echoed and ignored.
     *
     * @throws ScriptException when env= is given and the process's libibverbs is initialised.
     */
    static void refuseLateEnv(final ScriptLine l, final SimDevice d, final UserProcess p)
    {
        if (!l.options().containsKey("env") || p.host() != d.host().host()
            || !d.host().forkSafety(p).ibverbsInitialized())
        {
            return;
        }
        throw l.error("env=" + l.options().get("env") + ": process pid " + p.pid() + " opened a device already, and "
            + "libibverbs reads its environment once, at the first open (ibverbs_init in libibverbs/init.c); give "
            + "env= on the process's first open (or its 'process' line)");
    }

    /**
     * @return the length the kernel mapped for an mmap of {@code lengthBytes} at {@code address}: rounded up to the
     * base page (or the hugetlb page), with the length asked for when they differ.
     */
    static String mappedLength(final UserProcess p, final long address, final long lengthBytes)
    {
        final Vma v = p.vmaAt(address);
        final long page = v != null && v.kind() == VmaKind.HUGETLB && v.hugePageSize() != null
            ? v.hugePageSize().bytes() : p.host().config().basePage().bytes();
        final long mapped = (lengthBytes + page - 1) & -page;
        return mapped == lengthBytes ? Units.bytes(lengthBytes) : Units.bytes(mapped) + ", " + Units.bytes(lengthBytes)
            + " rounded up to whole " + Units.bytes(page) + " pages";
    }
}
