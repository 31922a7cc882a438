package dev.rnicsim.keys;

import java.util.Optional;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.EdgeCases;
import net.jqwik.api.ExhaustiveGenerator;
import net.jqwik.api.RandomGenerator;

/**
 * An arbitrary whose generator jqwik asks for once per try is made once per size instead: the same generator, so the
 * same values from the same seed. jqwik makes an action chain's generator afresh for every try (its choice among
 * actions by frequency with it), and looks a combined arbitrary's generator up in its store for every try; in the
 * soak, a few percent of the chain thread's time. Every other call goes to the arbitrary wrapped.
 *
 * <p>Only for arbitraries whose generators keep no state between values (jqwik's own memoization makes the same
 * assumption for the arbitraries it memoizes).
 */
final class MemoizedArbitrary<T> implements Arbitrary<T>
{
    private final Arbitrary<T> arbitrary;

    /** The last generator made, for its size and with or without edge cases. */
    private record Made<T>(int genSize, boolean withEdgeCases, RandomGenerator<T> generator)
    {
    }

    private volatile Made<T> made;

    MemoizedArbitrary(final Arbitrary<T> arbitrary)
    {
        this.arbitrary = arbitrary;
    }

    @Override
    public RandomGenerator<T> generator(final int genSize, final boolean withEdgeCases)
    {
        Made<T> m = made;
        if (m == null || m.genSize() != genSize || m.withEdgeCases() != withEdgeCases)
        {
            m = new Made<>(genSize, withEdgeCases, arbitrary.generator(genSize, withEdgeCases));
            made = m;
        }
        return m.generator();
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
    public boolean isGeneratorMemoizable()
    {
        return arbitrary.isGeneratorMemoizable();
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
}
