package dev.rnicsim.verbs;

/**
 * {@code enum ibv_fork_status}, what {@code ibv_is_fork_initialized} answers (ibv_is_fork_initialized(3)).
 *
 * <p>Immutable and thread safe.
 */
public enum ForkStatus
{
    /** IBV_FORK_DISABLED (0): no fork support; a child may see registered pages change under the device. */
    DISABLED,
    /** IBV_FORK_ENABLED (1): {@code ibv_fork_init} succeeded; registered ranges are MADV_DONTFORK. */
    ENABLED,
    /** IBV_FORK_UNNEEDED (2): the kernel copies DMA-pinned pages at fork (Linux 5.13 and later), nothing to do. */
    UNNEEDED
}
