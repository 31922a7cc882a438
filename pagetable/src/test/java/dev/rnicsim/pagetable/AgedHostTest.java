package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * An aged host hands out 4 KiB frames scattered over memory, as a long-running kernel does; a fresh one hands them
 * out lowest address first.
 */
class AgedHostTest
{
    private static long adjacentPairs(final UserProcess p, final long va, final int pages)
    {
        long adjacent = 0;
        for (int i = 1; i < pages; i++)
        {
            if (p.translate(va + i * 4096L) == p.translate(va + (i - 1) * 4096L) + 4096)
            {
                adjacent++;
            }
        }
        return adjacent;
    }

    @Test
    void shouldScatterFourKibFramesOnAnAgedHostButNotOnAFreshOne()
    {
        final Host fresh = new Host(HostConfig.builder().physicalMemoryBytes(256L << 20).build());
        final Host aged = new Host(HostConfig.builder().physicalMemoryBytes(256L << 20).aged(true).build());
        final UserProcess pf = fresh.spawn("f");
        final UserProcess pa = aged.spawn("a");
        final long vf = pf.mmapAnonymous(1 << 20);
        final long va = pa.mmapAnonymous(1 << 20);
        pf.madvise(vf, 1 << 20, Madvice.NOHUGEPAGE);
        pa.madvise(va, 1 << 20, Madvice.NOHUGEPAGE);
        pf.touch(vf, 1 << 20, true);
        pa.touch(va, 1 << 20, true);

        assertThat(adjacentPairs(pf, vf, 256)).isGreaterThan(200);
        assertThat(adjacentPairs(pa, va, 256)).isLessThan(20);
        final PinnedPages pin = pa.pinUserPages(va, 1 << 20, true, true);
        assertThat(pin.runs().size()).isGreaterThan(230);
        pa.unpinUserPages(pin);
    }

    @Test
    void shouldGiveEveryFrameBackWhenAnAgedHostsMemoryIsFreed()
    {
        final Host aged = new Host(HostConfig.builder().physicalMemoryBytes(128L << 20).aged(true).build());
        final long freeBefore = aged.physicalMemory().freeFrames();
        final UserProcess p = aged.spawn("a");
        final long v = p.mmapAnonymous(8 << 20);
        p.madvise(v, 8 << 20, Madvice.NOHUGEPAGE);
        p.touch(v, 8 << 20, true);
        assertThat(aged.physicalMemory().freeFrames()).isLessThan(freeBefore - 2000);
        p.munmap(v, 8 << 20);
        p.exit();
        assertThat(aged.physicalMemory().freeFrames()).isEqualTo(freeBefore);
    }

    @Test
    void shouldStillBuildTransparentHugePagesOnAnAgedHost()
    {
        final Host aged = new Host(HostConfig.builder().physicalMemoryBytes(256L << 20).aged(true)
            .thpMode(ThpMode.ALWAYS).build());
        final UserProcess p = aged.spawn("a");
        final long v = p.mmapAnonymous(4 << 20);
        p.touch(v, 4 << 20, true);
        assertThat(p.mappedPageSize(v)).isEqualTo(PageSize.SIZE_2M);
    }

    @Test
    void shouldScatterTheSameWayOnEveryRun()
    {
        final long[] first = frames();
        assertThat(frames()).isEqualTo(first);
    }

    private static long[] frames()
    {
        final Host aged = new Host(HostConfig.builder().physicalMemoryBytes(128L << 20).aged(true).build());
        final UserProcess p = aged.spawn("a");
        final long v = p.mmapAnonymous(64 << 10);
        p.touch(v, 64 << 10, true);
        final long[] out = new long[16];
        for (int i = 0; i < 16; i++)
        {
            out[i] = p.translate(v + i * 4096L);
        }
        return out;
    }
}
