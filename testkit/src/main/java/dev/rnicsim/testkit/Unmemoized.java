package dev.rnicsim.testkit;

import java.util.Optional;
import java.util.function.Function;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCases;
import net.jqwik.api.ExhaustiveGenerator;
import net.jqwik.api.RandomGenerator;

/**
 * An arbitrary whose generator jqwik builds afresh instead of looking it up in its per-property generator cache.
 *
 * <p>Chain actions draw their values from arbitraries made for the state they see ({@code flatMap} over the buffers,
 * keys and windows of a snapshot); jqwik's cache of generators ({@code Memoize}, a 500-entry LRU map per property)
 * keys them by arbitrary, and two arbitraries made by lambdas compare their captured values field by field. Such
 * arbitraries are never used twice, so the lookup only costs (in the key-lifecycle soak it was about a sixth of the
 * run). The values drawn are the same: the generator built is the one the cache would have built and kept.
 *
 * @param <T> the values drawn.
 */
public final class Unmemoized<T> implements Arbitrary<T>
{
    private final Arbitrary<T> arbitrary;

    private Unmemoized(final Arbitrary<T> arbitrary)
    {
        this.arbitrary = arbitrary;
    }

    /** {@code arbitrary}, its generators built afresh (and everything mapped or flat-mapped from it). */
    public static <T> Arbitrary<T> of(final Arbitrary<T> arbitrary)
    {
        return arbitrary instanceof Unmemoized<T> ? arbitrary : new Unmemoized<>(arbitrary);
    }

    /** {@code mapper} for {@code flatMap}, its arbitraries unmemoized. */
    public static <T, U> Function<T, Arbitrary<U>> fresh(final Function<? super T, ? extends Arbitrary<U>> mapper)
    {
        return value -> of(mapper.apply(value));
    }

    /** {@code mapper} for a combinator's {@code flatAs} of two, its arbitraries unmemoized. */
    public static <T1, T2, R> Combinators.F2<T1, T2, Arbitrary<R>> fresh2(
        final Combinators.F2<? super T1, ? super T2, ? extends Arbitrary<R>> mapper)
    {
        return (a, b) -> of(mapper.apply(a, b));
    }

    /** {@code mapper} for a combinator's {@code flatAs} of three, its arbitraries unmemoized. */
    public static <T1, T2, T3, R> Combinators.F3<T1, T2, T3, Arbitrary<R>> fresh3(
        final Combinators.F3<? super T1, ? super T2, ? super T3, ? extends Arbitrary<R>> mapper)
    {
        return (a, b, c) -> of(mapper.apply(a, b, c));
    }

    @Override
    public boolean isGeneratorMemoizable()
    {
        return false;
    }

    @Override
    public RandomGenerator<T> generator(final int genSize)
    {
        return arbitrary.generator(genSize);
    }

    @Override
    public RandomGenerator<T> generatorWithEmbeddedEdgeCases(final int genSize)
    {
        return arbitrary.generatorWithEmbeddedEdgeCases(genSize);
    }

    @Override
    public EdgeCases<T> edgeCases(final int maxEdgeCases)
    {
        return arbitrary.edgeCases(maxEdgeCases);
    }

    @Override
    public Optional<ExhaustiveGenerator<T>> exhaustive(final long maxNumberOfSamples)
    {
        return arbitrary.exhaustive(maxNumberOfSamples);
    }

    @Override
    public String toString()
    {
        return arbitrary.toString();
    }
}
