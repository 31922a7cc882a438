package dev.rnicsim.mtt;

/**
 * How the low, variant bits of a key change when an MPT index is reused: a property of the device profile
 * (SEMANTICS of each driver: include/rdma/ib_verbs.h {@code ib_inc_rkey}; mlx4/mr.c; rxe_mr.c; mlx5/mr.c).
 *
 * <p>Immutable and thread safe.
 */
public enum VariantPolicy
{
    /**
     * The variant advances by one every time the index is freed (mlx4: the bitmap's rotating "top" advances on
     * every MLX4_NO_RR free). With 8 variant bits, a stale key validates again after exactly 256 reuses.
     */
    GENERATION,
    /**
     * A new random variant on every allocation, different from the index's previous one (rxe
     * {@code rxe_get_next_key}); seeded, so runs repeat.
     */
    RANDOM,
    /**
     * A freed key comes back identical when its index is reused (mlx5's mkey cache keeps {@code mkey_7_0});
     * a fresh index takes the next value of a device-wide counter ({@code assign_mkey_variant}).
     */
    RECYCLED
}
