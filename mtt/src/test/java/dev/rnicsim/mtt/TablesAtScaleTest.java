package dev.rnicsim.mtt;

import static dev.rnicsim.mtt.TableAssertions.assertErrno;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Device-sized tables (max_mr = 2^24, an MTT of 2^24 entries) in a default surefire JVM: they construct, register
 * and deregister MRs at high MTT entries and at MPT indices far from 1 quickly, and cost memory only where they
 * are used.
 */
class TablesAtScaleTest
{
    private static final long MIB = 1L << 20;
    private static final long HEAP_BUDGET_BYTES = 256 * MIB;
    private static final long IRDMA = 0x40201000L;
    private static final long VA = 0x7f0000200000L;
    private static final int PD = 1;
    private static final int LOG_ENTRIES = 24;
    private static final long ENTRIES = 1L << LOG_ENTRIES;

    private static long usedHeapBytes()
    {
        final Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < 3; i++)
        {
            System.gc();
        }
        return rt.totalMemory() - rt.freeMemory();
    }

    private static AdapterTables tables(final MttConfig mtt)
    {
        return new AdapterTables(new AdapterConfig(mtt, new MptConfig(ENTRIES, 8, VariantPolicy.GENERATION,
            IndexPolicy.CYCLIC, 0), IRDMA, 4096, 8));
    }

    /** Registers, translates every page and deregisters; returns the key it used. */
    private static int roundTrip(final AdapterTables t, final long expectedFirstEntryAtLeast)
    {
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 4096), new DmaRun(0x30000, 4096),
            new DmaRun(0x50000, 4096));
        final RegisteredMr mr = t.register(PD, runs, VA + 0x10, 3 * 4096 - 0x20, VA + 0x10, AccessFlags.LOCAL_WRITE);
        assertThat(mr.mtt().firstEntry()).isGreaterThanOrEqualTo(expectedFirstEntryAtLeast);
        assertThat(mr.mtt().firstEntry() + mr.mtt().reservedEntries()).isLessThanOrEqualTo(ENTRIES);
        assertThat(t.translate(mr.key(), PD, 0, VA + 0x10, 1)).isEqualTo(0x10010);
        assertThat(t.translate(mr.key(), PD, 0, VA + 0x1000, 1)).isEqualTo(0x30000);
        assertThat(t.translate(mr.key(), PD, 0, VA + 0x2fef, 1)).isEqualTo(0x50fef);
        t.deregister(mr.key());
        assertThat(t.mtt().entry(mr.mtt().firstEntry())).isZero();
        return mr.key();
    }

    private static void exercise(final AdapterTables t, final long firstHighEntry)
    {
        // a few MRs in the top MTT entries
        for (int i = 0; i < 4; i++)
        {
            roundTrip(t, firstHighEntry);
        }
        // churn the MPT so that the cyclic index policy walks out to index ~2^17
        final List<DmaRun> one = List.of(new DmaRun(0x10000, 4096));
        int key = 0;
        for (int i = 0; i < (1 << 17); i++)
        {
            key = t.register(PD, one, VA, 4096, VA, 0).key();
            t.deregister(key);
        }
        assertThat(MKey.index(key, 8)).isGreaterThan(1L << 16);
        final int high = roundTrip(t, firstHighEntry);
        assertThat(MKey.index(high, 8)).isGreaterThan(1L << 17);
        // the very top index: an outcome, not an exception
        final int top = MKey.make(ENTRIES - 1, 0, 8);
        assertThat(KeyCheck.ofTranslation(t.translate(top, PD, 0, VA, 1))).isEqualTo(KeyCheck.NO_SUCH_INDEX);
        assertErrno(Errno.EINVAL, () -> t.deregister(top));
        assertThat(t.mpt().inUse()).isZero();
    }

    @Test
    void shouldRunABuddyMttOfTwoToTheTwentyFourEntriesAndMaxMrTwoToTheTwentyFourInModestHeap()
    {
        final long before = usedHeapBytes();
        final long startNs = System.nanoTime();
        final AdapterTables t = tables(MttConfig.buddy(LOG_ENTRIES, 0));
        assertThat(t.mtt().counters().capacityEntries()).isEqualTo(ENTRIES);
        // fill the table from the bottom with blocks 2^23, 2^22, ..., 2^5 so that only the top 32 entries are free
        for (int log = LOG_ENTRIES - 1; log >= 5; log--)
        {
            t.mtt().allocate(1L << log);
        }
        assertThat(t.mtt().counters().entriesFree()).isEqualTo(32);

        exercise(t, ENTRIES - 32);

        final long elapsedMs = (System.nanoTime() - startNs) / 1_000_000;
        final long grown = usedHeapBytes() - before;
        assertThat(t.mtt().counters().capacityEntries()).isEqualTo(ENTRIES); // keeps t reachable
        assertThat(grown).as("heap grown by the tables, bytes").isLessThan(HEAP_BUDGET_BYTES);
        assertThat(elapsedMs).as("elapsed ms").isLessThan(15_000);
    }

    @Test
    void shouldRunAnExactMttOfTwoToTheTwentyFourEntriesAndMaxMrTwoToTheTwentyFourInModestHeap()
    {
        final long before = usedHeapBytes();
        final long startNs = System.nanoTime();
        final AdapterTables t = tables(MttConfig.exact(ENTRIES));
        t.mtt().allocate(ENTRIES - 64);
        assertThat(t.mtt().counters().largestFreeBlock()).isEqualTo(64);

        exercise(t, ENTRIES - 64);

        final long elapsedMs = (System.nanoTime() - startNs) / 1_000_000;
        final long grown = usedHeapBytes() - before;
        assertThat(t.mtt().counters().capacityEntries()).isEqualTo(ENTRIES);
        assertThat(grown).as("heap grown by the tables, bytes").isLessThan(HEAP_BUDGET_BYTES);
        assertThat(elapsedMs).as("elapsed ms").isLessThan(15_000);
    }
}
