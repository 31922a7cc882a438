package dev.rnicsim.keys;

import java.util.Optional;
import java.util.Random;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.RandomDistribution;
import net.jqwik.api.RandomGenerator;
import net.jqwik.api.Shrinkable;
import net.jqwik.api.ShrinkingDistance;

/**
 * The number a chain step is decoded from ({@link Draw}): uniform over all non-negative longs, drawn as jqwik draws
 * {@link #ARBITRARY}'s, and shrinking as it does (towards 0), without its arithmetic for every step.
 *
 * <p>jqwik draws a uniform number of 63 bits through {@code BigInteger}: eight random bytes ({@code
 * Random.nextBytes}), read big-endian, the top bit cleared, then checked against the range, mapped to a long, and
 * wrapped in a shrinkable that checks its range again. Here the same eight bytes are taken from the same random source
 * and read the same way, so a seed draws the same numbers (the soak's {@code -Drnicsim.soak.digest=true} shows the same
 * chains; {@code StepBitsTest} compares the two draws); jqwik's own shrinkable is made from those bytes only when
 * shrinking asks for it.
 */
final class StepBits implements Shrinkable<Long>
{
    /** jqwik's arbitrary of the numbers, whose draws these are. */
    static final Arbitrary<Long> ARBITRARY = Arbitraries.longs().between(0, Long.MAX_VALUE)
        .withDistribution(RandomDistribution.uniform()).withoutEdgeCases();

    /** The bytes one number is read from. */
    private static final int BYTES = Long.BYTES;

    /** Draws the numbers ({@code genSize} is that of jqwik's generator made when shrinking asks for it). */
    static RandomGenerator<Long> generator(final int genSize)
    {
        return random ->
        {
            final byte[] bytes = new byte[BYTES];
            random.nextBytes(bytes);
            return new StepBits(bytes, genSize);
        };
    }

    private final byte[] bytes;
    private final int genSize;
    private final long value;
    /** jqwik's shrinkable of the same draw, made when first needed. */
    private Shrinkable<Long> jqwiks;

    private StepBits(final byte[] bytes, final int genSize)
    {
        this.bytes = bytes;
        this.genSize = genSize;
        long v = 0;
        for (final byte b : bytes)
        {
            v = v << 8 | (b & 0xff);
        }
        // BigInteger(63, random) clears the bits above the 63rd: the top bit of the first byte.
        this.value = v & Long.MAX_VALUE;
    }

    @Override
    public Long value()
    {
        return value;
    }

    /** jqwik's shrinkable of this draw: its generator run on a source that gives it the same bytes. */
    Shrinkable<Long> jqwiks()
    {
        Shrinkable<Long> s = jqwiks;
        if (s == null)
        {
            s = ARBITRARY.generator(genSize).next(new Replay(bytes));
            jqwiks = s;
        }
        return s;
    }

    @Override
    public Stream<Shrinkable<Long>> shrink()
    {
        return jqwiks().shrink();
    }

    @Override
    public Optional<Shrinkable<Long>> grow(final Shrinkable<?> before, final Shrinkable<?> after)
    {
        return jqwiks().grow(before instanceof StepBits b ? b.jqwiks() : before,
            after instanceof StepBits a ? a.jqwiks() : after);
    }

    @Override
    public Stream<Shrinkable<Long>> grow()
    {
        return jqwiks().grow();
    }

    @Override
    public ShrinkingDistance distance()
    {
        return ShrinkingDistance.of(value);
    }

    @Override
    public boolean equals(final Object o)
    {
        return o instanceof StepBits b && value == b.value;
    }

    @Override
    public int hashCode()
    {
        return Long.hashCode(value);
    }

    @Override
    public String toString()
    {
        return "StepBits(" + value + ")";
    }

    /** A source of randomness that gives the bytes of one draw again. */
    private static final class Replay extends Random
    {
        private final byte[] bytes;

        Replay(final byte[] bytes)
        {
            super(0);
            this.bytes = bytes;
        }

        @Override
        public void nextBytes(final byte[] out)
        {
            if (out.length != bytes.length)
            {
                throw new IllegalStateException("StepBits.Replay: jqwik asked for " + out.length + " random bytes, "
                    + "the draw kept " + bytes.length + " (jqwik's uniform draw of 63 bits changed: see StepBitsTest)");
            }
            System.arraycopy(bytes, 0, out, 0, out.length);
        }

        @Override
        protected int next(final int bits)
        {
            throw new IllegalStateException("StepBits.Replay: jqwik asked for more than the " + bytes.length
                + " random bytes of a draw (its uniform draw of 63 bits changed: see StepBitsTest)");
        }
    }
}
