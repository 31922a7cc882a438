package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * The page-table walk ({@link PageTable#scanLeaves}, which skips empty slots by each table's occupancy bits) visits
 * exactly the leaves a plain model says, in address order: after any sequence of 4 KiB, 2 MiB and 1 GiB leaves set
 * and cleared (a huge leaf over tables that still hold smaller leaves hides them until it is cleared), a walk of
 * {@code [from, to)} visits every non-empty visible leaf that overlaps the range, and a walk stopped after its k-th leaf
 * returns the address just past that leaf.
 */
class PageTableScanProperties
{
    private static final List<Long> PGD = List.of(0L, 1L, 200L, 255L);
    private static final List<Long> PUD = List.of(0L, 1L, 63L, 64L, 511L);
    private static final List<Long> PMD = List.of(0L, 1L, 2L, 63L, 64L, 511L);
    private static final List<Long> PTE = List.of(0L, 1L, 62L, 63L, 64L, 65L, 127L, 128L, 300L, 511L);

    /** One leaf set (entry 0 clears it). */
    private record Op(PageSize size, long va, long entry)
    {
    }

    @Provide
    Arbitrary<List<Op>> ops()
    {
        final Arbitrary<PageSize> size = Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(8, Arbitraries.just(PageSize.SIZE_4K)),
            net.jqwik.api.Tuple.of(2, Arbitraries.just(PageSize.SIZE_2M)),
            net.jqwik.api.Tuple.of(1, Arbitraries.just(PageSize.SIZE_1G)));
        final Arbitrary<Long> va = Combinators.combine(Arbitraries.of(PGD), Arbitraries.of(PUD), Arbitraries.of(PMD),
            Arbitraries.of(PTE)).as((g, u, m, p) -> g << 39 | u << 30 | m << 21 | p << 12);
        final Arbitrary<Long> entry = Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(1, Arbitraries.just(0L)),
            net.jqwik.api.Tuple.of(3, Arbitraries.longs().between(1, Long.MAX_VALUE)));
        return Combinators.combine(size, va, entry).as((s, v, e) -> new Op(s, v & -s.bytes(), e)).list()
            .ofMaxSize(120);
    }

    @Property(tries = 400)
    void aWalkVisitsWhatTheModelHolds(@ForAll("ops") final List<Op> ops,
        @ForAll @IntRange(min = 0, max = 19) final int fromPick, @ForAll @IntRange(min = 0, max = 19) final int toPick,
        @ForAll @IntRange(min = 1, max = 40) final int stopAfter)
    {
        final PageTable table = new PageTable();
        // The model: each level's entries by address.
        final Map<PageSize, TreeMap<Long, Long>> levels = Map.of(PageSize.SIZE_4K, new TreeMap<>(),
            PageSize.SIZE_2M, new TreeMap<>(), PageSize.SIZE_1G, new TreeMap<>());
        for (final Op op : ops)
        {
            table.set(op.va(), op.size(), op.entry());
            if (op.entry() == 0)
            {
                levels.get(op.size()).remove(op.va());
            }
            else
            {
                levels.get(op.size()).put(op.va(), op.entry());
            }
        }
        // Addresses to walk between: the ops' own, their ends, and the ends of the space.
        final List<Long> marks = new ArrayList<>(List.of(0L, 1L << 47));
        for (final Op op : ops)
        {
            marks.add(op.va());
            marks.add(op.va() + op.size().bytes() / 2);
        }
        long from = marks.get(fromPick % marks.size());
        long to = marks.get(toPick % marks.size());
        if (from > to)
        {
            final long t = from;
            from = to;
            to = t;
        }
        final List<long[]> expected = visible(levels, from, to);
        final List<long[]> visited = new ArrayList<>();
        final long end = table.scanLeaves(from, to, (va, entry, size) ->
        {
            visited.add(new long[] {va, entry, size.bytes()});
            return true;
        });
        assertThat(end).isEqualTo(to);
        assertThat(visited).as("leaves of [0x%x, 0x%x)", from, to).usingElementComparator(PageTableScanProperties::compare)
            .containsExactlyElementsOf(expected);

        final List<long[]> stopped = new ArrayList<>();
        final long stoppedAt = table.scanLeaves(from, to, (va, entry, size) ->
        {
            stopped.add(new long[] {va, entry, size.bytes()});
            return stopped.size() < stopAfter;
        });
        final int k = Math.min(stopAfter, expected.size());
        assertThat(stopped).usingElementComparator(PageTableScanProperties::compare)
            .containsExactlyElementsOf(expected.subList(0, k));
        if (expected.size() >= stopAfter)
        {
            final long[] last = expected.get(stopAfter - 1);
            assertThat(stoppedAt).isEqualTo(last[0] + last[2]);
        }
        else
        {
            assertThat(stoppedAt).isEqualTo(to);
        }
    }

    /** The model's leaves that a walk shows: not under a non-empty larger leaf, overlapping [from, to), by address. */
    private static List<long[]> visible(final Map<PageSize, TreeMap<Long, Long>> levels, final long from,
        final long to)
    {
        final TreeMap<Long, long[]> out = new TreeMap<>();
        for (final PageSize size : List.of(PageSize.SIZE_4K, PageSize.SIZE_2M, PageSize.SIZE_1G))
        {
            for (final Map.Entry<Long, Long> e : levels.get(size).entrySet())
            {
                final long va = e.getKey();
                final boolean hidden = size != PageSize.SIZE_1G
                    && levels.get(PageSize.SIZE_1G).containsKey(va & -PageSize.SIZE_1G.bytes())
                    || size == PageSize.SIZE_4K && levels.get(PageSize.SIZE_2M).containsKey(va & -PageSize.SIZE_2M
                    .bytes());
                if (!hidden && va < to && va + size.bytes() > from)
                {
                    out.put(va, new long[] {va, e.getValue(), size.bytes()});
                }
            }
        }
        return new ArrayList<>(out.values());
    }

    private static int compare(final long[] a, final long[] b)
    {
        return java.util.Arrays.compare(a, b);
    }
}
