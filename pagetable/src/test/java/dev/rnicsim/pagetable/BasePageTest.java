package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/**
 * Hosts whose kernel PAGE_SIZE is 16 or 64 KiB (arm64 ARM64_16K_PAGES / ARM64_64K_PAGES, ppc64): mmap rounds to the
 * base page (mm/mmap.c {@code do_mmap}: PAGE_ALIGN), the other memory calls want base-page aligned addresses
 * (mm/mprotect.c, mm/madvise.c, mm/mmap.c {@code do_vmi_munmap}: EINVAL for {@code start & ~PAGE_MASK}), a fault
 * maps a whole base page (mm/memory.c {@code do_anonymous_page}), pinned_vm and RLIMIT_MEMLOCK count base pages
 * (drivers/infiniband/core/umem.c {@code ib_umem_get}: {@code rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT}), and smaps
 * shows the base page as KernelPageSize (fs/proc/task_mmu.c).
 */
class BasePageTest
{
    private static final long K4 = PhysicalMemory.FRAME_BYTES;

    private static UserProcess process(final BasePage page)
    {
        return new Host(HostConfig.builder().physicalMemoryBytes(256L << 20).basePage(page)
            .forkBehaviour(ForkBehaviour.LEGACY).build()).spawn("app");
    }

    @ParameterizedTest
    @EnumSource(value = BasePage.class, names = {"SIZE_16K", "SIZE_64K"})
    void mmapRoundsTheLengthUpToTheBasePage(final BasePage page)
    {
        final UserProcess p = process(page);
        final long va = p.mmapAnonymous(100);
        assertThat(p.vmaAt(va).lengthBytes()).isEqualTo(page.bytes());
        assertThat(va % page.bytes()).isZero();
    }

    @ParameterizedTest
    @EnumSource(value = BasePage.class, names = {"SIZE_16K", "SIZE_64K"})
    void callsOnAnAddressAlignedTo4KiBButNotToTheBasePageAreEinval(final BasePage page)
    {
        final UserProcess p = process(page);
        final long va = p.mmapAnonymous(4 * page.bytes());
        final int vmas = p.vmaCount();
        for (final Runnable call : new Runnable[] {() -> p.munmap(va + K4, K4),
            () -> p.mprotect(va + K4, K4, Prot.READ_WRITE), () -> p.madvise(va + K4, K4, Madvice.DONTFORK)})
        {
            final Throwable t = catchThrowable(call::run);
            assertThat(t).isInstanceOf(KernelException.class);
            assertThat(((KernelException)t).errno()).isEqualTo(Errno.EINVAL);
            assertThat(t.getMessage()).contains(page.bytes() + "-byte base page");
        }
        assertThat(p.vmaCount()).isEqualTo(vmas);
    }

    @ParameterizedTest
    @EnumSource(value = BasePage.class, names = {"SIZE_16K", "SIZE_64K"})
    void oneTouchedByteFaultsInTheWholeBasePageAsOnePhysicallyContiguousFolio(final BasePage page)
    {
        final UserProcess p = process(page);
        final long va = p.mmapAnonymous(2 * page.bytes());
        final long faults = p.host().counter(VmEvent.PGFAULT);
        p.write(va + 5, new byte[] {1});
        assertThat(p.host().counter(VmEvent.PGFAULT) - faults).as("one fault for the base page").isEqualTo(1);
        final long first = p.translate(va);
        for (long off = 0; off < page.bytes(); off += K4)
        {
            assertThat(p.translate(va + off)).isEqualTo(first + off);
        }
        assertThat(first % page.bytes()).as("naturally aligned").isZero();
        assertThat(p.translate(va + page.bytes())).as("the next base page is untouched").isEqualTo(-1);
        assertThat(ProcFs.smaps(p)).containsPattern("KernelPageSize:\\s+" + page.kb() + " kB")
            .containsPattern("Rss:\\s+" + page.kb() + " kB");
    }

