package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.TreeSet;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;

/**
 * The buddy allocator's per-order free-block bitmap answers every question as an ordered set of block indices
 * would: after any sequence of adds, range adds and removes, on bitmaps of one word up to several summary levels
 * and leaf pages, its size, lowest, highest, next at or above and last at or below agree with a {@link TreeSet} given the same
 * sequence, and a remove reports whether the block was there.
 */
class BlockBitmapProperties
{
    /** One step: 0 add, 1 add a range, 2 remove, 3 ceiling probe. */
    private record Op(int kind, long index, long count)
    {
    }

    @Provide
    Arbitrary<List<Op>> ops()
    {
        return Combinators.combine(Arbitraries.integers().between(0, 3), Arbitraries.longs().between(0, 1L << 40),
            Arbitraries.longs().between(1, 700)).as(Op::new).list().ofMaxSize(300);
    }

    @Property(tries = 300)
    void agreesWithAnOrderedSet(@ForAll @LongRange(min = 1, max = 3_000_000) final long capacity,
        @ForAll("ops") final List<Op> ops, @ForAll @LongRange(min = 0, max = 62) final long spread)
    {
        final BlockBitmap bitmap = new BlockBitmap(capacity);
        final TreeSet<Long> model = new TreeSet<>();
        for (final Op op : ops)
        {
            // Cluster indices near a random spot part of the time, so words fill, empty and summaries flip.
            final long index = Math.floorMod(op.index() >> spread, capacity);
            switch (op.kind())
            {
                case 0 ->
                {
                    bitmap.add(index);
                    model.add(index);
                }
                case 1 ->
                {
                    final long count = Math.min(op.count(), capacity - index);
                    bitmap.addRange(index, count);
                    for (long i = index; i < index + count; i++)
                    {
                        model.add(i);
                    }
                }
                case 2 -> assertThat(bitmap.remove(index)).isEqualTo(model.remove(index));
                default ->
                {
                    final Long above = model.ceiling(index);
                    assertThat(bitmap.ceiling(index)).isEqualTo(above == null ? -1 : above);
                    final Long below = model.floor(index);
                    assertThat(bitmap.floor(index)).isEqualTo(below == null ? -1 : below);
                }
            }
            assertThat(bitmap.size()).isEqualTo(model.size());
            assertThat(bitmap.isEmpty()).isEqualTo(model.isEmpty());
            assertThat(bitmap.first()).isEqualTo(model.isEmpty() ? -1 : model.first());
            assertThat(bitmap.last()).isEqualTo(model.isEmpty() ? -1 : model.last());
        }
        // Drain in order: every element comes back, lowest first, and the bitmap ends empty.
        while (!model.isEmpty())
        {
            final long lowest = model.pollFirst();
            assertThat(bitmap.first()).isEqualTo(lowest);
            assertThat(bitmap.remove(lowest)).isTrue();
        }
        assertThat(bitmap.first()).isEqualTo(-1);
        assertThat(bitmap.last()).isEqualTo(-1);
        assertThat(bitmap.ceiling(0)).isEqualTo(-1);
    }
}
