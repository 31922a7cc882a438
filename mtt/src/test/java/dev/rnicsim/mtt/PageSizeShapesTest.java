package dev.rnicsim.mtt;

import static dev.rnicsim.mtt.TableAssertions.assertErrno;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * ib_umem_find_best_pgsz on the page_size_cap shapes real devices report: 32-bit contiguous (rxe 0xfffff000),
 * 64-bit contiguous (mlx5 0xfffffffffffff000), sparse 4K | 2M | 1G (irdma 0x40201000) and ConnectX-3 0xfffffe00
 * (sizes below 4 KiB). Every expected value is worked out by hand with the kernel algorithm in a comment:
 * cover = bits_per((iova + len - 1) ^ iova); mask = cap bits >= cover | per-run (dma + pgoff) ^ va | va at each
 * discontinuity; answer = largest cap bit <= ctz(mask).
 */
class PageSizeShapesTest
{
    private static final long KIB = 1L << 10;
    private static final long MIB = 1L << 20;
    private static final long GIB = 1L << 30;

    private static final long RXE = 0xfffff000L;
    private static final long MLX5 = 0xfffffffffffff000L;
    private static final long IRDMA = 0x40201000L;
    private static final long CX3 = 0xfffffe00L;

    private static final long VA = 0x7f0000200000L;

    private static PageSizeChoice choose(final List<DmaRun> runs, final long address, final long length,
        final long iova, final long cap)
    {
        return PageSizeSelector.choose(runs, address, length, iova, cap);
    }

    @Test
    void shouldKeepTwoMibPagesForTwoSeparateThpsOnEveryCapShape()
    {
        // cover = bits_per(0x3fffff ^ ...) = 23; run 1 xor lowest bit 21; run 2 xor and va lowest bit 22.
        // ctz = 21 for every shape (their bits >= 23 only add higher bits): largest size <= 2M is 2M.
        final List<DmaRun> runs = List.of(new DmaRun(0x1_4000_0000L, 2 * MIB), new DmaRun(0x2_8000_0000L, 2 * MIB));

        for (final long cap : new long[] {RXE, MLX5, IRDMA, CX3})
        {
            assertThat(choose(runs, VA, 4 * MIB, VA, cap)).as("cap 0x%x", cap)
                .isEqualTo(new PageSizeChoice(2 * MIB, 2));
        }
    }

    @Test
    void shouldTakeTheSmallestCoveringSizeOnContiguousCapsButOneGibOnIrdmaForACongruentContiguousBuffer()
    {
        // 4 MiB at VA 0x7f0000200000, PA 0x1_4020_0000 (xor 0x7f01_4000_0000: lowest bit 30). cover = 23.
        // rxe / mlx5 / CX3: mask holds cap bit 23 -> ctz 23 -> 8 MiB; [0x7f0000200000, 0x7f0000600000) lies in
        // one 8 MiB page (0x7f0000000000). irdma: no cap bit between 23 and 29 -> ctz 30 -> 1 GiB, one block.
        final List<DmaRun> runs = List.of(new DmaRun(0x1_4020_0000L, 4 * MIB));

        assertThat(choose(runs, VA, 4 * MIB, VA, RXE)).isEqualTo(new PageSizeChoice(8 * MIB, 1));
        assertThat(choose(runs, VA, 4 * MIB, VA, MLX5)).isEqualTo(new PageSizeChoice(8 * MIB, 1));
        assertThat(choose(runs, VA, 4 * MIB, VA, CX3)).isEqualTo(new PageSizeChoice(8 * MIB, 1));
        assertThat(choose(runs, VA, 4 * MIB, VA, IRDMA)).isEqualTo(new PageSizeChoice(GIB, 1));
    }

