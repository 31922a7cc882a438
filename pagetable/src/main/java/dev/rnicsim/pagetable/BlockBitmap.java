package dev.rnicsim.pagetable;

/**
 * The free blocks of one order of a {@link BuddyAllocator}, as a bitmap over the zone's block indices: one bit per
 * naturally aligned block, set while the block is free, as the kernel's per-order {@code free_area} marks free blocks
 * (mm/page_alloc.c; the kernel keeps lists and {@code PageBuddy} with the order in {@code struct page}, the model
 * keeps a bitmap so that it can also answer lowest, highest and next-free in address order).
 *
 * <p>A summary level above the bitmap holds one bit per non-zero word of the level below, up to a single word, so
 * that the lowest, highest and next free block are found in a few word scans whatever the zone's size. The bitmap
 * itself is allocated 8 Ki blocks at a time on first use, so a large zone whose small orders are never used costs
 * little: a 2 TiB zone's order-0 map is 64 MiB when full, its summary levels about 1 MiB, its array of pages 256 KiB.
 * Pages of 8 Ki blocks (1 KiB) rather than 64 Ki (8 KiB): a block set near the top of a fresh zone (compaction takes
 * the highest free frames) lengthens its page to the whole page. Not thread safe.
 */
final class BlockBitmap
{
    private static final int PAGE_SHIFT = 7;
    private static final int PAGE_WORDS = 1 << PAGE_SHIFT;
    /** Words of a leaf page when it is created: it doubles, up to a whole page, as higher words are set. */
    private static final int FIRST_PAGE_WORDS = 16;

    private final long capacity;
    private final int pageWords;
    /** Level 0 (one bit per block) in pages of {@link #PAGE_WORDS} words, created on first set, each as long as its
     * highest word set so far (a fresh host's orders each set a few words: they do not zero 8 KiB each). */
    private final long[][] leaves;
    /** Levels 1 and up: bit i of level l is set when word i of level l-1 is non-zero. The last has one word. */
    private final long[][] summary;
    private long size;
    /** At or below the lowest set bit (a hint kept by add and first, so that first starts near it). */
    private long lowHint;
    /** At or above the highest set bit. */
    private long highHint = -1;

    /** @param capacity blocks the bitmap covers, indices 0 to {@code capacity - 1}, at least 1. */
    BlockBitmap(final long capacity)
    {
        this.capacity = capacity;
        final long words = (capacity + 63) >>> 6;
        leaves = new long[(int)((words + PAGE_WORDS - 1) >>> PAGE_SHIFT)][];
        pageWords = (int)Math.min(PAGE_WORDS, words);
        int levels = 0;
        for (long w = words; w > 1; w = (w + 63) >>> 6)
        {
            levels++;
        }
        summary = new long[levels][];
        long w = words;
        for (int l = 0; l < levels; l++)
        {
            w = (w + 63) >>> 6;
            summary[l] = new long[(int)w];
        }
    }

    /** @return the number of set bits (free blocks). */
    long size()
    {
        return size;
    }

    boolean isEmpty()
    {
        return size == 0;
    }

    private long leafWord(final long word)
    {
        final long[] page = leaves[(int)(word >>> PAGE_SHIFT)];
        final int w = (int)(word & (PAGE_WORDS - 1));
        return page == null || w >= page.length ? 0 : page[w];
    }

    /** Word {@code index} of level {@code level} (0: the bitmap). */
    private long word(final int level, final long index)
    {
        return level == 0 ? leafWord(index) : summary[level - 1][(int)index];
    }

    private int levels()
    {
        return summary.length + 1;
    }

    /** The leaf page that holds word {@code word}, allocated (or lengthened to hold it) on first use. */
    private long[] leafPage(final long word)
    {
        final int p = (int)(word >>> PAGE_SHIFT);
        final int w = (int)(word & (PAGE_WORDS - 1));
        long[] page = leaves[p];
        if (page == null || w >= page.length)
        {
            final int length = Math.min(pageWords, Math.max(FIRST_PAGE_WORDS, Integer.highestOneBit(w) << 1));
            page = page == null ? new long[length] : java.util.Arrays.copyOf(page, length);
            leaves[p] = page;
        }
        return page;
    }

    /** Sets bit {@code index}; nothing happens when it is set already. */
    void add(final long index)
    {
        final long word = index >>> 6;
        final long[] page = leafPage(word);
        final int w = (int)(word & (PAGE_WORDS - 1));
        final long before = page[w];
        final long bit = 1L << index;
        if ((before & bit) != 0)
        {
            return;
        }
        page[w] = before | bit;
        size++;
        lowHint = Math.min(lowHint, index);
        highHint = Math.max(highHint, index);
        if (before == 0)
        {
            markNonZero(word);
        }
    }

