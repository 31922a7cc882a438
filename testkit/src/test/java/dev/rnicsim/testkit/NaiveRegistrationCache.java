package dev.rnicsim.testkit;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A registration cache written the naive way: MRs kept by address range and handed out again for any range they
 * cover, never invalidated when the memory under them is freed. After a munmap and an mmap that returns the same
 * address, it hands out an MR whose pages are not the buffer's any more: the bug UCX's and Open MPI's memory hooks
 * exist to prevent.
 */
class NaiveRegistrationCache implements AutoCloseable, CacheActions.MrCache
{
    /** What every cached MR allows. */
    static final Set<Access> RIGHTS = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);

    private final ProtectionDomain pd;
    private final TreeMap<Long, MemoryRegion> byStart = new TreeMap<>();
    private int hits;
    private int misses;

    NaiveRegistrationCache(final ProtectionDomain pd)
    {
        this.pd = pd;
    }

    /**
     * @param s a chain's state.
     * @return a naive cache over side B's PD.
     */
    static NaiveRegistrationCache of(final VerbsState s)
    {
        return new NaiveRegistrationCache(s.nic().pd(TestNic.Side.B));
    }

    @Override
    public MemoryRegion cover(final long addr, final long lengthBytes)
    {
        return get(addr, lengthBytes);
    }

    /**
     * @param addr        first byte.
     * @param lengthBytes bytes, at least 1.
     * @return an MR covering the range: a cached one, else a new registration of the range widened to 4 KiB pages.
     */
    MemoryRegion get(final long addr, final long lengthBytes)
    {
        final Map.Entry<Long, MemoryRegion> e = byStart.floorEntry(addr);
        if (e != null && e.getValue().addr() + e.getValue().lengthBytes() >= addr + lengthBytes)
        {
            hits++;
            return e.getValue();
        }
        misses++;
        final long start = addr & -4096L;
        final long end = (addr + lengthBytes + 4095) & -4096L;
        final MemoryRegion mr = pd.regMr(start, end - start, RIGHTS);
        final MemoryRegion replaced = byStart.put(start, mr);
        if (replaced != null)
        {
            replaced.close();
        }
        return mr;
    }

    /**
     * Drops and deregisters every entry overlapping a range. The naive cache never calls it.
     *
     * @param addr        first byte released.
     * @param lengthBytes bytes released.
     */
    void invalidate(final long addr, final long lengthBytes)
    {
        final List<Long> gone = new ArrayList<>();
        for (final Map.Entry<Long, MemoryRegion> e : byStart.entrySet())
        {
            final MemoryRegion mr = e.getValue();
            if (mr.addr() < addr + lengthBytes && addr < mr.addr() + mr.lengthBytes())
            {
                gone.add(e.getKey());
            }
        }
        for (final Long start : gone)
        {
            byStart.remove(start).close();
        }
    }

    int hits()
    {
        return hits;
    }

    int misses()
    {
        return misses;
    }

    /** Deregisters every entry. */
    @Override
    public void close()
    {
        for (final MemoryRegion mr : byStart.values())
        {
            mr.close();
        }
        byStart.clear();
    }
}
