package dev.rnicsim.mtt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.ArrayList;
import java.util.List;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * Random sequences of allocate and free on small MTTs of both kinds, checked against a model that knows which
 * entries are taken: ranges never overlap and stay inside the table; a BUDDY range is a power of two, at least a
 * segment, aligned to its size; an EXACT range is exactly the ask and the best fit; an allocation fails with ENOMEM
 * exactly when no suitable free block exists; every counter is exact after every step; freeing everything brings
 * every counter back to its initial value.
 */
class MttAllocatorProperties
{
    @Provide
    Arbitrary<MttConfig> configs()
    {
        final Arbitrary<MttConfig> buddy = Combinators.combine(Arbitraries.integers().between(0, 7),
            Arbitraries.integers().between(0, 3)).as(MttConfig::buddy);
        final Arbitrary<MttConfig> exact = Arbitraries.longs().between(1, 200).map(MttConfig::exact);
        return Arbitraries.oneOf(buddy, exact);
    }

    /** The model: the live ranges and a map of taken entries. */
    private static final class Model
    {
        final MttConfig config;
        final long capacity;
        final boolean[] taken;
        final List<MttRange> live = new ArrayList<>();
        long allocations;
        long failures;
        long frees;

        Model(final MttConfig config)
        {
            this.config = config;
            this.capacity = config.entries();
            this.taken = new boolean[(int)capacity];
        }

        boolean isFree(final long start, final long size)
        {
            for (long i = start; i < start + size; i++)
            {
                if (taken[(int)i])
                {
                    return false;
                }
            }
            return true;
        }

        /** BUDDY: the largest aligned power-of-two block of at least a segment that is free. */
        long largestAlignedFree()
        {
            final long segment = 1L << config.logMttsPerSeg();
            for (long size = capacity; size >= segment; size >>= 1)
            {
                for (long start = 0; start < capacity; start += size)
                {
                    if (isFree(start, size))
                    {
                        return size;
                    }
                }
            }
            return 0;
        }

        /** EXACT: the free gaps as {start, size}, in address order. */
        List<long[]> gaps()
        {
            final List<long[]> gaps = new ArrayList<>();
            long i = 0;
            while (i < capacity)
            {
                if (taken[(int)i])
                {
                    i++;
                    continue;
                }
                final long start = i;
                while (i < capacity && !taken[(int)i])
                {
                    i++;
                }
                gaps.add(new long[] {start, i - start});
            }
            return gaps;
        }

        long largestFree()
        {
            if (config.allocator() == MttAllocatorKind.BUDDY)
            {
                return largestAlignedFree();
            }
            return gaps().stream().mapToLong(g -> g[1]).max().orElse(0);
        }

        long reservedFor(final long entries)
        {
            if (config.allocator() == MttAllocatorKind.EXACT)
            {
                return entries;
            }
            long size = 1L << config.logMttsPerSeg();
            while (size < entries)
            {
                size <<= 1;
            }
            return size;
        }

        void mark(final MttRange r, final boolean value)
        {
            for (long i = r.firstEntry(); i < r.firstEntry() + r.reservedEntries(); i++)
            {
                taken[(int)i] = value;
            }
        }

        MttCounters counters()
        {
            final long inUse = live.stream().mapToLong(MttRange::reservedEntries).sum();
            final long requested = live.stream().mapToLong(MttRange::entries).sum();
            return new MttCounters(capacity, inUse, requested, capacity - inUse, largestFree(), allocations,
                failures, frees);
        }
    }

