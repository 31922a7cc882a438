package dev.rnicsim.mtt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.List;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link MttOccupancy}: the allocator of an MTT without its table. Every reservation must be the one
 * {@link Mtt#allocate} would make on a table of the same configuration (BUDDY rounding and alignment, EXACT
 * allocation), and it must fail exactly where the real table throws ENOMEM.
 */
class MttOccupancyTest
{
    /**
     * The BUDDY rule of {@link MttRange#reservedEntries()}: the ask rounded up to a power of two and to at least
     * one segment of {@code 2^logMttsPerSeg} entries.
     */
    private static long buddyReserved(final long entries, final int logMttsPerSeg)
    {
        long pow = 1;
        while (pow < entries)
        {
            pow <<= 1;
        }
        return Math.max(pow, 1L << logMttsPerSeg);
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 7, 8, 9, 15, 16, 17, 100, 511, 512, 513, 1000, 1024, 1025, 262_144, 262_145})
    void shouldReserveAsMttAllocateRoundsOnTheMlx4DefaultBuddy(final long entries)
    {
        final MttConfig config = MttConfig.buddy(20, 3);
        final MttOccupancy occupancy = new MttOccupancy(config);
        final Mtt mtt = new Mtt(config);

        final long reserved = occupancy.tryReserve(entries);

        assertThat(reserved).isEqualTo(buddyReserved(entries, 3));
        assertThat(reserved).isEqualTo(mtt.reservedFor(entries));
        assertThat(reserved).isEqualTo(mtt.allocate(entries).reservedEntries());
        assertThat(occupancy.freeEntries()).isEqualTo(config.entries() - reserved)
            .isEqualTo(mtt.counters().entriesFree());
        assertThat(occupancy.allocations()).isEqualTo(1);
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 7, 8, 9, 100, 4095, 4096})
    void shouldReserveExactlyTheAskOnAnExactTable(final long entries)
    {
        final MttConfig config = MttConfig.exact(4096);
        final MttOccupancy occupancy = new MttOccupancy(config);

        assertThat(occupancy.tryReserve(entries)).isEqualTo(entries).isEqualTo(new Mtt(config).reservedFor(entries));
        assertThat(occupancy.freeEntries()).isEqualTo(4096 - entries);
    }

    @Test
    void shouldRoundEveryReservationToAtLeastOneSegment()
    {
        // 2^3 segments of 2^7 = 128 entries: even one entry takes a whole segment, so eight MRs fill the table.
        final MttOccupancy occupancy = new MttOccupancy(MttConfig.buddy(3, 7));
        for (int i = 0; i < 8; i++)
        {
            assertThat(occupancy.tryReserve(1)).isEqualTo(128);
        }
        assertThat(occupancy.freeEntries()).isZero();
        assertThat(occupancy.largestFreeBlock()).isZero();
        assertThat(occupancy.tryReserve(1)).isEqualTo(-1);
        assertThat(occupancy.allocations()).isEqualTo(8);
    }

    @ParameterizedTest
    @ValueSource(longs = {0, -1, Long.MIN_VALUE})
    void shouldRefuseANonPositiveAskWithEinvalAndChangeNothing(final long entries)
    {
        for (final MttConfig config : List.of(MttConfig.buddy(4, 1), MttConfig.exact(100)))
        {
            final MttOccupancy occupancy = new MttOccupancy(config);
            occupancy.tryReserve(3);
            final long free = occupancy.freeEntries();
            final long largest = occupancy.largestFreeBlock();

            final Throwable t = catchThrowable(() -> occupancy.tryReserve(entries));

            assertThat(t).isInstanceOf(TableException.class).hasMessageContaining("MTT entries=" + entries);
            assertThat(((TableException)t).errno()).isEqualTo(Errno.EINVAL);
            assertThat(occupancy.freeEntries()).isEqualTo(free);
            assertThat(occupancy.largestFreeBlock()).isEqualTo(largest);
            assertThat(occupancy.allocations()).isEqualTo(1);
        }
    }

    @Test
    void shouldFailOnAFragmentedBuddyThoughEnoughEntriesAreFree()
    {
        // 16 segments of one entry. Three single entries take 0, 1 and 2 (lowest address first), leaving free
        // blocks of 1 (entry 3), 4 (4-7) and 8 (8-15).
        final MttOccupancy occupancy = new MttOccupancy(MttConfig.buddy(4, 0));
        final Mtt mtt = new Mtt(MttConfig.buddy(4, 0));
        for (int i = 0; i < 3; i++)
        {
            assertThat(occupancy.tryReserve(1)).isEqualTo(1);
            mtt.allocate(1);
        }
        assertThat(occupancy.freeEntries()).isEqualTo(13);
        assertThat(occupancy.largestFreeBlock()).isEqualTo(8);

        // 9 entries round to 16: no block is that large although 13 entries are free.
        assertThat(occupancy.tryReserve(9)).isEqualTo(-1);
        assertThat(catchThrowable(() -> mtt.allocate(9))).isInstanceOf(TableException.class)
            .satisfies(t -> assertThat(((TableException)t).errno()).isEqualTo(Errno.ENOMEM));

        // 5 entries round to 8 and take 8-15; the next 5 find 5 free entries (3 and 4-7) but no block of 8.
        assertThat(occupancy.tryReserve(5)).isEqualTo(8);
        assertThat(occupancy.freeEntries()).isEqualTo(5);
        assertThat(occupancy.largestFreeBlock()).isEqualTo(4);
        assertThat(occupancy.tryReserve(5)).isEqualTo(-1);
        assertThat(occupancy.freeEntries()).as("a failed reservation takes nothing").isEqualTo(5);
        assertThat(occupancy.allocations()).isEqualTo(4);
        // What still fits does fit.
        assertThat(occupancy.tryReserve(4)).isEqualTo(4);
        assertThat(occupancy.tryReserve(1)).isEqualTo(1);
        assertThat(occupancy.freeEntries()).isZero();
    }

    @Test
    void shouldRefuseMoreThanTheWholeTableWithoutThrowing()
    {
        assertThat(new MttOccupancy(MttConfig.buddy(4, 3)).tryReserve(129)).isEqualTo(-1);
        assertThat(new MttOccupancy(MttConfig.buddy(4, 3)).tryReserve(128)).isEqualTo(128);
        assertThat(new MttOccupancy(MttConfig.exact(100)).tryReserve(101)).isEqualTo(-1);
        assertThat(new MttOccupancy(MttConfig.exact(100)).tryReserve(Long.MAX_VALUE)).isEqualTo(-1);
    }

    @Provide
    Arbitrary<MttConfig> configs()
    {
        final Arbitrary<MttConfig> buddy = Combinators.combine(Arbitraries.integers().between(0, 8),
            Arbitraries.integers().between(0, 3)).as(MttConfig::buddy);
        final Arbitrary<MttConfig> exact = Arbitraries.longs().between(1, 600).map(MttConfig::exact);
        return Arbitraries.oneOf(buddy, exact);
    }

    @Provide
    Arbitrary<List<Long>> sizes()
    {
        return Arbitraries.frequencyOf(
            Tuple.of(6, Arbitraries.longs().between(1, 40)),
            Tuple.of(3, Arbitraries.longs().between(41, 300)),
            Tuple.of(1, Arbitraries.longs().between(301, 3000))).list().ofMaxSize(80);
    }

    @Property(tries = 300)
    void shouldSucceedAndFailExactlyWhereARealMttWould(@ForAll("configs") final MttConfig config,
        @ForAll("sizes") final List<Long> sizes)
    {
        final MttOccupancy occupancy = new MttOccupancy(config);
        final Mtt mtt = new Mtt(config);
        long successes = 0;
        for (final long entries : sizes)
        {
            final long freeBefore = occupancy.freeEntries();
            final long reserved = occupancy.tryReserve(entries);
            MttRange range = null;
            TableException refused = null;
            try
            {
                range = mtt.allocate(entries);
            }
            catch (final TableException e)
            {
                refused = e;
            }
            if (range != null)
            {
                successes++;
                assertThat(reserved).as("%s: %d entries", config, entries).isEqualTo(range.reservedEntries())
                    .isEqualTo(mtt.reservedFor(entries));
                if (config.allocator() == MttAllocatorKind.BUDDY)
                {
                    assertThat(reserved).isEqualTo(buddyReserved(entries, config.logMttsPerSeg()));
                }
                else
                {
                    assertThat(reserved).isEqualTo(entries);
                }
            }
            else
            {
                assertThat(refused.errno()).isEqualTo(Errno.ENOMEM);
                assertThat(reserved).as("%s: %d entries refused by Mtt", config, entries).isEqualTo(-1);
                assertThat(occupancy.freeEntries()).isEqualTo(freeBefore);
            }
            if (config.allocator() == MttAllocatorKind.EXACT)
            {
                // Without frees an exact table never fragments: it fails exactly when too few entries are free.
                assertThat(reserved < 0).isEqualTo(entries > freeBefore);
            }
            final MttCounters c = mtt.counters();
            assertThat(occupancy.freeEntries()).isEqualTo(c.entriesFree());
            assertThat(occupancy.largestFreeBlock()).isEqualTo(c.largestFreeBlock());
            assertThat(occupancy.allocations()).isEqualTo(successes).isEqualTo(c.allocations());
        }
    }
}
