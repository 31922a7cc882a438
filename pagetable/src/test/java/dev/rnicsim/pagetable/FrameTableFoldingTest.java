package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Frames of a 2 MiB section that all hold the same state are kept as that one state: a large pinned region of
 * 4 KiB pages folds most of its sections, and every count read through a folded section, and every change to it,
 * is the same as with per-frame state.
 */
class FrameTableFoldingTest
{
    private static final long REGION = 16L << 20;
    private static final int PAGES = (int)(REGION >>> 12);

    @Test
    void shouldFoldAPinnedRegionsSectionsAndKeepEveryCountExact()
    {
        final Host host = new Host(HostConfig.builder().physicalMemoryBytes(256L << 20).aged(true).build());
        final PhysicalMemory phys = host.physicalMemory();
        final long freeBefore = phys.freeFrames();
        // The zero page, alone in the section past the host's memory, has it folded from the start.
        assertThat(phys.frames().foldedSections()).isEqualTo(1);
        assertThat(phys.frames().kind(phys.zeroPfn())).isEqualTo(FrameTable.KIND_ZERO);
        final UserProcess p = host.spawn("app").capIpcLock(true);
        final long va = p.mmapAnonymous(REGION);
        p.madvise(va, REGION, Madvice.NOHUGEPAGE);
        final PinnedPages pin = p.pinUserPages(va, REGION, true, true);

        // 8 sections of 512 frames, each handed out whole to the region; the last few changed stay unfolded.
        assertThat(phys.frames().foldedSections()).isGreaterThanOrEqualTo(4);
        for (int i = 0; i < PAGES; i++)
        {
            final long pfn = p.translate(va + i * 4096L) >>> 12;
            assertThat(phys.mapCount(pfn)).isEqualTo(1);
            assertThat(phys.pinCount(pfn)).isEqualTo(1);
            assertThat(phys.isAllocated(pfn)).isTrue();
            assertThat(phys.folioSize(pfn)).isEqualTo(PageSize.SIZE_4K);
        }
        assertThat(phys.usedFrames()).isEqualTo(phys.totalFrames() - phys.freeFrames());

        // A write changes one frame of a folded section: only that frame holds bytes.
        p.write(va + 4096, new byte[] {7});
        assertThat(p.read(va + 4096, 1)).containsExactly(7);
        assertThat(p.read(va + 8192, 1)).containsExactly(0);

        p.unpinUserPages(pin);
        for (int i = 0; i < PAGES; i++)
        {
            final long pfn = p.translate(va + i * 4096L) >>> 12;
            assertThat(phys.pinCount(pfn)).isZero();
            assertThat(phys.mapCount(pfn)).isEqualTo(1);
        }
        p.munmap(va, REGION);
        assertThat(phys.freeFrames()).isEqualTo(freeBefore);
        assertThat(phys.frames().foldedSections()).isEqualTo(1); // the zero page's
        assertThat(phys.usedFrames()).isEqualTo(phys.totalFrames() - phys.freeFrames());
    }
}
