package dev.rnicsim.simnic;

/**
 * Behaviours in which real providers differ (rdma-core's providers and the kernel drivers rxe and mlx5), switched on per device profile.
 *
 * <p>Immutable and thread safe.
 */
public enum ProviderRule
{
    /** An MR without remote rights gets rkey 0: the rkey exists only with REMOTE_READ, REMOTE_WRITE or
     * REMOTE_ATOMIC (rxe, {@code rxe_mr_init}). Without it, rkey == lkey always (mlx4, mlx5, siw). */
    RKEY_ONLY_WITH_REMOTE_ACCESS,
    /** Posting an atomic on a QP whose own {@code qp_access_flags} lack REMOTE_ATOMIC fails with EOPNOTSUPP
     * (mlx5 provider: {@code atomics_enabled} in providers/mlx5/qp.c). */
    ATOMICS_NEED_QP_ATOMIC_ACCESS,
    /** A misaligned remote address of an atomic is refused at post time with EINVAL (rxe provider) instead of
     * failing at the responder with IBV_WC_REM_INV_REQ_ERR. */
    ATOMIC_ALIGNMENT_AT_POST
}
