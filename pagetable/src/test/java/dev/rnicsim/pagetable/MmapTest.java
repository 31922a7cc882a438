package dev.rnicsim.pagetable;

import static dev.rnicsim.pagetable.KernelAssertions.assertErrno;
import static dev.rnicsim.pagetable.KernelAssertions.assertFailsUnchanged;
import static dev.rnicsim.pagetable.KernelAssertions.ascii;

import dev.rnicsim.pagetable.KernelAssertions.State;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.tuple;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.Test;

/**
 * The mmap family: mmap (anonymous, hugetlb, populate, fixed), munmap, mprotect, madvise, mlock and their limits.
 */
class MmapTest
{
    private static final long MIB = 1L << 20;
    private static final long GIB = 1L << 30;
    private static final long PAGE = PhysicalMemory.FRAME_BYTES;
    private static final long HUGE = PageSize.SIZE_2M.bytes();
    /** An address well above mmap_min_addr and well below where top-down placement starts. */
    private static final long FIXED_BASE = 0x1000_0000L;

    private static final Set<MapFlag> ANON = EnumSet.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS);
    private static final Set<MapFlag> HUGETLB_2M = EnumSet.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.HUGETLB);
    private static final Set<Prot> READ_ONLY = Set.of(Prot.READ);

    private static UserProcess process(final UnaryOperator<HostConfig.Builder> config)
    {
        return new Host(config.apply(HostConfig.builder().physicalMemoryBytes(256 * MIB)).build()).spawn("app");
    }

    private static UserProcess process()
    {
        return process(c -> c);
    }

    private static Set<MapFlag> flags(final MapFlag... extra)
    {
        final Set<MapFlag> out = EnumSet.copyOf(ANON);
        out.addAll(List.of(extra));
        return out;
    }

    private static long free(final UserProcess p)
    {
        return p.host().physicalMemory().freeFrames();
    }

    // ------------------------------------------------------------------------------------------------ anonymous

    @Test
    void shouldMapAnonymousMemoryWithoutAllocatingFrames()
    {
        final UserProcess p = process();
        final long freeBefore = free(p);

        final long va = p.mmapAnonymous(64 * 1024);

        assertThat(p.vmas()).singleElement().satisfies(v ->
        {
            assertThat(v.startAddress()).isEqualTo(va);
            assertThat(v.lengthBytes()).isEqualTo(64 * 1024);
            assertThat(v.kind()).isEqualTo(VmaKind.ANONYMOUS);
            assertThat(v.permissions()).isEqualTo("rw-p");
        });
        assertThat(free(p)).isEqualTo(freeBefore);
        assertThat(p.translate(va)).isEqualTo(-1);
    }

    @Test
    void shouldRoundAnonymousLengthUpToWholePages()
    {
        final UserProcess p = process();

        final long va = p.mmapAnonymous(5000);

        assertThat(p.vmaAt(va).lengthBytes()).isEqualTo(2 * PAGE);
        assertThat(va % PAGE).isZero();
    }

    @Test
    void shouldAlignMappingsOfWholeTwoMibMultiplesToTwoMib()
    {
        // mm/mmap.c thp_get_unmapped_area for anonymous mappings whose length is a PMD multiple.
        final UserProcess p = process(c -> c.thpMode(ThpMode.MADVISE));
        p.mmapAnonymous(3 * PAGE);

        final long va = p.mmapAnonymous(4 * MIB);

        assertThat(va % HUGE).isZero();
    }

    @Test
    void shouldMergeAdjacentCompatibleAnonymousMappings()
    {
        final UserProcess p = process();

        final long first = p.mmapAnonymous(16 * PAGE);
        final long second = p.mmapAnonymous(16 * PAGE);

        assertThat(second).isEqualTo(first - 16 * PAGE);
        assertThat(p.vmaCount()).isEqualTo(1);
        assertThat(p.vmas().get(0).lengthBytes()).isEqualTo(32 * PAGE);
    }

    @Test
    void shouldFaultEveryPageInWithMapPopulate()
    {
        final UserProcess p = process();
        final long freeBefore = free(p);

        final long va = p.mmap(0, 16 * PAGE, Prot.READ_WRITE, flags(MapFlag.POPULATE));

        assertThat(free(p)).isEqualTo(freeBefore - 16);
        for (int i = 0; i < 16; i++)
        {
            assertThat(p.translate(va + i * PAGE)).isNotEqualTo(-1);
        }
    }

    @Test
    void shouldReturnTheMappingWhenMapPopulateRunsOutOfMemory()
    {
        // MAP_POPULATE is best effort: vm_mmap_pgoff (mm/util.c) calls mm_populate() and ignores its result, so mmap
        // succeeds and returns the address even when memory runs out while faulting in (MapFlag.POPULATE says so).
        final UserProcess p = new Host(HostConfig.builder().physicalMemoryBytes(64 * MIB).overcommitMemory(1).build())
            .spawn("app");

        final long[] va = new long[1];
        final Throwable thrown = catchThrowable(() -> va[0] = p.mmap(0, 128 * MIB, Prot.READ_WRITE,
            flags(MapFlag.POPULATE)));

        assertThat(thrown).as("mmap(MAP_POPULATE) must not report a populate failure").isNull();
        assertThat(p.vmaAt(va[0])).isNotNull();
        assertThat(p.vmaAt(va[0]).lengthBytes()).isEqualTo(128 * MIB);
    }

    // ------------------------------------------------------------------------------------------------ hugetlb

    @Test
    void shouldReserveHugetlbPagesAtMmapAndConsumeThemOnFault()
    {
        final UserProcess p = process(c -> c.hugepages2M(4));
        final Host host = p.host();
        final long freeFramesBefore = free(p);

        final long va = p.mmap(0, 4 * MIB, Prot.READ_WRITE, HUGETLB_2M);

        assertThat(va % HUGE).isZero();
        assertThat(host.hugepagesReserved(PageSize.SIZE_2M)).isEqualTo(2);
        assertThat(host.hugepagesFree(PageSize.SIZE_2M)).isEqualTo(4);
        assertThat(p.vmaAt(va).kind()).isEqualTo(VmaKind.HUGETLB);

        p.write(va + 5, new byte[] {1});

        assertThat(host.hugepagesReserved(PageSize.SIZE_2M)).isEqualTo(1);
        assertThat(host.hugepagesFree(PageSize.SIZE_2M)).isEqualTo(3);
        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_2M);
        assertThat(free(p)).isEqualTo(freeFramesBefore);

        p.munmap(va, 4 * MIB);

        assertThat(host.hugepagesReserved(PageSize.SIZE_2M)).isZero();
        assertThat(host.hugepagesFree(PageSize.SIZE_2M)).isEqualTo(4);
    }

    @Test
    void shouldRoundHugetlbLengthUpToTheHugePageSize()
    {
        final UserProcess p = process(c -> c.hugepages2M(2));

        final long va = p.mmap(0, PAGE, Prot.READ_WRITE, HUGETLB_2M);

        assertThat(p.vmaAt(va).lengthBytes()).isEqualTo(HUGE);
        assertThat(p.host().hugepagesReserved(PageSize.SIZE_2M)).isEqualTo(1);
    }

    @Test
    void shouldMapOneGibHugetlbPageWithReservation()
    {
        final UserProcess p = process(c -> c.physicalMemoryBytes(2 * GIB).hugepages1G(1));
        final Host host = p.host();

        final long va = p.mmap(0, GIB, Prot.READ_WRITE, flags(MapFlag.HUGETLB, MapFlag.HUGE_1GB));

        assertThat(va % GIB).isZero();
        assertThat(host.hugepagesReserved(PageSize.SIZE_1G)).isEqualTo(1);
        assertThat(host.hugepagesFree(PageSize.SIZE_1G)).isEqualTo(1);

        p.write(va + GIB - 1, new byte[] {42});

        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_1G);
        assertThat(p.translate(va) % GIB).isZero();
        assertThat(host.hugepagesReserved(PageSize.SIZE_1G)).isZero();
        assertThat(host.hugepagesFree(PageSize.SIZE_1G)).isZero();
        assertThat(p.read(va + GIB - 1, 1)).containsExactly(42);
    }

    @Test
    void shouldFailHugetlbMmapWithEnomemWhenPoolHasTooFewUnreservedPages()
    {
        // mm/hugetlb.c hugetlb_reserve_pages: the reservation fails at mmap time, not at first touch.
        final UserProcess p = process(c -> c.hugepages2M(3));
        p.mmap(0, 4 * MIB, Prot.READ_WRITE, HUGETLB_2M);

        final KernelException e = assertFailsUnchanged(p, Errno.ENOMEM,
            () -> p.mmap(0, 4 * MIB, Prot.READ_WRITE, HUGETLB_2M));

        assertThat(e.getMessage()).contains("HugePages_Rsvd");
    }

    @Test
    void shouldFailWithEinvalForUnalignedFixedHugetlbAddress()
    {
        // mm/hugetlb.c prepare_hugepage_range / hugetlb_get_unmapped_area: -EINVAL.
        final UserProcess p = process(c -> c.hugepages2M(2));

        assertFailsUnchanged(p, Errno.EINVAL,
            () -> p.mmap(FIXED_BASE + PAGE, HUGE, Prot.READ_WRITE, flags(MapFlag.HUGETLB, MapFlag.FIXED)));
    }

    // ------------------------------------------------------------------------------------------------ fixed

    @Test
    void shouldReplaceExistingPagesWithMapFixed()
    {
        final UserProcess p = process(c -> c.thpMode(ThpMode.NEVER));
        final long va = p.mmap(FIXED_BASE, 4 * PAGE, Prot.READ_WRITE, flags(MapFlag.FIXED));
        for (int i = 0; i < 4; i++)
        {
            p.write(va + i * PAGE, ascii("old" + i));
        }
        final long freeBefore = free(p);

        final long again = p.mmap(va + PAGE, 2 * PAGE, READ_ONLY, flags(MapFlag.FIXED));

        assertThat(again).isEqualTo(va + PAGE);
        assertThat(p.vmas()).extracting(Vma::startAddress, Vma::endAddress, Vma::permissions).containsExactly(
            tuple(va, va + PAGE, "rw-p"),
            tuple(va + PAGE, va + 3 * PAGE, "r--p"),
            tuple(va + 3 * PAGE, va + 4 * PAGE, "rw-p"));
        assertThat(free(p)).isEqualTo(freeBefore + 2);
        assertThat(p.read(va + PAGE, 4)).containsOnly(0);
        assertThat(p.read(va, 4)).isEqualTo(ascii("old0"));
        assertThat(p.read(va + 3 * PAGE, 4)).isEqualTo(ascii("old3"));
    }

    @Test
    void shouldFailWithEexistForFixedNoreplaceOverAnExistingMapping()
    {
        final UserProcess p = process();
        final long va = p.mmap(FIXED_BASE, 4 * PAGE, Prot.READ_WRITE, flags(MapFlag.FIXED));
        p.write(va, ascii("keep"));

        assertFailsUnchanged(p, Errno.EEXIST,
            () -> p.mmap(va + 3 * PAGE, 2 * PAGE, Prot.READ_WRITE, flags(MapFlag.FIXED_NOREPLACE)));
        assertThat(p.read(va, 4)).isEqualTo(ascii("keep"));
    }

    @Test
    void shouldPlaceFixedNoreplaceMappingInAFreeRange()
    {
        final UserProcess p = process();

        final long va = p.mmap(FIXED_BASE, 2 * PAGE, Prot.READ_WRITE, flags(MapFlag.FIXED_NOREPLACE));

        assertThat(va).isEqualTo(FIXED_BASE);
    }

    @Test
    void shouldFailWithEpermForFixedAddressBelowMmapMinAddr()
    {
        // security/commoncap.c cap_mmap_addr: -EPERM below vm.mmap_min_addr without CAP_SYS_RAWIO.
        final UserProcess p = process();

        assertFailsUnchanged(p, Errno.EPERM, () -> p.mmap(PAGE, PAGE, Prot.READ_WRITE, flags(MapFlag.FIXED)));
        assertFailsUnchanged(p, Errno.EPERM,
            () -> p.mmap(0, PAGE, Prot.READ_WRITE, flags(MapFlag.FIXED_NOREPLACE)));
    }

    @Test
    void shouldIgnoreAHintBelowMmapMinAddr()
    {
        final UserProcess p = process();

        final long va = p.mmap(PAGE, PAGE, Prot.READ_WRITE, ANON);

        assertThat(va).isGreaterThanOrEqualTo(HostConfig.DEFAULT_MMAP_MIN_ADDR_BYTES);
    }

    @Test
    void shouldFailWithEinvalForUnalignedFixedAddress()
    {
        final UserProcess p = process();

        assertFailsUnchanged(p, Errno.EINVAL,
            () -> p.mmap(FIXED_BASE + 1, PAGE, Prot.READ_WRITE, flags(MapFlag.FIXED)));
    }

    @Test
    void shouldFailWithEnomemForFixedRangePastTaskSize()
    {
        final UserProcess p = process();

        assertFailsUnchanged(p, Errno.ENOMEM,
            () -> p.mmap(UserProcess.TASK_SIZE - PAGE, 2 * PAGE, Prot.READ_WRITE, flags(MapFlag.FIXED)));
    }

    // ------------------------------------------------------------------------------------------------ bad mmap

    @Test
    void shouldFailWithEinvalForZeroLength()
    {
        // mm/mmap.c do_mmap: if (!len) return -EINVAL.
        final UserProcess p = process();

        assertFailsUnchanged(p, Errno.EINVAL, () -> p.mmapAnonymous(0));
    }

    @Test
    void shouldFailWithEnomemForLengthLargerThanTheAddressSpace()
    {
        final UserProcess p = process();

        assertFailsUnchanged(p, Errno.ENOMEM, () -> p.mmapAnonymous(UserProcess.TASK_SIZE));
    }

    @Test
    void shouldFailWithEopnotsuppForMapShared()
    {
        final UserProcess p = process();

        assertFailsUnchanged(p, Errno.EOPNOTSUPP,
            () -> p.mmap(0, PAGE, Prot.READ_WRITE, EnumSet.of(MapFlag.SHARED, MapFlag.ANONYMOUS)));
    }

    @Test
    void shouldFailWithEinvalForBothOrNeitherOfPrivateAndShared()
    {
        final UserProcess p = process();

        assertFailsUnchanged(p, Errno.EINVAL,
            () -> p.mmap(0, PAGE, Prot.READ_WRITE, EnumSet.of(MapFlag.SHARED, MapFlag.PRIVATE, MapFlag.ANONYMOUS)));
        assertFailsUnchanged(p, Errno.EINVAL, () -> p.mmap(0, PAGE, Prot.READ_WRITE, EnumSet.of(MapFlag.ANONYMOUS)));
    }

    // ------------------------------------------------------------------------------------------------ max_map_count

    private static void mapSeparateAreas(final UserProcess p, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            p.mmap(FIXED_BASE + i * 16 * PAGE, 4 * PAGE, Prot.READ_WRITE, flags(MapFlag.FIXED));
        }
    }

    @Test
    void shouldFailWithEnomemWhenMappingWouldExceedMaxMapCount()
    {
        // mm/mmap.c do_mmap: map_count > sysctl_max_map_count is -ENOMEM, checked before the new VMA is added, so
        // the mapping that finds the count at the limit still succeeds and the next one fails.
        final UserProcess p = process(c -> c.maxMapCount(4));
        mapSeparateAreas(p, 5);
        assertThat(p.vmaCount()).isEqualTo(5);

        final KernelException e = assertFailsUnchanged(p, Errno.ENOMEM, () -> p.mmapAnonymous(PAGE));

        assertThat(e.getMessage()).contains("vm.max_map_count");
    }

    @Test
    void shouldFailMunmapWithEnomemWhenSplittingWouldExceedMaxMapCount()
    {
        // mm/vma.c do_vmi_align_munmap: a split with map_count >= sysctl_max_map_count is -ENOMEM.
        final UserProcess p = process(c -> c.maxMapCount(4));
        mapSeparateAreas(p, 4);

        assertFailsUnchanged(p, Errno.ENOMEM, () -> p.munmap(FIXED_BASE + PAGE, PAGE));
    }

    @Test
    void shouldFailMprotectWithEnomemWhenSplittingWouldExceedMaxMapCount()
    {
        final UserProcess p = process(c -> c.maxMapCount(4));
        mapSeparateAreas(p, 3);

        assertFailsUnchanged(p, Errno.ENOMEM, () -> p.mprotect(FIXED_BASE + PAGE, PAGE, READ_ONLY));
    }

    // ------------------------------------------------------------------------------------------------ munmap

    @Test
    void shouldSplitVmaOnPartialMunmap()
    {
        final UserProcess p = process();
        final long va = p.mmap(FIXED_BASE, 4 * PAGE, Prot.READ_WRITE, flags(MapFlag.FIXED));

        p.munmap(va + PAGE, PAGE);

        assertThat(p.vmas()).extracting(Vma::startAddress, Vma::endAddress).containsExactly(
            tuple(va, va + PAGE),
            tuple(va + 2 * PAGE, va + 4 * PAGE));
        assertThat(p.vmaAt(va + PAGE)).isNull();
    }

    @Test
    void shouldFreeFramesOnMunmap()
    {
        final UserProcess p = process(c -> c.thpMode(ThpMode.NEVER));
        final long freeBefore = free(p);
        final long va = p.mmapAnonymous(8 * PAGE);
        p.touch(va, 8 * PAGE, true);

        p.munmap(va, 8 * PAGE);

        assertThat(free(p)).isEqualTo(freeBefore);
        assertThat(p.vmas()).isEmpty();
    }

    @Test
    void shouldSplitThpWhenMunmapCutsIt()
    {
        final UserProcess p = process(c -> c.thpMode(ThpMode.ALWAYS));
        final Host host = p.host();
        final long va = p.mmapAnonymous(2 * MIB);
        p.write(va, ascii("head"));
        p.write(va + 2 * MIB - 4, ascii("tail"));
        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_2M);
        final long freeBefore = free(p);
        final long splitPmd = host.counter(VmEvent.THP_SPLIT_PMD);
        final long splitPage = host.counter(VmEvent.THP_SPLIT_PAGE);

        p.munmap(va + 100 * PAGE, PAGE);

        assertThat(host.counter(VmEvent.THP_SPLIT_PMD)).isEqualTo(splitPmd + 1);
        assertThat(host.counter(VmEvent.THP_SPLIT_PAGE)).isEqualTo(splitPage + 1);
        assertThat(p.vmaCount()).isEqualTo(2);
        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_4K);
        assertThat(free(p)).isEqualTo(freeBefore + 1);
        assertThat(p.read(va, 4)).isEqualTo(ascii("head"));
        assertThat(p.read(va + 2 * MIB - 4, 4)).isEqualTo(ascii("tail"));
    }

    @Test
    void shouldFailMunmapWithEinvalForUnalignedAddressOrZeroLength()
    {
        // mm/vma.c do_vmi_munmap: offset_in_page(start) or len == 0 is -EINVAL.
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);

        assertFailsUnchanged(p, Errno.EINVAL, () -> p.munmap(va + 1, PAGE));
        assertFailsUnchanged(p, Errno.EINVAL, () -> p.munmap(va, 0));
    }

    @Test
    void shouldAcceptMunmapOfAnUnmappedRange()
    {
        final UserProcess p = process();
        final State before = State.of(p);

        p.munmap(FIXED_BASE, 4 * PAGE);

        assertThat(State.of(p)).isEqualTo(before);
    }

    @Test
    void shouldFailMunmapWithEinvalWhenCuttingThroughHugetlbPage()
    {
        // mm/hugetlb.c hugetlb_vm_op_split: a split inside a huge page is -EINVAL.
        final UserProcess p = process(c -> c.hugepages2M(2));
        final long va = p.mmap(0, 4 * MIB, Prot.READ_WRITE, HUGETLB_2M);
        p.touch(va, 4 * MIB, true);

        assertFailsUnchanged(p, Errno.EINVAL, () -> p.munmap(va, PAGE));
    }

    // ------------------------------------------------------------------------------------------------ mprotect

    @Test
    void shouldForbidWritesAfterMprotectReadOnly()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        p.write(va, ascii("data"));

        p.mprotect(va, 4 * PAGE, READ_ONLY);

        assertThat(p.vmaAt(va).permissions()).isEqualTo("r--p");
        assertThat(p.read(va, 4)).isEqualTo(ascii("data"));
        assertErrno(Errno.EFAULT, () -> p.write(va, ascii("nope")));
        assertThat(p.read(va, 4)).isEqualTo(ascii("data"));
    }

    @Test
    void shouldSplitAndMergeVmasWithMprotect()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);

        p.mprotect(va + PAGE, PAGE, READ_ONLY);
        assertThat(p.vmaCount()).isEqualTo(3);

        p.mprotect(va + PAGE, PAGE, Prot.READ_WRITE);
        assertThat(p.vmaCount()).isEqualTo(1);
        p.write(va + PAGE, ascii("ok"));
        assertThat(p.read(va + PAGE, 2)).isEqualTo(ascii("ok"));
    }

    @Test
    void shouldSplitThpPmdWhenMprotectCutsIt()
    {
        final UserProcess p = process(c -> c.thpMode(ThpMode.ALWAYS));
        final long va = p.mmapAnonymous(2 * MIB);
        p.touch(va, 2 * MIB, true);
        final long splits = p.host().counter(VmEvent.THP_SPLIT_PMD);

        p.mprotect(va + PAGE, PAGE, READ_ONLY);

        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_4K);
        assertThat(p.host().counter(VmEvent.THP_SPLIT_PMD)).isEqualTo(splits + 1);
        assertErrno(Errno.EFAULT, () -> p.write(va + PAGE, new byte[] {1}));
        p.write(va, new byte[] {1});
    }

    @Test
    void shouldFailMprotectWithEnomemOnUnmappedRange()
    {
        // mm/mprotect.c do_mprotect_pkey: a hole in the range is -ENOMEM.
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        p.munmap(va + PAGE, PAGE);

        assertFailsUnchanged(p, Errno.ENOMEM, () -> p.mprotect(va, 4 * PAGE, READ_ONLY));
    }

    @Test
    void shouldFailMprotectWithEinvalForUnalignedAddress()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);

        assertFailsUnchanged(p, Errno.EINVAL, () -> p.mprotect(va + 8, PAGE, READ_ONLY));
    }

    // ------------------------------------------------------------------------------------------------ madvise

    @Test
    void shouldReadZerosAfterMadviseDontneed()
    {
        final UserProcess p = process(c -> c.thpMode(ThpMode.NEVER));
        final long va = p.mmapAnonymous(4 * PAGE);
        final long freeBefore = free(p);
        p.write(va, ascii("gone"));
        p.write(va + 3 * PAGE, ascii("gone"));

        p.madvise(va, 4 * PAGE, Madvice.DONTNEED);

        assertThat(free(p)).isEqualTo(freeBefore);
        assertThat(p.translate(va)).isEqualTo(-1);
        assertThat(p.vmaAt(va)).isNotNull();
        assertThat(p.read(va, 4)).containsOnly(0);
        assertThat(p.read(va + 3 * PAGE, 4)).containsOnly(0);
    }

    @Test
    void shouldFreeWholeThpOnMadviseDontneed()
    {
        final UserProcess p = process(c -> c.thpMode(ThpMode.ALWAYS));
        final long va = p.mmapAnonymous(2 * MIB);
        final long freeBefore = free(p);
        p.touch(va, 2 * MIB, true);

        p.madvise(va, 2 * MIB, Madvice.DONTNEED);

        assertThat(free(p)).isEqualTo(freeBefore);
    }

    @Test
    void shouldFailDontneedWithEinvalOnMlockedRange()
    {
        // mm/madvise.c madvise_dontneed_free_valid_vma: VM_LOCKED is refused with -EINVAL.
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        p.write(va, ascii("lock"));
        p.mlock(va, 4 * PAGE);

        assertFailsUnchanged(p, Errno.EINVAL, () -> p.madvise(va, 4 * PAGE, Madvice.DONTNEED));
        assertThat(p.read(va, 4)).isEqualTo(ascii("lock"));
    }

    @Test
    void shouldRoundDontneedEndDownToTheHugePageInHugetlbVma()
    {
        // mm/madvise.c madvise_dontneed_free_valid_vma: for hugetlb the start must be huge-page aligned and the end
        // is rounded *down* to the huge page size ("avoid unexpected data loss"), so a 4 KiB DONTNEED at the start
        // of a 2 MiB page succeeds and frees nothing.
        final UserProcess p = process(c -> c.hugepages2M(2));
        final long va = p.mmap(0, 2 * MIB, Prot.READ_WRITE, HUGETLB_2M);
        p.write(va, ascii("kept"));

        final Throwable thrown = catchThrowable(() -> p.madvise(va, PAGE, Madvice.DONTNEED));

        assertThat(thrown).isNull();
        assertThat(p.read(va, 4)).isEqualTo(ascii("kept"));
    }

    @Test
    void shouldFailMadviseWithEnomemOnUnmappedRange()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        p.munmap(va + 2 * PAGE, PAGE);

        assertFailsUnchanged(p, Errno.ENOMEM, () -> p.madvise(va, 4 * PAGE, Madvice.DONTFORK));
    }

    @Test
    void shouldFailMadviseWithEinvalForUnalignedAddress()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);

        assertFailsUnchanged(p, Errno.EINVAL, () -> p.madvise(va + 1, PAGE, Madvice.DONTFORK));
    }

    @Test
    void shouldUseTwoMibPagesAfterMadviseHugepageInMadviseMode()
    {
        final UserProcess p = process(c -> c.thpMode(ThpMode.MADVISE));
        final long va = p.mmapAnonymous(2 * MIB);
        final long allocs = p.host().counter(VmEvent.THP_FAULT_ALLOC);

        p.madvise(va, 2 * MIB, Madvice.HUGEPAGE);
        p.write(va + 12345, new byte[] {1});

        assertThat(p.vmaAt(va).has(Vma.VM_HUGEPAGE)).isTrue();
        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_2M);
        assertThat(p.host().counter(VmEvent.THP_FAULT_ALLOC)).isEqualTo(allocs + 1);
    }

    @Test
    void shouldUseFourKibPagesWithoutMadviseHugepageInMadviseMode()
    {
        final UserProcess p = process(c -> c.thpMode(ThpMode.MADVISE));
        final long va = p.mmapAnonymous(2 * MIB);

        p.write(va, new byte[] {1});

        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_4K);
    }

    @Test
    void shouldUseFourKibPagesAfterMadviseNohugepageInAlwaysMode()
    {
        final UserProcess p = process(c -> c.thpMode(ThpMode.ALWAYS));
        final long va = p.mmapAnonymous(2 * MIB);

        p.madvise(va, 2 * MIB, Madvice.NOHUGEPAGE);
        p.write(va, new byte[] {1});

        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_4K);
    }

    @Test
    void shouldUseTwoMibPagesByDefaultInAlwaysMode()
    {
        final UserProcess p = process(c -> c.thpMode(ThpMode.ALWAYS));
        final long va = p.mmapAnonymous(2 * MIB);

        p.write(va, new byte[] {1});

        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_2M);
    }

    @Test
    void shouldMarkAndUnmarkVmaWithDontforkAndDofork()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);

        p.madvise(va + PAGE, PAGE, Madvice.DONTFORK);

        assertThat(p.vmaCount()).isEqualTo(3);
        assertThat(p.vmaAt(va + PAGE).has(Vma.VM_DONTCOPY)).isTrue();
        assertThat(p.vmaAt(va).has(Vma.VM_DONTCOPY)).isFalse();

        p.madvise(va + PAGE, PAGE, Madvice.DOFORK);

        assertThat(p.vmaCount()).isEqualTo(1);
        assertThat(p.vmaAt(va + PAGE).has(Vma.VM_DONTCOPY)).isFalse();
    }

    @Test
    void shouldSplitThpPmdWhenMadviseSplitsTheVmaInsideIt()
    {
        // mm/vma.c __split_vma calls vma_adjust_trans_huge(), which splits a PMD mapping straddling the new VMA
        // boundary (split_huge_pmd_if_needed). ibv_dontfork_range on a small MR inside a THP buffer does this.
        final UserProcess p = process(c -> c.thpMode(ThpMode.ALWAYS));
        final long va = p.mmapAnonymous(2 * MIB);
        p.touch(va, 2 * MIB, true);
        final long splits = p.host().counter(VmEvent.THP_SPLIT_PMD);

        p.madvise(va + PAGE, PAGE, Madvice.DONTFORK);

        assertThat(p.vmaCount()).isEqualTo(3);
        assertThat(p.mappedPageSize(va + PAGE)).isEqualTo(PageSize.SIZE_4K);
        assertThat(p.host().counter(VmEvent.THP_SPLIT_PMD)).isEqualTo(splits + 1);
    }

    // ------------------------------------------------------------------------------------------------ mlock

    @Test
    void shouldLockAndPopulateWithMlock()
    {
        final UserProcess p = process(c -> c.thpMode(ThpMode.NEVER));
        final long va = p.mmapAnonymous(8 * PAGE);
        final long freeBefore = free(p);

        p.mlock(va + PAGE, 4 * PAGE);

        assertThat(p.lockedVmPages()).isEqualTo(4);
        assertThat(p.vmaAt(va + PAGE).has(Vma.VM_LOCKED)).isTrue();
        assertThat(p.vmaAt(va).has(Vma.VM_LOCKED)).isFalse();
        assertThat(free(p)).isEqualTo(freeBefore - 4);
        for (int i = 1; i <= 4; i++)
        {
            assertThat(p.translate(va + i * PAGE)).isNotEqualTo(-1);
        }
        assertThat(p.translate(va)).isEqualTo(-1);
    }

    @Test
    void shouldRoundMlockRangeOutToWholePages()
    {
        // mm/mlock.c do_mlock: len = PAGE_ALIGN(len + offset_in_page(start)); start &= PAGE_MASK.
        final UserProcess p = process();
        final long va = p.mmapAnonymous(8 * PAGE);

        p.mlock(va + PAGE + 100, PAGE);

        assertThat(p.lockedVmPages()).isEqualTo(2);
    }

    @Test
    void shouldUnlockWithMunlock()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(8 * PAGE);
        p.mlock(va, 8 * PAGE);

        p.munlock(va, 8 * PAGE);

        assertThat(p.lockedVmPages()).isZero();
        assertThat(p.vmaAt(va).has(Vma.VM_LOCKED)).isFalse();
    }

    @Test
    void shouldFailMlockWithEnomemOverRlimitMemlock()
    {
        // mm/mlock.c do_mlock: locked > lock_limit without CAP_IPC_LOCK is -ENOMEM.
        final UserProcess p = process().rlimitMemlockBytes(4 * PAGE);
        final long va = p.mmapAnonymous(8 * PAGE);

        final KernelException e = assertFailsUnchanged(p, Errno.ENOMEM, () -> p.mlock(va, 5 * PAGE));

        assertThat(e.getMessage()).contains("RLIMIT_MEMLOCK");
        assertThat(p.translate(va)).isEqualTo(-1);
    }

    @Test
    void shouldNotChargeAlreadyLockedPagesTwice()
    {
        // mm/mlock.c do_mlock: count_mm_mlocked_page_nr() subtracts the already locked part.
        final UserProcess p = process().rlimitMemlockBytes(4 * PAGE);
        final long va = p.mmapAnonymous(8 * PAGE);
        p.mlock(va, 2 * PAGE);

        p.mlock(va, 4 * PAGE);

        assertThat(p.lockedVmPages()).isEqualTo(4);
    }

    @Test
    void shouldFailMlockWithEpermWhenRlimitMemlockIsZero()
    {
        // mm/mlock.c can_do_mlock: RLIMIT_MEMLOCK 0 and no CAP_IPC_LOCK is -EPERM.
        final UserProcess p = process().rlimitMemlockBytes(0);
        final long va = p.mmapAnonymous(4 * PAGE);

        assertFailsUnchanged(p, Errno.EPERM, () -> p.mlock(va, PAGE));
    }

    @Test
    void shouldBypassRlimitMemlockForMlockWithCapIpcLock()
    {
        final UserProcess p = process().rlimitMemlockBytes(0).capIpcLock(true);
        final long va = p.mmapAnonymous(16 * PAGE);

        p.mlock(va, 16 * PAGE);

        assertThat(p.lockedVmPages()).isEqualTo(16);
    }

    @Test
    void shouldFailMlockWithEnomemOnUnmappedRange()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        p.munmap(va + PAGE, PAGE);

        assertFailsUnchanged(p, Errno.ENOMEM, () -> p.mlock(va, 4 * PAGE));
    }

    @Test
    void shouldDropLockedVmWhenLockedRangeIsUnmapped()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(8 * PAGE);
        p.mlock(va, 8 * PAGE);

        p.munmap(va, 4 * PAGE);

        assertThat(p.lockedVmPages()).isEqualTo(4);
    }

    @Test
    void shouldFailMlockWithEagainWhenMemoryRunsOutWhilePopulating()
    {
        // mm/mlock.c do_mlock -> __mm_populate fails with -ENOMEM, which __mlock_posix_error_return() turns into
        // -EAGAIN ("some or all of the range could not be locked", mlock(2)).
        final UserProcess p = new Host(HostConfig.builder().physicalMemoryBytes(64 * MIB).overcommitMemory(1).build())
            .spawn("app").capIpcLock(true);
        final long va = p.mmapAnonymous(128 * MIB);

        assertErrno(Errno.EAGAIN, () -> p.mlock(va, 128 * MIB));
    }

    @Test
    void shouldRejectNegativeRlimitMemlockWithEinval()
    {
        final UserProcess p = process();

        assertErrno(Errno.EINVAL, () -> p.rlimitMemlockBytes(-2));
        assertThat(p.rlimitMemlockBytes()).isEqualTo(UserProcess.DEFAULT_RLIMIT_MEMLOCK_BYTES);
    }
}
