package dev.rnicsim.keys;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Random;
import net.jqwik.api.Shrinkable;
import org.junit.jupiter.api.Test;

/**
 * A step's number ({@link StepBits}) is the one jqwik's uniform generator of {@link StepBits#ARBITRARY} draws from the
 * same random source, which is left in the same state after it; it shrinks to jqwik's own candidates, at jqwik's
 * distance.
 */
class StepBitsTest
{
    @Test
    void drawsWhatJqwiksGeneratorDrawsFromTheSameSource()
    {
        final Random seeds = new Random(42);
        for (int i = 0; i < 2000; i++)
        {
            final long seed = seeds.nextLong();
            final Random ours = new Random(seed);
            final Random jqwiks = new Random(seed);
            final Shrinkable<Long> a = StepBits.generator(1000).next(ours);
            final Shrinkable<Long> b = StepBits.ARBITRARY.generator(1000).next(jqwiks);
            assertThat(a.value()).as("seed %d", seed).isEqualTo(b.value()).isNotNegative();
            assertThat(ours.nextLong()).as("the source is left as jqwik leaves it, seed %d", seed)
                .isEqualTo(jqwiks.nextLong());
            assertThat(a.distance()).isEqualTo(b.distance());
        }
    }

    @Test
    void shrinksToJqwiksCandidates()
    {
        final Random seeds = new Random(7);
        for (int i = 0; i < 50; i++)
        {
            final long seed = seeds.nextLong();
            final Shrinkable<Long> a = StepBits.generator(1000).next(new Random(seed));
            final Shrinkable<Long> b = StepBits.ARBITRARY.generator(1000).next(new Random(seed));
            final List<Long> ours = a.shrink().limit(100).map(Shrinkable::value).toList();
            assertThat(ours).as("seed %d", seed).isNotEmpty()
                .isEqualTo(b.shrink().limit(100).map(Shrinkable::value).toList());
            assertThat(ours.get(0)).as("the first candidate is the target").isZero();
        }
    }
}
