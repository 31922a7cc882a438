package dev.rnicsim.verbs;

/**
 * Atomic-operation support of a device ({@code enum ibv_atomic_cap}, libibverbs/verbs.h).
 *
 * <p>Immutable and thread safe.
 */
public enum AtomicCap
{
    /** IBV_ATOMIC_NONE (0): no atomics. */
    NONE(0),
    /** IBV_ATOMIC_HCA (1): atomic with respect to this HCA's operations. */
    HCA(1),
    /** IBV_ATOMIC_GLOB (2): atomic with respect to the CPU too. */
    GLOB(2);

    private final int code;

    AtomicCap(final int code)
    {
        this.code = code;
    }

    /**
     * @return the number in {@code enum ibv_atomic_cap}.
     */
    public int code()
    {
        return code;
    }

    /**
     * @param code a number of {@code enum ibv_atomic_cap}.
     * @return its constant.
     * @throws IllegalArgumentException for a number outside 0-2.
     */
    public static AtomicCap of(final int code)
    {
        for (final AtomicCap c : values())
        {
            if (c.code == code)
            {
                return c;
            }
        }
        throw new IllegalArgumentException("atomic_cap " + code + " is no ibv_atomic_cap value (0-2)");
    }
}
