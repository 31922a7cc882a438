package dev.rnicsim.mtt;

/**
 * The layout of a 32-bit memory key (lkey / rkey / mkey), with {@code v} variant bits (8 by default, a device
 * profile property):
 * <pre>
 *   31                                   v  v-1           0
 *  +--------------------------------------+----------------+
 *  |          MPT index (32 - v bits)      |  variant (v)   |
 *  +--------------------------------------+----------------+
 * </pre>
 * key = index &lt;&lt; v | variant (include/rdma/ib_verbs.h {@code ib_inc_rkey} changes only the low byte; mlx5
 * {@code mlx5_idx_to_mkey}; rxe {@code rxe_mr_init}). Lookups compare all 32 bits.
 *
 * <p>Stateless and thread safe.
 */
public final class MKey
{
    /** Default number of variant bits: 8. */
    public static final int DEFAULT_VARIANT_BITS = 8;

    private MKey()
    {
    }

    /**
     * @param index        the MPT index.
     * @param variant      the variant, below {@code 2^variantBits}.
     * @param variantBits  the variant width.
     * @return the 32-bit key.
     */
    public static int make(final long index, final int variant, final int variantBits)
    {
        return (int)((index << variantBits) | variant);
    }

    /**
     * @param key         a key.
     * @param variantBits the variant width.
     * @return the MPT index it names.
     */
    public static long index(final int key, final int variantBits)
    {
        return Integer.toUnsignedLong(key) >>> variantBits;
    }

    /**
     * @param key         a key.
     * @param variantBits the variant width.
     * @return its variant.
     */
    public static int variant(final int key, final int variantBits)
    {
        return key & ((1 << variantBits) - 1);
    }

    /**
     * @param key a key.
     * @return the key as 8 hex digits, as verbs tools print it.
     */
    public static String toHex(final int key)
    {
        // "0x%08x" without a Formatter: the simulator's diagnoses print keys on every refused access.
        return "0x" + java.util.HexFormat.of().toHexDigits(key);
    }
}
