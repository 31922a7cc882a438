package dev.rnicsim.mtt;

import java.util.List;

/**
 * Chooses the page size of an MR exactly as the kernel's {@code ib_umem_find_best_pgsz}
 * (drivers/infiniband/core/umem.c) does, for a device {@code page_size_cap} bitmap of any shape.
 *
 * <p>The largest page size P in the bitmap is chosen such that (1) no larger page is needed, since one aligned
 * page of a size at least {@code bits_per((iova + length - 1) XOR iova)} covers the range; (2) the iova and the
 * DMA address agree below P at the start of every physically contiguous run; (3) every physical discontinuity
 * falls on a P boundary of the iova. The result is "the smallest page size that results in the minimum number of
 * required pages".
 *
 * <p>Stateless and thread safe.
 */
public final class PageSizeSelector
{
    private static final long KERNEL_PAGE_MASK = 0xfffL;

    private PageSizeSelector()
    {
    }

    /**
     * @param runs          the DMA runs of the buffer, in address order of the buffer; the first starts at the 4 KiB
     *                      page holding {@code address}.
     * @param address       the user virtual address of the buffer's first byte ({@code umem->address}); only its
     *                      offset within a 4 KiB page matters.
     * @param lengthBytes   the buffer length in bytes ({@code umem->length}).
     * @param iova          the address the MR is accessed by ({@code virt}; equal to {@code address} for
     *                      {@code ibv_reg_mr}, chosen freely with {@code ibv_reg_mr_iova}).
     * @param pageSizeCap   the device's bitmap of supported page sizes: bit n set means 2^n bytes.
     * @return the page size and the number of MTT entries; page size 0 when no supported size works.
     * @throws TableException EINVAL when there are no runs, the length is not positive, the runs are shorter than
     *                        the buffer, or {@code iova + length} overflows. Runs past the buffer's last page are
     *                        ignored, as the kernel's scatterlist holds only the buffer's pages.
     * @throws NullPointerException when {@code runs} or one of its elements is null.
     */
    public static PageSizeChoice choose(final List<DmaRun> runs, final long address, final long lengthBytes,
        final long iova, final long pageSizeCap)
    {
        final List<DmaRun> pages = trim(runs, address, lengthBytes);
        if (Long.compareUnsigned(iova + lengthBytes - 1, iova) < 0)
        {
            throw new TableException(Errno.EINVAL, "iova 0x" + Long.toHexString(iova) + " + length="
                + lengthBytes + " overflows"
                + "; give a range that ends below 2^64");
        }
        // Bit 63 would make a negative page size; no device reports it.
        final long pageSize = bestPageSize(pages, address, lengthBytes, iova, pageSizeCap & Long.MAX_VALUE);
        return new PageSizeChoice(pageSize, pageSize == 0 ? 0 : numDmaBlocks(iova, lengthBytes, pageSize));
    }

    /**
     * The runs that hold exactly the buffer's 4 KiB pages, as the umem's scatterlist does: runs past the page of the
     * last byte are dropped and the last run is cut at that page's end.
     *
     * @param runs        DMA runs, the first starting at the page of {@code address}.
     * @param address     the buffer's first byte.
     * @param lengthBytes the buffer length, positive.
     * @return the trimmed runs.
     * @throws TableException EINVAL when there are no runs, the length is not positive, or the runs hold fewer bytes
     *                        than the buffer.
     * @throws NullPointerException when {@code runs} or one of its elements is null.
     */
    static List<DmaRun> trim(final List<DmaRun> runs, final long address, final long lengthBytes)
    {
        if (runs.isEmpty() || lengthBytes <= 0)
        {
            throw new TableException(Errno.EINVAL, "need at least one DMA run and lengthBytes > 0, got "
                + runs.size() + " runs and length=" + lengthBytes);
        }
        final long pgoff = address & KERNEL_PAGE_MASK;
        if (lengthBytes > Long.MAX_VALUE - pgoff - KERNEL_PAGE_MASK)
        {
            throw new TableException(Errno.EINVAL, "length=" + lengthBytes + " is too large"
                + "; register the range in smaller MRs");
        }
        final long needed = (pgoff + lengthBytes + KERNEL_PAGE_MASK) & ~KERNEL_PAGE_MASK;
        long exact = 0;
        int used = 0;
        while (used < runs.size() && exact < needed)
        {
            exact += runs.get(used++).lengthBytes();
        }
        if (exact == needed && used == runs.size())
        {
            return runs;
        }
        final List<DmaRun> out = new java.util.ArrayList<>();
        long covered = 0;
        for (final DmaRun run : runs)
        {
            if (covered >= needed)
            {
                break;
            }
            final long take = Math.min(run.lengthBytes(), needed - covered);
            out.add(take == run.lengthBytes() ? run : new DmaRun(run.dmaAddr(), take));
            covered += take;
        }
        if (covered < needed)
        {
            throw new TableException(Errno.EINVAL, "runs hold " + covered + " bytes of pages, fewer than the "
                + needed + " the buffer's pages need (length=" + lengthBytes + ", page offset " + pgoff + ")");
        }
        return out;
    }