    @Test
    void shouldChooseOneGibForAnAlignedOneGibRunOnEveryCapShape()
    {
        // VA 0x7f0040000000, PA 0x1_4000_0000: xor 0x7f01_0000_0000 (lowest bit 32). cover = bits_per(2^30 - 1)
        // = 30, so every shape with bit 30 has mask lowest bit 30 -> ctz 30 -> 1 GiB, one block.
        final long va = 0x7f0040000000L;
        final List<DmaRun> runs = List.of(new DmaRun(0x1_4000_0000L, GIB));

        for (final long cap : new long[] {RXE, MLX5, IRDMA, CX3})
        {
            assertThat(choose(runs, va, GIB, va, cap)).as("cap 0x%x", cap).isEqualTo(new PageSizeChoice(GIB, 1));
        }
    }

    @Test
    void shouldChooseTheLargestCoveringSizeOnMlx5ButOneGibOnIrdmaForAnUnalignedOneGibRun()
    {
        // VA 0x7f0040200000, 1 GiB, PA 0x1_4020_0000 (xor 0x7f01_0000_0000: VA and PA agree below bit 32).
        // cover = bits_per(0x7f00801fffff ^ 0x7f0040200000 = 0xc03fffff) = 32.
        // mlx5: cap bits >= 32 -> ctz 32 -> allowed 2^12..2^32 -> 4 GiB; one 4 GiB page (0x7f0000000000) covers it.
        // irdma: no cap bit >= 32, mask = xor -> ctz 32 -> largest cap size 1 GiB; spans 0x7f0040000000 and
        //        0x7f0080000000 -> 2 blocks.
        // rxe, CX3: no cap bit >= 32 -> ctz 32 -> largest cap size 2 GiB; 0x7f0000000000 and 0x7f0080000000 -> 2.
        final long va = 0x7f0040200000L;
        final List<DmaRun> runs = List.of(new DmaRun(0x1_4020_0000L, GIB));

        assertThat(choose(runs, va, GIB, va, MLX5)).isEqualTo(new PageSizeChoice(4 * GIB, 1));
        assertThat(choose(runs, va, GIB, va, IRDMA)).isEqualTo(new PageSizeChoice(GIB, 2));
        assertThat(choose(runs, va, GIB, va, RXE)).isEqualTo(new PageSizeChoice(2 * GIB, 2));
        assertThat(choose(runs, va, GIB, va, CX3)).isEqualTo(new PageSizeChoice(2 * GIB, 2));
    }

    @Test
    void shouldChooseTheSmallestCapSizeForAOneByteBuffer()
    {
        // 1 byte at 0x7f0000200abc, PA page 0x5000_3000: cover = bits_per(0) = 1, so mask holds every cap bit;
        // (0x50003abc ^ 0x7f0000200abc) lowest bit 12. ctz = lowest cap bit (12, or 9 for CX3).
        final long address = VA + 0xabc;
        final List<DmaRun> runs = List.of(new DmaRun(0x5000_3000L, 4 * KIB));

        assertThat(choose(runs, address, 1, address, RXE)).isEqualTo(new PageSizeChoice(4 * KIB, 1));
        assertThat(choose(runs, address, 1, address, MLX5)).isEqualTo(new PageSizeChoice(4 * KIB, 1));
        assertThat(choose(runs, address, 1, address, IRDMA)).isEqualTo(new PageSizeChoice(4 * KIB, 1));
        assertThat(choose(runs, address, 1, address, CX3)).isEqualTo(new PageSizeChoice(512, 1));
        // the last byte of a page: same answer, one block
        assertThat(choose(runs, VA + 0xfff, 1, VA + 0xfff, CX3)).isEqualTo(new PageSizeChoice(512, 1));
    }

    @Test
    void shouldIgnoreTheOffsetOfAnUnalignedBufferWhenVaAndPaAgreeBelowThePage()
    {
        // Two THPs, buffer starts 0x123 into the first: (PA + 0x123) ^ (VA + 0x123) = PA ^ VA, lowest bit 21;
        // next va = VA + 2M (bit 22) -> 2 MiB; blocks = [0x7f0000200000, 0x7f0000600000) / 2M = 2.
        final List<DmaRun> runs = List.of(new DmaRun(0x1_4000_0000L, 2 * MIB), new DmaRun(0x2_8000_0000L, 2 * MIB));
        final long address = VA + 0x123;

        assertThat(choose(runs, address, 4 * MIB - 0x123, address, IRDMA)).isEqualTo(new PageSizeChoice(2 * MIB, 2));
        assertThat(choose(runs, address, 4 * MIB - 0x123, address, MLX5)).isEqualTo(new PageSizeChoice(2 * MIB, 2));
    }