    @Test
    void aReadFaultMapsTheZeroPageOverTheBasePageAndAWriteGivesItOneFolio()
    {
        final UserProcess p = process(BasePage.SIZE_64K);
        final long va = p.mmapAnonymous(64 << 10);
        assertThat(p.read(va + 8192, 1)).containsExactly(0);
        final long zero = p.host().physicalMemory().zeroPfn() << 12;
        assertThat(p.translate(va + 60 * 1024) & -K4).isEqualTo(zero);
        p.write(va + 8192, new byte[] {3});
        final long first = p.translate(va);
        assertThat(first).isNotEqualTo(zero);
        assertThat(p.translate(va + 60 * 1024)).isEqualTo(first + 60 * 1024);
        assertThat(p.read(va + 8192, 1)).containsExactly(3);
    }

    @Test
    void pinnedVmAndRlimitMemlockCountBasePages()
    {
        final UserProcess p = process(BasePage.SIZE_64K).rlimitMemlockBytes(100 << 10);
        final long va = p.mmapAnonymous(4 << 16);
        final PinnedPages one = p.pinUserPages(va + 10, 1, true, true);
        assertThat(one.pageCount()).isEqualTo(1);
        assertThat(one.lengthBytes()).isEqualTo(64 << 10);
        assertThat(p.pinnedVmPages()).isEqualTo(1);
        assertThat(ProcFs.status(p)).contains("VmPin:\t      64 kB");
        // RLIMIT_MEMLOCK=100 KiB >> PAGE_SHIFT is one 64 KiB page: a second page is past the limit.
        final Throwable t = catchThrowable(() -> p.pinUserPages(va + (1 << 16), 1, true, true));
        assertThat(((KernelException)t).errno()).isEqualTo(Errno.ENOMEM);
        assertThat(t.getMessage()).contains("RLIMIT_MEMLOCK=1 pages");
        assertThat(p.pinnedVmPages()).isEqualTo(1);
        p.unpinUserPages(one);
        assertThat(p.pinnedVmPages()).isZero();
    }

    @Test
    void aChildLosesTheWholeBasePageAroundAnMadvisedByte()
    {
        // The field case: a DONTFORK that libibverbs rounds to PAGE_SIZE covers 64 KiB around a small buffer.
        final UserProcess p = process(BasePage.SIZE_64K);
        final long va = p.mmapAnonymous(2 << 16);
        p.write(va + 60_000, new byte[] {9});
        p.madvise(va, 1 << 16, Madvice.DONTFORK);
        final UserProcess child = p.fork("child");
        assertThat(catchThrowable(() -> child.read(va + 60_000, 1))).isInstanceOf(SegmentationFault.class);
        assertThat(child.read(va + (1 << 16), 1)).containsExactly(0);
    }

    @Test
    void hostsOfLargerBasePagesHaveTheirPmdAsThpAndNoThpUnderNever()
    {
        final Throwable t = catchThrowable(() -> HostConfig.builder().basePage(BasePage.SIZE_64K).hugepages1G(1)
            .build());
        assertThat(((KernelException)t).errno()).isEqualTo(Errno.EINVAL);
        assertThat(t.getMessage()).contains("2m, 512m, 16g");
        final UserProcess p = new Host(HostConfig.builder().physicalMemoryBytes(256L << 20)
            .basePage(BasePage.SIZE_16K).thpMode(ThpMode.NEVER).build()).spawn("app");
        final long va = p.mmap(0, 32L << 20, Prot.READ_WRITE, Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS));
        p.touch(va, 32L << 20, true);
        assertThat(p.host().counter(VmEvent.THP_FAULT_ALLOC)).isZero();
        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_16K);
        assertThat(BasePage.SIZE_64K.pmdBytes()).isEqualTo(512L << 20);
        assertThat(BasePage.SIZE_16K.pmdBytes()).isEqualTo(32L << 20);
        assertThat(BasePage.SIZE_4K.pmdBytes()).isEqualTo(2L << 20);
    }

    @Test
    void mlockCountsLockedVmInBasePages()
    {
        final UserProcess p = process(BasePage.SIZE_16K).rlimitMemlockBytes(1 << 20);
        final long va = p.mmapAnonymous(3 << 14);
        p.mlock(va + 100, 10);
        assertThat(p.lockedVmPages()).isEqualTo(1);
        assertThat(p.vmaAt(va).lengthBytes()).isEqualTo(1 << 14);
    }
}
