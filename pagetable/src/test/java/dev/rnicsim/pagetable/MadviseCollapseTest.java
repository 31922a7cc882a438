package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * madvise(MADV_COLLAPSE) (mm/khugepaged.c {@code madvise_collapse}, {@code collapse_huge_page},
 * {@code madvise_collapse_errno}): base pages become one PMD-mapped THP of the host's PMD size, data kept; a pinned
 * page keeps its part from collapsing (EAGAIN, SCAN_PAGE_COUNT); VM_NOHUGEPAGE memory is EINVAL.
 */
class MadviseCollapseTest
{
    private static final long MIB = 1L << 20;

    private static UserProcess process(final BasePage page)
    {
        return new Host(HostConfig.builder().physicalMemoryBytes(256 * MIB).basePage(page).thpMode(ThpMode.NEVER)
            .build()).spawn("app").capIpcLock(true);
    }

    @Test
    void basePagesOfA16KibHostCollapseInto32MibThpsKeepingTheirData()
    {
        final UserProcess p = process(BasePage.SIZE_16K);
        final long va = p.mmap(0, 64 * MIB, Prot.READ_WRITE, Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS));
        p.write(va + 5 * MIB + 3, new byte[] {42});
        p.write(va + 40 * MIB, new byte[] {43});
        assertThat(p.mappedPageSize(va + 5 * MIB)).isEqualTo(PageSize.SIZE_16K);

        p.madvise(va, 64 * MIB, Madvice.COLLAPSE);

        assertThat(p.host().counter(VmEvent.THP_COLLAPSE_ALLOC)).isEqualTo(2);
        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_32M);
        assertThat(p.read(va + 5 * MIB + 3, 1)).containsExactly(42);
        assertThat(p.read(va + 40 * MIB, 1)).containsExactly(43);
        assertThat(p.read(va + 7 * MIB, 1)).containsExactly(0);
        assertThat(p.translate(va + 31 * MIB) - p.translate(va)).isEqualTo(31 * MIB);
        final PinnedPages pin = p.pinUserPages(va, 32 * MIB, true, true);
        assertThat(pin.runs()).singleElement().satisfies(r -> assertThat(r.pageSizeBytes()).isEqualTo(32 * MIB));
        p.unpinUserPages(pin);
    }

    @Test
    void aPinnedPageKeepsItsPartFromCollapsingWithEagainAndTheOtherPartCollapses()
    {
        final UserProcess p = process(BasePage.SIZE_4K);
        final long va = p.mmap(0, 4 * MIB, Prot.READ_WRITE, Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS));
        p.touch(va, 4 * MIB, true);
        final PinnedPages pin = p.pinUserPages(va + 3 * MIB, 4096, true, true);
        final long pinnedPhys = p.translate(va + 3 * MIB);

        final Throwable t = catchThrowable(() -> p.madvise(va, 4 * MIB, Madvice.COLLAPSE));

        assertThat(((KernelException)t).errno()).isEqualTo(Errno.EAGAIN);
        assertThat(t.getMessage()).contains("pinned").contains("SCAN_PAGE_COUNT");
        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_2M);
        assertThat(p.mappedPageSize(va + 2 * MIB)).isEqualTo(PageSize.SIZE_4K);
        assertThat(p.translate(va + 3 * MIB)).isEqualTo(pinnedPhys);
        assertThat(p.host().counter(VmEvent.THP_COLLAPSE_ALLOC_FAILED)).isEqualTo(1);
        p.unpinUserPages(pin);

        p.madvise(va, 4 * MIB, Madvice.COLLAPSE);

        assertThat(p.mappedPageSize(va + 2 * MIB)).isEqualTo(PageSize.SIZE_2M);
    }

    @Test
    void noHugepageMemoryIsEinvalAndUnchanged()
    {
        final UserProcess p = process(BasePage.SIZE_4K);
        final long va = p.mmap(0, 2 * MIB, Prot.READ_WRITE, Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS));
        p.madvise(va, 2 * MIB, Madvice.NOHUGEPAGE);
        p.touch(va, 2 * MIB, true);

        final Throwable t = catchThrowable(() -> p.madvise(va, 2 * MIB, Madvice.COLLAPSE));

        assertThat(((KernelException)t).errno()).isEqualTo(Errno.EINVAL);
        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_4K);
    }
}
