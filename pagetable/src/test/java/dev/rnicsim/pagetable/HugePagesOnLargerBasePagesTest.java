package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.rnicsim.pagetable.proc.SmapsParser;
import java.io.StringReader;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * THP and hugetlbfs with the sizes of arm64 kernels of 4, 16 and 64 KiB pages: THP is one PMD (mm/huge_memory.c
 * {@code HPAGE_PMD_ORDER}: 32 MiB with 16 KiB pages, 512 MiB with 64 KiB pages); hugetlbfs offers CONT_PTE, PMD,
 * CONT_PMD and, with 4 KiB pages only, PUD sizes (arch/arm64/mm/hugetlbpage.c {@code hugetlbpage_init},
 * {@code __hugetlb_valid_size}); MAP_HUGETLB without a size takes the default hstate, the PMD size
 * (mm/hugetlb.c {@code default_hstate}); a size the kernel lacks is EINVAL (mm/mmap.c {@code ksys_mmap_pgoff}).
 */
class HugePagesOnLargerBasePagesTest
{
    private static final long MIB = 1L << 20;
    private static final Set<MapFlag> HUGETLB = Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.HUGETLB);

    private static UserProcess process(final HostConfig.Builder config)
    {
        return new Host(config.build()).spawn("app").capIpcLock(true);
    }

    private static Set<MapFlag> hugetlb(final MapFlag size)
    {
        return Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.HUGETLB, size);
    }

    @Test
    void eachBasePageHasTheHugetlbSizesOfArm64sSupportMatrix()
    {
        assertThat(BasePage.SIZE_4K.hugetlbSizes()).containsExactly(PageSize.SIZE_64K, PageSize.SIZE_2M,
            PageSize.SIZE_32M, PageSize.SIZE_1G);
        assertThat(BasePage.SIZE_16K.hugetlbSizes()).containsExactly(PageSize.SIZE_2M, PageSize.SIZE_32M,
            PageSize.SIZE_1G);
        assertThat(BasePage.SIZE_64K.hugetlbSizes()).containsExactly(PageSize.SIZE_2M, PageSize.SIZE_512M,
            PageSize.SIZE_16G);
        assertThat(BasePage.SIZE_4K.thpSize()).isEqualTo(PageSize.SIZE_2M);
        assertThat(BasePage.SIZE_16K.thpSize()).isEqualTo(PageSize.SIZE_32M);
        assertThat(BasePage.SIZE_64K.thpSize()).isEqualTo(PageSize.SIZE_512M);
        assertThat(BasePage.SIZE_64K.defaultHugetlbSize()).isEqualTo(PageSize.SIZE_512M);
    }

    @Test
    void aPoolOfASizeTheKernelLacksIsEinvalNamingTheSizesItHas()
    {
        final Throwable t = catchThrowable(() -> HostConfig.builder().physicalMemoryBytes(4L << 30)
            .basePage(BasePage.SIZE_64K).hugepages1G(1).build());
        assertThat(t).isInstanceOf(KernelException.class);
        assertThat(((KernelException)t).errno()).isEqualTo(Errno.EINVAL);
        assertThat(t.getMessage()).contains("64 KiB pages has no hugetlb pages of 1g").contains("2m, 512m, 16g");
    }

    @Test
    void mapHugetlbWithoutASizeTakesThe512MibPmdOfA64KibHostAndReservesItsPage()
    {
        final UserProcess p = process(HostConfig.builder().physicalMemoryBytes(2L << 30).basePage(BasePage.SIZE_64K)
            .hugepages(PageSize.SIZE_512M, 2));
        final Host h = p.host();
        final long va = p.mmap(0, 1, Prot.READ_WRITE, HUGETLB);

        assertThat(p.vmaAt(va).hugePageSize()).isEqualTo(PageSize.SIZE_512M);
        assertThat(p.vmaAt(va).lengthBytes()).isEqualTo(512 * MIB);
        assertThat(va % (512 * MIB)).isZero();
        assertThat(h.hugepagesReserved(PageSize.SIZE_512M)).isEqualTo(1);
        assertThat(ProcFs.meminfo(h)).contains("HugePages_Rsvd:      1").contains("Hugepagesize:     524288 kB")
            .contains("Hugetlb:         1048576 kB");
        assertThat(ProcFs.hugepages(h)).contains("hugepages-524288kB/nr_hugepages: 2")
            .contains("hugepages-2048kB/").contains("hugepages-16777216kB/").doesNotContain("1048576kB");

        p.write(va + 300 * MIB, new byte[] {42});

        assertThat(h.hugepagesReserved(PageSize.SIZE_512M)).isZero();
        assertThat(h.hugepagesFree(PageSize.SIZE_512M)).isEqualTo(1);
        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_512M);
        assertThat(p.translate(va + 300 * MIB) - p.translate(va)).isEqualTo(300 * MIB);
        assertThat(ProcFs.smaps(p)).contains("KernelPageSize:   524288 kB");
        final PinnedPages pin = p.pinUserPages(va, 512 * MIB, true, true);
        assertThat(pin.runs()).singleElement().satisfies(run ->
        {
            assertThat(run.pageSizeBytes()).isEqualTo(512 * MIB);
            assertThat(run.lengthBytes()).isEqualTo(512 * MIB);
            assertThat(run.physAddr() % (512 * MIB)).isZero();
        });
        p.unpinUserPages(pin);
        p.munmap(va, 512 * MIB);
        assertThat(h.hugepagesFree(PageSize.SIZE_512M)).isEqualTo(2);
        assertThat(h.hugepagesReserved(PageSize.SIZE_512M)).isZero();
    }

    @Test
    void aContiguousPteHugetlbPageIsCutOnlyAtItsOwnSizeAndASizeTheHostLacksIsEinval()
    {
        final UserProcess p = process(HostConfig.builder().physicalMemoryBytes(256 * MIB).basePage(BasePage.SIZE_64K)
            .hugepages2M(4));
        final long va = p.mmap(0, 4 * MIB, Prot.READ_WRITE, hugetlb(MapFlag.HUGE_2MB));
        p.touch(va, 4 * MIB, true);
        assertThat(p.mappedPageSize(va + 64 * 1024)).isEqualTo(PageSize.SIZE_2M);

        final Throwable cut = catchThrowable(() -> p.munmap(va + 64 * 1024, 64 * 1024));
        assertThat(((KernelException)cut).errno()).isEqualTo(Errno.EINVAL);
        assertThat(cut.getMessage()).contains("2048 kB hugetlb page");
        final Throwable noSuchSize = catchThrowable(() -> p.mmap(0, MIB, Prot.READ_WRITE, hugetlb(MapFlag.HUGE_1GB)));
        assertThat(((KernelException)noSuchSize).errno()).isEqualTo(Errno.EINVAL);
        assertThat(noSuchSize.getMessage()).contains("no hstate of that size").contains("[2m, 512m, 16g]");
        assertThat(p.vmaCount()).isEqualTo(1);
    }

    @Test
    void a64KibContiguousPteHugetlbPageOnA4KibArm64HostIsCopiedWholeOnWrite()
    {
        final UserProcess p = process(HostConfig.builder().physicalMemoryBytes(256 * MIB)
            .forkBehaviour(ForkBehaviour.LEGACY).hugepages(PageSize.SIZE_64K, 4));
        final long va = p.mmap(0, 128 * 1024, Prot.READ_WRITE, hugetlb(MapFlag.HUGE_64KB));
        p.write(va + 40_000, new byte[] {7});
        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_64K);
        assertThat(p.host().hugepagesFree(PageSize.SIZE_64K)).isEqualTo(3);
        final UserProcess child = p.fork("child");
        final long before = p.host().counter(VmEvent.COW_COPY);

        child.write(va + 8, new byte[] {9});

        assertThat(p.host().counter(VmEvent.COW_COPY) - before).isEqualTo(16);
        assertThat(child.read(va + 40_000, 1)).containsExactly(7);
        assertThat(child.translate(va + 40_000) - child.translate(va)).isEqualTo(40_000);
        assertThat(child.translate(va)).isNotEqualTo(p.translate(va));
        assertThat(p.host().hugepagesFree(PageSize.SIZE_64K)).isEqualTo(2);
    }

    @Test
    void a16KibHostFaultsInThpOf32MibAsOneContiguousFolioAndPinsThemAsOneRunEach()
    {
        final UserProcess p = process(HostConfig.builder().physicalMemoryBytes(512 * MIB).basePage(BasePage.SIZE_16K)
            .thpMode(ThpMode.ALWAYS));
        final long va = p.mmapAnonymous(64 * MIB);
        assertThat(va % (32 * MIB)).isZero();

        p.touch(va, 64 * MIB, true);

        assertThat(p.host().counter(VmEvent.THP_FAULT_ALLOC)).isEqualTo(2);
        assertThat(p.mappedPageSize(va + 5 * MIB)).isEqualTo(PageSize.SIZE_32M);
        assertThat(p.translate(va + 31 * MIB) - p.translate(va)).isEqualTo(31 * MIB);
        assertThat(ProcFs.meminfo(p.host())).contains("AnonHugePages:     65536 kB");
        assertThat(ProcFs.smaps(p)).contains("AnonHugePages:     65536 kB").contains("KernelPageSize:       16 kB");
        final PinnedPages pin = p.pinUserPages(va, 64 * MIB, true, true);
        assertThat(pin.runs()).allSatisfy(run -> assertThat(run.pageSizeBytes()).isEqualTo(32 * MIB));
        assertThat(pin.runs().stream().mapToLong(PhysRun::lengthBytes).sum()).isEqualTo(64 * MIB);
        p.unpinUserPages(pin);
    }

    @Test
    void unmappingOneBasePageOfA32MibThpSplitsItsPmdAndFolioIntoBasePagesAndFreesOnlyThatPage()
    {
        final UserProcess p = process(HostConfig.builder().physicalMemoryBytes(512 * MIB).basePage(BasePage.SIZE_16K)
            .thpMode(ThpMode.ALWAYS));
        final Host h = p.host();
        final long va = p.mmapAnonymous(32 * MIB);
        p.write(va + 20 * MIB, new byte[] {5});
        final long freeBefore = h.physicalMemory().freeFrames();

        p.munmap(va + 16 * MIB, 16 * 1024);

        assertThat(h.counter(VmEvent.THP_SPLIT_PMD)).isEqualTo(1);
        assertThat(h.counter(VmEvent.THP_SPLIT_PAGE)).isEqualTo(1);
        assertThat(h.physicalMemory().freeFrames() - freeBefore).isEqualTo(4);
        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_16K);
        assertThat(h.physicalMemory().folioSize(p.translate(va) >>> 12)).isEqualTo(PageSize.SIZE_16K);
        assertThat(p.read(va + 20 * MIB, 1)).containsExactly(5);
    }

    @Test
    void forkWithAPinned32MibThpCopiesItForTheChildABasePageAtATime()
    {
        final UserProcess p = process(HostConfig.builder().physicalMemoryBytes(512 * MIB).basePage(BasePage.SIZE_16K)
            .thpMode(ThpMode.ALWAYS).forkBehaviour(ForkBehaviour.MODERN));
        final long va = p.mmapAnonymous(32 * MIB);
        p.write(va + 123_456, new byte[] {3});
        final PinnedPages pin = p.pinUserPages(va, 32 * MIB, true, true);
        final long copies = p.host().counter(VmEvent.COW_COPY);

        final UserProcess child = p.fork("child");

        assertThat(p.host().counter(VmEvent.THP_SPLIT_PMD)).isEqualTo(1);
        assertThat(p.host().counter(VmEvent.COW_COPY) - copies).isEqualTo(32 * MIB / 4096);
        assertThat(child.read(va + 123_456, 1)).containsExactly(3);
        final long childPfn = child.translate(va) >>> 12;
        assertThat(p.host().physicalMemory().folioSize(childPfn)).isEqualTo(PageSize.SIZE_16K);
        assertThat(child.translate(va + 16 * 1024 - 1) - child.translate(va)).isEqualTo(16 * 1024 - 1);
        p.unpinUserPages(pin);
    }

    @Test
    void swapOutAndInMoveWholeBasePagesOfA16KibHost()
    {
        final UserProcess p = process(HostConfig.builder().physicalMemoryBytes(64 * MIB).basePage(BasePage.SIZE_16K)
            .swapBytes(64 * MIB).thpMode(ThpMode.NEVER));
        final Host h = p.host();
        final long va = p.mmapAnonymous(MIB);
        p.write(va + 5000, new byte[] {11});
        p.touch(va, MIB, true);

        h.reclaim(16);

        assertThat(h.counter(VmEvent.PSWPOUT) % 4).isZero();
        assertThat(h.counter(VmEvent.PSWPOUT)).isPositive();
        assertThat(p.translate(va)).isEqualTo(-1);
        assertThat(p.translate(va + 5000)).isEqualTo(-1);
        final long majorBefore = h.counter(VmEvent.PGMAJFAULT);

        assertThat(p.read(va + 5000, 1)).containsExactly(11);

        assertThat(h.counter(VmEvent.PGMAJFAULT) - majorBefore).isEqualTo(1);
        assertThat(h.counter(VmEvent.PSWPIN)).isEqualTo(4);
        assertThat(h.physicalMemory().folioSize(p.translate(va) >>> 12)).isEqualTo(PageSize.SIZE_16K);
        assertThat(p.translate(va + 16 * 1024 - 1) - p.translate(va)).isEqualTo(16 * 1024 - 1);
    }

    @Test
    void copyOnWriteCopiesTheWholeBasePageIntoOneFolio()
    {
        final UserProcess p = process(HostConfig.builder().physicalMemoryBytes(64 * MIB).basePage(BasePage.SIZE_64K)
            .forkBehaviour(ForkBehaviour.LEGACY));
        final long va = p.mmapAnonymous(64 * 1024);
        p.write(va + 60_000, new byte[] {1});
        final UserProcess child = p.fork("child");
        final long before = p.host().counter(VmEvent.COW_COPY);

        p.write(va, new byte[] {2});

        assertThat(p.host().counter(VmEvent.COW_COPY) - before).isEqualTo(16);
        assertThat(p.read(va + 60_000, 1)).containsExactly(1);
        assertThat(child.read(va, 1)).containsExactly(0);
        assertThat(p.host().physicalMemory().folioSize(p.translate(va) >>> 12)).isEqualTo(PageSize.SIZE_64K);
        assertThat(p.translate(va + 60_000) - p.translate(va)).isEqualTo(60_000);
    }

    @Test
    void aSmapsCaptureOfA64KibHostKeepsIts512MibHugetlbArea() throws Exception
    {
        final String capture = """
            7f0040000000-7f0060000000 rw-p 00000000 00:0f 1234                       /anon_hugepage (deleted)
            Size:             524288 kB
            KernelPageSize:   524288 kB
            MMUPageSize:      524288 kB
            Rss:                   0 kB
            Private_Hugetlb:  524288 kB
            VmFlags: rd wr mr mw me de ht
            """;
        final UserProcess p = process(HostConfig.builder().physicalMemoryBytes(2L << 30).basePage(BasePage.SIZE_64K)
            .hugepages(PageSize.SIZE_512M, 1));

        final SmapsImporter.Report report = SmapsImporter.importEntries(p, SmapsParser.parse(new StringReader(capture)),
            true);

        final Vma v = p.vmas().get(0);
        assertThat(v.kind()).isEqualTo(VmaKind.HUGETLB);
        assertThat(v.hugePageSize()).isEqualTo(PageSize.SIZE_512M);
        assertThat(report.residentPages()).isEqualTo(512 * MIB / 4096);
        assertThat(p.mappedPageSize(v.startAddress())).isEqualTo(PageSize.SIZE_512M);
        final UserProcess x86 = process(HostConfig.builder().physicalMemoryBytes(2L << 30).hugepages2M(4));
        final Throwable t = catchThrowable(() -> SmapsImporter.importEntries(x86,
            SmapsParser.parse(new StringReader(capture)), false));
        assertThat(((KernelException)t).errno()).isEqualTo(Errno.EINVAL);
        assertThat(t.getMessage()).contains("KernelPageSize 524288 kB");
        assertThat(x86.vmaCount()).isZero();
    }

    @Test
    void a16GibContiguousPmdPoolIsReservedAtBootFromConsecutiveGigabyteBlocks()
    {
        final Host h = new Host(HostConfig.builder().physicalMemoryBytes(40L << 30).basePage(BasePage.SIZE_64K)
            .hugepages(PageSize.SIZE_16G, 2).build());
        assertThat(h.hugepagesTotal(PageSize.SIZE_16G)).isEqualTo(2);
        assertThat(h.physicalMemory().freeFrames()).isEqualTo((8L << 30) / 4096);
        final Throwable tooMany = catchThrowable(() -> HostConfig.builder().physicalMemoryBytes(40L << 30)
            .basePage(BasePage.SIZE_64K).hugepages(PageSize.SIZE_16G, 3).build());
        assertThat(tooMany.getMessage()).contains("hugepages(16g)=3").contains("ZONE_NORMAL");
    }
}