    /**
     * The kernel algorithm itself; see the class comment.
     *
     * @return the page size in bytes, or 0 when none works.
     */
    static long bestPageSize(final List<DmaRun> runs, final long address, final long lengthBytes, final long iova,
        final long pageSizeCap)
    {
        final int coverBits = bitsPer((lengthBytes - 1 + iova) ^ iova);
        long mask = pageSizeCap & genmask(63, coverBits);
        long pgoff = address & KERNEL_PAGE_MASK;
        long va = iova;
        long end = 0;
        for (int i = 0; i < runs.size(); i++)
        {
            final DmaRun run = runs.get(i);
            // A run physically contiguous with the previous one adds no constraint of its own.
            if (i == 0 || end != run.dmaAddr())
            {
                mask |= (run.dmaAddr() + pgoff) ^ va;
                if (i != 0)
                {
                    mask |= va;
                }
            }
            end = run.dmaAddr() + run.lengthBytes();
            va += run.lengthBytes() - pgoff;
            pgoff = 0;
        }
        long allowed = pageSizeCap;
        if (mask != 0)
        {
            allowed &= genmask(Long.numberOfTrailingZeros(mask), 0);
        }
        return allowed == 0 ? 0 : Long.highestOneBit(allowed);
    }

    /**
     * {@code ib_umem_num_dma_blocks}: the number of {@code pageSizeBytes} blocks that cover
     * {@code [iova, iova + lengthBytes)}.
     *
     * @param iova          first byte.
     * @param lengthBytes   length in bytes, positive.
     * @param pageSizeBytes a power of two.
     * @return the block count.
     * @throws TableException EINVAL when the length is not positive or the page size is not a power of two.
     */
    public static long numDmaBlocks(final long iova, final long lengthBytes, final long pageSizeBytes)
    {
        if (lengthBytes <= 0 || pageSizeBytes <= 0 || Long.bitCount(pageSizeBytes) != 1)
        {
            throw new TableException(Errno.EINVAL, "numDmaBlocks needs lengthBytes > 0 and a power-of-two page size,"
                + " got length=" + lengthBytes + " pageSizeBytes=" + pageSizeBytes);
        }
        final long first = iova & -pageSizeBytes;
        final long last = (iova + lengthBytes - 1) & -pageSizeBytes;
        return Long.divideUnsigned(last - first, pageSizeBytes) + 1;
    }

    /** {@code bits_per(n)}: the number of bits needed to hold n; 1 for 0. */
    static int bitsPer(final long n)
    {
        return n == 0 ? 1 : 64 - Long.numberOfLeadingZeros(n);
    }

    /** {@code GENMASK(high, low)}: bits low..high set; empty when low > high. */
    static long genmask(final int high, final int low)
    {
        if (low > high || low > 63)
        {
            return 0;
        }
        final long upper = high >= 63 ? -1L : (1L << (high + 1)) - 1;
        return upper & (-1L << low);
    }
}
