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
    /**
     * One bit per index, live or not; grown as indices are taken (a word past its end is all clear), so that a
     * device of 2^24 MRs that uses a few costs a few words, not 2 MiB.
     */
    private long[] liveBits;
    /** Words of {@link #liveBits} when grown to max_mr. */
    private final int liveWords;
    /**
     * One bit per word of {@link #liveBits}: that word is full, so searches for a free index skip it; grown with
     * {@link #liveBits} (a word past its end is all clear).
     */
    private long[] fullWords;
    /** Words of {@link #fullWords} when grown to max_mr. */
    private final int summaryWords;
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
        this.liveWords = (int)((maxMr + 63) >>> 6);
        this.liveBits = new long[Math.min(liveWords, 64)];
        this.summaryWords = (liveWords + 63) >>> 6;
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
        if (w >= liveBits.length)
        {
            liveBits = java.util.Arrays.copyOf(liveBits, Math.min(liveWords, Math.max(w + 1, liveBits.length * 2)));
            fullWords = java.util.Arrays.copyOf(fullWords, (liveBits.length + 63) >>> 6);
        }
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
        if (w >= liveBits.length)
        {
            return;
        }
        liveBits[w] &= ~(1L << index);
        fullWords[w >>> 6] &= ~(1L << w);
    }

    /**
     * @param index any index.
     * @return true when it is inside the table, not 0, and live.
     */
    boolean isLive(final long index)
    {
        return index > 0 && index < maxMr && (liveWord((int)(index >>> 6)) & (1L << index)) != 0;
    }

    /** @return the first index at or after {@code from} that is not live, below max_mr; -1 when none. */
    private long nextClear(final long from)
    {
        int w = (int)(from >>> 6);
        long word = ~liveWord(w) & (-1L << from);
        while (word == 0)
        {
            w = nextNonFullWord(w + 1);
            if (w < 0)
            {
                return -1;
            }
            word = ~liveWord(w);
        }
        final long index = ((long)w << 6) + Long.numberOfTrailingZeros(word);
        return index < maxMr ? index : -1;
    }

    private int nextNonFullWord(final int from)
    {
        if (from >= liveWords)
        {
            return -1;
        }
        int s = from >>> 6;
        long summary = ~fullWord(s) & (-1L << from);
        while (summary == 0)
        {
            if (++s >= summaryWords)
            {
                return -1;
            }
            summary = ~fullWord(s);
        }
        final int w = (s << 6) + Long.numberOfTrailingZeros(summary);
        return w < liveWords ? w : -1;
    }

    /** A word of {@link #fullWords}; 0 past its end. */
    private long fullWord(final int s)
    {
        return s < fullWords.length ? fullWords[s] : 0;
    }

    /** A word of {@link #liveBits}; 0 past its end. */
    private long liveWord(final int w)
    {
        return w < liveBits.length ? liveBits[w] : 0;
    }
}
