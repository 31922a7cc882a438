package dev.rnicsim.mtt;

/**
 * The Memory Translation Table: a fixed number of entries, each the DMA address of one MR page, handed out in
 * contiguous ranges by the device's allocator. Entry contents are kept in chunks of up to 2^12 entries (32 KiB)
 * created on first write, each as long as its highest entry written (64 entries at first, doubled as needed), and the
 * directories of chunks grow to the highest chunk written, so a table of 2^24 or more entries costs memory only where
 * entries were written (a fresh device's first small MR costs two chunks of 64 entries, 1 KiB).
 *
 * <p>An entry holds the page's DMA address and a PRESENT flag; a zapped entry is 0. mlx4 keeps PRESENT in bit 0
 * ({@code MLX4_MTT_FLAG_PRESENT}, free because its pages are 4 KiB or more); the model keeps it in bit 63 so that
 * pages of any size a {@code page_size_cap} allows hold their whole address.
 *
 * <p>Every range handed to {@link #free}, {@link #write} or {@link #zap} is checked against the ranges this table
 * handed out and has not taken back, so a stale or forged range is refused and changes nothing. Not thread safe.
 */
public final class Mtt
{
    /** Bit 63 of an entry: the entry maps a page. */
    public static final long PRESENT = Long.MIN_VALUE;
    /** Bit 0 of an entry (free: pages are 4 KiB or larger): the device may only read the page, as an ODP entry
     * mapped from a read-only CPU mapping (mlx5 leaves MLX5_IB_MTT_WRITE clear); a write through it faults. */
    public static final long READ_ONLY = 1;

    /** 512 entries a chunk (4 KiB): a fresh device's first MR allocates two of them, not two of 32 KiB. */
    private static final int CHUNK_SHIFT = 9;
    private static final int CHUNK_MASK = (1 << CHUNK_SHIFT) - 1;
    /** Entries of a chunk when it is created (its length then doubles up to 2^12 as higher entries are written). */
    private static final int FIRST_CHUNK_LENGTH = 64;

    private final MttAllocator allocator;
    private final long capacity;
    /** Chunks the capacity needs: the most the directories grow to (2^22 for 2^31 entries). */
    private final int maxChunks;
    /** Entry contents, one chunk per 2^9 entries, null until written; as long as the highest chunk written. */
    private long[][] chunks = new long[0][];
    /** Per entry index that starts a live range: its entries and reserved entries (32 bits each); else 0. As long as
     * the highest chunk a range started in. */
    private long[][] rangeStarts = new long[0][];
    private long entriesInUse;
    private long entriesRequested;
    private long allocations;
    private long failures;
    private long frees;

    /** How to give this table more entries, for its ENOMEM: the module parameters of a buddy (mlx4) table. */
    private final String moduleParameters;

    /**
     * @param config size and allocator.
     */
    public Mtt(final MttConfig config)
    {
        allocator = config.allocator() == MttAllocatorKind.BUDDY
            ? new BuddyMttAllocator(config.logNumSegments(), config.logMttsPerSeg())
            : new ExactMttAllocator(config.entries());
        capacity = config.entries();
        // mlx4 sizes its MTT by two mlx4_core module parameters: entries = 2^log_num_mtt x 2^log_mtts_per_seg
        // (drivers/net/ethernet/mellanox/mlx4/main.c, mr.c mlx4_init_mr_table); the registrable memory they allow is
        // entries x PAGE_SIZE, which Open MPI warns about ("Registerable memory" below "Total memory")
        moduleParameters = config.allocator() != MttAllocatorKind.BUDDY ? null : "raise the mlx4_core module "
            + "parameter log_num_mtt (now " + config.logNumSegments() + ") or log_mtts_per_seg (now "
            + config.logMttsPerSeg() + "): the table holds 2^log_num_mtt x 2^log_mtts_per_seg entries";
        maxChunks = (int)((capacity + CHUNK_MASK) >>> CHUNK_SHIFT);
    }

    /** A directory long enough for chunk {@code c}: doubled, at most {@link #maxChunks}. */
    private long[][] grown(final long[][] directory, final int c)
    {
        return java.util.Arrays.copyOf(directory, Math.min(maxChunks, Math.max(c + 1, 2 * directory.length)));
    }

