package dev.rnicsim.mtt;

import java.util.SplittableRandom;

/**
 * The variant (the key's low bits, {@link MKey}) an MPT entry gets when it is allocated and when it is freed, under
 * the device's {@link VariantPolicy}: a per-index generation, a device-wide counter, a recycled key, a fixed 0 or a
 * seeded random value. It holds the device-wide state (the counter, the random source); the per-index variant and
 * history stay with {@link MptTable}'s chunks.
 *
 * <p>Part of {@link MptTable}. Not thread safe.
 */
final class MptVariants
{
    private final VariantPolicy policy;
    private final int variantMask;
    private final SplittableRandom random;
    private int deviceVariantCounter;

    /**
     * @param policy      how variants change.
     * @param variantBits the variant's width in bits.
     * @param seed        the seed of RANDOM's source.
     */
    MptVariants(final VariantPolicy policy, final int variantBits, final long seed)
    {
        this.policy = policy;
        this.variantMask = (1 << variantBits) - 1;
        this.random = new SplittableRandom(seed);
    }

    /**
     * @return the mask of the variant bits.
     */
    int mask()
    {
        return variantMask;
    }

    /**
     * The variant of an entry being allocated.
     *
     * @param previous the index's variant now (its last key's, or 0 for an index never used).
     * @param reused   the index was used before and the object is an MR-cache object (a window or a
     *                 fast-registration MR is never {@code reused}: under RECYCLED it takes the counter's next value).
     * @return the new variant.
     */
    int onAllocate(final int previous, final boolean reused)
    {
        return switch (policy)
        {
            case GENERATION -> previous;
            case FIXED -> 0;
            case DEVICE_COUNTER ->
            {
                final int v = deviceVariantCounter & variantMask;
                deviceVariantCounter++;
                yield v;
            }
            case RECYCLED ->
            {
                if (reused)
                {
                    yield previous;
                }
                final int v = deviceVariantCounter & variantMask;
                deviceVariantCounter++;
                yield v;
            }
            case RANDOM ->
            {
                int v = random.nextInt(variantMask + 1);
                while (reused && v == previous && variantMask > 0)
                {
                    v = random.nextInt(variantMask + 1);
                }
                yield v;
            }
        };
    }

    /**
     * The variant an index keeps after its entry is freed: under GENERATION it advances by one.
     *
     * @param previous the freed entry's variant.
     * @return the index's variant from now on.
     */
    int onFree(final int previous)
    {
        return policy == VariantPolicy.GENERATION ? (previous + 1) & variantMask : previous;
    }
}