    @Property(tries = 1000)
    void allocatorsNeverOverlapStayInsideAndKeepExactCounters(@ForAll("configs") final MttConfig config,
        @ForAll @Size(max = 60) final List<@IntRange(min = 0, max = 1 << 20) Integer> ops)
    {
        final Mtt mtt = new Mtt(config);
        final Model model = new Model(config);
        final MttCounters initial = mtt.counters();
        assertThat(initial).isEqualTo(model.counters());

        for (final int op : ops)
        {
            if ((op & 3) == 0 && !model.live.isEmpty())
            {
                final MttRange r = model.live.remove((op >>> 2) % model.live.size());
                mtt.free(r);
                model.mark(r, false);
                model.frees++;
            }
            else
            {
                // sizes skewed small, now and then larger than the table
                final long bound = Math.max(1, (model.capacity + 2) >> ((op >>> 2) & 3));
                final long entries = 1 + (op >>> 4) % bound;
                allocate(mtt, model, entries);
            }
            assertThat(mtt.counters()).as("counters after op %d", op).isEqualTo(model.counters());
        }

        final List<MttRange> all = new ArrayList<>(model.live);
        for (int i = all.size() - 1; i >= 0; i -= 2)
        {
            mtt.free(all.get(i));
        }
        for (int i = all.size() - 2; i >= 0; i -= 2)
        {
            mtt.free(all.get(i));
        }
        final MttCounters end = mtt.counters();
        assertThat(end.entriesFree()).isEqualTo(model.capacity);
        assertThat(end.largestFreeBlock()).isEqualTo(model.capacity);
        assertThat(end.entriesInUse()).isZero();
        assertThat(end.entriesRequested()).isZero();
        assertThat(new MttCounters(end.capacityEntries(), end.entriesInUse(), end.entriesRequested(),
            end.entriesFree(), end.largestFreeBlock(), 0, 0, 0)).isEqualTo(initial);
    }

    private static void allocate(final Mtt mtt, final Model model, final long entries)
    {
        final long reserved = model.reservedFor(entries);
        final boolean possible;
        if (entries > model.capacity)
        {
            possible = false;
        }
        else if (model.config.allocator() == MttAllocatorKind.BUDDY)
        {
            possible = model.largestAlignedFree() >= reserved;
        }
        else
        {
            possible = model.gaps().stream().anyMatch(g -> g[1] >= entries);
        }
        final List<long[]> gapsBefore = model.gaps();
        final MttRange[] got = new MttRange[1];
        final Throwable thrown = catchThrowable(() -> got[0] = mtt.allocate(entries));
        if (!possible)
        {
            assertThat(thrown).as("allocate(%d) with nothing large enough", entries)
                .isInstanceOf(TableException.class);
            assertThat(((TableException)thrown).errno()).isEqualTo(Errno.ENOMEM);
            model.failures++;
            return;
        }
        assertThat(thrown).as("allocate(%d) with a block large enough", entries).isNull();
        final MttRange r = got[0];
        assertThat(r.entries()).isEqualTo(entries);
        assertThat(r.reservedEntries()).isEqualTo(reserved).isEqualTo(mtt.reservedFor(entries));
        assertThat(r.firstEntry()).isNotNegative();
        assertThat(r.firstEntry() + r.reservedEntries()).as("end of %s", r).isLessThanOrEqualTo(model.capacity);
        assertThat(model.isFree(r.firstEntry(), r.reservedEntries())).as("%s overlaps a live range", r).isTrue();
        if (model.config.allocator() == MttAllocatorKind.BUDDY)
        {
            assertThat(Long.bitCount(r.reservedEntries())).isEqualTo(1);
            assertThat(r.firstEntry() % r.reservedEntries()).as("alignment of %s", r).isZero();
        }
        else
        {
            // best fit: the smallest gap that holds it, lowest address among equals, taken from its start
            final long best = gapsBefore.stream().filter(g -> g[1] >= entries).mapToLong(g -> g[1]).min()
                .orElseThrow();
            final long bestStart = gapsBefore.stream().filter(g -> g[1] == best).mapToLong(g -> g[0]).min()
                .orElseThrow();
            assertThat(r.firstEntry()).as("best-fit start").isEqualTo(bestStart);
        }
        model.mark(r, true);
        model.live.add(r);
        model.allocations++;
    }
}
