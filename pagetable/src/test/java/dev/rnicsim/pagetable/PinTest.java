package dev.rnicsim.pagetable;

import static dev.rnicsim.pagetable.KernelAssertions.assertErrno;
import static dev.rnicsim.pagetable.KernelAssertions.ascii;

import dev.rnicsim.pagetable.KernelAssertions.State;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/**
 * pin_user_pages with ib_umem_get's accounting: runs, page sizes, pinned_vm against RLIMIT_MEMLOCK, long-term
 * migration out of ZONE_MOVABLE, pinned frames surviving munmap and exit, and unpinning.
 */
class PinTest
{
    private static final long MIB = 1L << 20;
    private static final long GIB = 1L << 30;
    private static final long PAGE = PhysicalMemory.FRAME_BYTES;
    private static final long HUGE = PageSize.SIZE_2M.bytes();

    private static final Set<MapFlag> HUGETLB_2M = EnumSet.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.HUGETLB);

    private static UserProcess process(final UnaryOperator<HostConfig.Builder> config)
    {
        return new Host(config.apply(HostConfig.builder().physicalMemoryBytes(256 * MIB)).build()).spawn("app")
            .rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
    }

    private static UserProcess process()
    {
        return process(c -> c.thpMode(ThpMode.NEVER));
    }

    /** 512 MiB with the top 256 MiB as ZONE_MOVABLE. */
    private static UserProcess movableProcess(final ThpMode thp)
    {
        return process(c -> c.physicalMemoryBytes(512 * MIB).movableZoneBytes(256 * MIB).thpMode(thp));
    }

    private static KernelException assertFailsUnchanged(final UserProcess p, final Errno errno,
        final ThrowingCallable call)
    {
        final State before = State.of(p);
        final KernelException e = assertErrno(errno, call);
        assertThat(State.of(p)).isEqualTo(before);
        return e;
    }

    private static byte[] physRead(final UserProcess p, final long physAddr, final int length)
    {
        final byte[] out = new byte[length];
        p.host().physicalMemory().read(physAddr, out, 0, length);
        return out;
    }

    private static Zone zoneOf(final UserProcess p, final long va)
    {
        return p.host().physicalMemory().zoneOf(p.translate(va) >>> 12);
    }

    /**
     * The runs, walked in order, must give exactly what the page table translates each pinned page to, and no two
     * neighbouring runs may be mergeable (same page size, physically adjacent).
     */
    private static void assertRunsMatchPageTable(final UserProcess p, final PinnedPages pin)
    {
        long va = pin.startAddress();
        for (final PhysRun run : pin.runs())
        {
            for (long f = 0; f < run.frames(); f++)
            {
                assertThat(p.translate(va)).as("va 0x%x", va).isEqualTo(run.physAddr() + f * PAGE);
                va += PAGE;
            }
        }
        assertThat(va).isEqualTo(pin.startAddress() + pin.lengthBytes());
        final List<PhysRun> runs = pin.runs();
        for (int i = 1; i < runs.size(); i++)
        {
            final PhysRun a = runs.get(i - 1);
            final PhysRun b = runs.get(i);
            assertThat(a.physAddr() + a.lengthBytes() == b.physAddr() && a.pageSizeBytes() == b.pageSizeBytes())
                .as("runs %s and %s should have been merged", a, b).isFalse();
        }
    }

    // ------------------------------------------------------------------------------------------------ runs

    @Test
    void shouldMergePhysicallyContiguousPagesIntoOneRun()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(16 * PAGE);
        p.touch(va, 16 * PAGE, true);

        final PinnedPages pin = p.pinUserPages(va, 16 * PAGE, true, true);

        assertThat(pin.runs()).singleElement().satisfies(r ->
        {
            assertThat(r.lengthBytes()).isEqualTo(16 * PAGE);
            assertThat(r.pageSizeBytes()).isEqualTo(PAGE);
        });
        assertRunsMatchPageTable(p, pin);
    }

    @Test
    void shouldSplitRunsWherePagesAreNotPhysicallyContiguous()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        // Touch order 0, 2, 1, 3 gives frames n, n+2, n+1, n+3: no two virtual neighbours are physical neighbours.
        for (final int i : new int[] {0, 2, 1, 3})
        {
            p.touch(va + i * PAGE, PAGE, true);
        }

        final PinnedPages pin = p.pinUserPages(va, 4 * PAGE, true, true);

        assertThat(pin.runs()).hasSize(4);
        assertRunsMatchPageTable(p, pin);
    }

    @Test
    void shouldWidenAnUnalignedPinToWholePages()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);

        final PinnedPages pin = p.pinUserPages(va + 100, PAGE, true, true);

        assertThat(pin.startAddress()).isEqualTo(va);
        assertThat(pin.pageCount()).isEqualTo(2);
        assertThat(p.pinnedVmPages()).isEqualTo(2);
        assertRunsMatchPageTable(p, pin);
    }

    @Test
    void shouldReportTwoMibRunsForThp()
    {
        final UserProcess p = process(c -> c.thpMode(ThpMode.ALWAYS));
        final long va = p.mmapAnonymous(4 * MIB);
        p.touch(va, 4 * MIB, true);

        final PinnedPages pin = p.pinUserPages(va, 4 * MIB, true, true);

        assertThat(pin.runs()).allSatisfy(r ->
        {
            assertThat(r.pageSizeBytes()).isEqualTo(HUGE);
            assertThat(r.physAddr() % HUGE).isZero();
        });
        assertThat(pin.runs().stream().mapToLong(PhysRun::lengthBytes).sum()).isEqualTo(4 * MIB);
        assertRunsMatchPageTable(p, pin);
    }

    @Test
    void shouldReportTwoMibRunsForHugetlb()
    {
        final UserProcess p = process(c -> c.hugepages2M(4));
        final long va = p.mmap(0, 4 * MIB, Prot.READ_WRITE, HUGETLB_2M);

        final PinnedPages pin = p.pinUserPages(va, 4 * MIB, true, true);

        assertThat(pin.runs()).allSatisfy(r -> assertThat(r.pageSizeBytes()).isEqualTo(HUGE));
        assertThat(p.host().hugepagesReserved(PageSize.SIZE_2M)).isZero();
        assertThat(p.host().hugepagesFree(PageSize.SIZE_2M)).isEqualTo(2);
        assertRunsMatchPageTable(p, pin);
    }

    @Test
    void shouldReportOneGibRunForOneGibHugetlb()
    {
        final UserProcess p = process(c -> c.physicalMemoryBytes(2 * GIB).hugepages1G(1));
        final long va = p.mmap(0, GIB, Prot.READ_WRITE,
            EnumSet.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.HUGETLB, MapFlag.HUGE_1GB));

        final PinnedPages pin = p.pinUserPages(va, GIB, true, true);

        assertThat(pin.runs()).singleElement().satisfies(r ->
        {
            assertThat(r.pageSizeBytes()).isEqualTo(GIB);
            assertThat(r.lengthBytes()).isEqualTo(GIB);
            assertThat(r.physAddr() % GIB).isZero();
        });
        assertThat(p.pinnedVmPages()).isEqualTo(GIB / PAGE);
    }

    @Test
    void shouldFaultUntouchedPagesInWhenPinning()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(8 * PAGE);
        final long free = p.host().physicalMemory().freeFrames();

        final PinnedPages pin = p.pinUserPages(va, 8 * PAGE, true, true);

        assertThat(p.host().physicalMemory().freeFrames()).isEqualTo(free - 8);
        assertRunsMatchPageTable(p, pin);
        assertThat(p.host().physicalMemory().pinCount(p.translate(va) >>> 12)).isEqualTo(1);
    }

    // ------------------------------------------------------------------------------------------------ pinned_vm

    @Test
    void shouldChargePinnedVmAndReleaseItOnUnpin()
    {
        final UserProcess p = process();
        final Host host = p.host();
        final long va = p.mmapAnonymous(16 * PAGE);

        final PinnedPages pin = p.pinUserPages(va, 16 * PAGE, true, true);

        assertThat(p.pinnedVmPages()).isEqualTo(16);
        assertThat(host.counter(VmEvent.NR_FOLL_PIN_ACQUIRED)).isEqualTo(16);

        p.unpinUserPages(pin);

        assertThat(p.pinnedVmPages()).isZero();
        assertThat(host.counter(VmEvent.NR_FOLL_PIN_RELEASED)).isEqualTo(16);
        assertThat(host.physicalMemory().pinCount(p.translate(va) >>> 12)).isZero();
    }

    @Test
    void shouldAllowPinningUpToExactlyRlimitMemlock()
    {
        // drivers/infiniband/core/umem.c ib_umem_get: fails only when new_pinned > lock_limit.
        final UserProcess p = process().rlimitMemlockBytes(16 * PAGE);
        final long va = p.mmapAnonymous(32 * PAGE);

        p.pinUserPages(va, 16 * PAGE, true, true);

        assertThat(p.pinnedVmPages()).isEqualTo(16);
        assertFailsUnchanged(p, Errno.ENOMEM, () -> p.pinUserPages(va + 16 * PAGE, PAGE, true, true));
    }

    @Test
    void shouldFailWithEnomemWhenPinnedVmWouldExceedMemlock()
    {
        final UserProcess p = process().rlimitMemlockBytes(8 * PAGE);
        final long va = p.mmapAnonymous(32 * PAGE);
        p.pinUserPages(va, 4 * PAGE, true, true);

        final KernelException e = assertFailsUnchanged(p, Errno.ENOMEM,
            () -> p.pinUserPages(va + 4 * PAGE, 5 * PAGE, true, true));

        assertThat(e.getMessage()).contains("pinned_vm").contains("RLIMIT_MEMLOCK");
        assertThat(p.pinnedVmPages()).isEqualTo(4);
        assertThat(p.translate(va + 4 * PAGE)).as("nothing faulted in").isEqualTo(-1);
    }

    @Test
    void shouldFailWithEpermWhenRlimitMemlockIsZeroWithoutCapIpcLock()
    {
        // ib_umem_get: !can_do_mlock() is -EPERM.
        final UserProcess p = process().rlimitMemlockBytes(0);
        final long va = p.mmapAnonymous(4 * PAGE);

        assertFailsUnchanged(p, Errno.EPERM, () -> p.pinUserPages(va, PAGE, true, true));
    }

    @Test
    void shouldCheckCanDoMlockBeforeLookingAtTheRange()
    {
        // ib_umem_get checks can_do_mlock() (-EPERM) before pin_user_pages_fast walks the range (-EFAULT).
        final UserProcess p = process().rlimitMemlockBytes(0);

        assertFailsUnchanged(p, Errno.EPERM, () -> p.pinUserPages(0x1000_0000L, PAGE, true, true));
    }

    @Test
    void shouldBypassRlimitMemlockWithCapIpcLockButStillChargePinnedVm()
    {
        final UserProcess p = process().rlimitMemlockBytes(0).capIpcLock(true);
        final long va = p.mmapAnonymous(64 * PAGE);

        final PinnedPages pin = p.pinUserPages(va, 64 * PAGE, true, true);

        assertThat(pin.pageCount()).isEqualTo(64);
        assertThat(p.pinnedVmPages()).isEqualTo(64);
    }

    @Test
    void shouldBypassAnExceededRlimitMemlockWithCapIpcLock()
    {
        final UserProcess p = process().rlimitMemlockBytes(PAGE).capIpcLock(true);
        final long va = p.mmapAnonymous(64 * PAGE);

        p.pinUserPages(va, 64 * PAGE, true, true);

        assertThat(p.pinnedVmPages()).isEqualTo(64);
    }

    // ------------------------------------------------------------------------------------------------ bad pins

    @Test
    void shouldFailWithEfaultWhenPinningAnUnmappedRange()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);

        assertFailsUnchanged(p, Errno.EFAULT, () -> p.pinUserPages(va, 5 * PAGE, true, true));
        assertThat(p.translate(va)).isEqualTo(-1);
    }

    @Test
    void shouldFailWithEfaultForWritePinOfReadOnlyMapping()
    {
        // mm/gup.c check_vma_flags: FOLL_WRITE on a VMA without VM_WRITE is -EFAULT.
        final UserProcess p = process();
        final long va = p.mmap(0, 4 * PAGE, Set.of(Prot.READ), EnumSet.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS));

        assertFailsUnchanged(p, Errno.EFAULT, () -> p.pinUserPages(va, PAGE, true, true));
    }

    @Test
    void shouldAllowReadPinOfReadOnlyMapping()
    {
        final UserProcess p = process();
        final long va = p.mmap(0, 4 * PAGE, Set.of(Prot.READ), EnumSet.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS));

        final PinnedPages pin = p.pinUserPages(va, 4 * PAGE, false, true);

        assertThat(pin.pageCount()).isEqualTo(4);
    }

    @Test
    void shouldFailWithEinvalForZeroLengthPin()
    {
        // ib_umem_get: npages == 0 is -EINVAL.
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);

        assertFailsUnchanged(p, Errno.EINVAL, () -> p.pinUserPages(va, 0, true, true));
    }

    // ------------------------------------------------------------------------------------------------ ZONE_MOVABLE

    @Test
    void shouldMigrateLongtermPinnedPagesOutOfZoneMovableKeepingTheData()
    {
        final UserProcess p = movableProcess(ThpMode.NEVER);
        final Host host = p.host();
        final PhysicalMemory pm = host.physicalMemory();
        final long va = p.mmapAnonymous(4 * PAGE);
        for (int i = 0; i < 4; i++)
        {
            p.write(va + i * PAGE, ascii("page" + i));
            assertThat(zoneOf(p, va + i * PAGE)).isEqualTo(Zone.MOVABLE);
        }
        final long freeMovable = pm.zoneFreeFrames(Zone.MOVABLE);
        final long freeNormal = pm.zoneFreeFrames(Zone.NORMAL);
        final long oldPhys = p.translate(va);

        final PinnedPages pin = p.pinUserPages(va, 4 * PAGE, true, true);

        for (int i = 0; i < 4; i++)
        {
            assertThat(zoneOf(p, va + i * PAGE)).isEqualTo(Zone.NORMAL);
            assertThat(p.read(va + i * PAGE, 5)).isEqualTo(ascii("page" + i));
        }
        assertThat(pin.runs()).allSatisfy(r -> assertThat(pm.zoneOf(r.firstPfn())).isEqualTo(Zone.NORMAL));
        assertThat(physRead(p, pin.runs().get(0).physAddr(), 5)).isEqualTo(ascii("page0"));
        assertThat(host.counter(VmEvent.PGMIGRATE_SUCCESS)).isEqualTo(4);
        assertThat(host.counter(VmEvent.PGMIGRATE_LONGTERM_PIN)).isEqualTo(4);
        assertThat(pm.zoneFreeFrames(Zone.MOVABLE)).isEqualTo(freeMovable + 4);
        assertThat(pm.zoneFreeFrames(Zone.NORMAL)).isEqualTo(freeNormal - 4);
        assertThat(pm.isAllocated(oldPhys >>> 12)).isFalse();
        assertRunsMatchPageTable(p, pin);
    }

    @Test
    void shouldLeaveShortTermPinnedPagesInZoneMovable()
    {
        final UserProcess p = movableProcess(ThpMode.NEVER);
        final long va = p.mmapAnonymous(4 * PAGE);
        p.touch(va, 4 * PAGE, true);
        final long phys = p.translate(va);

        p.pinUserPages(va, 4 * PAGE, true, false);

        assertThat(p.translate(va)).isEqualTo(phys);
        assertThat(zoneOf(p, va)).isEqualTo(Zone.MOVABLE);
        assertThat(p.host().counter(VmEvent.PGMIGRATE_SUCCESS)).isZero();
    }

    @Test
    void shouldFaultLongtermPinnedPagesDirectlyIntoZoneNormal()
    {
        // mm/gup.c __gup_longterm_locked runs under memalloc_pin_save(): pages faulted in avoid movable zones.
        final UserProcess p = movableProcess(ThpMode.NEVER);
        final long va = p.mmapAnonymous(4 * PAGE);

        p.pinUserPages(va, 4 * PAGE, true, true);

        assertThat(zoneOf(p, va)).isEqualTo(Zone.NORMAL);
        assertThat(p.host().counter(VmEvent.PGMIGRATE_SUCCESS)).isZero();
    }

    @Test
    void shouldMigrateThpAsAWholeForLongtermPin()
    {
        final UserProcess p = movableProcess(ThpMode.ALWAYS);
        final Host host = p.host();
        final long va = p.mmapAnonymous(2 * MIB);
        p.write(va + MIB, ascii("middle"));
        assertThat(zoneOf(p, va)).isEqualTo(Zone.MOVABLE);

        final PinnedPages pin = p.pinUserPages(va, 2 * MIB, true, true);

        assertThat(zoneOf(p, va)).isEqualTo(Zone.NORMAL);
        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_2M);
        assertThat(pin.runs()).singleElement().satisfies(r -> assertThat(r.pageSizeBytes()).isEqualTo(HUGE));
        assertThat(p.read(va + MIB, 6)).isEqualTo(ascii("middle"));
        assertThat(host.counter(VmEvent.PGMIGRATE_LONGTERM_PIN)).isEqualTo(512);
        assertThat(host.counter(VmEvent.THP_SPLIT_PAGE)).isZero();
    }

    @Test
    void shouldFailWithEnomemWhenLongtermPinCannotMigrateAShortTermPinnedPage()
    {
        // mm/gup.c migrate_longterm_unpinnable_folios: when migrate_pages() fails (the extra pin reference makes
        // the folio unmigratable) the whole pin is undone and the error is -ENOMEM.
        final UserProcess p = movableProcess(ThpMode.NEVER);
        final long va = p.mmapAnonymous(PAGE);
        p.write(va, ascii("held"));
        p.pinUserPages(va, PAGE, true, false);
        final long phys = p.translate(va);

        assertFailsUnchanged(p, Errno.ENOMEM, () -> p.pinUserPages(va, PAGE, true, true));
        assertThat(p.translate(va)).isEqualTo(phys);
        assertThat(p.host().physicalMemory().pinCount(phys >>> 12)).isEqualTo(1);
    }

    @Test
    void shouldReleaseEarlierPinsWhenALongtermPinFailsPartWay()
    {
        // 128 MiB host: 64 MiB ZONE_NORMAL, 64 MiB ZONE_MOVABLE, no swap. Memory is filled so that exactly two
        // ZONE_NORMAL frames are free; pinning four ZONE_MOVABLE pages migrates two and then runs out.
        final UserProcess p = new Host(HostConfig.builder().physicalMemoryBytes(128 * MIB).movableZoneBytes(64 * MIB)
            .thpMode(ThpMode.NEVER).build()).spawn("app").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        final PhysicalMemory pm = p.host().physicalMemory();
        final long va = p.mmapAnonymous(128 * MIB);
        p.touch(va, 128 * MIB - 2 * PAGE, true);
        assertThat(pm.zoneFreeFrames(Zone.NORMAL)).isEqualTo(2);
        assertThat(zoneOf(p, va)).isEqualTo(Zone.MOVABLE);
        final State before = State.of(p);

        assertErrno(Errno.ENOMEM, () -> p.pinUserPages(va, 4 * PAGE, true, true));

        assertThat(State.of(p)).isEqualTo(before);
        assertThat(p.pinnedVmPages()).isZero();
        for (int i = 0; i < 4; i++)
        {
            assertThat(pm.pinCount(p.translate(va + i * PAGE) >>> 12)).isZero();
        }
    }

    // ------------------------------------------------------------------------------------------------ THP splits

    @Test
    void shouldNotSplitAPinnedThpThatIsPartlyUnmapped()
    {
        final UserProcess p = process(c -> c.thpMode(ThpMode.ALWAYS));
        final Host host = p.host();
        final long va = p.mmapAnonymous(2 * MIB);
        p.touch(va, 2 * MIB, true);
        final PinnedPages pin = p.pinUserPages(va, 2 * MIB, true, true);
        final long free = host.physicalMemory().freeFrames();
        final long head = p.translate(va) >>> 12;

        p.munmap(va, PAGE);

        assertThat(host.counter(VmEvent.THP_SPLIT_PMD)).isEqualTo(1);
        assertThat(host.counter(VmEvent.THP_SPLIT_PAGE)).isZero();
        assertThat(host.counter(VmEvent.THP_SPLIT_PAGE_FAILED)).isEqualTo(1);
        assertThat(host.physicalMemory().freeFrames()).isEqualTo(free);
        assertThat(host.physicalMemory().folioSize(head)).isEqualTo(PageSize.SIZE_2M);
        assertThat(host.physicalMemory().isAllocated(head)).isTrue();
        assertThat(pin.runs()).singleElement();
    }

    @Test
    void shouldKeepAFullyMappedThpWholeWhenItsLastPinIsDropped()
    {
        // Unpinning only drops the pin count (mm/gup.c unpin_user_page_range_dirty_lock -> gup_put_folio); a folio
        // that is still fully mapped has nothing to split.
        final UserProcess p = process(c -> c.thpMode(ThpMode.ALWAYS));
        final Host host = p.host();
        final long va = p.mmapAnonymous(2 * MIB);
        p.touch(va, 2 * MIB, true);
        final PinnedPages pin = p.pinUserPages(va, 2 * MIB, true, true);
        final long head = p.translate(va) >>> 12;

        p.unpinUserPages(pin);

        assertThat(host.counter(VmEvent.THP_SPLIT_PAGE)).isZero();
        assertThat(host.physicalMemory().folioSize(head)).isEqualTo(PageSize.SIZE_2M);
        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_2M);
    }

    @Test
    void shouldFreeEveryFrameOfAThpUnmappedAfterUnpin()
    {
        // The usual MR lifecycle: register (pin), deregister (unpin), free the buffer (munmap).
        final UserProcess p = process(c -> c.thpMode(ThpMode.ALWAYS));
        final PhysicalMemory pm = p.host().physicalMemory();
        final long freeAtStart = pm.freeFrames();
        final long va = p.mmapAnonymous(4 * MIB);
        p.touch(va, 4 * MIB, true);
        final PinnedPages pin = p.pinUserPages(va, 4 * MIB, true, true);

        p.unpinUserPages(pin);
        p.munmap(va, 4 * MIB);

        assertThat(pm.freeFrames()).isEqualTo(freeAtStart);
        assertThat(pm.usedFrames()).isZero();
    }

    @Test
    void shouldFreeTheUnmappedPartOfAThpAfterUnpin()
    {
        final UserProcess p = process(c -> c.thpMode(ThpMode.ALWAYS));
        final Host host = p.host();
        final long freeAtStart = host.physicalMemory().freeFrames();
        final long va = p.mmapAnonymous(2 * MIB);
        p.touch(va, 2 * MIB, true);
        final PinnedPages pin = p.pinUserPages(va, 2 * MIB, true, true);
        p.munmap(va, PAGE);
        final long free = host.physicalMemory().freeFrames();

        p.unpinUserPages(pin);

        assertThat(host.physicalMemory().freeFrames()).isEqualTo(free + 1);
        assertThat(host.counter(VmEvent.THP_SPLIT_PAGE)).isEqualTo(1);
        p.munmap(va, 2 * MIB);
        assertThat(host.physicalMemory().freeFrames()).isEqualTo(freeAtStart);
    }

    // ------------------------------------------------------------------------------------------------ stale pins

    @Test
    void shouldKeepPinnedFramesAndTheirBytesAfterMunmapUntilUnpin()
    {
        final UserProcess p = process();
        final PhysicalMemory pm = p.host().physicalMemory();
        final long freeAtStart = pm.freeFrames();
        final long va = p.mmapAnonymous(4 * PAGE);
        p.write(va, ascii("dma-target"));
        final PinnedPages pin = p.pinUserPages(va, 4 * PAGE, true, true);
        final long phys = pin.runs().get(0).physAddr();

        p.munmap(va, 4 * PAGE);

        assertThat(p.vmas()).isEmpty();
        assertThat(p.translate(va)).isEqualTo(-1);
        assertThat(pm.isAllocated(phys >>> 12)).isTrue();
        assertThat(pm.freeFrames()).isEqualTo(freeAtStart - 4);
        assertThat(physRead(p, phys, 10)).isEqualTo(ascii("dma-target"));
        assertThat(p.pinnedVmPages()).isEqualTo(4);

        p.unpinUserPages(pin);

        assertThat(pm.isAllocated(phys >>> 12)).isFalse();
        assertThat(pm.freeFrames()).isEqualTo(freeAtStart);
        assertThat(p.pinnedVmPages()).isZero();
        assertErrno(Errno.EFAULT, () -> physRead(p, phys, 10));
    }

    @Test
    void shouldKeepPinnedFramesAfterProcessExitUntilUnpin()
    {
        final UserProcess p = process();
        final PhysicalMemory pm = p.host().physicalMemory();
        final long freeAtStart = pm.freeFrames();
        final long va = p.mmapAnonymous(4 * PAGE);
        p.touch(va, 4 * PAGE, true);
        final PinnedPages pin = p.pinUserPages(va, 2 * PAGE, true, true);

        p.exit();

        assertThat(p.exited()).isTrue();
        assertThat(pm.freeFrames()).isEqualTo(freeAtStart - 2);
        p.unpinUserPages(pin);
        assertThat(pm.freeFrames()).isEqualTo(freeAtStart);
    }

    @Test
    void shouldGiveTheCpuAFreshZeroPageAfterDontneedWhileThePinKeepsTheOldFrame()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(PAGE);
        p.write(va, ascii("old"));
        final PinnedPages pin = p.pinUserPages(va, PAGE, true, true);
        final long pinned = pin.runs().get(0).physAddr();

        p.madvise(va, PAGE, Madvice.DONTNEED);

        assertThat(p.read(va, 3)).containsOnly(0);
        assertThat(p.translate(va)).isNotEqualTo(pinned);
        assertThat(physRead(p, pinned, 3)).isEqualTo(ascii("old"));
    }

    // ------------------------------------------------------------------------------------------------ unpin

    @Test
    void shouldFailWithEinvalOnDoubleUnpin()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        final PinnedPages pin = p.pinUserPages(va, 4 * PAGE, true, true);
        p.unpinUserPages(pin);

        assertFailsUnchanged(p, Errno.EINVAL, () -> p.unpinUserPages(pin));
        assertThat(p.pinnedVmPages()).isZero();
    }

    @Test
    void shouldFailWithEinvalOnSecondUnpinEvenWhileAnotherPinHoldsTheSamePages()
    {
        // Two registrations of the same buffer (two MRs) hold two pins per page. Releasing the first one twice must
        // be refused ("its pins are already gone"), not eat the second registration's pin.
        final UserProcess p = process();
        final long va = p.mmapAnonymous(PAGE);
        final PinnedPages first = p.pinUserPages(va, PAGE, true, true);
        final PinnedPages second = p.pinUserPages(va, PAGE, true, true);
        p.unpinUserPages(first);
        final long pfn = p.translate(va) >>> 12;

        assertFailsUnchanged(p, Errno.EINVAL, () -> p.unpinUserPages(first));
        assertThat(p.host().physicalMemory().pinCount(pfn)).isEqualTo(1);
        p.unpinUserPages(second);
        assertThat(p.pinnedVmPages()).isZero();
    }

    @Test
    void shouldFailWithEinvalWhenUnpinningAnotherProcessesPages()
    {
        final UserProcess p = process();
        final UserProcess other = p.host().spawn("other");
        final long va = p.mmapAnonymous(PAGE);
        final PinnedPages pin = p.pinUserPages(va, PAGE, true, true);

        assertFailsUnchanged(other, Errno.EINVAL, () -> other.unpinUserPages(pin));
        assertThat(p.pinnedVmPages()).isEqualTo(1);
    }

    @Test
    void shouldCountExactPinsOnAThpFolio()
    {
        final UserProcess p = process(c -> c.thpMode(ThpMode.ALWAYS));
        final long va = p.mmapAnonymous(2 * MIB);

        final PinnedPages a = p.pinUserPages(va + 10 * PAGE, 3 * PAGE, true, true);
        final PinnedPages b = p.pinUserPages(va + 100 * PAGE, 5 * PAGE, true, true);

        final long head = p.translate(va) >>> 12;
        assertThat(p.host().physicalMemory().pinCount(head)).isEqualTo(8);
        assertThat(p.host().physicalMemory().pinCount(head + 300)).isEqualTo(8);
        p.unpinUserPages(a);
        assertThat(p.host().physicalMemory().pinCount(head)).isEqualTo(5);
        p.unpinUserPages(b);
        assertThat(p.host().physicalMemory().pinCount(head)).isZero();
    }
}
