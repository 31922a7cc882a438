package dev.rnicsim.mtt;

/**
 * mlx4's MTT buddy allocator (drivers/net/ethernet/mellanox/mlx4/mr.c {@code mlx4_buddy_init},
 * {@code mlx4_buddy_alloc}, {@code mlx4_buddy_free}, {@code __mlx4_alloc_mtt_range}): one free bitmap per order
 * over segments of {@code 2^logMttsPerSeg} entries, initially one free block of the top order; an allocation of
 * n entries takes a block of {@code max(ceil(log2 n) - logMttsPerSeg, 0)} segment order, splitting a larger block
 * if needed (lowest address first), and a free merges with the buddy while the buddy is free. Memory: one bit per
 * segment per order, no object per entry; an order's bitmap grows to the highest block set in it (a fresh device's
 * allocator, with blocks set at the lowest addresses only, allocated 16 KiB of bitmaps for 2^16 segments).
 *
 * <p>Not thread safe.
 */
final class BuddyMttAllocator implements MttAllocator
{
    private final int logMttsPerSeg;
    private final int maxOrder;
    /** The free bits of each order, as far as the highest word set so far (words past it are clear). */
    private final long[][] freeBits;
    private static final long[] NO_BITS = new long[0];
    private final long[] freeCount;
    private final long[] searchHint;

    BuddyMttAllocator(final int logNumMttSegments, final int logMttsPerSeg)
    {
        this.logMttsPerSeg = logMttsPerSeg;
        this.maxOrder = logNumMttSegments;
        freeBits = new long[maxOrder + 1][];
        freeCount = new long[maxOrder + 1];
        searchHint = new long[maxOrder + 1];
        java.util.Arrays.fill(freeBits, NO_BITS);
        set(maxOrder, 0);
        freeCount[maxOrder] = 1;
    }

    @Override
    public long capacityEntries()
    {
        return 1L << (maxOrder + logMttsPerSeg);
    }

    @Override
    public long reservedFor(final long entries)
    {
        return 1L << (segmentOrder(entries) + logMttsPerSeg);
    }

    private int segmentOrder(final long entries)
    {
        final int order = entries <= 1 ? 0 : 64 - Long.numberOfLeadingZeros(entries - 1);
        return Math.max(order - logMttsPerSeg, 0);
    }

    @Override
    public MttRange allocate(final long entries)
    {
        final int order = segmentOrder(entries);
        if (order > maxOrder)
        {
            return null;
        }
        int o = order;
        long seg = -1;
        while (o <= maxOrder)
        {
            if (freeCount[o] > 0)
            {
                seg = lowestSet(o);
                break;
            }
            o++;
        }
        if (seg < 0)
        {
            return null;
        }
        clear(o, seg);
        freeCount[o]--;
        while (o > order)
        {
            o--;
            seg <<= 1;
            set(o, seg ^ 1);
            freeCount[o]++;
        }
        return new MttRange(seg << (order + logMttsPerSeg), entries, 1L << (order + logMttsPerSeg));
    }

    @Override
    public void free(final MttRange range)
    {
        int order = Long.numberOfTrailingZeros(range.reservedEntries()) - logMttsPerSeg;
        long seg = range.firstEntry() >>> (order + logMttsPerSeg);
        while (order < maxOrder && isSet(order, seg ^ 1))
        {
            clear(order, seg ^ 1);
            freeCount[order]--;
            seg >>= 1;
            order++;
        }
        set(order, seg);
        freeCount[order]++;
    }

    @Override
    public long largestFreeBlock()
    {
        for (int o = maxOrder; o >= 0; o--)
        {
            if (freeCount[o] > 0)
            {
                return 1L << (o + logMttsPerSeg);
            }
        }
        return 0;
    }

    @Override
    public long freeEntries()
    {
        long free = 0;
        for (int o = 0; o <= maxOrder; o++)
        {
            free += freeCount[o] << (o + logMttsPerSeg);
        }
        return free;
    }

    private long lowestSet(final int order)
    {
        final long[] bits = freeBits[order];
        for (int w = (int)(searchHint[order] >>> 6); w < bits.length; w++)
        {
            if (bits[w] != 0)
            {
                final long found = ((long)w << 6) + Long.numberOfTrailingZeros(bits[w]);
                searchHint[order] = found;
                return found;
            }
        }
        throw new IllegalStateException("free count of order " + order + " is positive but no bit is set");
    }

    private boolean isSet(final int order, final long block)
    {
        final long[] bits = freeBits[order];
        final int w = (int)(block >>> 6);
        return w < bits.length && (bits[w] & (1L << block)) != 0;
    }

    private void set(final int order, final long block)
    {
        final int w = (int)(block >>> 6);
        if (w >= freeBits[order].length)
        {
            // Doubled past the word (at most the order's blocks' words).
            final long words = Math.max(1, ((1L << (maxOrder - order)) + 63) >>> 6);
            freeBits[order] = java.util.Arrays.copyOf(freeBits[order],
                (int)Math.min(words, Math.max(w + 1, 2L * freeBits[order].length)));
        }
        freeBits[order][w] |= 1L << block;
        searchHint[order] = Math.min(searchHint[order], block);
    }

    private void clear(final int order, final long block)
    {
        freeBits[order][(int)(block >>> 6)] &= ~(1L << block);
    }
}
