package dev.rnicsim.simnic;

import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.Madvice;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.Vma;
import dev.rnicsim.pagetable.VmaKind;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The fork support of the simulated libibverbs in one process (rdma-core libibverbs/memory.c and init.c;
 * ibv_fork_init(3), ibv_is_fork_initialized(3)).
 *
 * <ul>
 * <li>{@link #forkInit()} is {@code ibv_fork_init}: it reads RDMAV_HUGEPAGES_SAFE, returns 0 at once when fork
 * support is on already, or when the kernel copies DMA pages at fork ({@link ForkStatus#UNNEEDED}) unless
 * RDMAV_USE_MADVISE is set, and EINVAL when a range was registered before it ("too late").</li>
 * <li>{@link #ibverbsInit()} is the environment check of {@code ibverbs_init}, run at the first device open of the
 * process: RDMAV_FORK_SAFE or IBV_FORK_SAFE set to anything but "0" calls {@code ibv_fork_init}.</li>
 * <li>{@link #dontforkRange} and {@link #doforkRange} are {@code ibv_dontfork_range} and {@code ibv_dofork_range}:
 * with fork support on, the range is widened to whole pages (sysconf(_SC_PAGESIZE), or with RDMAV_HUGEPAGES_SAFE
 * the KernelPageSize of the VMA holding its start) and a reference count per range decides which parts change:
 * MADV_DONTFORK where the count goes from 0 to 1, MADV_DOFORK where it goes from 1 to 0, so that overlapping
 * registrations keep their pages out of a child until the last one goes. Without fork support they only note that
 * a later {@code ibv_fork_init} comes too late.</li>
 * </ul>
 *
 * <p>A refused MADV_DONTFORK (EAGAIN past {@code vm.max_map_count}, as madvise reports a refused split, ENOMEM for an unmapped page, EINVAL for a cut
 * through a hugetlb page) undoes what the call changed and is thrown, so the verb fails with that errno and leaves
 * the VMAs and counts as they were ({@code ibv_madvise_range} rolls back). A refused MADV_DOFORK is ignored, as
 * {@code do_madvise} ignores it: the range stays out of children.
 *
 * <p>Not thread safe.
 */
public final class ForkSafety
{
    /** {@code enum ibv_fork_status}. */
    public enum ForkStatus
    {
        /** IBV_FORK_DISABLED: no fork support; a child may see registered pages change under the device. */
        DISABLED,
        /** IBV_FORK_ENABLED: registered ranges are MADV_DONTFORK. */
        ENABLED,
        /** IBV_FORK_UNNEEDED: the kernel copies DMA-pinned pages at fork, so no madvise is needed. */
        UNNEEDED
    }

    /** Environment variables libibverbs reads for fork support. */
    public static final String RDMAV_FORK_SAFE = "RDMAV_FORK_SAFE";
    /** The older name of {@link #RDMAV_FORK_SAFE}, still read by ibverbs_init. */
    public static final String IBV_FORK_SAFE = "IBV_FORK_SAFE";
    /** When set (to anything), madvise ranges are widened to the page size of their VMA (huge pages). */
    public static final String RDMAV_HUGEPAGES_SAFE = "RDMAV_HUGEPAGES_SAFE";
    /** When set to anything but "0", ibv_fork_init uses madvise even where the kernel copies DMA pages. */
    public static final String RDMAV_USE_MADVISE = "RDMAV_USE_MADVISE";

    private final UserProcess process;
    /** {@code mm_root != NULL}. */
    private boolean enabled;
    private boolean hugePagesSafe;
    /** Set by a range call before fork support was on: ibv_fork_init then answers EINVAL. */
    private boolean tooLate;
    private boolean ibverbsInitDone;
    private int initErrno = -1;
    /** Piecewise-constant reference count: each key starts a run of that count up to the next key. */
    private final TreeMap<Long, Integer> counts = new TreeMap<>(Map.of(0L, 0));
    private long dontforkCalls;
    private long doforkCalls;
    private long refusedDoforks;
    private long vmaChanges;
    private long pageSizeProbes;

    ForkSafety(final UserProcess process)
    {
        this.process = process;
    }

    /**
     * The state a child starts with after fork: libibverbs' static data, copied with the rest of the memory.
     *
     * @param child the child process.
     * @return a copy of this state for the child.
     */
    ForkSafety copyFor(final UserProcess child)
    {
        final ForkSafety copy = new ForkSafety(child);
        copy.enabled = enabled;
        copy.hugePagesSafe = hugePagesSafe;
        copy.tooLate = tooLate;
        copy.ibverbsInitDone = ibverbsInitDone;
        copy.initErrno = initErrno;
        copy.counts.clear();
        copy.counts.putAll(counts);
        return copy;
    }

    /**
     * @return the process.
     */
    public UserProcess process()
    {
        return process;
    }

    /**
     * @return true once {@link #ibverbsInit()} ran: the process's libibverbs read its environment, and variables set
     * later do nothing.
     */
    public boolean ibverbsInitialized()
    {
        return ibverbsInitDone;
    }

    /**
     * The environment check of {@code ibverbs_init} (libibverbs/init.c), run once per process at its first device
     * open: RDMAV_FORK_SAFE or IBV_FORK_SAFE set to anything but "0" calls {@link #forkInit()}; a failure there only
     * warns, as libibverbs does.
     */
    public void ibverbsInit()
    {
        if (ibverbsInitDone)
        {
            return;
        }
        ibverbsInitDone = true;
        if (checkEnv(RDMAV_FORK_SAFE) || checkEnv(IBV_FORK_SAFE))
        {
            forkInit();
        }
    }

    /**
     * {@code ibv_fork_init()} (libibverbs/memory.c).
     *
     * @return 0, or EINVAL (22) when a registration or queue already used memory before fork support was asked for.
     */
    public int forkInit()
    {
        if (process.environment().containsKey(RDMAV_HUGEPAGES_SAFE))
        {
            hugePagesSafe = true;
        }
        final int result;
        if (enabled || (!checkEnv(RDMAV_USE_MADVISE) && kernelCopiesOnFork()))
        {
            result = 0;
        }
        else if (tooLate)
        {
            result = dev.rnicsim.verbs.Errno.EINVAL.code();
        }
        else
        {
            enabled = true;
            result = 0;
        }
        initErrno = result;
        return result;
    }

    /**
     * {@code ibv_is_fork_initialized()}: UNNEEDED takes precedence when the kernel copies DMA pages at fork (the
     * host's {@link ForkBehaviour#MODERN}, Linux 5.13+ reporting RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK).
     *
     * @return the status.
     */
    public ForkStatus status()
    {
        if (kernelCopiesOnFork())
        {
            return ForkStatus.UNNEEDED;
        }
        return enabled ? ForkStatus.ENABLED : ForkStatus.DISABLED;
    }

    /**
     * @return true when ranges are madvised now ({@code mm_root} set).
     */
    public boolean enabled()
    {
        return enabled;
    }

    /**
     * @return true when RDMAV_HUGEPAGES_SAFE was seen by ibv_fork_init.
     */
    public boolean hugePagesSafe()
    {
        return hugePagesSafe;
    }

    /**
     * @return true when a range was registered before fork support was on, so that ibv_fork_init now fails.
     */
    public boolean tooLate()
    {
        return tooLate;
    }

    /**
     * @return what the last ibv_fork_init returned, or -1 when it was never called.
     */
    public int lastInitErrno()
    {
        return initErrno;
    }

    /**
     * @return sysconf(_SC_PAGESIZE) of the process's host: the page ranges are widened to without
     * RDMAV_HUGEPAGES_SAFE.
     */
    public long basePageBytes()
    {
        return SimHostMemory.basePageBytes(process);
    }

    /**
     * @return MADV_DONTFORK calls made (one per range whose count went from 0 to 1).
     */
    public long dontforkCalls()
    {
        return dontforkCalls;
    }

    /**
     * @return MADV_DOFORK calls made.
     */
    public long doforkCalls()
    {
        return doforkCalls;
    }

    /**
     * @return VMAs created or removed by the splits and merges of fork support's madvise calls.
     */
    public long vmaChanges()
    {
        return vmaChanges;
    }

    /**
     * @return page-size probes made under RDMAV_HUGEPAGES_SAFE, one per madvised range ({@code get_page_size}).
     */
    public long pageSizeProbes()
    {
        return pageSizeProbes;
    }

    /**
     * @param cost the cost model.
     * @return the simulated time of all the madvise work so far ({@link CostModel#forkSafetyNs}); the difference
     * around one verb is that verb's share.
     */
    public long workNs(final CostModel cost)
    {
        return cost.forkSafetyNs(dontforkCalls + doforkCalls, vmaChanges, pageSizeProbes);
    }

    /**
     * @return MADV_DOFORK calls the kernel refused and libibverbs ignored (their ranges stay out of children).
     */
    public long refusedDoforks()
    {
        return refusedDoforks;
    }

    /**
     * @return bytes held MADV_DONTFORK by at least one registration or queue.
     */
    public long dontforkBytes()
    {
        long bytes = 0;
        Map.Entry<Long, Integer> previous = null;
        for (final Map.Entry<Long, Integer> e : counts.entrySet())
        {
            if (previous != null && previous.getValue() > 0)
            {
                bytes += e.getKey() - previous.getKey();
            }
            previous = e;
        }
        return bytes;
    }

    /**
     * @param address a virtual address.
     * @return how many registrations and queues hold the page at {@code address} MADV_DONTFORK.
     */
    public int referenceCount(final long address)
    {
        return counts.floorEntry(address).getValue();
    }

    /**
     * {@code ibv_dontfork_range(addr, lengthBytes)}.
     *
     * @param addr        the range's first byte; 0 does nothing.
     * @param lengthBytes its length; 0 does nothing.
     * @throws KernelException the errno of the refused madvise (EAGAIN, ENOMEM, EINVAL); nothing is left changed.
     */
    public void dontforkRange(final long addr, final long lengthBytes)
    {
        madviseRange(addr, lengthBytes, 1);
    }

    /**
     * {@link #dontforkRange} for a verb: the refusal becomes the verb's error with its errno, saying why.
     *
     * @param verb        the verb, e.g. ibv_reg_mr.
     * @param addr        the range's first byte.
     * @param lengthBytes its length.
     * @throws dev.rnicsim.verbs.VerbsException the madvise's errno (EAGAIN, ENOMEM, EINVAL); nothing is left changed.
     */
    void dontforkRange(final String verb, final long addr, final long lengthBytes)
    {
        try
        {
            dontforkRange(addr, lengthBytes);
        }
        catch (final KernelException e)
        {
            final String detail = e.getMessage().startsWith(e.errno().name() + ": ")
                ? e.getMessage().substring(e.errno().name().length() + 2) : e.getMessage();
            final String fix = detail.contains("max_map_count")
                ? "every MADV_DONTFORK that does not cover whole VMAs splits them; raise vm.max_map_count or register "
                    + "fewer, larger buffers"
                : detail.contains("hugetlb") ? "set RDMAV_HUGEPAGES_SAFE=1 so that libibverbs widens the range to "
                    + "the huge page, or register whole huge pages"
                : "the range must be mapped: fork support madvises it before the kernel pins it";
            throw new dev.rnicsim.verbs.VerbsException(verb, e.errno().value(), "fork support (ibv_fork_init) "
                + "could not madvise(MADV_DONTFORK) 0x" + Long.toHexString(addr) + "+" + lengthBytes + ": " + detail
                + "; " + fix, e);
        }
    }

    /**
     * {@code ibv_dofork_range(addr, lengthBytes)}: never fails (a refused MADV_DOFORK is ignored).
     *
     * @param addr        the range's first byte; 0 does nothing.
     * @param lengthBytes its length; 0 does nothing.
     */
    public void doforkRange(final long addr, final long lengthBytes)
    {
        madviseRange(addr, lengthBytes, -1);
    }

    private void madviseRange(final long addr, final long lengthBytes, final int inc)
    {
        if (!enabled)
        {
            tooLate = true;
            return;
        }
        if (addr == 0 || lengthBytes == 0)
        {
            return;
        }
        final long pageBytes = rangePageBytes(addr);
        pageSizeProbes += hugePagesSafe ? 1 : 0;
        final long start = addr & -pageBytes;
        final long last = addr + lengthBytes;
        final long end = last < addr || last > UserProcess.TASK_SIZE ? UserProcess.TASK_SIZE + pageBytes
            : (last + pageBytes - 1) & -pageBytes;
        // Only the nodes around the range change (libibverbs memory.c splits and merges neighbouring nodes): the
        // rollback copy and the merge after cover those, so a registration costs the same however many there are.
        final long lo = counts.floorKey(start);
        final Long above = counts.ceilingKey(end);
        final long hi = above == null ? Long.MAX_VALUE : above;
        final TreeMap<Long, Integer> before = new TreeMap<>(counts.subMap(lo, true, hi, true));
        split(start);
        split(end);
        // The runs whose count crosses 0 <-> 1 are madvised, each as one call (libibverbs: one per node).
        final List<long[]> runs = new ArrayList<>();
        for (final Map.Entry<Long, Integer> e : counts.subMap(start, true, end, false).entrySet())
        {
            final long runEnd = counts.higherKey(e.getKey());
            final boolean crosses = inc > 0 ? e.getValue() == 0 : e.getValue() == 1;
            if (crosses)
            {
                if (!runs.isEmpty() && runs.get(runs.size() - 1)[1] == e.getKey())
                {
                    runs.get(runs.size() - 1)[1] = runEnd;
                }
                else
                {
                    runs.add(new long[] {e.getKey(), runEnd});
                }
            }
            e.setValue(Math.max(0, e.getValue() + inc));
        }
        if (inc > 0)
        {
            final List<long[]> done = new ArrayList<>();
            try
            {
                for (final long[] run : runs)
                {
                    madvise(run, Madvice.DONTFORK);
                    dontforkCalls++;
                    done.add(run);
                }
            }
            catch (final KernelException e)
            {
                for (final long[] run : done)
                {
                    process.madvise(run[0], run[1] - run[0], Madvice.DOFORK);
                }
                counts.subMap(lo, true, hi, true).clear();
                counts.putAll(before);
                throw e;
            }
        }
        else
        {
            for (final long[] run : runs)
            {
                doforkCalls++;
                try
                {
                    if (!process.exited())
                    {
                        madvise(run, Madvice.DOFORK);
                    }
                }
                catch (final KernelException e)
                {
                    refusedDoforks++;
                }
            }
        }
        coalesce(lo, end);
    }

    /**
     * The page size a range is widened to: sysconf(_SC_PAGESIZE), or with RDMAV_HUGEPAGES_SAFE the KernelPageSize
     * of the VMA holding the address ({@code get_page_size}, read from /proc/PID/smaps).
     */
    long rangePageBytes(final long addr)
    {
        final long basePage = SimHostMemory.basePageBytes(process);
        if (!hugePagesSafe)
        {
            return basePage;
        }
        final Vma v = process.vmaAt(addr);
        return v != null && v.kind() == VmaKind.HUGETLB ? v.hugePageSize().bytes() : basePage;
    }

    /** One madvise(2) of a run, counting the VMAs its split or merge creates or removes. */
    private void madvise(final long[] run, final Madvice advice)
    {
        final int before = process.vmaCount();
        process.madvise(run[0], run[1] - run[0], advice);
        vmaChanges += Math.abs(process.vmaCount() - before);
    }

    private void split(final long at)
    {
        final Map.Entry<Long, Integer> floor = counts.floorEntry(at);
        if (floor.getKey() != at)
        {
            counts.put(at, floor.getValue());
        }
    }

    /** Merges equal neighbouring nodes from {@code from} (kept) through {@code to}, where a change can have made some. */
    private void coalesce(final long from, final long to)
    {
        Integer previous = null;
        for (final var it = counts.subMap(from, true, to, true).entrySet().iterator(); it.hasNext();)
        {
            final Map.Entry<Long, Integer> e = it.next();
            if (previous != null && previous.equals(e.getValue()))
            {
                it.remove();
            }
            else
            {
                previous = e.getValue();
            }
        }
    }

    private boolean kernelCopiesOnFork()
    {
        return process.host().config().forkBehaviour() == ForkBehaviour.MODERN;
    }

    /** rdma-core's {@code check_env}: set, and not "0". */
    private boolean checkEnv(final String variable)
    {
        final String value = process.environment().get(variable);
        return value != null && !"0".equals(value);
    }
}
