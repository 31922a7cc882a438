package dev.rnicsim.mtt;

/**
 * The Linux error numbers the adapter tables raise, with their x86-64 values.
 *
 * <p>Immutable and thread safe.
 */
public enum Errno
{
    /** Out of memory (12): no MTT block or MPT index is free. */
    ENOMEM(12),
    /** Invalid argument (22). */
    EINVAL(22),
    /** Operation not supported (95): irdma's answer when no page size of page_size_cap fits an MR
     * ({@code irdma_alloc_iwmr}). */
    EOPNOTSUPP(95);

    private final int value;

    Errno(final int value)
    {
        this.value = value;
    }

    /**
     * @return the numeric errno value.
     */
    public int value()
    {
        return value;
    }
}
