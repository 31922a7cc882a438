package dev.rnicsim.mtt;

/**
 * State of an MPT entry (rxe {@code enum rxe_mr_state}).
 *
 * <p>Immutable and thread safe.
 */
public enum MptState
{
    /** The index is not allocated: lookups find no such index. */
    FREE,
    /** Allocated but not usable for access (a fast-register MR before registration, or after invalidation). */
    INVALID,
    /** Usable. */
    VALID
}
