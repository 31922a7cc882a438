package dev.rnicsim.verbs;

/**
 * The advice of {@code ibv_advise_mr} ({@code enum ibv_advise_mr_advice}, libibverbs/verbs.h; ibv_advise_mr(3)),
 * with its uapi value.
 *
 * <p>Immutable and thread safe.
 */
public enum MrAdvice
{
    /** IBV_ADVISE_MR_ADVICE_PREFETCH (0): fault the pages in and map them for the device read-only. */
    PREFETCH(0),
    /** IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE (1): fault the pages in and map them for reading and writing. */
    PREFETCH_WRITE(1),
    /** IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT (2): map only the pages the CPU already has present. */
    PREFETCH_NO_FAULT(2);

    /** IBV_ADVISE_MR_FLAG_FLUSH (1): synchronous; the call returns once the translations are in the device. */
    public static final int FLAG_FLUSH = 1;

    private final int code;

    MrAdvice(final int code)
    {
        this.code = code;
    }

    /**
     * @return the value the C API takes.
     */
    public int code()
    {
        return code;
    }
}
