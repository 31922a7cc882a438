package dev.rnicsim.pagetable;

/**
 * A physically contiguous run of pinned memory, the unit a DMA scatterlist entry describes
 * (lib/scatterlist.c {@code sg_alloc_append_table_from_pages} merges contiguous pages into one entry).
 *
 * <p>Immutable and thread safe.
 *
 * @param physAddr      first physical (DMA) address of the run, 4 KiB aligned.
 * @param lengthBytes   length of the run in bytes, a multiple of 4096.
 * @param pageSizeBytes size of the leaf mappings (4096, 2097152 or 1073741824) that back the run. A run never
 *                      mixes page sizes; at either end of a pinned range it may cover only part of a huge page,
 *                      so {@code physAddr} and {@code lengthBytes} need not be multiples of it.
 */
public record PhysRun(long physAddr, long lengthBytes, long pageSizeBytes)
{
    /**
     * @return the number of 4 KiB frames in the run.
     */
    public long frames()
    {
        return lengthBytes >>> PhysicalMemory.FRAME_SHIFT;
    }

    /**
     * @return the first frame number.
     */
    public long firstPfn()
    {
        return physAddr >>> PhysicalMemory.FRAME_SHIFT;
    }
}