    /** Sets {@code count} bits from {@code first}. */
    void addRange(final long first, final long count)
    {
        long i = first;
        final long end = first + count;
        lowHint = Math.min(lowHint, first);
        highHint = Math.max(highHint, end - 1);
        while (i < end)
        {
            if ((i & 63) == 0 && end - i >= 64)
            {
                final long word = i >>> 6;
                final long[] page = leafPage(word);
                final int w = (int)(word & (PAGE_WORDS - 1));
                final long before = page[w];
                page[w] = -1L;
                size += 64 - Long.bitCount(before);
                if (before == 0)
                {
                    markNonZero(word);
                }
                i += 64;
            }
            else
            {
                add(i);
                i++;
            }
        }
    }

    private void markNonZero(final long leafWord)
    {
        long index = leafWord;
        for (final long[] level : summary)
        {
            final int w = (int)(index >>> 6);
            final long before = level[w];
            level[w] = before | (1L << index);
            if (before != 0)
            {
                return;
            }
            index = w;
        }
    }

    /**
     * Clears bit {@code index}.
     *
     * @return true when it was set.
     */
    boolean remove(final long index)
    {
        final long word = index >>> 6;
        final long[] page = leaves[(int)(word >>> PAGE_SHIFT)];
        final int w = (int)(word & (PAGE_WORDS - 1));
        if (page == null || w >= page.length)
        {
            return false;
        }
        final long before = page[w];
        final long bit = 1L << index;
        if ((before & bit) == 0)
        {
            return false;
        }
        final long after = before & ~bit;
        page[w] = after;
        size--;
        if (after == 0)
        {
            long i = word;
            for (final long[] level : summary)
            {
                final int sw = (int)(i >>> 6);
                final long now = level[sw] & ~(1L << i);
                level[sw] = now;
                if (now != 0)
                {
                    break;
                }
                i = sw;
            }
        }
        return true;
    }

    /** @return the lowest set bit, or -1 when none. */
    long first()
    {
        if (size == 0)
        {
            return -1;
        }
        lowHint = ceiling(lowHint);
        return lowHint;
    }

    /** @return the highest set bit, or -1 when none. */
    long last()
    {
        if (size == 0)
        {
            return -1;
        }
        highHint = floor(highHint);
        return highHint;
    }

    /** @return the highest set bit at or below {@code from}, or -1 when none. */
    long floor(final long from)
    {
        if (from < 0 || size == 0)
        {
            return -1;
        }
        long index = Math.min(from, capacity - 1);
        int level = 0;
        final int top = levels() - 1;
        long w;
        while (true)
        {
            w = word(level, index >>> 6) & (-1L >>> (63 - (index & 63)));
            if (w != 0)
            {
                index = (index & ~63L) + 63 - Long.numberOfLeadingZeros(w);
                break;
            }
            if (level == top || (index >>> 6) == 0)
            {
                return -1;
            }
            index = (index >>> 6) - 1;
            level++;
        }
        while (level > 0)
        {
            level--;
            w = word(level, index);
            index = (index << 6) + 63 - Long.numberOfLeadingZeros(w);
        }
        return index;
    }

    /** @return the lowest set bit at or above {@code from}, or -1 when none. */
    long ceiling(final long from)
    {
        if (from >= capacity || size == 0)
        {
            return -1;
        }
        final long from0 = Math.max(0, from);
        // Climb while the rest of the current word at each level is empty, then descend along the lowest set bits.
        long index = from0;
        int level = 0;
        final int top = levels() - 1;
        long w;
        while (true)
        {
            w = word(level, index >>> 6) & (-1L << index);
            if (w != 0)
            {
                index = (index & ~63L) + Long.numberOfTrailingZeros(w);
                break;
            }
            if (level == top)
            {
                return -1;
            }
            index = (index >>> 6) + 1;
            level++;
            if ((index >>> 6) >= wordsAt(level))
            {
                return -1;
            }
        }
        while (level > 0)
        {
            level--;
            w = word(level, index);
            index = (index << 6) + Long.numberOfTrailingZeros(w);
        }
        return index;
    }

    private long wordsAt(final int level)
    {
        return level == 0 ? (capacity + 63) >>> 6 : summary[level - 1].length;
    }
}
