package dev.rnicsim.mtt;

/**
 * Which free MPT index an allocation takes.
 *
 * <p>Immutable and thread safe.
 */
public enum IndexPolicy
{
    /** The next free index after the last one handed out, wrapping (rxe {@code xa_alloc_cyclic}, mlx4's
     * round-robin bitmap): a freed index is reused late. */
    CYCLIC,
    /** The lowest free index: a freed index is reused at once. */
    LOWEST_FREE
}
