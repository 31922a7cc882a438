package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * A change to the VMAs of a range splits and merges only around it (mm/madvise.c {@code madvise_update_vma} calls
 * mm/vma.c {@code vma_modify}, which looks at the VMA before and after, and {@code __split_vma}): the work of one
 * madvise is bounded by the VMAs it touches, whatever the process holds. Counted with
 * {@link VmEvent#VMA_VISITS}, not timed.
 */
class MadviseLocalityTest
{
    private static final long PAGE = 4096;

    /** @return the VMAs visited by the last of {@code n} MADV_DONTFORK calls, each on its own page of one heap. */
    private static long visitsOfTheLastOf(final int n)
    {
        final UserProcess p = new Host(HostConfig.builder().physicalMemoryBytes(64L << 20).overcommitMemory(1).build())
            .spawn("app");
        final long heap = p.mmapAnonymous(2L * n * PAGE + PAGE);
        long last = 0;
        for (int i = 0; i < n; i++)
        {
            final long before = p.host().counter(VmEvent.VMA_VISITS);
            p.madvise(heap + 2L * i * PAGE, PAGE, Madvice.DONTFORK);
            last = p.host().counter(VmEvent.VMA_VISITS) - before;
        }
        assertThat(p.vmaCount()).isEqualTo(2 * n);
        return last;
    }

    @Test
    void oneMadviseVisitsTheSameFewVmasWhetherTheProcessHasTwoHundredOrTwentyThousand()
    {
        final long small = visitsOfTheLastOf(100);
        final long large = visitsOfTheLastOf(10_000);

        assertThat(large).isEqualTo(small);
        assertThat(large).isLessThan(20);
    }

    @Test
    void manyDontforkCallsCostLinearlyInTheirNumber()
    {
        final UserProcess p = new Host(HostConfig.builder().physicalMemoryBytes(64L << 20).overcommitMemory(1).build())
            .spawn("app");
        final int n = 5_000;
        final long heap = p.mmapAnonymous(2L * n * PAGE);
        for (int i = 0; i < n; i++)
        {
            p.madvise(heap + 2L * i * PAGE, PAGE, Madvice.DONTFORK);
        }
        final long dontfork = p.host().counter(VmEvent.VMA_VISITS);
        for (int i = 0; i < n; i++)
        {
            p.madvise(heap + 2L * i * PAGE, PAGE, Madvice.DOFORK);
        }

        assertThat(dontfork).isLessThan(20L * n);
        assertThat(p.host().counter(VmEvent.VMA_VISITS) - dontfork).isLessThan(20L * n);
        assertThat(p.vmaCount()).isEqualTo(1);
    }
}
