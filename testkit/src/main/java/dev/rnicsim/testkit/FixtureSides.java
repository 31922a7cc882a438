package dev.rnicsim.testkit;

import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.testkit.TestNic.Side;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.HostMemory;
import dev.rnicsim.verbs.ProtectionDomain;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The two sides of a {@link TestNic}, as the layers under the verbs see them: on each side a simulated host with one
 * device, a process that opened it, a PD and a CQ; and what a test does to the hosts themselves, their processes'
 * memory (mmap, munmap, CPU loads and stores, fork, exit) and the simulated clock. {@link TestNic} adds what the NIC
 * does on top: the connected QPs, registration, work requests and strict mode. Its public methods are
 * {@link TestNic}'s; this class exists only as TestNic's part.
 *
 * <p>Units: addresses are process virtual addresses, lengths are in bytes, times in simulated nanoseconds. Not thread
 * safe (nor is the simulator).
 */
abstract sealed class FixtureSides permits TestNic
{
    private final SimFabric fabric;
    private final DeviceProfile profile;
    private final HostConfig hostConfig;
    private final long memlockBytes;
    private final Map<Side, SimDevice> devices = new EnumMap<>(Side.class);
    private final Map<Side, SimContext> contexts = new EnumMap<>(Side.class);
    private final Map<Side, ProtectionDomain> pds = new EnumMap<>(Side.class);
    private final Map<Side, CompletionQueue> cqs = new EnumMap<>(Side.class);
    private final Processes processes = new Processes();
    private boolean closed;

    /**
     * Builds both sides, A first: host, device, process (with its RLIMIT_MEMLOCK), context, PD, CQ.
     *
     * @param profile      both devices' profile.
     * @param hostConfig   both hosts' configuration.
     * @param memlockBytes RLIMIT_MEMLOCK of both processes, or {@link UserProcess#RLIM_INFINITY}.
     * @param cqEntries    entries of each side's CQ.
     */
    FixtureSides(final DeviceProfile profile, final HostConfig hostConfig, final long memlockBytes,
        final int cqEntries)
    {
        fabric = new SimFabric();
        this.profile = profile;
        this.hostConfig = hostConfig;
        this.memlockBytes = memlockBytes;
        for (final Side s : Side.values())
        {
            final SimDevice d = fabric.addHost(s.tag(), hostConfig).addDevice("sim:" + s.tag() + "/" + profile.name(),
                profile);
            devices.put(s, d);
            final UserProcess p = d.host().host().spawn("app_" + s.tag());
            p.rlimitMemlockBytes(memlockBytes);
            final SimContext c = d.open(p);
            contexts.put(s, c);
            pds.put(s, c.allocPd());
            cqs.put(s, c.createCq(cqEntries));
        }
    }

    // ------------------------------------------------------------------ the objects

    /**
     * @return the fabric: its clock ({@code fabric().clock().nowNs()}) and cost model.
     */
    public SimFabric fabric()
    {
        return fabric;
    }

    /**
     * @return the devices' profile.
     */
    public DeviceProfile profile()
    {
        return profile;
    }

    /**
     * @param side a side.
     * @return its device.
     */
    public SimDevice device(final Side side)
    {
        return devices.get(side);
    }

    /**
     * @param side a side.
     * @return its context (the device opened by its process).
     */
    public SimContext context(final Side side)
    {
        return contexts.get(side);
    }

    /**
     * @param side a side.
     * @return its process.
     */
    public UserProcess process(final Side side)
    {
        return contexts.get(side).process();
    }

    /**
     * @param side a side.
     * @return its process's memory as the verbs API sees it (allocate, free, read, write, onUnmap hooks).
     */
    public HostMemory memory(final Side side)
    {
        return contexts.get(side).memory();
    }

    /**
     * @param side a side.
     * @return its protection domain.
     */
    public ProtectionDomain pd(final Side side)
    {
        return pds.get(side);
    }

    /**
     * @param side a side.
     * @return its completion queue (send and receive completions of its QP).
     */
    public CompletionQueue cq(final Side side)
    {
        return cqs.get(side);
    }

    // ------------------------------------------------------------------ memory

    /**
     * Maps anonymous memory in 4 KiB pages ({@code mmap} + MADV_NOHUGEPAGE).
     *
     * @param side        whose process.
     * @param lengthBytes bytes, more than 0 (rounded up to 4 KiB).
     * @return the address of its first byte.
     * @throws dev.rnicsim.verbs.VerbsException ENOMEM, EINVAL as {@link HostMemory#allocate}.
     */
    public long alloc(final Side side, final long lengthBytes)
    {
        return alloc(side, lengthBytes, Backing.BASE_PAGES);
    }

    /**
     * @param side        whose process.
     * @param lengthBytes bytes, more than 0 (rounded up to the backing's page).
     * @param backing     what backs it (hugetlb pages need a pool: {@link TestNic.Builder#host}).
     * @return the address of its first byte.
     * @throws dev.rnicsim.verbs.VerbsException ENOMEM, EINVAL as {@link HostMemory#allocate}.
     */
    public long alloc(final Side side, final long lengthBytes, final Backing backing)
    {
        check();
        return memory(side).allocate(lengthBytes, backing);
    }

