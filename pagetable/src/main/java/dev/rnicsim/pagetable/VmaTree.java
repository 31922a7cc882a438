package dev.rnicsim.pagetable;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;

/**
 * The VMAs of one address space, ordered by start address (the kernel keeps them in a maple tree): lookup,
 * overlap queries, splitting at range boundaries, merging of compatible neighbours (mm/vma.c), free-range search
 * and the VMA counts that {@code vm.max_map_count} limits. It knows nothing of page tables.
 *
 * <p>Not thread safe.
 */
final class VmaTree
{
    private final TreeMap<Long, Vma> byStart = new TreeMap<>();
    /**
     * What {@link #list} returned last, until the tree changes (null: changed since): callers that read the VMAs after
     * every step of a test get the same list object while nothing changed.
     */
    private List<Vma> listed;
    /** Told how many VMAs each operation reads or writes: the work a change costs, counted, not timed. */
    private final java.util.function.LongConsumer visits;

    VmaTree()
    {
        this(n -> { });
    }

    /** @param visits told the number of VMAs each operation reads or writes ({@link VmEvent#VMA_VISITS}). */
    VmaTree(final java.util.function.LongConsumer visits)
    {
        this.visits = visits;
    }

    /** @return an independent copy, to try a change on. */
    VmaTree copy()
    {
        final VmaTree copy = new VmaTree();
        copy.byStart.putAll(byStart);
        visits.accept(byStart.size());
        return copy;
    }

    /**
     * The VMAs a change of {@code [start, end)} can touch, as a tree of their own: those overlapping it and the
     * neighbour on either side, which a merge may absorb (mm/vma.c {@code vma_modify} looks at {@code prev} and
     * {@code next} only).
     */
    private VmaTree neighbourhood(final long start, final long end)
    {
        final VmaTree local = new VmaTree();
        for (final Vma v : overlapping(start, end))
        {
            local.byStart.put(v.startAddress(), v);
        }
        final Map.Entry<Long, Vma> before = byStart.lowerEntry(local.byStart.isEmpty() ? start
            : local.byStart.firstKey());
        if (before != null)
        {
            local.byStart.put(before.getKey(), before.getValue());
        }
        final Map.Entry<Long, Vma> after = byStart.ceilingEntry(end);
        if (after != null)
        {
            local.byStart.put(after.getKey(), after.getValue());
        }
        visits.accept(2);
        return local;
    }

    /**
     * @return how many VMAs there would be after {@link #change}: the count now plus what splitting and merging in
     * the neighbourhood of the range adds or removes, found without copying the tree.
     */
    int countAfterChange(final long start, final long end, final UnaryOperator<Vma> change)
    {
        final VmaTree local = neighbourhood(start, end);
        final int before = local.size();
        local.change(start, end, change);
        return size() + local.size() - before;
    }

    /** @return how many VMAs there would be after carving {@code [start, end)} and inserting {@code vma} there. */
    int countAfterReplace(final long start, final long end, final Vma vma)
    {
        final VmaTree local = neighbourhood(start, end);
        final int before = local.size();
        local.carve(start, end);
        local.insertAndMerge(vma);
        return size() + local.size() - before;
    }

    int size()
    {
        return byStart.size();
    }

    List<Vma> list()
    {
        visits.accept(byStart.size());
        if (listed == null)
        {
            listed = List.copyOf(byStart.values());
        }
        return listed;
    }

    /** @return the VMA containing {@code address}, or null. */
    Vma at(final long address)
    {
        final Map.Entry<Long, Vma> e = byStart.floorEntry(address);
        return e != null && e.getValue().contains(address) ? e.getValue() : null;
    }

    void put(final Vma vma)
    {
        listed = null;
        byStart.put(vma.startAddress(), vma);
    }

    void restore(final List<Vma> snapshot)
    {
        visits.accept(byStart.size() + snapshot.size());
        listed = null;
        byStart.clear();
        for (final Vma v : snapshot)
        {
            put(v);
        }
    }

    boolean overlaps(final long start, final long end)
    {
        return !overlapping(start, end).isEmpty();
    }

