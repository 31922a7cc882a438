package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link UserProcess#vmas} hands out one list while the VMAs do not change (callers that compare them after every step
 * of a test skip the walk when it is the same list), and a new one, with the VMAs now, after every change: mmap,
 * munmap, mprotect, madvise that splits a VMA, and a change that merges them back.
 */
class VmaListTest
{
    @Test
    void theSameListUntilTheVmasChange()
    {
        final Host host = new Host(HostConfig.builder().physicalMemoryBytes(64L << 20).build());
        final UserProcess p = host.spawn("app");
        final long va = p.mmapAnonymous(64L << 10);
        final List<Vma> first = p.vmas();
        p.write(va, new byte[] {1});
        assertThat(p.vmas()).as("a write changes no VMA").isSameAs(first);

        p.madvise(va + (16L << 10), 16L << 10, Madvice.NOHUGEPAGE);
        final List<Vma> split = p.vmas();
        assertThat(split).as("madvise split the VMA in three").isNotSameAs(first).hasSize(first.size() + 2);
        assertThat(p.vmas()).isSameAs(split);

        p.madvise(va + (16L << 10), 16L << 10, Madvice.HUGEPAGE);
        p.madvise(va + (16L << 10), 16L << 10, Madvice.NOHUGEPAGE);
        p.munmap(va + (16L << 10), 16L << 10);
        final List<Vma> holed = p.vmas();
        assertThat(holed).isNotSameAs(split).noneMatch(v -> v.contains(va + (16L << 10)))
            .anyMatch(v -> v.contains(va)).anyMatch(v -> v.contains(va + (32L << 10)));

        p.mprotect(va, 16L << 10, java.util.Set.of(Prot.READ));
        assertThat(p.vmas()).isNotSameAs(holed).anyMatch(v -> v.contains(va) && v.protBits() == Prot.READ.bit());
    }
}
