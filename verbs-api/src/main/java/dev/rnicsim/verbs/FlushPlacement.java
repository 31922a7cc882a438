package dev.rnicsim.verbs;

/**
 * The placement type of a FLUSH work request ({@code enum ibv_placement_type}, libibverbs/verbs.h; IBTA 1.6 annex
 * A19): how far the earlier writes are pushed. Each needs its own right, on the target MR and on the responder QP.
 *
 * <p>Immutable and thread safe.
 */
public enum FlushPlacement
{
    /** IBV_FLUSH_GLOBAL (1): to the global visibility point; needs {@link Access#FLUSH_GLOBAL}. */
    GLOBAL(1, Access.FLUSH_GLOBAL),
    /** IBV_FLUSH_PERSISTENT (2): to the persistence point (persistent memory); needs {@link Access#FLUSH_PERSISTENT}. */
    PERSISTENT(2, Access.FLUSH_PERSISTENT);

    private final int code;
    private final Access right;

    FlushPlacement(final int code, final Access right)
    {
        this.code = code;
        this.right = right;
    }

    /**
     * @return the number in {@code enum ibv_placement_type}.
     */
    public int code()
    {
        return code;
    }

    /**
     * @return the access right the target MR (and the responder QP's {@code qp_access_flags}) must grant.
     */
    public Access right()
    {
        return right;
    }
}
