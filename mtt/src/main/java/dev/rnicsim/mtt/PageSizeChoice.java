package dev.rnicsim.mtt;

/**
 * The page size chosen for an MR and the number of MTT entries (DMA blocks) it then needs.
 *
 * <p>Immutable and thread safe.
 *
 * @param pageSizeBytes the MR page size in bytes, a power of two from the device's {@code page_size_cap}; 0 when
 *                      no supported size works.
 * @param blocks        MTT entries needed: {@code (ALIGN(iova + length, pg) - ALIGN_DOWN(iova, pg)) / pg}
 *                      (include/rdma/ib_umem.h {@code ib_umem_num_dma_blocks}); 0 when the page size is 0.
 */
public record PageSizeChoice(long pageSizeBytes, long blocks)
{
    /**
     * @return log2 of the page size (the page shift), or -1 when no size works.
     */
    public int pageShift()
    {
        return pageSizeBytes == 0 ? -1 : Long.numberOfTrailingZeros(pageSizeBytes);
    }
}
