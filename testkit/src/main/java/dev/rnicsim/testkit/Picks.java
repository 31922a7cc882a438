package dev.rnicsim.testkit;

import dev.rnicsim.testkit.VerbsActions.Pick;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.RandomGenerator;
import net.jqwik.api.Shrinkable;
import net.jqwik.api.ShrinkingDistance;
import net.jqwik.api.Tuple;

/**
 * How the {@link Pick}s of {@link VerbsActions} are drawn (with the biases of {@link VerbsArbitraries}: page edges,
 * valid rights) and shrunk (each choice straight to its simplest value, in one jump), and the sets of choices the
 * actions use most. Stateless.
 */
final class Picks
{
    /** The choices of an action that picks a name only. */
    static final Set<Pick.Use> INDEX = Set.of(Pick.Use.INDEX);
    /** The choices of an action that picks a name and a range in it. */
    static final Set<Pick.Use> RANGE = Set.of(Pick.Use.INDEX, Pick.Use.OFFSET, Pick.Use.LENGTH);

    private Picks()
    {
    }

    /** How picks are drawn: the arbitraries' biases (page edges, valid rights). */
    private static final Arbitrary<Pick> DRAWN = Combinators.combine(
        Arbitraries.integers().between(0, 1 << 16),
        VerbsArbitraries.offsetsWithin(1L << 20),
        VerbsArbitraries.bufferLengths(1, VerbsArbitraries.DEFAULT_MAX_LENGTH),
        Arbitraries.frequencyOf(Tuple.of(3, VerbsArbitraries.remotelyWritableAccess()),
            Tuple.of(1, VerbsArbitraries.validAccess())),
        Arbitraries.integers(),
        Arbitraries.of(true, false),
        Arbitraries.integers().between(0, 99)).as(Pick::new);

    /**
     * @param uses the choices that vary.
     * @return picks drawn with the biases of {@link VerbsArbitraries}, the other choices at their simplest.
     */
    static Arbitrary<Pick> picks(final Set<Pick.Use> uses)
    {
        final Set<Pick.Use> kept = Set.copyOf(uses);
        return Arbitraries.fromGeneratorWithSize(genSize ->
        {
            final RandomGenerator<Pick> drawn = DRAWN.generator(genSize);
            return random -> new PickShrinkable(drawn.next(random).value().keep(kept));
        });
    }

    /** A pick and its few shrinking candidates. */
    private record PickShrinkable(Pick pick) implements Shrinkable<Pick>
    {
        @Override
        public Pick value()
        {
            return pick;
        }

        @Override
        public Stream<Shrinkable<Pick>> shrink()
        {
            final Pick p = pick;
            final List<Pick> candidates = new ArrayList<>();
            final Pick simplest = p.keep(Set.of());
            if (!simplest.equals(p))
            {
                candidates.add(simplest);
            }
            for (final Pick.Use u : Pick.Use.values())
            {
                final Set<Pick.Use> others = EnumSet.allOf(Pick.Use.class);
                others.remove(u);
                final Pick c = p.keep(others);
                if (!c.equals(p) && !c.equals(simplest))
                {
                    candidates.add(c);
                }
            }
            return candidates.stream().map(PickShrinkable::new);
        }

        @Override
        public ShrinkingDistance distance()
        {
            return ShrinkingDistance.of(pick.index(), pick.offset(), pick.length() - 1, pick.percent(),
                pick.access().equals(Pick.SIMPLEST_ACCESS) ? 0 : 1 + pick.access().size(), pick.key() == 0 ? 0 : 1,
                pick.coin() ? 1 : 0);
        }
    }
}
