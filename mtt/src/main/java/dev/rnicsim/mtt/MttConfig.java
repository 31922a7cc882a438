package dev.rnicsim.mtt;

/**
 * Size and allocator of an MTT, from a device profile.
 *
 * <p>Immutable and thread safe.
 *
 * @param allocator         BUDDY (mlx4) or EXACT (mlx5-like).
 * @param logNumSegments    BUDDY: log2 of the number of segments ({@code log_num_mtt}); EXACT: log2 of the number
 *                          of entries when {@code capacityEntries} is 0.
 * @param logMttsPerSeg     BUDDY: log2 of entries per segment ({@code log_mtts_per_seg}, 0-7); EXACT: 0.
 * @param capacityEntries   EXACT: the capacity in entries (any positive number); 0 to use
 *                          {@code 2^logNumSegments}. BUDDY: must be 0.
 */
public record MttConfig(MttAllocatorKind allocator, int logNumSegments, int logMttsPerSeg, long capacityEntries)
{
    /** Largest table: 2^31 entries, mlx4's cap (mlx4/profile.c {@code mlx4_make_profile}). */
    public static final int MAX_LOG_ENTRIES = 31;
    /** Most buddy segments: 2^28 (2^31 entries at 8 entries a segment), so that its bitmaps stay under 64 MiB. */
    public static final int MAX_LOG_BUDDY_SEGMENTS = 28;

    /**
     * @throws TableException EINVAL for a value outside its range, named in the message.
     */
    public MttConfig
    {
        if (allocator == null)
        {
            throw new TableException(Errno.EINVAL, "the MTT allocator is null; pass "
                + "MttAllocatorKind.BUDDY (mlx4) or EXACT");
        }
        if (logMttsPerSeg < 0 || logMttsPerSeg > 7 || (allocator == MttAllocatorKind.EXACT && logMttsPerSeg != 0))
        {
            throw new TableException(Errno.EINVAL, "log_mtts_per_seg=" + logMttsPerSeg
                + " must be 0-7 for BUDDY and 0 for EXACT");
        }
        if (allocator == MttAllocatorKind.BUDDY && logNumSegments > MAX_LOG_BUDDY_SEGMENTS)
        {
            throw new TableException(Errno.EINVAL, "log_num_mtt=" + logNumSegments + " > "
                + MAX_LOG_BUDDY_SEGMENTS + ": raise log_mtts_per_seg instead (the buddy keeps a bit per segment)");
        }
        if (logNumSegments < 0 || logNumSegments + logMttsPerSeg > MAX_LOG_ENTRIES)
        {
            throw new TableException(Errno.EINVAL, "log_num_mtt=" + logNumSegments + " + log_mtts_per_seg="
                + logMttsPerSeg + " must be 0.." + MAX_LOG_ENTRIES);
        }
        if (capacityEntries < 0 || capacityEntries > (1L << MAX_LOG_ENTRIES)
            || (allocator == MttAllocatorKind.BUDDY && capacityEntries != 0))
        {
            throw new TableException(Errno.EINVAL, "capacityEntries=" + capacityEntries + " must be 0 for BUDDY and "
                + "0.." + (1L << MAX_LOG_ENTRIES) + " for EXACT");
        }
    }

    /**
     * An mlx4 MTT.
     *
     * @param logNumMtt     log2 of the number of segments.
     * @param logMttsPerSeg log2 of entries per segment.
     * @return the configuration.
     */
    public static MttConfig buddy(final int logNumMtt, final int logMttsPerSeg)
    {
        return new MttConfig(MttAllocatorKind.BUDDY, logNumMtt, logMttsPerSeg, 0);
    }

    /**
     * An exact-allocation MTT.
     *
     * @param capacityEntries entries in the table.
     * @return the configuration.
     */
    public static MttConfig exact(final long capacityEntries)
    {
        if (capacityEntries <= 0)
        {
            throw new TableException(Errno.EINVAL, "capacityEntries=" + capacityEntries + " must be positive");
        }
        return new MttConfig(MttAllocatorKind.EXACT, 0, 0, capacityEntries);
    }

    /**
     * @return the number of entries in the table.
     */
    public long entries()
    {
        return capacityEntries != 0 ? capacityEntries : 1L << (logNumSegments + logMttsPerSeg);
    }
}
