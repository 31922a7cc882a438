package dev.rnicsim.pagetable;

import static dev.rnicsim.pagetable.KernelAssertions.ascii;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.EnumSet;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.Test;

/**
 * fork(): copy-on-write sharing, and what happens to DMA-pinned pages on a modern kernel (copied for the child at
 * fork) and on a legacy one (the classic RDMA fork bug, and MADV_DONTFORK as its workaround).
 */
class ForkTest
{
    private static final long MIB = 1L << 20;
    private static final long PAGE = PhysicalMemory.FRAME_BYTES;

    private static UserProcess process(final ForkBehaviour behaviour, final UnaryOperator<HostConfig.Builder> config)
    {
        return new Host(config.apply(HostConfig.builder().physicalMemoryBytes(256 * MIB).thpMode(ThpMode.NEVER)
            .forkBehaviour(behaviour)).build()).spawn("parent").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
    }

    private static UserProcess process(final ForkBehaviour behaviour)
    {
        return process(behaviour, c -> c);
    }

    private static byte[] physRead(final UserProcess p, final long physAddr, final int length)
    {
        final byte[] out = new byte[length];
        p.host().physicalMemory().read(physAddr, out, 0, length);
        return out;
    }

    private static void dmaWrite(final UserProcess p, final long physAddr, final byte[] data)
    {
        p.host().physicalMemory().write(physAddr, data, 0, data.length);
    }

    private static int mapCount(final UserProcess p, final long va)
    {
        return p.host().physicalMemory().mapCount(p.translate(va) >>> 12);
    }

    // ------------------------------------------------------------------------------------------------ plain COW

    @Test
    void shouldShareUnpinnedPagesCopyOnWriteUntilWritten()
    {
        final UserProcess parent = process(ForkBehaviour.MODERN);
        final Host host = parent.host();
        final long va = parent.mmapAnonymous(PAGE);
        parent.write(va, ascii("v1"));
        final long phys = parent.translate(va);

        final UserProcess child = parent.fork("child");

        assertThat(child.translate(va)).isEqualTo(phys);
        assertThat(mapCount(parent, va)).isEqualTo(2);
        final long copies = host.counter(VmEvent.COW_COPY);

        child.write(va, ascii("c2"));

        assertThat(child.translate(va)).isNotEqualTo(phys);
        assertThat(parent.translate(va)).isEqualTo(phys);
        assertThat(mapCount(parent, va)).isEqualTo(1);
        assertThat(mapCount(child, va)).isEqualTo(1);
        assertThat(host.counter(VmEvent.COW_COPY)).isEqualTo(copies + 1);
        assertThat(parent.read(va, 2)).isEqualTo(ascii("v1"));
        assertThat(child.read(va, 2)).isEqualTo(ascii("c2"));
    }

    @Test
    void shouldReuseTheFrameWithoutCopyWhenTheLastSharerWrites()
    {
        final UserProcess parent = process(ForkBehaviour.MODERN);
        final Host host = parent.host();
        final long va = parent.mmapAnonymous(PAGE);
        parent.write(va, ascii("v1"));
        final long phys = parent.translate(va);
        final UserProcess child = parent.fork("child");
        child.write(va, ascii("c2"));
        final long copies = host.counter(VmEvent.COW_COPY);
        final long faults = host.counter(VmEvent.PGFAULT);

        parent.write(va, ascii("p2"));

        assertThat(parent.translate(va)).isEqualTo(phys);
        assertThat(host.counter(VmEvent.COW_COPY)).isEqualTo(copies);
        assertThat(host.counter(VmEvent.PGFAULT)).isEqualTo(faults + 1);
    }

    @Test
    void shouldDropSharingWhenTheChildExits()
    {
        final UserProcess parent = process(ForkBehaviour.MODERN);
        final long freeAtStart = parent.host().physicalMemory().freeFrames();
        final long va = parent.mmapAnonymous(4 * PAGE);
        parent.touch(va, 4 * PAGE, true);
        final UserProcess child = parent.fork("child");

        child.exit();

        assertThat(mapCount(parent, va)).isEqualTo(1);
        assertThat(parent.host().processes()).containsExactly(parent);
        parent.munmap(va, 4 * PAGE);
        assertThat(parent.host().physicalMemory().freeFrames()).isEqualTo(freeAtStart);
    }

    @Test
    void shouldNotInheritPinnedVmOrMlockButInheritLimits()
    {
        final UserProcess parent = process(ForkBehaviour.MODERN).rlimitMemlockBytes(64 * PAGE).capIpcLock(true);
        final long va = parent.mmapAnonymous(8 * PAGE);
        parent.mlock(va, 4 * PAGE);
        parent.pinUserPages(va + 4 * PAGE, 4 * PAGE, true, true);

        final UserProcess child = parent.fork("child");

        assertThat(child.pinnedVmPages()).isZero();
        assertThat(child.lockedVmPages()).isZero();
        assertThat(child.rlimitMemlockBytes()).isEqualTo(64 * PAGE);
        assertThat(child.capIpcLock()).isTrue();
        assertThat(child.pid()).isNotEqualTo(parent.pid());
        assertThat(child.name()).isEqualTo("child");
    }

