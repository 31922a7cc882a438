package dev.rnicsim.verbs;

/**
 * The selectivity level of a FLUSH work request ({@code enum ibv_selectivity_level}, libibverbs/verbs.h; IBTA 1.6
 * annex A19): what it covers.
 *
 * <p>Immutable and thread safe.
 */
public enum FlushSelectivity
{
    /** IBV_FLUSH_RANGE (0): the range [remoteAddr, remoteAddr + length), which must lie inside the MR. */
    RANGE(0),
    /** IBV_FLUSH_MR (1): the whole MR the rkey names; remoteAddr and length are not used (rxe {@code check_rkey} skips
     * the range check). */
    MR(1);

    private final int code;

    FlushSelectivity(final int code)
    {
        this.code = code;
    }

    /**
     * @return the number in {@code enum ibv_selectivity_level}.
     */
    public int code()
    {
        return code;
    }
}