    @Test
    void shouldCountEveryTouchedFourKibPageOfAnUnalignedBuffer()
    {
        // 3 pages' worth of bytes starting at offset 0xabc touch 4 pages.
        // Scattered pages: the second run starts at va 0x7f0000201000 (bit 12) -> 4 KiB, 4 blocks.
        final long address = VA + 0xabc;
        final List<DmaRun> scattered = List.of(new DmaRun(0x10000, 4 * KIB), new DmaRun(0x30000, 4 * KIB),
            new DmaRun(0x50000, 4 * KIB), new DmaRun(0x70000, 4 * KIB));
        assertThat(choose(scattered, address, 3 * 4 * KIB, address, MLX5)).isEqualTo(new PageSizeChoice(4 * KIB, 4));

        // One contiguous run at PA 0x10000: xor 0x10abc ^ 0x7f0000200abc lowest bit 16; cover =
        // bits_per(0x7f0000203abb ^ 0x7f0000200abc = 0x3007) = 14. mlx5: ctz 14 -> one 16 KiB page
        // (0x7f0000200000..0x7f0000204000). irdma: cap bits >= 14 are 21 and 30 -> ctz 16 -> 4 KiB, 4 blocks.
        final List<DmaRun> contiguous = List.of(new DmaRun(0x10000, 16 * KIB));
        assertThat(choose(contiguous, address, 3 * 4 * KIB, address, MLX5))
            .isEqualTo(new PageSizeChoice(16 * KIB, 1));
        assertThat(choose(contiguous, address, 3 * 4 * KIB, address, IRDMA))
            .isEqualTo(new PageSizeChoice(4 * KIB, 4));
    }

    @Test
    void shouldLetTheIovaRatherThanTheAddressDecideVaPaAgreement()
    {
        // 4 MiB contiguous at PA 0x1_4000_0000, user address 0x7f0000200000.
        final List<DmaRun> runs = List.of(new DmaRun(0x1_4000_0000L, 4 * MIB));
        // iova = address: xor 0x7f01_4020_0000 lowest bit 21 -> 2 MiB, 2 blocks.
        assertThat(choose(runs, VA, 4 * MIB, VA, IRDMA)).isEqualTo(new PageSizeChoice(2 * MIB, 2));
        // iova = 0x8000_0000: cover = bits_per(0x3fffff) = 22; xor 0x1_c000_0000 lowest bit 30.
        // irdma: mask bit 30 -> 1 GiB, 1 block. mlx5: cap bit 22 -> ctz 22 -> 4 MiB, 1 block.
        assertThat(choose(runs, VA, 4 * MIB, 0x8000_0000L, IRDMA)).isEqualTo(new PageSizeChoice(GIB, 1));
        assertThat(choose(runs, VA, 4 * MIB, 0x8000_0000L, MLX5)).isEqualTo(new PageSizeChoice(4 * MIB, 1));
        // iova = 0x1000: xor lowest bit 12 -> 4 KiB, 1024 blocks.
        assertThat(choose(runs, VA, 4 * MIB, 0x1000, MLX5)).isEqualTo(new PageSizeChoice(4 * KIB, 1024));
    }