    // ------------------------------------------------------------------------------------------------ modern kernel

    @Test
    void shouldGiveTheChildACopyOfAPinnedPageOnAModernKernel()
    {
        // mm/memory.c copy_present_pte -> copy_present_page: a maybe-DMA-pinned anon page is copied for the child.
        final UserProcess parent = process(ForkBehaviour.MODERN);
        final Host host = parent.host();
        final long va = parent.mmapAnonymous(PAGE);
        parent.write(va, ascii("before-fork"));
        final PinnedPages pin = parent.pinUserPages(va, PAGE, true, true);
        final long pinned = pin.runs().get(0).physAddr();
        final long copies = host.counter(VmEvent.COW_COPY);

        final UserProcess child = parent.fork("child");

        assertThat(parent.translate(va)).isEqualTo(pinned);
        assertThat(child.translate(va)).isNotEqualTo(pinned).isNotEqualTo(-1);
        assertThat(child.read(va, 11)).isEqualTo(ascii("before-fork"));
        assertThat(mapCount(parent, va)).isEqualTo(1);
        assertThat(mapCount(child, va)).isEqualTo(1);
        assertThat(host.counter(VmEvent.COW_COPY)).isEqualTo(copies + 1);
    }

    @Test
    void shouldKeepParentAndDeviceOnThePinnedFrameAfterForkOnAModernKernel()
    {
        final UserProcess parent = process(ForkBehaviour.MODERN);
        final long va = parent.mmapAnonymous(PAGE);
        parent.write(va, ascii("v1"));
        final PinnedPages pin = parent.pinUserPages(va, PAGE, true, true);
        final long pinned = pin.runs().get(0).physAddr();
        final UserProcess child = parent.fork("child");

        parent.write(va, ascii("v2"));
        dmaWrite(parent, pinned + 8, ascii("nic"));

        assertThat(parent.translate(va)).isEqualTo(pinned);
        assertThat(physRead(parent, pinned, 2)).isEqualTo(ascii("v2"));
        assertThat(parent.read(va + 8, 3)).isEqualTo(ascii("nic"));
        assertThat(child.read(va, 2)).isEqualTo(ascii("v1"));
        assertThat(child.read(va + 8, 3)).containsOnly(0);
    }

    @Test
    void shouldGiveTheChildACopyOfAPinnedHugetlbPageOnAModernKernel()
    {
        // mm/hugetlb.c copy_hugetlb_page_range: a maybe-pinned anon hugetlb page is copied into a new pool page.
        final UserProcess parent = process(ForkBehaviour.MODERN, c -> c.hugepages2M(2));
        final Host host = parent.host();
        final long va = parent.mmap(0, 2 * MIB, Prot.READ_WRITE,
            EnumSet.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.HUGETLB));
        parent.write(va + MIB, ascii("huge"));
        final PinnedPages pin = parent.pinUserPages(va, 2 * MIB, true, true);

        final UserProcess child = parent.fork("child");

