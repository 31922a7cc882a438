package dev.rnicsim.pagetable;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * The VMAs of one address space, ordered by start address (the kernel keeps them in a maple tree): lookup,
 * overlap queries, splitting at range boundaries, merging of compatible neighbours (mm/vma.c), free-range search
 * and the VMA counts that {@code vm.max_map_count} limits. It knows nothing of page tables.
 *
 * <p>The VMAs sit in an array sorted by start address, their starts in a parallel array searched by bisection: a
 * process has tens of VMAs, and a change moves a few array slots instead of allocating tree nodes and boxed keys.
 *
 * <p>Not thread safe.
 */
final class VmaTree
{
    /** Start addresses of the VMAs, ascending (signed order, as the addresses' {@code Long} keys compared). */
    private long[] starts = new long[8];
    /** The VMAs, in the order of {@link #starts}. */
    private Vma[] byStart = new Vma[8];
    /** VMAs held: the first {@code count} slots of both arrays. */
    private int count;
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
        copy.starts = starts.clone();
        copy.byStart = byStart.clone();
        copy.count = count;
        visits.accept(count);
        return copy;
    }

    /** @return the index of the VMA with the greatest start at or below {@code address}, or -1. */
    private int floorIndex(final long address)
    {
        int lo = 0;
        int hi = count - 1;
        while (lo <= hi)
        {
            final int mid = (lo + hi) >>> 1;
            if (starts[mid] <= address)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid - 1;
            }
        }
        return hi;
    }

    /** @return the index of the first VMA starting at or above {@code address} ({@code count} when none). */
    private int ceilingIndex(final long address)
    {
        int lo = 0;
        int hi = count - 1;
        while (lo <= hi)
        {
            final int mid = (lo + hi) >>> 1;
            if (starts[mid] < address)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid - 1;
            }
        }
        return lo;
    }

    /** @return the VMA starting exactly at {@code start}, or null. */
    private Vma get(final long start)
    {
        final int i = floorIndex(start);
        return i >= 0 && starts[i] == start ? byStart[i] : null;
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
            local.put(v);
        }
        final int before = ceilingIndex(local.count == 0 ? start : local.starts[0]) - 1;
        if (before >= 0)
        {
            local.put(byStart[before]);
        }
        final int after = ceilingIndex(end);
        if (after < count)
        {
            local.put(byStart[after]);
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
        return count;
    }

    List<Vma> list()
    {
        visits.accept(count);
        if (listed == null)
        {
            listed = List.of(Arrays.copyOf(byStart, count));
        }
        return listed;
    }

    /** @return the VMA containing {@code address}, or null. */
    Vma at(final long address)
    {
        final int i = floorIndex(address);
        return i >= 0 && byStart[i].contains(address) ? byStart[i] : null;
    }

    /** Adds a VMA, or replaces the one with the same start. */
    void put(final Vma vma)
    {
        listed = null;
        final long start = vma.startAddress();
        final int i = ceilingIndex(start);
        if (i < count && starts[i] == start)
        {
            byStart[i] = vma;
            return;
        }
        if (count == starts.length)
        {
            starts = Arrays.copyOf(starts, 2 * count);
            byStart = Arrays.copyOf(byStart, 2 * count);
        }
        System.arraycopy(starts, i, starts, i + 1, count - i);
        System.arraycopy(byStart, i, byStart, i + 1, count - i);
        starts[i] = start;
        byStart[i] = vma;
        count++;
    }

    void restore(final List<Vma> snapshot)
    {
        visits.accept(count + snapshot.size());
        listed = null;
        Arrays.fill(byStart, 0, count, null);
        count = 0;
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
        final int first = floorIndex(start);
        final long from = first >= 0 && byStart[first].endAddress() > start ? starts[first] : start;
        if (from >= end)
        {
            return out;
        }
        for (int i = ceilingIndex(from); i < count && starts[i] < end; i++)
        {
            if (byStart[i].endAddress() > start)
            {
                out.add(byStart[i]);
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
        int after = count;
        for (final Vma v : overlapping(start, end))
        {
            final boolean left = v.startAddress() < start;
            final boolean right = v.endAddress() > end;
            after += (left && right) ? 1 : (left || right) ? 0 : -1;
        }
        return after;
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
        final int i = floorIndex(start);
        if (i >= 0 && starts[i] == start)
        {
            System.arraycopy(starts, i + 1, starts, i, count - i - 1);
            System.arraycopy(byStart, i + 1, byStart, i, count - i - 1);
            byStart[--count] = null;
        }
    }

    /** Merges the VMA ending at {@code boundary} with the one starting there when compatible. */
    private void mergeAt(final long boundary)
    {
        final int leftIndex = ceilingIndex(boundary) - 1;
        final Vma right = get(boundary);
        if (leftIndex < 0 || right == null)
        {
            return;
        }
        final Vma left = byStart[leftIndex];
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
        for (int i = count - 1; i >= 0; i--)
        {
            final Vma v = byStart[i];
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
