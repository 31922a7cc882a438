package dev.rnicsim.mtt;

import static dev.rnicsim.mtt.TableAssertions.assertErrno;
import static dev.rnicsim.mtt.TableAssertions.assertFailsUnchanged;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The MTT and its two allocators: mlx4's power-of-two buddy over segments, and exact allocation with coalescing;
 * rounding, fragmentation, exhaustion, the counters, and refused configurations.
 */
class MttAllocatorTest
{
    @Test
    void shouldRoundABuddyAllocationUpToAPowerOfTwo()
    {
        final Mtt mtt = new Mtt(MttConfig.buddy(6, 0));

        final MttRange r = mtt.allocate(5);

        assertThat(r).isEqualTo(new MttRange(0, 5, 8));
        assertThat(mtt.reservedFor(5)).isEqualTo(8);
        assertThat(mtt.counters()).isEqualTo(new MttCounters(64, 8, 5, 56, 32, 1, 0, 0));
    }

    @Test
    void shouldRoundABuddyAllocationUpToAtLeastOneSegment()
    {
        final Mtt mtt = new Mtt(MttConfig.buddy(3, 3)); // 8 segments of 8 entries

        final MttRange one = mtt.allocate(1);
        final MttRange nine = mtt.allocate(9);

        assertThat(one).isEqualTo(new MttRange(0, 1, 8));
        assertThat(nine).isEqualTo(new MttRange(16, 9, 16));
        assertThat(mtt.reservedFor(1)).isEqualTo(8);
        assertThat(mtt.reservedFor(8)).isEqualTo(8);
        assertThat(mtt.reservedFor(9)).isEqualTo(16);
        assertThat(mtt.counters()).isEqualTo(new MttCounters(64, 24, 10, 40, 32, 2, 0, 0));
    }

    @Test
    void shouldRefuseWithEnomemNamingTheAskTheFreeEntriesAndTheLargestBlockWhenTheBuddyIsFragmented()
    {
        final Mtt mtt = new Mtt(MttConfig.buddy(3, 0)); // 8 entries
        final MttRange[] r = new MttRange[8];
        for (int i = 0; i < 8; i++)
        {
            r[i] = mtt.allocate(1);
        }
        for (int i = 0; i < 8; i += 2)
        {
            mtt.free(r[i]);
        }
        assertThat(mtt.counters().entriesFree()).isEqualTo(4);
        assertThat(mtt.counters().largestFreeBlock()).isEqualTo(1);

        final TableException e = assertFailsUnchanged(mtt, Errno.ENOMEM, () -> mtt.allocate(2));

        assertThat(e.getMessage()).contains("2 entries", "4 of 8 free", "largest free block 1");
        assertThat(mtt.counters().failures()).isEqualTo(1);
    }

    @Test
    void shouldRefuseWithEnomemWhenExactFreeSpaceIsSplitIntoHolesTooSmall()
    {
        final Mtt mtt = new Mtt(MttConfig.exact(10));
        final MttRange[] r = new MttRange[5];
        for (int i = 0; i < 5; i++)
        {
            r[i] = mtt.allocate(2);
        }
        mtt.free(r[0]);
        mtt.free(r[2]);
        mtt.free(r[4]);

        final TableException e = assertFailsUnchanged(mtt, Errno.ENOMEM, () -> mtt.allocate(3));

        assertThat(e.getMessage()).contains("3 entries", "6 of 10 free", "largest free block 2");
        assertThat(mtt.counters()).isEqualTo(new MttCounters(10, 4, 4, 6, 2, 5, 1, 3));
    }

    @Test
    void shouldGiveExactSizesBestFitLowestAddressFirst()
    {
        final Mtt mtt = new Mtt(MttConfig.exact(20));
        final MttRange a = mtt.allocate(5);
        final MttRange b = mtt.allocate(2);
        final MttRange c = mtt.allocate(3);
        final MttRange d = mtt.allocate(1);
        assertThat(new MttRange[] {a, b, c, d}).containsExactly(new MttRange(0, 5, 5), new MttRange(5, 2, 2),
            new MttRange(7, 3, 3), new MttRange(10, 1, 1));

        mtt.free(a);
        mtt.free(c);
        // holes [0,5), [7,10), [11,20): 3 fits [7,10) exactly, 4 takes the smallest hole that fits, [0,5)
        assertThat(mtt.allocate(3)).isEqualTo(new MttRange(7, 3, 3));
        assertThat(mtt.allocate(4)).isEqualTo(new MttRange(0, 4, 4));
        assertThat(mtt.counters()).isEqualTo(new MttCounters(20, 10, 10, 10, 9, 6, 0, 2));
        assertThat(mtt.reservedFor(7)).isEqualTo(7);
    }

