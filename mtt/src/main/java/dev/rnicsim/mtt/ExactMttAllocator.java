package dev.rnicsim.mtt;

import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Exact allocation of MTT entries: each MR takes exactly the entries it needs as one contiguous range, the
 * smallest free range that fits (lowest address among equals), and a freed range coalesces with free neighbours.
 * Memory: one entry per free range, none per MTT entry.
 *
 * <p>Not thread safe.
 */
final class ExactMttAllocator implements MttAllocator
{
    private final long capacity;
    private final TreeMap<Long, Long> freeByStart = new TreeMap<>();
    private final TreeMap<Long, TreeSet<Long>> startsBySize = new TreeMap<>();
    private long free;

    ExactMttAllocator(final long capacityEntries)
    {
        this.capacity = capacityEntries;
        addFree(0, capacityEntries);
    }

    @Override
    public long capacityEntries()
    {
        return capacity;
    }

    @Override
    public long reservedFor(final long entries)
    {
        return entries;
    }

    @Override
    public MttRange allocate(final long entries)
    {
        final Map.Entry<Long, TreeSet<Long>> fit = startsBySize.ceilingEntry(entries);
        if (fit == null)
        {
            return null;
        }
        final long size = fit.getKey();
        final long start = fit.getValue().first();
        removeFree(start, size);
        if (size > entries)
        {
            addFree(start + entries, size - entries);
        }
        return new MttRange(start, entries, entries);
    }

    @Override
    public void free(final MttRange range)
    {
        long start = range.firstEntry();
        long size = range.reservedEntries();
        final Map.Entry<Long, Long> before = freeByStart.floorEntry(start);
        if (before != null && before.getKey() + before.getValue() == start)
        {
            removeFree(before.getKey(), before.getValue());
            start = before.getKey();
            size += before.getValue();
        }
        final Long after = freeByStart.get(start + size);
        if (after != null)
        {
            removeFree(start + size, after);
            size += after;
        }
        addFree(start, size);
    }

    @Override
    public long largestFreeBlock()
    {
        return startsBySize.isEmpty() ? 0 : startsBySize.lastKey();
    }

    @Override
    public long freeEntries()
    {
        return free;
    }

    private void addFree(final long start, final long size)
    {
        freeByStart.put(start, size);
        startsBySize.computeIfAbsent(size, s -> new TreeSet<>()).add(start);
        free += size;
    }

    private void removeFree(final long start, final long size)
    {
        freeByStart.remove(start);
        final TreeSet<Long> starts = startsBySize.get(size);
        starts.remove(start);
        if (starts.isEmpty())
        {
            startsBySize.remove(size);
        }
        free -= size;
    }
}
