package dev.rnicsim.mtt;

/**
 * The allocator of an MTT without the table behind it: reserves ranges exactly as {@link Mtt#allocate} would
 * (mlx4's buddy with its rounding and alignment, or exact allocation) but keeps no entries and no per-range state,
 * so a capacity planner can replay millions of registrations in the memory of the allocator's bitmaps alone and
 * find the registration at which the table is exhausted, fragmentation included.
 *
 * <p>Not thread safe.
 */
public final class MttOccupancy
{
    private final MttAllocator allocator;
    private long allocations;

    /**
     * @param config the table's size and allocator.
     */
    public MttOccupancy(final MttConfig config)
    {
        allocator = config.allocator() == MttAllocatorKind.BUDDY
            ? new BuddyMttAllocator(config.logNumSegments(), config.logMttsPerSeg())
            : new ExactMttAllocator(config.entries());
    }

    /**
     * Reserves a range, as an MR's registration would.
     *
     * @param entries MTT entries the MR needs, at least 1.
     * @return the entries reserved (allocator rounding included), or -1 when no free block is large enough.
     * @throws TableException EINVAL when {@code entries} is not positive.
     */
    public long tryReserve(final long entries)
    {
        if (entries <= 0)
        {
            throw new TableException(Errno.EINVAL, "MTT entries=" + entries + " must be positive");
        }
        final MttRange range = entries > allocator.capacityEntries() ? null : allocator.allocate(entries);
        if (range == null)
        {
            return -1;
        }
        allocations++;
        return range.reservedEntries();
    }

    /**
     * @return entries not reserved.
     */
    public long freeEntries()
    {
        return allocator.freeEntries();
    }

    /**
     * @return the most entries one reservation could get now.
     */
    public long largestFreeBlock()
    {
        return allocator.largestFreeBlock();
    }

    /**
     * @return reservations that succeeded.
     */
    public long allocations()
    {
        return allocations;
    }
}