    /** The chunk of entry {@code index}, or null when none was written. */
    private long[] chunkOf(final long index)
    {
        final int c = (int)(index >>> CHUNK_SHIFT);
        return c < chunks.length ? chunks[c] : null;
    }

    /** {@code chunk}, or a copy of it (a new chunk when null) long enough for offset {@code off}. */
    private static long[] sized(final long[] chunk, final int off)
    {
        if (chunk != null && off < chunk.length)
        {
            return chunk;
        }
        final int length = Math.min(1 << CHUNK_SHIFT, Math.max(FIRST_CHUNK_LENGTH, Integer.highestOneBit(off) << 1));
        return chunk == null ? new long[length] : java.util.Arrays.copyOf(chunk, length);
    }

    /** Slot {@code off} of a chunk, 0 when the chunk is null or shorter. */
    private static long slot(final long[] chunk, final int off)
    {
        return chunk == null || off >= chunk.length ? 0 : chunk[off];
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
        final MttRange range = entries > capacity ? null : allocator.allocate(entries);
        if (range == null)
        {
            failures++;
            throw new TableException(Errno.ENOMEM, "MTT cannot give " + entriesWord(entries) + " ("
                + reservedFor(entries)
                + " after rounding): " + allocator.freeEntries() + " of " + capacity
                + " free, largest free block " + allocator.largestFreeBlock()
                + "; deregister MRs, register with huge pages (fewer entries), or " + (moduleParameters == null
                ? "use a device with more MTT entries" : "give the device more MTT entries: " + moduleParameters));
        }
        final long first = range.firstEntry();
        final int c = (int)(first >>> CHUNK_SHIFT);
        if (c >= rangeStarts.length)
        {
            rangeStarts = grown(rangeStarts, c);
        }
        final int off = (int)(first & CHUNK_MASK);
        final long[] starts = sized(rangeStarts[c], off);
        rangeStarts[c] = starts;
        starts[off] = pack(range);
        entriesInUse += range.reservedEntries();
        entriesRequested += range.entries();
        allocations++;
        return range;
    }

    private static long pack(final MttRange range)
    {
        return (range.entries() << 32) | range.reservedEntries();
    }

    /**
     * @param range a range.
     * @return true when this table handed it out and has not taken it back.
     */
    public boolean isLive(final MttRange range)
    {
        if (range == null || range.firstEntry() < 0 || range.firstEntry() >= capacity || range.entries() <= 0
            || range.reservedEntries() < range.entries() || range.reservedEntries() > capacity)
        {
            return false;
        }
        final int c = (int)(range.firstEntry() >>> CHUNK_SHIFT);
        final long[] starts = c < rangeStarts.length ? rangeStarts[c] : null;
        return slot(starts, (int)(range.firstEntry() & CHUNK_MASK)) == pack(range);
    }

    private void requireLive(final MttRange range, final String op)
    {
        if (!isLive(range))
        {
            throw new TableException(Errno.EINVAL, op + ": " + range + " is not a range this MTT handed out and still"
                + " holds (already freed, from another table, or forged)"
                + "; free each range once, in the table that gave it");
        }
    }

    /**
     * Gives a range back; its entries are zapped first.
     *
     * @param range a range returned by {@link #allocate} and not yet freed.
     * @throws TableException EINVAL when the range is not live in this table.
     */
    public void free(final MttRange range)
    {
        requireLive(range, "free");
        zapEntries(range);
        release(range);
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
        release(range);
        allocations--;
    }

    private void release(final MttRange range)
    {
        rangeStarts[(int)(range.firstEntry() >>> CHUNK_SHIFT)][(int)(range.firstEntry() & CHUNK_MASK)] = 0;
        allocator.free(range);
        entriesInUse -= range.reservedEntries();
        entriesRequested -= range.entries();
    }

    /**
     * @param entries entries wanted.
     * @return how many entries such an allocation reserves (rounding of the allocator).
     */
    public long reservedFor(final long entries)
    {
        return entries <= 0 || entries > capacity ? entries : allocator.reservedFor(entries);
    }