    @Test
    void shouldUseSubFourKibPagesOnConnectX3WhenTheIovaDiffersFromTheAddressBelowFourKib()
    {
        // address 0x7f0000200000 (pgoff 0), iova 0x7f0000200200, 8 KiB contiguous at PA 0x10000.
        // cover = bits_per(0x7f00002021ff ^ 0x7f0000200200 = 0x23ff) = 14; xor 0x10000 ^ iova lowest bit 9.
        // CX3: ctz 9 -> 512 B, 8 KiB / 512 = 16 blocks (iova is 512-aligned).
        // Every other shape starts at 4 KiB: no size <= 512 -> 0.
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 8 * KIB));
        final long iova = VA + 0x200;

        assertThat(choose(runs, VA, 8 * KIB, iova, CX3)).isEqualTo(new PageSizeChoice(512, 16));
        assertThat(choose(runs, VA, 8 * KIB, iova, MLX5)).isEqualTo(new PageSizeChoice(0, 0));
        // iova differs at bit 8: nothing fits even on CX3
        assertThat(choose(runs, VA, 8 * KIB, VA + 0x100, CX3).pageShift()).isEqualTo(-1);
    }

    @Test
    void shouldCapThePageAtTheAlignmentOfEachPhysicalDiscontinuity()
    {
        // Both halves congruent with their VA modulo 1 GiB (PA 0x1_4020_0000 for VA 0x7f0000200000, PA
        // 0x2_4040_0000 for VA 0x7f0000400000): the xors allow 1 GiB, but the discontinuity at va 0x7f0000400000
        // (lowest bit 22) caps the page: mlx5 -> 4 MiB (blocks 0x7f0000000000 and 0x7f0000400000 -> 2);
        // irdma -> no 4 MiB size -> 2 MiB, 2 blocks.
        final List<DmaRun> onFourMib = List.of(new DmaRun(0x1_4020_0000L, 2 * MIB),
            new DmaRun(0x2_4040_0000L, 2 * MIB));
        assertThat(choose(onFourMib, VA, 4 * MIB, VA, MLX5)).isEqualTo(new PageSizeChoice(4 * MIB, 2));
        assertThat(choose(onFourMib, VA, 4 * MIB, VA, IRDMA)).isEqualTo(new PageSizeChoice(2 * MIB, 2));

        // A discontinuity 4 KiB past a 2 MiB boundary (va 0x7f0000401000, bit 12) forces 4 KiB pages although
        // each run starts 2 MiB-congruent: 1024 blocks.
        final List<DmaRun> offBoundary = List.of(new DmaRun(0x1_4000_0000L, 2 * MIB + 4 * KIB),
            new DmaRun(0x2_8000_0000L, 2 * MIB - 4 * KIB));
        assertThat(choose(offBoundary, VA, 4 * MIB, VA, IRDMA)).isEqualTo(new PageSizeChoice(4 * KIB, 1024));
        assertThat(choose(offBoundary, VA, 4 * MIB, VA, MLX5)).isEqualTo(new PageSizeChoice(4 * KIB, 1024));
    }

    @Test
    void shouldTreatPhysicallyContiguousRunsAsOneRun()
    {
        // Four 1 MiB scatterlist entries that are physically contiguous: no discontinuity, same as one 4 MiB run.
        final List<DmaRun> split = List.of(new DmaRun(0x1_4020_0000L, MIB), new DmaRun(0x1_4030_0000L, MIB),
            new DmaRun(0x1_4040_0000L, MIB), new DmaRun(0x1_4050_0000L, MIB));

        assertThat(choose(split, VA, 4 * MIB, VA, IRDMA)).isEqualTo(new PageSizeChoice(GIB, 1));
    }

    @Test
    void shouldReturnNoPageSizeWhenTheCapHasNoSizeSmallEnough()
    {
        // cap 2 MiB only, pages scattered at 4 KiB granularity -> allowed sizes <= 4 KiB: none.
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 4 * KIB), new DmaRun(0x30000, 4 * KIB));
        final PageSizeChoice c = choose(runs, VA, 8 * KIB, VA, 2 * MIB);

        assertThat(c).isEqualTo(new PageSizeChoice(0, 0));
        assertThat(c.pageShift()).isEqualTo(-1);
    }

    @Test
    void shouldCountDmaBlocksAsAlignUpEndMinusAlignDownStartOverThePageSize()
    {
        assertThat(PageSizeSelector.numDmaBlocks(0, 1, 4 * KIB)).isEqualTo(1);
        assertThat(PageSizeSelector.numDmaBlocks(0, 4 * KIB, 4 * KIB)).isEqualTo(1);
        assertThat(PageSizeSelector.numDmaBlocks(0, 4 * KIB + 1, 4 * KIB)).isEqualTo(2);
        assertThat(PageSizeSelector.numDmaBlocks(0xfff, 2, 4 * KIB)).isEqualTo(2);
        assertThat(PageSizeSelector.numDmaBlocks(0x1fffff, 2, 2 * MIB)).isEqualTo(2);
        assertThat(PageSizeSelector.numDmaBlocks(0x200000, 2 * MIB, 2 * MIB)).isEqualTo(1);
        assertThat(PageSizeSelector.numDmaBlocks(VA + 0x123, 4 * MIB - 0x123, 2 * MIB)).isEqualTo(2);
        assertThat(PageSizeSelector.numDmaBlocks(VA + 0x123, 4 * MIB, 2 * MIB)).isEqualTo(3);
        // top of the 64-bit space: [2^64 - 4096, 2^64) is one page, [2^64 - 2M, 2^64) one 1 GiB page
        assertThat(PageSizeSelector.numDmaBlocks(-4096L, 4096, 4 * KIB)).isEqualTo(1);
        assertThat(PageSizeSelector.numDmaBlocks(-2 * MIB, 2 * MIB, GIB)).isEqualTo(1);
        // crossing 2^63 (signed wrap) is still counted unsigned: 2 pages
        assertThat(PageSizeSelector.numDmaBlocks(0x7ffffffffffff000L, 8 * KIB, 4 * KIB)).isEqualTo(2);
        // 1 GiB of 4 KiB pages
        assertThat(PageSizeSelector.numDmaBlocks(0, GIB, 4 * KIB)).isEqualTo(1L << 18);
    }

    @Test
    void shouldRefuseImpossibleInputWithEinval()
    {
        final List<DmaRun> one = List.of(new DmaRun(0x10000, 4 * KIB));

        assertErrno(Errno.EINVAL, () -> PageSizeSelector.choose(List.of(), VA, 1, VA, MLX5));
        assertErrno(Errno.EINVAL, () -> PageSizeSelector.choose(one, VA, 0, VA, MLX5));
        assertErrno(Errno.EINVAL, () -> PageSizeSelector.choose(one, VA, -1, VA, MLX5));
        // runs shorter than the buffer, counting from the buffer's offset in its first page
        assertErrno(Errno.EINVAL, () -> PageSizeSelector.choose(one, VA, 4 * KIB + 1, VA, MLX5));
        assertErrno(Errno.EINVAL, () -> PageSizeSelector.choose(one, VA + 1, 4 * KIB, VA + 1, MLX5));
        // iova + length wraps past 2^64
        assertErrno(Errno.EINVAL, () -> PageSizeSelector.choose(one, VA, 4 * KIB, -4095L, MLX5));
        // bad runs
        assertErrno(Errno.EINVAL, () -> new DmaRun(0x10001, 4 * KIB));
        assertErrno(Errno.EINVAL, () -> new DmaRun(0x10000, 100));
        assertErrno(Errno.EINVAL, () -> new DmaRun(0x10000, 0));
        assertErrno(Errno.EINVAL, () -> new DmaRun(-4096, 4 * KIB));
        assertErrno(Errno.EINVAL, () -> new DmaRun(0x7ffffffffffff000L, 8 * KIB));
    }

    @Test
    void shouldAcceptABufferEndingExactlyAtTheTopOfTheIovaSpace()
    {
        // iova + length == 2^64: the last byte is 2^64 - 1, no overflow. cover = 13 on the xor of the last and
        // first byte; (0x10000 ^ 0xffffffffffffe000) lowest bit 13 -> mlx5 8 KiB, one block.
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 8 * KIB));

        assertThat(PageSizeSelector.choose(runs, VA, 8 * KIB, -8192L, MLX5)).isEqualTo(new PageSizeChoice(8 * KIB, 1));
    }
}
