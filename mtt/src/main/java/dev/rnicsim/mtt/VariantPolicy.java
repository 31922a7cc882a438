package dev.rnicsim.mtt;

/**
 * How the low, variant bits of a key change when an MPT index is reused: a property of the device profile
 * (include/rdma/ib_verbs.h {@code ib_inc_rkey}; drivers/net/ethernet/mellanox/mlx4/mr.c;
 * drivers/infiniband/sw/rxe/rxe_mr.c; drivers/infiniband/hw/mlx5/mr.c).
 *
 * <p>Immutable and thread safe.
 */
public enum VariantPolicy
{
    /**
     * A generation counter per index: the variant advances by one every time the index is freed, so with 8
     * variant bits a stale key validates again after exactly 256 reuses of its index. This is the clean form of
     * mlx4's scheme, where the generation is device-wide instead: the MPT bitmap's "top" bits advance on every
     * MLX4_NO_RR free of any index ({@code mlx4_bitmap_free_range}), so how far a reused index's variant moves
     * depends on all frees in between.
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
    RECYCLED,
    /**
     * The variant is always 0: the key is the index shifted left, and a reused index gives back the very same key
     * (siw {@code siw_mr_add_mem}: {@code stag = id << 8}; erdma {@code erdma_create_stag}: "we always let key
     * field be zero"; hns {@code hw_index_to_key}, whose rotated top byte is 0 below 2^24 indices; qedr
     * {@code hw_mr.key} 0 for user MRs).
     */
    FIXED,
    /**
     * A device-wide counter that advances on every allocation of any index (cxgb4 {@code write_tpt_entry}:
     * {@code atomic_inc_return(&key) & 0xff}; rdmavt {@code rvt_alloc_lkey}: {@code rkt->gen++}), so how far a
     * reused index's variant moves depends on every registration in between.
     */
    DEVICE_COUNTER
}
