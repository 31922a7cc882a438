package dev.rnicsim.mtt;

/**
 * The Memory Translation Table: a fixed number of entries, each the DMA address of one MR page, handed out
 * in contiguous ranges by the device's allocator. Entry contents are kept in chunks created on first write, so a
 * table of 2^24 or more entries costs memory only where entries were written.
 *
 * <p>An entry holds the page's DMA address with bit 0 set as the PRESENT flag (as mlx4 writes them,
 * {@code mlx4_write_mtt_chunk}); a zapped entry is 0.
 *
 * <p>Not thread safe.
 */
public final class Mtt
{
    /** Bit 0 of an entry: the entry maps a page. */
    public static final long PRESENT = 1;

    private static final int CHUNK_SHIFT = 16;
    private static final int CHUNK_MASK = (1 << CHUNK_SHIFT) - 1;

    private final MttAllocator allocator;
    private final long[][] chunks;
    private long entriesInUse;
    private long entriesRequested;
    private long allocations;
    private long failures;
    private long frees;

    /**
     * @param config size and allocator.
     */
    public Mtt(final MttConfig config)
    {
        allocator = config.allocator() == MttAllocatorKind.BUDDY
            ? new BuddyMttAllocator(config.logNumSegments(), config.logMttsPerSeg())
            : new ExactMttAllocator(config.entries());
        chunks = new long[(int)((config.entries() + CHUNK_MASK) >>> CHUNK_SHIFT)][];
    }

    /**
     * Reserves entries for an MR.
     *
     * @param entries the MR's DMA block count, at least 1.
     * @return the range reserved.
     * @throws TableException EINVAL when {@code entries} is not positive; ENOMEM when no free block is large enough,
     *                        naming the entries asked for (and reserved after rounding), the entries free and the
     *                        largest free block.
     */
    public MttRange allocate(final long entries)
    {
        if (entries <= 0)
        {
            throw new TableException(Errno.EINVAL, "MTT entries=" + entries + " must be positive");
        }
        final MttRange range = entries > allocator.capacityEntries() ? null : allocator.allocate(entries);
        if (range == null)
        {
            failures++;
            throw new TableException(Errno.ENOMEM, "MTT cannot give " + entries + " entries (" + reservedFor(entries)
                + " after rounding): " + allocator.freeEntries() + " of " + allocator.capacityEntries()
                + " free, largest free block " + allocator.largestFreeBlock());
        }
        entriesInUse += range.reservedEntries();
        entriesRequested += range.entries();
        allocations++;
        return range;
    }

    /**
     * Gives a range back; its entries are zapped first.
     *
     * @param range a range returned by {@link #allocate} and not yet freed.
     */
    public void free(final MttRange range)
    {
        zap(range);
        allocator.free(range);
        entriesInUse -= range.reservedEntries();
        entriesRequested -= range.entries();
        frees++;
    }

    /**
     * Takes back a range whose registration failed at a later step, as if it had never been allocated: counters
     * included.
     *
     * @param range a range returned by {@link #allocate} and not written.
     */
    void undoAllocate(final MttRange range)
    {
        allocator.free(range);
        entriesInUse -= range.reservedEntries();
        entriesRequested -= range.entries();
        allocations--;
    }

    /**
     * @param entries entries wanted.
     * @return how many entries such an allocation reserves (rounding of the allocator).
     */
    public long reservedFor(final long entries)
    {
        return entries > allocator.capacityEntries() ? entries : allocator.reservedFor(entries);
    }

    /**
     * Writes the DMA address of one MR page.
     *
     * @param range   the MR's range.
     * @param block   the page's index within the MR, 0 to {@code range.entries() - 1}.
     * @param dmaAddr the page's DMA address, aligned to the MR page size.
     */
    public void write(final MttRange range, final long block, final long dmaAddr)
    {
        final long index = range.firstEntry() + block;
        long[] chunk = chunks[(int)(index >>> CHUNK_SHIFT)];
        if (chunk == null)
        {
            chunk = new long[1 << CHUNK_SHIFT];
            chunks[(int)(index >>> CHUNK_SHIFT)] = chunk;
        }
        chunk[(int)(index & CHUNK_MASK)] = dmaAddr | PRESENT;
    }

    /**
     * @param index an entry index.
     * @return the raw entry: DMA address | PRESENT, or 0 when not written or zapped.
     */
    public long entry(final long index)
    {
        final long[] chunk = chunks[(int)(index >>> CHUNK_SHIFT)];
        return chunk == null ? 0 : chunk[(int)(index & CHUNK_MASK)];
    }

    /**
     * Zeroes the entries of a range (the device stops translating through them).
     *
     * @param range the range.
     */
    public void zap(final MttRange range)
    {
        for (long i = range.firstEntry(); i < range.firstEntry() + range.entries(); i++)
        {
            final long[] chunk = chunks[(int)(i >>> CHUNK_SHIFT)];
            if (chunk != null)
            {
                chunk[(int)(i & CHUNK_MASK)] = 0;
            }
        }
    }

    /**
     * @return the allocation counters now.
     */
    public MttCounters counters()
    {
        return new MttCounters(allocator.capacityEntries(), entriesInUse, entriesRequested, allocator.freeEntries(),
            allocator.largestFreeBlock(), allocations, failures, frees);
    }
}