    @Test
    void shouldCoalesceAnExactFreeRangeWithBothNeighbours()
    {
        final Mtt mtt = new Mtt(MttConfig.exact(9));
        final MttRange a = mtt.allocate(3);
        final MttRange b = mtt.allocate(3);
        final MttRange c = mtt.allocate(3);

        mtt.free(a);
        mtt.free(c);
        assertThat(mtt.counters().largestFreeBlock()).isEqualTo(3);
        assertThat(mtt.counters().entriesFree()).isEqualTo(6);

        mtt.free(b);

        assertThat(mtt.counters()).isEqualTo(new MttCounters(9, 0, 0, 9, 9, 3, 0, 3));
        assertThat(mtt.allocate(9)).isEqualTo(new MttRange(0, 9, 9));
    }

    @Test
    void shouldMergeBuddiesBackIntoOneBlock()
    {
        final Mtt mtt = new Mtt(MttConfig.buddy(4, 0));
        final MttRange a = mtt.allocate(1);
        final MttRange b = mtt.allocate(2);
        final MttRange c = mtt.allocate(4);
        assertThat(new long[] {a.firstEntry(), b.firstEntry(), c.firstEntry()}).containsExactly(0, 2, 4);
        assertThat(mtt.counters().largestFreeBlock()).isEqualTo(8);

        mtt.free(b);
        mtt.free(c);
        mtt.free(a);

        assertThat(mtt.counters()).isEqualTo(new MttCounters(16, 0, 0, 16, 16, 3, 0, 3));
        assertThat(mtt.allocate(16)).isEqualTo(new MttRange(0, 16, 16));
    }

    @Test
    void shouldRefuseWithEnomemWhenTheTableIsExhausted()
    {
        final Mtt buddy = new Mtt(MttConfig.buddy(2, 1)); // 8 entries
        buddy.allocate(8);
        assertFailsUnchanged(buddy, Errno.ENOMEM, () -> buddy.allocate(1));
        assertThat(buddy.counters()).isEqualTo(new MttCounters(8, 8, 8, 0, 0, 1, 1, 0));

        final Mtt exact = new Mtt(MttConfig.exact(7));
        exact.allocate(7);
        assertFailsUnchanged(exact, Errno.ENOMEM, () -> exact.allocate(1));
        assertThat(exact.counters()).isEqualTo(new MttCounters(7, 7, 7, 0, 0, 1, 1, 0));
    }

    @Test
    void shouldRefuseWithEnomemARequestLargerThanTheTable()
    {
        final Mtt buddy = new Mtt(MttConfig.buddy(3, 0));
        final TableException e = assertFailsUnchanged(buddy, Errno.ENOMEM, () -> buddy.allocate(9));
        assertThat(e.getMessage()).contains("9 entries", "8 of 8 free", "largest free block 8");

        final Mtt exact = new Mtt(MttConfig.exact(8));
        assertFailsUnchanged(exact, Errno.ENOMEM, () -> exact.allocate(Long.MAX_VALUE));
        assertThat(exact.counters().failures()).isEqualTo(1);
    }

    @Test
    void shouldRefuseAnAllocationOfZeroOrFewerEntriesWithEinvalWithoutCountingAFailure()
    {
        final Mtt mtt = new Mtt(MttConfig.buddy(3, 0));
        final MttCounters before = mtt.counters();

        assertErrno(Errno.EINVAL, () -> mtt.allocate(0));
        assertErrno(Errno.EINVAL, () -> mtt.allocate(-1));

        assertThat(mtt.counters()).isEqualTo(before);
    }

    @Test
    void shouldKeepCountersExactOverASequence()
    {
        final Mtt mtt = new Mtt(MttConfig.buddy(5, 1)); // 32 segments of 2 = 64 entries
        final MttRange a = mtt.allocate(3);  // 4
        final MttRange b = mtt.allocate(1);  // 2 (one segment)
        final MttRange c = mtt.allocate(17); // 32
        assertThat(mtt.counters()).isEqualTo(new MttCounters(64, 38, 21, 26, 16, 3, 0, 0));
        assertErrno(Errno.ENOMEM, () -> mtt.allocate(17));
        mtt.free(a);
        assertThat(mtt.counters()).isEqualTo(new MttCounters(64, 34, 18, 30, 16, 3, 1, 1));
        mtt.free(c);
        mtt.free(b);
        assertThat(mtt.counters()).isEqualTo(new MttCounters(64, 0, 0, 64, 64, 3, 1, 3));
    }

