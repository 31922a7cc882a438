package dev.rnicsim.mtt;

/**
 * How a device hands out MTT entries: a property of its device profile.
 *
 * <p>Immutable and thread safe.
 */
public enum MttAllocatorKind
{
    /**
     * mlx4: a buddy allocator over segments of {@code 2^log_mtts_per_seg} entries; every MR is rounded up to a
     * power of two entries (and to at least one segment), and blocks split and merge with their buddies
     * (drivers/net/ethernet/mellanox/mlx4/mr.c {@code mlx4_buddy_alloc}, {@code mlx4_mtt_init}).
     */
    BUDDY,
    /**
     * mlx5-like: each MR takes exactly the entries it needs, as one contiguous range (the translation lives in
     * the mkey's own context); free ranges coalesce.
     */
    EXACT
}
