package dev.rnicsim.mtt;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The free-index search over bits that grow as indices are taken: past the first 4,096 indices (one word of the
 * summary of full words) and up to a full table.
 */
class MptIndexSetTest
{
    /** Takes what {@link MptIndexSet#next} offers {@code n} times; returns the last index taken. */
    private static long takeNext(final MptIndexSet set, final int n)
    {
        long last = -1;
        for (int i = 0; i < n; i++)
        {
            last = set.next();
            set.take(last);
        }
        return last;
    }

    @Test
    void shouldHandOutTheLowestFreeIndexPastTheFirstWordOfTheSummary()
    {
        final MptIndexSet set = new MptIndexSet(1L << 24, IndexPolicy.LOWEST_FREE);
        assertThat(takeNext(set, 10_000)).isEqualTo(10_000);
        set.release(5_000);
        set.release(9_000);
        assertThat(set.next()).isEqualTo(5_000);
        set.take(5_000);
        assertThat(set.next()).isEqualTo(9_000);
        assertThat(set.isLive(4_999)).isTrue();
        assertThat(set.isLive(10_001)).isFalse();
    }

    @Test
    void shouldGoOnFromTheCursorAndWrapToAFreedIndexWhenTheRestIsFull()
    {
        final int maxMr = 64 * 64 * 2 + 5;
        final MptIndexSet set = new MptIndexSet(maxMr, IndexPolicy.CYCLIC);
        assertThat(takeNext(set, maxMr - 1)).isEqualTo(maxMr - 1);
        assertThat(set.next()).as("every index from 1 to max_mr - 1 is live").isEqualTo(-1);
        set.release(100);
        set.release(4_200);
        assertThat(set.next()).isEqualTo(100);
        set.take(100);
        assertThat(set.next()).isEqualTo(4_200);
        set.take(4_200);
        assertThat(set.next()).isEqualTo(-1);
    }
}