    /**
     * Writes the DMA address of one MR page.
     *
     * @param range   the MR's range.
     * @param block   the page's index within the MR, 0 to {@code range.entries() - 1}.
     * @param dmaAddr the page's DMA address, aligned to the MR page size, below 2^63.
     * @throws TableException EINVAL when the range is not live, the block is outside it or the address is negative.
     */
    public void write(final MttRange range, final long block, final long dmaAddr)
    {
        requireLive(range, "write");
        if (block < 0 || block >= range.entries() || dmaAddr < 0)
        {
            throw new TableException(Errno.EINVAL, "write: block " + block + " of a range of " + range.entries()
                + " entries, DMA address 0x" + Long.toHexString(dmaAddr)
                + " is outside the range; write only blocks inside the range");
        }
        writeEntry(range.firstEntry() + block, dmaAddr);
    }

    /** Writes one entry of a range the caller has just allocated. */
    void writeEntry(final long index, final long dmaAddr)
    {
        writeEntry(index, dmaAddr, false);
    }

    /** Writes one entry, read-only when asked. */
    void writeEntry(final long index, final long dmaAddr, final boolean readOnly)
    {
        final int c = (int)(index >>> CHUNK_SHIFT);
        if (c >= chunks.length)
        {
            chunks = grown(chunks, c);
        }
        final int off = (int)(index & CHUNK_MASK);
        final long[] chunk = sized(chunks[c], off);
        chunks[c] = chunk;
        chunk[off] = dmaAddr | PRESENT | (readOnly ? READ_ONLY : 0);
    }

    /**
     * @param index an entry index, 0 to capacity - 1.
     * @return the raw entry: DMA address | PRESENT, or 0 when not written or zapped.
     * @throws TableException EINVAL when the index is outside the table.
     */
    public long entry(final long index)
    {
        if (index < 0 || index >= capacity)
        {
            throw new TableException(Errno.EINVAL, "MTT entry " + index + " is outside [0, " + capacity + ")"
                + "; give an entry inside the table");
        }
        return rawEntry(index);
    }

    /** An entry of an index known to be inside the table. */
    long rawEntry(final long index)
    {
        return slot(chunkOf(index), (int)(index & CHUNK_MASK));
    }

    /**
     * Zeroes the entries of a live range: the device stops translating through them.
     *
     * @param range the range.
     * @throws TableException EINVAL when the range is not live in this table.
     */
    public void zap(final MttRange range)
    {
        requireLive(range, "zap");
        zapEntries(range);
    }

    /** Zeroes entries {@code [first, first + count)} of a live range; returns how many were present. */
    long zapEntries(final long first, final long count)
    {
        long present = 0;
        for (long i = first; i < first + count; i++)
        {
            final long[] chunk = chunkOf(i);
            if (slot(chunk, (int)(i & CHUNK_MASK)) != 0)
            {
                chunk[(int)(i & CHUNK_MASK)] = 0;
                present++;
            }
        }
        return present;
    }

    private void zapEntries(final MttRange range)
    {
        long i = range.firstEntry();
        final long end = range.firstEntry() + range.entries();
        while (i < end)
        {
            final long[] chunk = chunkOf(i);
            final long chunkEnd = Math.min(end, ((i >>> CHUNK_SHIFT) + 1) << CHUNK_SHIFT);
            final int from = (int)(i & CHUNK_MASK);
            if (chunk != null && from < chunk.length)
            {
                java.util.Arrays.fill(chunk, from, Math.min(chunk.length, (int)(((chunkEnd - 1) & CHUNK_MASK) + 1)),
                    0L);
            }
            i = chunkEnd;
        }
    }

    /**
     * @return entries in use, {@link MttCounters#entriesInUse()} of {@link #counters()} without the other counts (the
     * free ones are summed over the allocator's free lists).
     */
    public long entriesInUse()
    {
        return entriesInUse;
    }

    /**
     * @return the allocation counters now.
     */
    public MttCounters counters()
    {
        return new MttCounters(capacity, entriesInUse, entriesRequested, allocator.freeEntries(),
            allocator.largestFreeBlock(), allocations, failures, frees);
    }

    /** @return the count with "entry" or "entries". */
    private static String entriesWord(final long n)
    {
        return n + (n == 1 ? " entry" : " entries");
    }
}
