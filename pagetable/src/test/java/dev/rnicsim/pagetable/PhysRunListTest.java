package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * A pin's runs in primitive arrays read back as the runs appended: contiguous frames of one page size merge into one
 * run, a change of page size or a gap starts another, first frames past 32 bits are kept whole, runs past the first
 * chunks of arrays read back in order, and the list view cannot be changed.
 */
class PhysRunListTest
{
    @Test
    void shouldMergeContiguousFramesOfOnePageSizeAndKeepFramesPastAnInt()
    {
        final PhysRunList runs = new PhysRunList();
        runs.append(10, 1, 12);
        runs.append(11, 2, 12);              // continues the first run
        runs.append(13, 512, 21);            // contiguous but another page size: a new run
        runs.append(1000, 1, 12);            // a gap
        for (int i = 0; i < 20; i++)
        {
            runs.append(5000 + 2L * i, 1, 12); // scattered: a run each, growing the arrays
        }
        final long wide = (1L << 36) + 7;
        runs.append(wide, 3, 12);            // past 32 bits: the high bits are kept beside it
        runs.freeze();

        assertThat(runs).hasSize(24);
        assertThat(runs.get(0)).isEqualTo(new PhysRun(10L << 12, 3L << 12, 4096));
        assertThat(runs.get(1)).isEqualTo(new PhysRun(13L << 12, 512L << 12, 2L << 20));
        assertThat(runs.get(2)).isEqualTo(new PhysRun(1000L << 12, 4096, 4096));
        assertThat(runs.get(3).firstPfn()).isEqualTo(5000);
        assertThat(runs.get(22).firstPfn()).isEqualTo(5038);
        assertThat(runs.get(23)).isEqualTo(new PhysRun(wide << 12, 3L << 12, 4096));
        assertThat(runs.firstPfn(23)).isEqualTo(wide);
        assertThat(runs.frames(1)).isEqualTo(512);
        assertThatThrownBy(() -> runs.add(runs.get(0))).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> runs.get(24)).isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void shouldKeepEveryRunOfAPinLongerThanOneChunk()
    {
        final PhysRunList runs = new PhysRunList();
        final int count = 40_000;
        for (int i = 0; i < count; i++)
        {
            final long pfn = i % 1000 == 999 ? (5L << 32) + 2L * i : 3L * i;
            runs.append(pfn, 1, 12);
        }
        runs.freeze();
        assertThat(runs).hasSize(count);
        for (int i = 0; i < count; i++)
        {
            final long pfn = i % 1000 == 999 ? (5L << 32) + 2L * i : 3L * i;
            assertThat(runs.firstPfn(i)).as("run %d", i).isEqualTo(pfn);
            assertThat(runs.get(i)).isEqualTo(new PhysRun(pfn << 12, 4096, 4096));
        }
    }
}