    /** @return the VMAs that share at least one byte with {@code [start, end)}, in address order. */
    List<Vma> overlapping(final long start, final long end)
    {
        final List<Vma> out = new ArrayList<>();
        final Map.Entry<Long, Vma> first = byStart.floorEntry(start);
        final long from = first != null && first.getValue().endAddress() > start ? first.getKey() : start;
        if (from >= end)
        {
            return out;
        }
        for (final Vma v : byStart.subMap(from, true, end, false).values())
        {
            if (v.endAddress() > start)
            {
                out.add(v);
            }
        }
        visits.accept(out.size() + 1);
        return out;
    }

    /** @return the first address in {@code [start, end)} that no VMA covers, or {@code end}. */
    long firstHole(final long start, final long end)
    {
        long cursor = start;
        for (final Vma v : overlapping(start, end))
        {
            if (v.startAddress() > cursor)
            {
                break;
            }
            cursor = v.endAddress();
        }
        return Math.min(cursor, end);
    }

    /** @return how many VMAs there would be after removing {@code [start, end)}. */
    int countAfterCarve(final long start, final long end)
    {
        int count = byStart.size();
        for (final Vma v : overlapping(start, end))
        {
            final boolean left = v.startAddress() < start;
            final boolean right = v.endAddress() > end;
            count += (left && right) ? 1 : (left || right) ? 0 : -1;
        }
        return count;
    }

    /** Removes {@code [start, end)}, keeping the parts of cut VMAs outside it. */
    void carve(final long start, final long end)
    {
        for (final Vma v : overlapping(start, end))
        {
            remove(v.startAddress());
            keepOutside(v, start, end);
        }
    }

    /** Applies {@code change} to the part of every VMA inside {@code [start, end)}, then merges neighbours. */
    void change(final long start, final long end, final UnaryOperator<Vma> change)
    {
        for (final Vma v : overlapping(start, end))
        {
            remove(v.startAddress());
            keepOutside(v, start, end);
            put(change.apply(v.withRange(Math.max(start, v.startAddress()), Math.min(end, v.endAddress()))));
        }
        mergeAt(start);
        mergeAt(end);
        for (final Vma v : overlapping(start, end))
        {
            mergeAt(v.startAddress());
        }
    }

    void insertAndMerge(final Vma vma)
    {
        put(vma);
        mergeAt(vma.startAddress());
        mergeAt(vma.endAddress());
    }

    private void keepOutside(final Vma v, final long start, final long end)
    {
        if (v.startAddress() < start)
        {
            put(v.withRange(v.startAddress(), start));
        }
        if (v.endAddress() > end)
        {
            put(v.withRange(end, v.endAddress()));
        }
    }

    private void remove(final long start)
    {
        listed = null;
        byStart.remove(start);
    }

    /** Merges the VMA ending at {@code boundary} with the one starting there when compatible. */
    private void mergeAt(final long boundary)
    {
        final Map.Entry<Long, Vma> leftEntry = byStart.lowerEntry(boundary);
        final Vma right = byStart.get(boundary);
        if (leftEntry == null || right == null)
        {
            return;
        }
        final Vma left = leftEntry.getValue();
        if (left.kind() != VmaKind.FILE && left.mergeableWith(right))
        {
            remove(right.startAddress());
            put(left.withRange(left.startAddress(), right.endAddress()));
        }
    }

    /**
     * Top-down search for a free range below {@code topAddress} (mm/mmap.c {@code unmapped_area_topdown}).
     *
     * @return the start of the range, or -1 when none fits above {@code lowestAddress}.
     */
    long findFreeRange(final long length, final long align, final long lowestAddress, final long topAddress)
    {
        long top = topAddress;
        for (final Vma v : byStart.descendingMap().values())
        {
            visits.accept(1);
            if (v.startAddress() >= top)
            {
                continue;
            }
            if (v.endAddress() < top)
            {
                final long candidate = (top - length) & ~(align - 1);
                if (top - length >= v.endAddress() && candidate >= v.endAddress())
                {
                    return candidate;
                }
            }
            top = v.startAddress();
        }
        final long candidate = (top - length) & ~(align - 1);
        return top - length >= lowestAddress && candidate >= lowestAddress ? candidate : -1;
    }
}
