package dev.rnicsim.pagetable;

/**
 * The buddy allocator of one zone (mm/page_alloc.c): free memory is kept as naturally aligned blocks of
 * {@code 2^order} frames, order 0 (4 KiB) to {@link #MAX_ORDER} (1 GiB). An allocation splits the smallest
 * large-enough block; a free merges a block with its buddy while the buddy is free. Free blocks are held per
 * order as bitmaps over the zone's aligned blocks ({@link BlockBitmap}), created in pieces on first use, so a free
 * 1 TiB zone costs about 1 MiB (the bitmaps' summary levels) and a frame handed out or returned costs a few word
 * operations, no object.
 *
 * <p>Blocks are taken lowest address first, which keeps runs deterministic. An aged allocator (a host that has
 * run for a while) hands out 4 KiB frames in a seeded pseudo-random order instead: it breaks a 2 MiB block into
 * order-0 frames and picks among them, as the order-0 free lists of a long-running kernel return pages from all
 * over memory. Not thread safe.
 */
final class BuddyAllocator
{
    /** Largest order: 18, a 1 GiB block, so that 1 GiB hugetlb pages can be carved out of the zone. */
    static final int MAX_ORDER = 18;

    private final long startPfn;
    private final long endPfn;
    private final BlockBitmap[] freeBlocks = new BlockBitmap[MAX_ORDER + 1];
    private long freeFrames;
    private final java.util.SplittableRandom scatter;

    BuddyAllocator(final long startPfn, final long endPfn)
    {
        this(startPfn, endPfn, false);
    }

    BuddyAllocator(final long startPfn, final long endPfn, final boolean aged)
    {
        this.startPfn = startPfn;
        this.endPfn = endPfn;
        this.scatter = aged ? new java.util.SplittableRandom(0x5ca77e7L ^ startPfn) : null;
        for (int order = 0; order <= MAX_ORDER; order++)
        {
            freeBlocks[order] = new BlockBitmap(Math.max(1, ((endPfn - 1) >> order) - (startPfn >> order) + 1));
        }
        long pfn = startPfn;
        while (pfn < endPfn)
        {
            int order = MAX_ORDER;
            while (order > 0 && ((pfn & ((1L << order) - 1)) != 0 || pfn + (1L << order) > endPfn))
            {
                order--;
            }
            add(order, pfn);
            freeFrames += 1L << order;
            pfn += 1L << order;
        }
    }

    /** Marks the block of {@code 2^order} frames from {@code pfn} free at that order. */
    private void add(final int order, final long pfn)
    {
        freeBlocks[order].add((pfn >> order) - (startPfn >> order));
    }

    /** @return true when the block was free at that order (it no longer is). */
    private boolean remove(final int order, final long pfn)
    {
        return freeBlocks[order].remove((pfn >> order) - (startPfn >> order));
    }

    private long pfnOf(final int order, final long index)
    {
        return (index + (startPfn >> order)) << order;
    }

    /** Takes the lowest free block of exactly this order (the order's set must not be empty). */
    private long pollFirst(final int order)
    {
        final long index = freeBlocks[order].first();
        freeBlocks[order].remove(index);
        return pfnOf(order, index);
    }

    long spannedFrames()
    {
        return endPfn - startPfn;
    }

    long freeFrames()
    {
        return freeFrames;
    }

    boolean contains(final long pfn)
    {
        return pfn >= startPfn && pfn < endPfn;
    }

    /**
     * @param order block order.
     * @return the number of free blocks of exactly this order (the columns of /proc/buddyinfo).
     */
    int freeBlocksOfOrder(final int order)
    {
        return (int)freeBlocks[order].size();
    }

    /**
     * Takes the lowest free block of {@code 2^order} frames.
     *
     * @param order block order, 0 to {@link #MAX_ORDER}.
     * @return the first frame number of the block, or -1 when no block of that order or larger is free.
     */
    long allocate(final int order)
    {
        if (order == 0 && scatter != null)
        {
            return allocateScattered();
        }
        int found = order;
        while (found <= MAX_ORDER && freeBlocks[found].isEmpty())
        {
            found++;
        }
        if (found > MAX_ORDER)
        {
            return -1;
        }
        final long pfn = pollFirst(found);
        while (found > order)
        {
            found--;
            add(found, pfn + (1L << found));
        }
        freeFrames -= 1L << order;
        return pfn;
    }

    /** An order-0 frame picked pseudo-randomly among the free order-0 frames (refilled 2 MiB at a time). */
    private long allocateScattered()
    {
        if (freeBlocks[0].isEmpty())
        {
            final int refill = 9;
            int found = 1;
            while (found <= MAX_ORDER && freeBlocks[found].isEmpty())
            {
                found++;
            }
            if (found > MAX_ORDER)
            {
                return -1;
            }
            final long block = pollFirst(found);
            while (found > refill)
            {
                found--;
                add(found, block + (1L << found));
            }
            freeBlocks[0].addRange(block - startPfn, 1L << found);
        }
        final long first = freeBlocks[0].first();
        final long last = freeBlocks[0].last();
        final long picked = freeBlocks[0].ceiling(first + scatter.nextLong(last - first + 1));
        final long index = picked < 0 ? first : picked;
        freeBlocks[0].remove(index);
        freeFrames--;
        return pfnOf(0, index);
    }

    /**
     * Takes the highest-addressed free block of {@code 2^order} frames, as compaction's free scanner does.
     *
     * @param order block order.
     * @return the first frame number of the block, or -1 when none is free.
     */
    long allocateHighest(final int order)
    {
        int best = -1;
        long bestPfn = -1;
        for (int o = order; o <= MAX_ORDER; o++)
        {
            if (!freeBlocks[o].isEmpty() && pfnOf(o, freeBlocks[o].last()) > bestPfn)
            {
                bestPfn = pfnOf(o, freeBlocks[o].last());
                best = o;
            }
        }
        if (best < 0)
        {
            return -1;
        }
        remove(best, bestPfn);
        long pfn = bestPfn;
        int o = best;
        while (o > order)
        {
            o--;
            add(o, pfn);
            pfn += 1L << o;
        }
        freeFrames -= 1L << order;
        return pfn;
    }

    /**
     * Returns a block, merging it with its buddy as long as the buddy is free.
     *
     * @param pfn   first frame of the block, aligned to {@code 2^order}.
     * @param order block order.
     */
    void free(final long pfn, final int order)
    {
        long block = pfn;
        int o = order;
        freeFrames += 1L << order;
        while (o < MAX_ORDER)
        {
            final long buddy = block ^ (1L << o);
            if (buddy < startPfn || buddy + (1L << o) > endPfn || !remove(o, buddy))
            {
                break;
            }
            block = Math.min(block, buddy);
            o++;
        }
        add(o, block);
    }
}
