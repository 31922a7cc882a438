package dev.rnicsim.mtt;

/**
 * Which MPT indices are live, and which free index the next allocation takes under the device's
 * {@link IndexPolicy}: one bit per index, and one bit per word of those bits that is full, so that a search for a
 * free index skips full words 64 at a time (rxe's {@code xa_alloc_cyclic}, mlx4's round-robin bitmap). Index 0 is
 * never handed out (key 0 names no MR).
 *
 * <p>Part of {@link MptTable}. Not thread safe.
 */
final class MptIndexSet
{
    private final long maxMr;
    private final IndexPolicy policy;
    /** One bit per index: live. */
    private final long[] liveBits;
    /** One bit per word of {@link #liveBits}: that word is full, so searches for a free index skip it. */
    private final long[] fullWords;
    /** CYCLIC: where the next search starts, just after the index last taken. */
    private long cursor = 1;

    /**
     * @param maxMr  indices in the table, index 0 included.
     * @param policy which free index an allocation takes.
     */
    MptIndexSet(final long maxMr, final IndexPolicy policy)
    {
        this.maxMr = maxMr;
        this.policy = policy;
        this.liveBits = new long[(int)((maxMr + 63) >>> 6)];
        this.fullWords = new long[(liveBits.length + 63) >>> 6];
    }

    /**
     * @return the free index the policy gives next (from the cursor, wrapping, under CYCLIC; the lowest under
     * LOWEST_FREE), or -1 when every index from 1 to max_mr - 1 is live. Takes nothing: see {@link #take}.
     */
    long next()
    {
        final long start = policy == IndexPolicy.CYCLIC ? cursor : 1;
        long index = nextClear(start);
        if (index < 0 && start > 1)
        {
            index = nextClear(1);
        }
        return index;
    }

    /**
     * Marks an index live; under CYCLIC the next search starts after it.
     *
     * @param index a free index from {@link #next}.
     */
    void take(final long index)
    {
        final int w = (int)(index >>> 6);
        liveBits[w] |= 1L << index;
        if (liveBits[w] == -1L)
        {
            fullWords[w >>> 6] |= 1L << w;
        }
        if (policy == IndexPolicy.CYCLIC)
        {
            cursor = index + 1 >= maxMr ? 1 : index + 1;
        }
    }

    /**
     * Marks an index free.
     *
     * @param index a live index.
     */
    void release(final long index)
    {
        final int w = (int)(index >>> 6);
        liveBits[w] &= ~(1L << index);
        fullWords[w >>> 6] &= ~(1L << w);
    }

    /**
     * @param index any index.
     * @return true when it is inside the table, not 0, and live.
     */
    boolean isLive(final long index)
    {
        return index > 0 && index < maxMr && (liveBits[(int)(index >>> 6)] & (1L << index)) != 0;
    }

    /** @return the first index at or after {@code from} that is not live, below max_mr; -1 when none. */
    private long nextClear(final long from)
    {
        int w = (int)(from >>> 6);
        long word = ~liveBits[w] & (-1L << from);
        while (word == 0)
        {
            w = nextNonFullWord(w + 1);
            if (w < 0)
            {
                return -1;
            }
            word = ~liveBits[w];
        }
        final long index = ((long)w << 6) + Long.numberOfTrailingZeros(word);
        return index < maxMr ? index : -1;
    }

    private int nextNonFullWord(final int from)
    {
        if (from >= liveBits.length)
        {
            return -1;
        }
        int s = from >>> 6;
        long summary = ~fullWords[s] & (-1L << from);
        while (summary == 0)
        {
            if (++s >= fullWords.length)
            {
                return -1;
            }
            summary = ~fullWords[s];
        }
        final int w = (s << 6) + Long.numberOfTrailingZeros(summary);
        return w < liveBits.length ? w : -1;
    }
}