        assertThat(parent.translate(va)).isEqualTo(pin.runs().get(0).physAddr());
        assertThat(child.translate(va)).isNotEqualTo(parent.translate(va));
        assertThat(child.mappedPageSize(va)).isEqualTo(PageSize.SIZE_2M);
        assertThat(child.read(va + MIB, 4)).isEqualTo(ascii("huge"));
        assertThat(host.hugepagesFree(PageSize.SIZE_2M)).isZero();
    }

    // ------------------------------------------------------------------------------------------------ legacy kernel

    @Test
    void shouldMoveTheParentToANewFrameOnWriteAfterForkOnALegacyKernel()
    {
        // The classic RDMA fork bug (pre-5.9 kernels): the pinned page is COW-shared, the parent's first write
        // copies it, and the NIC keeps reading and writing the old frame, which now belongs to the child.
        final UserProcess parent = process(ForkBehaviour.LEGACY);
        final long va = parent.mmapAnonymous(PAGE);
        parent.write(va, ascii("old"));
        final PinnedPages pin = parent.pinUserPages(va, PAGE, true, true);
        final long pinned = pin.runs().get(0).physAddr();
        final UserProcess child = parent.fork("child");
        assertThat(child.translate(va)).isEqualTo(pinned);

        parent.write(va, ascii("new"));

        assertThat(parent.translate(va)).isNotEqualTo(pinned);
        assertThat(physRead(parent, pinned, 3)).isEqualTo(ascii("old"));
        assertThat(child.translate(va)).isEqualTo(pinned);
        dmaWrite(parent, pinned, ascii("nic"));
        assertThat(parent.read(va, 3)).isEqualTo(ascii("new"));
        assertThat(child.read(va, 3)).isEqualTo(ascii("nic"));
    }

    @Test
    void shouldGiveTheChildNoMappingOfADontforkRangeOnALegacyKernel()
    {
        // ibv_fork_init(): every registration calls madvise(MADV_DONTFORK) on its range first.
        final UserProcess parent = process(ForkBehaviour.LEGACY);
        final long va = parent.mmapAnonymous(4 * PAGE);
        parent.madvise(va, PAGE, Madvice.DONTFORK);
        parent.write(va, ascii("old"));
        final PinnedPages pin = parent.pinUserPages(va, PAGE, true, true);
        final long pinned = pin.runs().get(0).physAddr();

        final UserProcess child = parent.fork("child");

        assertThat(child.vmaAt(va)).isNull();
        assertThat(child.vmaAt(va + PAGE)).isNotNull();
        final Throwable thrown = catchThrowable(() -> child.read(va, 1));
        assertThat(thrown).isInstanceOf(SegmentationFault.class);
        assertThat(((KernelException)thrown).errno()).isEqualTo(Errno.EFAULT);

        parent.write(va, ascii("new"));

        assertThat(parent.translate(va)).isEqualTo(pinned);
        assertThat(physRead(parent, pinned, 3)).isEqualTo(ascii("new"));
        assertThat(mapCount(parent, va)).isEqualTo(1);
    }

    // ------------------------------------------------------------------------------------------------ THP and VMAs

    @Test
    void shouldReleaseEveryFrameAfterForkOfAThpSplitByDontfork()
    {
        // madvise(MADV_DONTFORK) on a 4 KiB page inside a THP splits the VMA, and with it the PMD (mm/vma.c
        // __split_vma -> vma_adjust_trans_huge). fork then copies the PTEs of the copied VMAs once each; after the
        // child exits and the parent unmaps, every frame must be free again.
        final UserProcess parent = process(ForkBehaviour.MODERN, c -> c.thpMode(ThpMode.ALWAYS));
        final PhysicalMemory pm = parent.host().physicalMemory();
        final long freeAtStart = pm.freeFrames();
        final long va = parent.mmapAnonymous(2 * MIB);
        parent.touch(va, 2 * MIB, true);
        parent.madvise(va + PAGE, PAGE, Madvice.DONTFORK);

        final UserProcess child = parent.fork("child");
        assertThat(mapCount(parent, va + 2 * PAGE)).isEqualTo(2);
        child.exit();
        parent.munmap(va, 2 * MIB);

        assertThat(pm.freeFrames()).isEqualTo(freeAtStart);
    }

    @Test
    void shouldReleaseEveryFrameAfterCopyOnWriteOfASharedThp()
    {
        // A write to one 4 KiB page of a THP shared after fork splits the writer's PMD and copies that page
        // (mm/huge_memory.c do_huge_pmd_wp_page falls back to a PTE fault); the folio stays fully mapped by the
        // other process, so it is not split, and munmap of its PMD mapping frees all 512 frames.
        final UserProcess parent = process(ForkBehaviour.MODERN, c -> c.thpMode(ThpMode.ALWAYS));
        final PhysicalMemory pm = parent.host().physicalMemory();
        final long freeAtStart = pm.freeFrames();
        final long va = parent.mmapAnonymous(2 * MIB);
        parent.touch(va, 2 * MIB, true);
        final UserProcess child = parent.fork("child");
        child.write(va + PAGE, ascii("x"));

        child.exit();
        parent.munmap(va, 2 * MIB);

        assertThat(pm.freeFrames()).isEqualTo(freeAtStart);
    }

    @Test
    void shouldShareAThpWithTheChildAndCopyOnlyTheWrittenPage()
    {
        final UserProcess parent = process(ForkBehaviour.MODERN, c -> c.thpMode(ThpMode.ALWAYS));
        final Host host = parent.host();
        final long va = parent.mmapAnonymous(2 * MIB);
        parent.write(va, ascii("thp"));
        final UserProcess child = parent.fork("child");
        final long copies = host.counter(VmEvent.COW_COPY);

        child.write(va + PAGE, ascii("x"));

        assertThat(host.counter(VmEvent.COW_COPY)).isEqualTo(copies + 1);
        assertThat(child.mappedPageSize(va)).isEqualTo(PageSize.SIZE_4K);
        assertThat(child.translate(va)).isEqualTo(parent.translate(va));
        assertThat(child.read(va, 3)).isEqualTo(ascii("thp"));
        assertThat(parent.read(va + PAGE, 1)).containsOnly(0);
    }
}
