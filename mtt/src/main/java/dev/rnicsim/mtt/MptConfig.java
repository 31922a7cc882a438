package dev.rnicsim.mtt;

/**
 * Size and key policy of an MPT (mkey table), from a device profile.
 *
 * <p>Immutable and thread safe.
 *
 * @param maxMr         entries in the table, 2 to 2^24; index 0 is reserved, so {@code maxMr - 1} MRs fit (a
 *                      device reporting {@code max_mr=N} needs a table of N + 1 entries).
 * @param variantBits   bits of the key that hold the variant, 1-16 (8 on every known device).
 * @param variantPolicy how variants change on reuse.
 * @param indexPolicy   which free index an allocation takes.
 * @param seed          seed of the RANDOM policy.
 */
public record MptConfig(long maxMr, int variantBits, VariantPolicy variantPolicy, IndexPolicy indexPolicy,
                        long seed)
{
    /** Largest table: 2^24 entries, the largest max_mr any known device reports (every mlx5 part). */
    public static final long MAX_MR_LIMIT = 1L << 24;

    /**
     * @throws TableException EINVAL for a value outside its range, named in the message.
     */
    public MptConfig
    {
        if (variantBits < 1 || variantBits > 16)
        {
            throw new TableException(Errno.EINVAL, "variantBits=" + variantBits + " must be 1-16");
        }
        final long limit = Math.min(MAX_MR_LIMIT, 1L << (32 - variantBits));
        if (maxMr < 2 || maxMr > limit)
        {
            throw new TableException(Errno.EINVAL, "max_mr=" + maxMr + " must be 2.." + limit + " with "
                + variantBits + " variant bits");
        }
        if (variantPolicy == null || indexPolicy == null)
        {
            throw new TableException(Errno.EINVAL, "variantPolicy and indexPolicy must be given"
                + "; pass a VariantPolicy and an IndexPolicy (MptConfig.of picks CYCLIC indices)");
        }
    }

    /**
     * @param maxMr  entries in the table.
     * @param policy how variants change on reuse.
     * @return a table with 8 variant bits, cyclic index allocation and seed 0.
     */
    public static MptConfig of(final long maxMr, final VariantPolicy policy)
    {
        return new MptConfig(maxMr, MKey.DEFAULT_VARIANT_BITS, policy, IndexPolicy.CYCLIC, 0);
    }
}
