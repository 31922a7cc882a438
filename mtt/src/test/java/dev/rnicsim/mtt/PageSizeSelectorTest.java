package dev.rnicsim.mtt;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The worked examples of ib_umem_find_best_pgsz: a 4 MiB buffer at 0x7f0000200000 on a device with
 * page_size_cap = 4K | 2M | 1G.
 */
class PageSizeSelectorTest
{
    private static final long CAP_4K_2M_1G = (1L << 12) | (1L << 21) | (1L << 30);
    private static final long VA = 0x7f0000200000L;
    private static final long LEN = 4L << 20;
    private static final List<DmaRun> TWO_THPS = List.of(new DmaRun(0x1_4000_0000L, 2L << 20),
        new DmaRun(0x2_8000_0000L, 2L << 20));

    @Test
    void shouldChooseTwoMibPagesForTwoSeparateThps()
    {
        final PageSizeChoice c = PageSizeSelector.choose(TWO_THPS, VA, LEN, VA, CAP_4K_2M_1G);

        assertThat(c.pageSizeBytes()).isEqualTo(2L << 20);
        assertThat(c.blocks()).isEqualTo(2);
    }

    @Test
    void shouldFallBackToFourKibWhenTheIovaIsNotAligned()
    {
        final PageSizeChoice c = PageSizeSelector.choose(TWO_THPS, VA, LEN, 0x1000, CAP_4K_2M_1G);

        assertThat(c.pageSizeBytes()).isEqualTo(4096);
        assertThat(c.blocks()).isEqualTo(1024);
    }

    @Test
    void shouldChooseOneGibWhenMemoryIsContiguousAndCongruentModuloOneGib()
    {
        final PageSizeChoice c = PageSizeSelector.choose(List.of(new DmaRun(0x1_4020_0000L, LEN)), VA, LEN, VA,
            CAP_4K_2M_1G);

        assertThat(c.pageSizeBytes()).isEqualTo(1L << 30);
        assertThat(c.blocks()).isEqualTo(1);
    }

    @Test
    void shouldRegisterAndTranslateTheTwoThpExampleThroughTwoMttEntries()
    {
        final AdapterTables t = new AdapterTables(new AdapterConfig(MttConfig.buddy(10, 0),
            MptConfig.of(16, VariantPolicy.GENERATION), CAP_4K_2M_1G, 64, 4));

        final RegisteredMr mr = t.register(1, TWO_THPS, VA, LEN, VA, AccessFlags.LOCAL_WRITE);

        assertThat(mr.mtt().entries()).isEqualTo(2);
        assertThat(t.translate(mr.key(), 1, 0, VA + 5, 1)).isEqualTo(0x1_4000_0005L);
        assertThat(t.translate(mr.key(), 1, 0, VA + (2L << 20) + 7, 1)).isEqualTo(0x2_8000_0007L);
        assertThat(KeyCheck.ofTranslation(t.translate(mr.key(), 2, 0, VA, 1))).isEqualTo(KeyCheck.WRONG_PD);
        t.deregister(mr.key());
        assertThat(KeyCheck.ofTranslation(t.translate(mr.key(), 1, 0, VA, 1))).isEqualTo(KeyCheck.NO_SUCH_INDEX);
    }
}