    @Test
    void shouldZapTheEntriesOfAFreedRange()
    {
        final Mtt mtt = new Mtt(MttConfig.exact(16));
        final MttRange r = mtt.allocate(3);
        for (int b = 0; b < 3; b++)
        {
            mtt.write(r, b, 0x10000L * (b + 1));
        }
        assertThat(mtt.entry(1)).isEqualTo(0x20000L | Mtt.PRESENT);

        mtt.free(r);

        assertThat(new long[] {mtt.entry(0), mtt.entry(1), mtt.entry(2)}).containsOnly(0L);
    }

    @Test
    void shouldKeepEntriesOfEveryChunkOfATwoToTheThirtyOneEntryTableWrittenHighestFirst()
    {
        final long capacity = 1L << MttConfig.MAX_LOG_ENTRIES;
        final Mtt mtt = new Mtt(MttConfig.exact(capacity));
        final MttRange low = mtt.allocate(3 << 16);
        final MttRange high = mtt.allocate(capacity - (3 << 16));
        // The last entry of the table first, then entries of lower chunks: each write reaches a chunk past the
        // highest written so far, or one below it.
        mtt.write(high, high.entries() - 1, 0x7000_0000L);
        mtt.write(low, (2 << 16) + 5, 0x3000L);
        mtt.write(low, 0, 0x1000L);
        mtt.write(high, 0, 0x5000L);

        assertThat(mtt.entry(capacity - 1)).isEqualTo(0x7000_0000L | Mtt.PRESENT);
        assertThat(mtt.entry((2 << 16) + 5)).isEqualTo(0x3000L | Mtt.PRESENT);
        assertThat(mtt.entry(0)).isEqualTo(0x1000L | Mtt.PRESENT);
        assertThat(mtt.entry(3 << 16)).isEqualTo(0x5000L | Mtt.PRESENT);
        assertThat(new long[] {mtt.entry(1), mtt.entry(capacity / 2), mtt.entry(capacity - 2)}).containsOnly(0L);
        assertThat(mtt.isLive(low)).isTrue();
        assertThat(mtt.isLive(high)).isTrue();

        mtt.free(high);

        assertThat(mtt.isLive(high)).isFalse();
        assertThat(new long[] {mtt.entry(capacity - 1), mtt.entry(3 << 16)}).containsOnly(0L);
        assertThat(mtt.entry(0)).isEqualTo(0x1000L | Mtt.PRESENT);
    }

    @Test
    void shouldAnswerIsLiveFalseForARangeStartingInAChunkNoRangeEverStartedIn()
    {
        final Mtt mtt = new Mtt(MttConfig.exact(1L << 24));
        final MttRange r = mtt.allocate(4);

        assertThat(mtt.isLive(new MttRange((1L << 24) - 4, 4, 4))).isFalse();
        assertErrno(Errno.EINVAL, () -> mtt.free(new MttRange((1L << 24) - 4, 4, 4)));
        assertThat(mtt.isLive(r)).isTrue();
        assertThat(mtt.entry((1L << 24) - 1)).isZero();
    }

    @Test
    void shouldRefuseImpossibleConfigurationsWithEinval()
    {
        assertErrno(Errno.EINVAL, () -> new MttConfig(null, 4, 0, 0));
        assertErrno(Errno.EINVAL, () -> MttConfig.buddy(4, 8));
        assertErrno(Errno.EINVAL, () -> MttConfig.buddy(4, -1));
        assertErrno(Errno.EINVAL, () -> MttConfig.buddy(-1, 0));
        assertErrno(Errno.EINVAL, () -> MttConfig.buddy(25, 7));
        assertErrno(Errno.EINVAL, () -> MttConfig.buddy(32, 0));
        assertErrno(Errno.EINVAL, () -> new MttConfig(MttAllocatorKind.BUDDY, 4, 0, 16));
        assertErrno(Errno.EINVAL, () -> new MttConfig(MttAllocatorKind.EXACT, 0, 1, 16));
        assertErrno(Errno.EINVAL, () -> new MttConfig(MttAllocatorKind.EXACT, 0, 0, -1));
        assertErrno(Errno.EINVAL, () -> new MttConfig(MttAllocatorKind.EXACT, 0, 0, (1L << 31) + 1));
        assertErrno(Errno.EINVAL, () -> MttConfig.exact(0));
        assertErrno(Errno.EINVAL, () -> MttConfig.exact(-5));
        // the largest tables are accepted
        assertThat(MttConfig.buddy(24, 7).entries()).isEqualTo(1L << 31);
        assertThat(MttConfig.exact(1L << 31).entries()).isEqualTo(1L << 31);
        assertThat(new MttConfig(MttAllocatorKind.EXACT, 10, 0, 0).entries()).isEqualTo(1024);
    }
}
