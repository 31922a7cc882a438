package dev.rnicsim.verbs;

import java.util.Set;

/**
 * What {@code ibv_rereg_mr} changes ({@code enum ibv_rereg_mr_flags}).
 */
public enum ReregFlag
{
    /** IBV_REREG_MR_CHANGE_TRANSLATION (0x1): a new address and length. */
    CHANGE_TRANSLATION(0x1),
    /** IBV_REREG_MR_CHANGE_PD (0x2): move the MR to another PD. */
    CHANGE_PD(0x2),
    /** IBV_REREG_MR_CHANGE_ACCESS (0x4): new access flags. */
    CHANGE_ACCESS(0x4);

    private final int bit;

    ReregFlag(final int bit)
    {
        this.bit = bit;
    }

    /**
     * @return the rdma-core bit.
     */
    public int bit()
    {
        return bit;
    }

    /**
     * @param flags flags.
     * @return their bits ORed.
     */
    public static int toBits(final Set<ReregFlag> flags)
    {
        int bits = 0;
        for (final ReregFlag f : flags)
        {
            bits |= f.bit;
        }
        return bits;
    }
}
