package dev.rnicsim.pagetable;

/**
 * A physically contiguous run of pinned memory, the unit a DMA scatterlist entry describes
 * (lib/scatterlist.c {@code sg_alloc_append_table_from_pages} merges contiguous pages into one entry).
 *
 * <p>Immutable and thread safe.
 *
 * @param physAddr      first physical (DMA) address of the run, page aligned.
 * @param lengthBytes   length of the run in bytes, a multiple of {@code pageSizeBytes}.
 * @param pageSizeBytes size of the pages the run is made of: 4096, 2097152 or 1073741824. A run never mixes
 *                      page sizes.
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