    /**
     * {@code munmap}: the process's unmap hooks run first (a registration cache's invalidation); pages still
     * pinned by an MR stay allocated to it, so the MR keeps reaching them.
     *
     * @param side        whose process.
     * @param address     first byte, 4 KiB aligned.
     * @param lengthBytes bytes (rounded up to the page).
     * @throws dev.rnicsim.verbs.VerbsException EINVAL for an unaligned range.
     */
    public void munmap(final Side side, final long address, final long lengthBytes)
    {
        check();
        memory(side).free(address, lengthBytes);
    }

    /**
     * Maps fresh 4 KiB pages at a fixed address ({@code mmap(address, ..., MAP_FIXED_NOREPLACE)} +
     * MADV_NOHUGEPAGE), as an allocator that hands out a freed address again does.
     *
     * @param side        whose process.
     * @param address     first byte, 4 KiB aligned.
     * @param lengthBytes bytes (rounded up to 4 KiB).
     * @return the address (the same).
     * @throws dev.rnicsim.verbs.VerbsException EEXIST when part of the range is mapped, EINVAL for an unaligned
     *                                          address, EPERM below vm.mmap_min_addr, ENOMEM when vm.max_map_count
     *                                          would be passed.
     */
    public long mmapFixed(final Side side, final long address, final long lengthBytes)
    {
        check();
        return processes.mmapFixed(process(side), address, lengthBytes);
    }

    /**
     * munmap, then mmap of fresh pages at the same address: free and malloc giving the buffer back, the case in
     * which a registration cache without memory hooks hands out an MR over the old pages.
     *
     * @param side        whose process.
     * @param address     first byte, 4 KiB aligned.
     * @param lengthBytes bytes.
     * @return the address (the same).
     * @throws dev.rnicsim.verbs.VerbsException as {@link #munmap} and {@link #mmapFixed}.
     */
    public long remap(final Side side, final long address, final long lengthBytes)
    {
        munmap(side, address, lengthBytes);
        return mmapFixed(side, address, lengthBytes);
    }

    /**
     * A CPU store (faults pages in; after a fork on a LEGACY host, a write to a shared page copies it).
     *
     * @param side    whose process.
     * @param address first byte.
     * @param data    bytes.
     * @throws dev.rnicsim.verbs.VerbsException EFAULT when not mapped writable.
     */
    public void cpuWrite(final Side side, final long address, final byte[] data)
    {
        check();
        memory(side).write(address, data);
    }

    /**
     * A CPU load.
     *
     * @param side        whose process.
     * @param address     first byte.
     * @param lengthBytes bytes.
     * @return the bytes the process sees there.
     * @throws dev.rnicsim.verbs.VerbsException EFAULT when not mapped readable.
     */
    public byte[] cpuRead(final Side side, final long address, final int lengthBytes)
    {
        check();
        return memory(side).read(address, lengthBytes);
    }

    /**
     * fork(2) of a side's process, copy-on-write as the builder's {@link TestNic.Builder#forkBehaviour} says. The child
     * opens no device; it exits when this fixture closes, or earlier by {@link UserProcess#exit()}.
     *
     * @param side whose process.
     * @return the child.
     * @throws dev.rnicsim.verbs.VerbsException ENOMEM when memory runs out copying pinned pages.
     */
    public UserProcess fork(final Side side)
    {
        check();
        return processes.fork(process(side), side);
    }

    /**
     * exit(2) of the youngest child forked by {@link #fork} that still runs: its copy-on-write pages go back.
     *
     * @return true when a child exited, false when none was running.
     */
    public boolean exitChild()
    {
        check();
        return processes.exitChild();
    }

    /**
     * Moves the simulated clock on (what the application does between verbs).
     *
     * @param durationNs nanoseconds, 0 or more.
     * @throws IllegalArgumentException for a negative duration.
     */
    public void advanceClock(final long durationNs)
    {
        if (durationNs < 0)
        {
            throw new IllegalArgumentException("durationNs=" + durationNs + " must be 0 or more");
        }
        fabric.clock().advance(durationNs);
    }

    /**
     * @return true once {@link TestNic#close()} ran.
     */
    public boolean isClosed()
    {
        return closed;
    }

    /**
     * @return both hosts' configuration.
     */
    HostConfig hostConfig()
    {
        return hostConfig;
    }

    /**
     * @return RLIMIT_MEMLOCK of both processes in bytes, or {@link UserProcess#RLIM_INFINITY}.
     */
    long memlockBytes()
    {
        return memlockBytes;
    }

    /**
     * @return each side's PD.
     */
    Map<Side, ProtectionDomain> pdsBySide()
    {
        return pds;
    }

    /**
     * @return each side's CQ.
     */
    Map<Side, CompletionQueue> cqsBySide()
    {
        return cqs;
    }

    /**
     * @throws IllegalStateException once the fixture is closed.
     */
    void check()
    {
        if (closed)
        {
            throw new IllegalStateException("the TestNic is closed");
        }
    }

    /**
     * Marks the fixture closed, closes both contexts, B first (which deregisters what they still hold), and ends the
     * forked children.
     *
     * @return the first failure of a context's close, the others suppressed in it; null when both closed.
     */
    RuntimeException closeSides()
    {
        closed = true;
        RuntimeException failure = null;
        for (final Side s : List.of(Side.B, Side.A))
        {
            try
            {
                contexts.get(s).close();
            }
            catch (final RuntimeException e)
            {
                if (failure == null)
                {
                    failure = e;
                }
                else
                {
                    failure.addSuppressed(e);
                }
            }
        }
        processes.exitAll();
        return failure;
    }
}
