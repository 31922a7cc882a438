package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.rnicsim.pagetable.proc.SmapsEntry;
import dev.rnicsim.pagetable.proc.SmapsFormatException;
import dev.rnicsim.pagetable.proc.SmapsParser;

import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.UnaryOperator;

import org.assertj.core.api.SoftAssertions;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/**
 * Bad input against the host memory model. The contract (class Javadoc of {@link UserProcess} and
 * {@link KernelException}): every call checks its arguments and fails with a {@link KernelException} carrying the
 * errno Linux would return; a failed call changes nothing; no call throws anything else or hangs.
 *
 * <p>Tests named for behaviour the model does not have yet fail on purpose; each says which Linux function or man
 * page the expectation comes from. The others are regression tests with exact errno values.
 */
class AdversarialTest
{
    private static final long KIB = 1L << 10;
    private static final long MIB = 1L << 20;
    private static final long GIB = 1L << 30;
    private static final long TIB = 1L << 40;
    private static final long PAGE = PhysicalMemory.FRAME_BYTES;
    private static final long HUGE = PageSize.SIZE_2M.bytes();
    private static final long TASK_SIZE = UserProcess.TASK_SIZE;
    /** Well above mmap_min_addr and well below top-down placement. */
    private static final long FIXED_BASE = 0x1000_0000L;

    private static final Set<MapFlag> ANON = EnumSet.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS);

    // ============================================================================================== helpers

    /** Observable state a failed call must leave alone. */
    private record State(long freeFrames, long usedFrames, long hugeFree2M, long hugeRsvd2M, long hugeFree1G,
                         long hugeRsvd1G, List<ProcessState> processes)
    {
        static State of(final Host h)
        {
            final PhysicalMemory pm = h.physicalMemory();
            final List<ProcessState> ps = new ArrayList<>();
            for (final UserProcess p : h.processes())
            {
                ps.add(ProcessState.of(p));
            }
            return new State(pm.freeFrames(), pm.usedFrames(), h.hugepagesFree(PageSize.SIZE_2M),
                h.hugepagesReserved(PageSize.SIZE_2M), h.hugepagesFree(PageSize.SIZE_1G),
                h.hugepagesReserved(PageSize.SIZE_1G), ps);
        }
    }

    /** Per process: VMAs, pinned_vm, locked_vm and the smaps text (Rss, Swap, AnonHugePages per VMA). */
    private record ProcessState(int pid, List<Vma> vmas, long pinnedVm, long lockedVm, String smaps)
    {
        static ProcessState of(final UserProcess p)
        {
            return new ProcessState(p.pid(), p.vmas(), p.pinnedVmPages(), p.lockedVmPages(), ProcFs.smaps(p));
        }
    }

    private static Host host(final UnaryOperator<HostConfig.Builder> config)
    {
        return new Host(config.apply(HostConfig.builder().physicalMemoryBytes(256 * MIB)).build());
    }

    private static UserProcess process(final UnaryOperator<HostConfig.Builder> config)
    {
        return host(config).spawn("victim");
    }

    private static UserProcess process()
    {
        return process(c -> c);
    }

    private static Set<MapFlag> flags(final MapFlag... flags)
    {
        final Set<MapFlag> out = EnumSet.noneOf(MapFlag.class);
        out.addAll(List.of(flags));
        return out;
    }

    private static Set<MapFlag> anon(final MapFlag... extra)
    {
        final Set<MapFlag> out = EnumSet.copyOf(ANON);
        out.addAll(List.of(extra));
        return out;
    }

    private static KernelException assertErrno(final Errno errno, final ThrowingCallable call)
    {
        final Throwable thrown = catchThrowable(call);
        assertThat(thrown).as("expected KernelException %s", errno).isInstanceOf(KernelException.class);
        final KernelException e = (KernelException)thrown;
        assertThat(e.errno()).as("errno of: %s", e.getMessage()).isEqualTo(errno);
        return e;
    }

    private static KernelException assertFailsUnchanged(final Host h, final Errno errno, final ThrowingCallable call)
    {
        final State before = State.of(h);
        final KernelException e = assertErrno(errno, call);
        assertThat(State.of(h)).as("state after failed call: %s", e.getMessage()).isEqualTo(before);
        assertFramesAddUp(h);
        return e;
    }

    private static void assertFramesAddUp(final Host h)
    {
        final PhysicalMemory pm = h.physicalMemory();
        assertThat(pm.freeFrames() + pm.usedFrames()).as("freeFrames + usedFrames == totalFrames")
            .isEqualTo(pm.totalFrames());
    }

    private static List<SmapsEntry> parse(final String text)
    {
        try
        {
            return SmapsParser.parse(new StringReader(text));
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    /** Fills all memory of a small host without swap; returns the mapping so that a page can be given back. */
    private static long exhaustMemory(final UserProcess p)
    {
        final long va = p.mmapAnonymous(128 * MIB);
        final Throwable t = catchThrowable(() -> p.touch(va, 128 * MIB, true));
        assertThat(t).isInstanceOf(KernelException.class);
        assertThat(((KernelException)t).errno()).isEqualTo(Errno.ENOMEM);
        assertThat(p.host().physicalMemory().freeFrames()).isZero();
        return va;
    }

    private static UserProcess smallHostWithoutSwap()
    {
        // vm.overcommit_memory=1: the tests map more than RAM to run out at fault time (Overcommit).
        return new Host(HostConfig.builder().physicalMemoryBytes(64 * MIB).thpMode(ThpMode.NEVER).overcommitMemory(1)
            .build()).spawn("small");
    }

    // ============================================================================================== findings
    // Each test below fails against the model at 4ce2eb9 (except the two hugetlb-split tests, fixed there); the name
    // says what should happen.

    // ---- PhysicalMemory

    @Test
    void physicalReadNearLongMaxFailsWithEfaultInsteadOfOverflowing()
    {
        // physAddr + length overflows to a negative number, which passes the "past the end" check; the frame loop
        // then indexes the frame table with a garbage section number.
        final PhysicalMemory pm = host(c -> c).physicalMemory();

        assertErrno(Errno.EFAULT, () -> pm.read(Long.MAX_VALUE - 10, new byte[100], 0, 100));
    }

    @Test
    void physicalWriteNearLongMaxFailsWithEfaultInsteadOfOverflowing()
    {
        final PhysicalMemory pm = host(c -> c).physicalMemory();

        assertErrno(Errno.EFAULT, () -> pm.write(Long.MAX_VALUE - 10, new byte[100], 0, 100));
    }

    @Test
    void physicalWriteFromTooShortSourceFailsWithEfaultAndWritesNothing()
    {
        // A DMA from a buffer that is too short must be refused up front (write(2): EFAULT for a buffer outside the
        // caller's memory); the model writes the first frame, then throws IndexOutOfBoundsException.
        final UserProcess p = process(c -> c.thpMode(ThpMode.NEVER));
        final PhysicalMemory pm = p.host().physicalMemory();
        final long va = p.mmapAnonymous(2 * PAGE);
        final byte[] ones = new byte[(int)(2 * PAGE)];
        Arrays.fill(ones, (byte)1);
        p.write(va, ones);
        final long pa = p.translate(va);
        assertThat(p.translate(va + PAGE)).as("precondition: physically contiguous").isEqualTo(pa + PAGE);
        final byte[] shortSource = new byte[(int)PAGE];
        Arrays.fill(shortSource, (byte)0x55);

        assertErrno(Errno.EFAULT, () -> pm.write(pa, shortSource, 0, (int)(2 * PAGE)));
        assertThat(p.read(va, (int)(2 * PAGE))).as("page contents after a failed write").isEqualTo(ones);
    }

    @Test
    void physicalReadIntoTooSmallOrNegativeOffsetBufferFailsWithEfault()
    {
        final UserProcess p = process();
        final PhysicalMemory pm = p.host().physicalMemory();
        final long va = p.mmapAnonymous(PAGE);
        p.write(va, new byte[] {7});
        final long pa = p.translate(va);

        final SoftAssertions soft = new SoftAssertions();
        soft.assertThat(catchThrowable(() -> pm.read(pa, new byte[10], 0, (int)PAGE)))
            .as("dst of 10 bytes, length 4096").isInstanceOf(KernelException.class);
        soft.assertThat(catchThrowable(() -> pm.read(pa, new byte[10], -1, 5)))
            .as("dstOffset -1").isInstanceOf(KernelException.class);
        soft.assertThat(catchThrowable(() -> pm.write(pa, new byte[10], 8, 5)))
            .as("srcOffset 8 + 5 > 10").isInstanceOf(KernelException.class);
        soft.assertAll();
    }

    @Test
    void frameQueriesWithPfnOutsideMemoryFailWithEinval()
    {
        // isAllocated / pinCount / mapCount / folioSize index the frame table without a range check and throw
        // ArrayIndexOutOfBoundsException; zoneOf(-1) answers NORMAL.
        final PhysicalMemory pm = host(c -> c).physicalMemory();
        final long past = pm.totalFrames() + 1_000_000;

        final SoftAssertions soft = new SoftAssertions();
        for (final long pfn : new long[] {-1, past, Long.MAX_VALUE, Long.MIN_VALUE})
        {
            soft.assertThat(catchThrowable(() -> pm.isAllocated(pfn))).as("isAllocated(%d)", pfn)
                .isInstanceOf(KernelException.class);
            soft.assertThat(catchThrowable(() -> pm.pinCount(pfn))).as("pinCount(%d)", pfn)
                .isInstanceOf(KernelException.class);
            soft.assertThat(catchThrowable(() -> pm.mapCount(pfn))).as("mapCount(%d)", pfn)
                .isInstanceOf(KernelException.class);
            soft.assertThat(catchThrowable(() -> pm.folioSize(pfn))).as("folioSize(%d)", pfn)
                .isInstanceOf(KernelException.class);
            soft.assertThat(catchThrowable(() -> pm.zoneOf(pfn))).as("zoneOf(%d)", pfn)
                .isInstanceOf(KernelException.class);
        }
        soft.assertAll();
    }

    // ---- UserProcess: read

    @Test
    void readOfHugeLengthFromUnmappedAddressFailsWithEfaultWithoutAllocating()
    {
        // read() allocates the result array before checking the range: Integer.MAX_VALUE gives OutOfMemoryError.
        final UserProcess p = process();

        final Throwable thrown = catchThrowable(() -> p.read(FIXED_BASE, Integer.MAX_VALUE));

        assertThat(thrown).isInstanceOf(SegmentationFault.class);
    }

    // ---- vm.max_map_count and merging

    @Test
    void mmapThatMergesWithItsNeighbourSucceedsAtMaxMapCount()
    {
        // do_mmap (mm/mmap.c) checks map_count > max_map_count, deliberately lenient "as the new mapping might merge
        // with an adjacent VMA and not increase the total VMA count"; the model counts the new VMA before merging.
        final UserProcess p = process(c -> c.maxMapCount(1));
        final long first = p.mmapAnonymous(PAGE);

        final Throwable thrown = catchThrowable(() -> p.mmapAnonymous(PAGE));

        assertThat(thrown).isNull();
        assertThat(p.vmaCount()).isEqualTo(1);
        assertThat(p.vmas().get(0).endAddress()).isEqualTo(first + PAGE);
    }

    @Test
    void mprotectThatMovesABoundaryBetweenTwoVmasSucceedsAtMaxMapCount()
    {
        // [rw][r r] -> mprotect(second page, rw) -> [rw rw][r]: vma_modify merges with the previous VMA and only
        // moves the boundary (mm/vma.c vma_merge_existing_range), so the count stays 2. The model counts a split.
        final UserProcess p = process(c -> c.maxMapCount(2));
        p.mmap(FIXED_BASE, 3 * PAGE, Prot.READ_WRITE, anon(MapFlag.FIXED));
        p.mprotect(FIXED_BASE + PAGE, 2 * PAGE, Set.of(Prot.READ));
        assertThat(p.vmaCount()).isEqualTo(2);

        final Throwable thrown = catchThrowable(() -> p.mprotect(FIXED_BASE + PAGE, PAGE, Prot.READ_WRITE));

        assertThat(thrown).isNull();
        assertThat(p.vmaCount()).isEqualTo(2);
    }

    // ---- errno for addresses at or above 2^63 and negative lengths

    @Test
    void mmapFixedAtAddressAboveTaskSizeAsUnsignedFailsWithEnomemNotEperm()
    {
        // __get_unmapped_area: "if (addr > TASK_SIZE - len) return -ENOMEM" comes before security_mmap_addr (EPERM
        // below mmap_min_addr). The model compares the address as signed and reports EPERM "< vm.mmap_min_addr".
        final UserProcess p = process();

        assertFailsUnchanged(p.host(), Errno.ENOMEM, () -> p.mmap(Long.MIN_VALUE, PAGE, Prot.READ_WRITE,
            anon(MapFlag.FIXED)));
        assertFailsUnchanged(p.host(), Errno.ENOMEM, () -> p.mmap(-PAGE, PAGE, Prot.READ_WRITE,
            anon(MapFlag.FIXED)));
    }

    @Test
    void rangeCallsOnAddressesAbove2pow63FailWithEnomemLikeAnyUnmappedAddress()
    {
        // mprotect(2), madvise(2), mlock(2), munlock(2): ENOMEM for addresses "outside the address space of the
        // process" (do_mprotect_pkey, madvise_walk_vmas, apply_vma_lock_flags find no VMA). The model gives EINVAL
        // for 0x8000000000000000 but ENOMEM for TASK_SIZE.
        final UserProcess p = process();
        p.mmapAnonymous(PAGE);
        final Host h = p.host();

        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.mprotect(TASK_SIZE, PAGE, Prot.READ_WRITE));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.mprotect(Long.MIN_VALUE, PAGE, Prot.READ_WRITE));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.madvise(Long.MIN_VALUE, PAGE, Madvice.DOFORK));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.mlock(Long.MIN_VALUE, PAGE));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.munlock(Long.MIN_VALUE, PAGE));
    }

    @Test
    void mprotectWithNegativeLengthFailsWithEnomem()
    {
        // do_mprotect_pkey: len = PAGE_ALIGN(len); end = start + len; "if (end <= start) return -ENOMEM".
        final UserProcess p = process();
        final long va = p.mmapAnonymous(PAGE);

        assertFailsUnchanged(p.host(), Errno.ENOMEM, () -> p.mprotect(va, -1, Prot.READ_WRITE));
        assertFailsUnchanged(p.host(), Errno.ENOMEM, () -> p.mprotect(va, Long.MIN_VALUE, Prot.READ_WRITE));
    }

    @Test
    void mlockWithoutAnyMemlockAllowanceFailsWithEpermBeforeLookingAtTheRange()
    {
        // do_mlock (mm/mlock.c): "if (!can_do_mlock()) return -EPERM;" is the first check.
        final UserProcess p = process().rlimitMemlockBytes(0);

        assertFailsUnchanged(p.host(), Errno.EPERM, () -> p.mlock(FIXED_BASE, PAGE));
    }

    // ---- pinning

    @Test
    void pinOfMoreThanUintMaxPagesFailsWithEinvalBeforeFaultingAnything()
    {
        // ib_umem_get: "if (npages == 0 || npages > UINT_MAX) return -EINVAL" before any page is touched. The model
        // faults pages in until memory runs out, fails with ENOMEM and leaves the faulted pages behind.
        final UserProcess p = smallHostWithoutSwap().capIpcLock(true);
        final long length = (1L << 44) + PAGE;
        final long va = p.mmapAnonymous(length);

        assertFailsUnchanged(p.host(), Errno.EINVAL, () -> p.pinUserPages(va, length, true, true));
    }

    @Test
    void pinnedOneGibPageStaysOutOfThePoolWhateverThePinCount()
    {
        // Each pin of a whole 1 GiB page adds 262144 to an int pin count: after 8192 pins it wraps negative, the page
        // looks unpinned and munmap hands it back to the pool while 8192 pins are outstanding. Linux refuses the
        // pin instead (try_grab_folio: "if (WARN_ON_ONCE(folio_ref_count(folio) <= 0)) return -ENOMEM").
        final Host h = host(c -> c.physicalMemoryBytes(2 * GIB).hugepages1G(1));
        final UserProcess p = h.spawn("pinner").capIpcLock(true);
        final long va = p.mmap(0, GIB, Prot.READ_WRITE, anon(MapFlag.HUGETLB, MapFlag.HUGE_1GB));
        p.touch(va, 1, true);
        final long pfn = p.translate(va) >>> PhysicalMemory.FRAME_SHIFT;
        int pinned = 0;
        for (int i = 0; i < 8200; i++)
        {
            final Throwable t = catchThrowable(() -> p.pinUserPages(va, GIB, false, false));
            if (t != null)
            {
                assertThat(t).isInstanceOf(KernelException.class);
                assertThat(((KernelException)t).errno()).isEqualTo(Errno.ENOMEM);
                break;
            }
            pinned++;
        }
        assertThat(pinned).isPositive();

        assertThat(h.physicalMemory().pinCount(pfn)).as("pin count after %d pins", pinned).isPositive();
        p.munmap(va, GIB);
        assertThat(h.hugepagesFree(PageSize.SIZE_1G)).as("a pinned page must not go back to the pool").isZero();
    }

    // ---- hugetlb VMAs split inside a huge page

    @Test
    void madviseMlockAndMunlockThroughAHugetlbPageFailWithEinval()
    {
        // Splitting a hugetlb VMA at an address that is not huge-page aligned is refused by __split_vma ->
        // hugetlb_vm_op_split ("if (addr & ~(huge_page_mask(hstate_vma(vma)))) return -EINVAL"), so madvise(2),
        // mlock(2) and munlock(2) fail with EINVAL. Found by the fuzz below; fixed in 4ce2eb9 while this was written
        // (changeVmas now checks), kept as a regression test.
        final UserProcess p = process(c -> c.hugepages2M(1)).rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        final long va = p.mmap(0, HUGE, Prot.READ_WRITE, anon(MapFlag.HUGETLB));
        final Host h = p.host();

        assertFailsUnchanged(h, Errno.EINVAL, () -> p.madvise(va, 5 * PAGE, Madvice.DONTFORK));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.madvise(va + PAGE, PAGE, Madvice.HUGEPAGE));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mlock(va, 5 * PAGE));
        p.mlock(va, HUGE);
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.munlock(va + PAGE, PAGE));
        assertThat(p.vmaCount()).isEqualTo(1);
    }

    @Test
    void hugetlbVmaCutByMadviseNeverLeaksFrames()
    {
        // What the split above used to allow: munmap of the 5-page head passed the hugetlb alignment check (it ends
        // at a VMA boundary) and zapped the whole 2 MiB PMD; a later fault in the tail installed a new PMD over the
        // 4 KiB page mapped at the head, whose byte was lost and whose frame was never freed. Regression test.
        final Host h = host(c -> c.hugepages2M(1).thpMode(ThpMode.NEVER));
        final long freeAtBoot = h.physicalMemory().freeFrames();
        final UserProcess p = h.spawn("cut");
        final long va = p.mmap(0, HUGE, Prot.READ_WRITE, anon(MapFlag.HUGETLB));
        p.touch(va, 1, true);

        final Throwable split = catchThrowable(() -> p.madvise(va, 5 * PAGE, Madvice.DONTFORK));
        if (split == null)
        {
            p.munmap(va, 5 * PAGE);
            p.mmap(va, 5 * PAGE, Prot.READ_WRITE, anon(MapFlag.FIXED));
            p.write(va, new byte[] {1});
            catchThrowable(() -> p.touch(va + 5 * PAGE, 1, true));
            assertThat(p.read(va, 1)).as("the 4 KiB page at the head keeps its byte").containsExactly(1);
        }
        p.exit();

        assertThat(h.physicalMemory().freeFrames()).as("free frames after exit").isEqualTo(freeAtBoot);
        assertThat(h.hugepagesFree(PageSize.SIZE_2M)).isEqualTo(1);
        assertFramesAddUp(h);
    }

    // ---- running out of memory part way (the class Javadoc: as in Linux, pages faulted in before the failure
    // stay mapped; no pin, VMA change or charge is left behind, and munmap gives every frame back)

    private static void assertOnlyFaultedPagesRemain(final UserProcess p, final long va, final long hog,
        final Errno errno, final Runnable call)
    {
        final List<Vma> vmasBefore = p.vmas();
        final long pinnedBefore = p.pinnedVmPages();
        final long lockedBefore = p.lockedVmPages();

        assertErrno(errno, call::run);

        assertThat(p.vmas()).as("VMAs after the failed call").isEqualTo(vmasBefore);
        assertThat(p.pinnedVmPages()).as("pinned_vm after the failed call").isEqualTo(pinnedBefore);
        assertThat(p.lockedVmPages()).as("locked_vm after the failed call").isEqualTo(lockedBefore);
        assertThat(p.translate(va)).as("the page faulted in before the failure").isNotEqualTo(-1);
        assertThat(p.host().physicalMemory().pinCount(p.translate(va) >>> 12)).isZero();
        p.munmap(va, 2 * PAGE);
        p.munmap(hog, 128 * MIB);
        final PhysicalMemory pm = p.host().physicalMemory();
        assertThat(pm.freeFrames()).isEqualTo(pm.totalFrames());
    }

    @Test
    void writeThatRunsOutOfMemoryKeepsTheFaultedPageAndNothingElse()
    {
        final UserProcess p = smallHostWithoutSwap();
        final long hog = exhaustMemory(p);
        p.munmap(hog, PAGE);
        final long va = p.mmapAnonymous(2 * PAGE);
        final byte[] data = new byte[(int)(2 * PAGE)];
        Arrays.fill(data, (byte)9);

        assertOnlyFaultedPagesRemain(p, va, hog, Errno.ENOMEM, () -> p.write(va, data));
    }

    @Test
    void mlockThatRunsOutOfMemoryFailsWithEagainAndLocksNothing()
    {
        final UserProcess p = smallHostWithoutSwap().rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        final long hog = exhaustMemory(p);
        p.munmap(hog, PAGE);
        final long va = p.mmapAnonymous(2 * PAGE);

        assertOnlyFaultedPagesRemain(p, va, hog, Errno.EAGAIN, () -> p.mlock(va, 2 * PAGE));
    }

    @Test
    void pinThatRunsOutOfMemoryHoldsNoPinAndChargesNothing()
    {
        final UserProcess p = smallHostWithoutSwap().rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        final long hog = exhaustMemory(p);
        p.munmap(hog, PAGE);
        final long va = p.mmapAnonymous(2 * PAGE);

        assertOnlyFaultedPagesRemain(p, va, hog, Errno.ENOMEM, () -> p.pinUserPages(va, 2 * PAGE, true, false));
    }

    // ---- SmapsImporter

    @Test
    void importOfHugetlbAreaFromMapsFileUsesTheDefaultTwoMibPageSize()
    {
        // A /proc/PID/maps line has no KernelPageSize, so kernelPageSizeBytes() is 4096 and the importer builds a
        // hugetlb VMA of 4 KiB "huge" pages: it asks the 2 MiB pool for 512 pages per 2 MiB and fails with ENOMEM.
        final Host h = host(c -> c.hugepages2M(1));
        final UserProcess p = h.spawn("maps");
        final List<SmapsEntry> entries = parse(
            "7f0000000000-7f0000200000 rw-p 00000000 00:0f 1048601                    /anon_hugepage (deleted)\n");

        final Throwable thrown = catchThrowable(() -> SmapsImporter.importEntries(p, entries, false));

        assertThat(thrown).isNull();
        assertThat(p.vmas()).singleElement().satisfies(v ->
        {
            assertThat(v.kind()).isEqualTo(VmaKind.HUGETLB);
            assertThat(v.hugePageSize()).isEqualTo(PageSize.SIZE_2M);
        });
        assertThat(h.hugepagesReserved(PageSize.SIZE_2M)).isEqualTo(1);
    }

    @Test
    void hugetlbAreaWithFourKibKernelPageSizeIsRejectedOrKeepsFrameAccounting()
    {
        // "ht" with KernelPageSize 4 kB makes a HUGETLB VMA whose page size is 4 KiB. Touching it takes a 2 MiB
        // pool page but marks one frame: freeFrames + usedFrames drops 511 frames below totalFrames.
        final Host h = host(c -> c.hugepages2M(4));
        final UserProcess p = h.spawn("ht4k");
        final List<SmapsEntry> entries = parse("""
            7f0000000000-7f0000004000 rw-p 00000000 00:00 0
            KernelPageSize:        4 kB
            VmFlags: rd wr mr mw me ac ht
            """);

        final Throwable thrown = catchThrowable(() -> SmapsImporter.importEntries(p, entries, false));
        if (thrown != null)
        {
            assertThat(thrown).isInstanceOf(KernelException.class);
            assertThat(((KernelException)thrown).errno()).isEqualTo(Errno.EINVAL);
            assertThat(p.vmaCount()).isZero();
            return;
        }
        p.touch(0x7f0000000000L, PAGE, true);
        assertFramesAddUp(h);
    }

    @Test
    void importWithAnAreaBelowMmapMinAddrFailsWithEinvalAndLeavesTheProcessEmpty()
    {
        // A process cannot map below vm.mmap_min_addr; the importer refuses such a capture before creating anything.
        final UserProcess p = smallHostWithoutSwap();
        final long freeBefore = p.host().physicalMemory().freeFrames();
        final List<SmapsEntry> entries = parse("""
            00000000-00001000 rw-p 00000000 00:00 0
            Rss:                   4 kB
            10000000-20000000 rw-p 00000000 00:00 0
            Rss:              262144 kB
            """);

        assertErrno(Errno.EINVAL, () -> SmapsImporter.importEntries(p, entries, true));
        assertThat(p.vmaCount()).as("VMAs after a failed import").isZero();
        assertThat(p.host().physicalMemory().freeFrames()).isEqualTo(freeBefore);
    }

    @Test
    void failedImportWithHugetlbAreaAtZeroFailsWithEinvalAndReservesNothing()
    {
        final UserProcess p = new Host(HostConfig.builder().physicalMemoryBytes(64 * MIB).hugepages2M(1)
            .thpMode(ThpMode.NEVER).build()).spawn("ht0");
        final List<SmapsEntry> entries = parse("""
            00000000-00200000 rw-p 00000000 00:00 0
            KernelPageSize:     2048 kB
            VmFlags: rd wr mr mw me ht
            10000000-20000000 rw-p 00000000 00:00 0
            Rss:              262144 kB
            """);

        assertErrno(Errno.EINVAL, () -> SmapsImporter.importEntries(p, entries, true));
        assertThat(p.vmaCount()).isZero();
        assertThat(p.host().hugepagesReserved(PageSize.SIZE_2M)).isZero();
    }

    // ---- Host, HostConfig

    @Test
    void hugepageQueriesForFourKibPagesFailWithEinval()
    {
        // Host.hugepagesTotal/Free/Reserved take "2 MiB or 1 GiB"; SIZE_4K (and null) answer with the 2 MiB pool.
        final Host h = host(c -> c.hugepages2M(3));

        final SoftAssertions soft = new SoftAssertions();
        soft.assertThat(catchThrowable(() -> h.hugepagesTotal(PageSize.SIZE_4K))).as("hugepagesTotal(4K)")
            .isInstanceOf(KernelException.class);
        soft.assertThat(catchThrowable(() -> h.hugepagesFree(PageSize.SIZE_4K))).as("hugepagesFree(4K)")
            .isInstanceOf(KernelException.class);
        soft.assertThat(catchThrowable(() -> h.hugepagesReserved(PageSize.SIZE_4K))).as("hugepagesReserved(4K)")
            .isInstanceOf(KernelException.class);
        soft.assertThat(catchThrowable(() -> h.hugepagesTotal(null))).as("hugepagesTotal(null)")
            .isInstanceOf(KernelException.class);
        soft.assertAll();
    }

    @Test
    void hostConfigMessageForHugeHugepageCountDoesNotShowAnOverflowedPoolSize()
    {
        // poolBytes = hugepages2M * 2 MiB is computed before the range check: Long.MAX_VALUE pages print as a pool
        // of -2097152 bytes.
        final KernelException e = assertErrno(Errno.EINVAL,
            () -> HostConfig.builder().hugepages2M(Long.MAX_VALUE).build());

        assertThat(e.getMessage()).contains(Long.toString(Long.MAX_VALUE)).doesNotContain("pools of -");
    }

    // ---- null arguments: the package documents NullPointerException (UserProcess, Host, PhysicalMemory)

    @Test
    void nullArgumentsAreRejectedWithNullPointerExceptionBeforeAnythingChanges()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(PAGE);
        p.write(va, new byte[] {1});
        final long pa = p.translate(va);
        final PhysicalMemory pm = p.host().physicalMemory();

        final long freeBefore = pm.freeFrames();
        final List<Vma> vmasBefore = p.vmas();
        final SoftAssertions soft = new SoftAssertions();
        soft.assertThat(catchThrowable(() -> p.mmap(0, PAGE, null, ANON))).as("mmap(prot=null)")
            .isInstanceOf(NullPointerException.class);
        soft.assertThat(catchThrowable(() -> p.mmap(0, PAGE, Prot.READ_WRITE, null))).as("mmap(flags=null)")
            .isInstanceOf(NullPointerException.class);
        soft.assertThat(catchThrowable(() -> p.mprotect(va, PAGE, null))).as("mprotect(prot=null)")
            .isInstanceOf(NullPointerException.class);
        soft.assertThat(catchThrowable(() -> p.madvise(va, PAGE, null))).as("madvise(advice=null)")
            .isInstanceOf(NullPointerException.class);
        soft.assertThat(catchThrowable(() -> p.write(va, null))).as("write(data=null)")
            .isInstanceOf(NullPointerException.class);
        soft.assertThat(catchThrowable(() -> p.unpinUserPages(null))).as("unpinUserPages(null)")
            .isInstanceOf(NullPointerException.class);
        soft.assertThat(catchThrowable(() -> pm.read(pa, null, 0, 1))).as("PhysicalMemory.read(dst=null)")
            .isInstanceOf(NullPointerException.class);
        soft.assertThat(catchThrowable(() -> pm.write(pa, null, 0, 1))).as("PhysicalMemory.write(src=null)")
            .isInstanceOf(NullPointerException.class);
        soft.assertThat(catchThrowable(() -> new Host(null))).as("new Host(null)")
            .isInstanceOf(NullPointerException.class);
        soft.assertThat(catchThrowable(() -> SmapsImporter.importEntries(p.host().spawn("e"), null, false)))
            .as("importEntries(entries=null)").isInstanceOf(NullPointerException.class);
        soft.assertThat(pm.freeFrames()).as("free frames").isEqualTo(freeBefore);
        soft.assertThat(p.vmas()).as("VMAs").isEqualTo(vmasBefore);
        soft.assertAll();
    }

    @Test
    void unpinOfPinnedPagesWithoutProcessFailsWithEinval()
    {
        // PinnedPages is a public record; with process == null the "belongs to another process" message calls
        // pinned.process().pid() and throws NullPointerException.
        final UserProcess p = process();
        final PinnedPages forged = new PinnedPages(null, FIXED_BASE, 1, false, false, List.of());

        assertFailsUnchanged(p.host(), Errno.EINVAL, () -> p.unpinUserPages(forged));
    }

    // ---- x86 protection semantics

    @Test
    void readOfWriteOnlyMappingSucceedsAsOnX86()
    {
        // On x86 PROT_WRITE implies read (protection_map[VM_WRITE] = PAGE_COPY; access_error() only refuses a read
        // fault when !vma_is_accessible()), so a CPU load from a PROT_WRITE-only mapping does not fault.
        final UserProcess p = process();
        final long va = p.mmap(0, PAGE, Set.of(Prot.WRITE), ANON);

        assertThat(catchThrowable(() -> p.touch(va, PAGE, false))).isNull();
        assertThat(catchThrowable(() -> p.read(va, 8))).isNull();
    }

    // ============================================================================================== regressions
    // Behaviour that holds today, with exact errno values.

    // ---- HostConfig extremes

    @Test
    void hostConfigRejectsEveryOutOfRangeValueWithEinval()
    {
        final List<UnaryOperator<HostConfig.Builder>> bad = List.of(
            b -> b.physicalMemoryBytes(0),
            b -> b.physicalMemoryBytes(-1),
            b -> b.physicalMemoryBytes(Long.MIN_VALUE),
            b -> b.physicalMemoryBytes(64 * MIB - PAGE),
            b -> b.physicalMemoryBytes(64 * MIB + 1),
            b -> b.physicalMemoryBytes(4 * TIB + PAGE),
            b -> b.physicalMemoryBytes(Long.MAX_VALUE),
            b -> b.physicalMemoryBytes(256 * MIB).movableZoneBytes(-PAGE),
            b -> b.physicalMemoryBytes(256 * MIB).movableZoneBytes(1),
            b -> b.physicalMemoryBytes(256 * MIB).movableZoneBytes(256 * MIB),
            b -> b.physicalMemoryBytes(256 * MIB).movableZoneBytes(Long.MAX_VALUE & ~(PAGE - 1)),
            b -> b.physicalMemoryBytes(256 * MIB).hugepages2M(129),
            b -> b.physicalMemoryBytes(256 * MIB).hugepages2M(-1),
            b -> b.physicalMemoryBytes(256 * MIB).hugepages1G(1),
            b -> b.physicalMemoryBytes(256 * MIB).hugepages1G(-1),
            b -> b.physicalMemoryBytes(256 * MIB).hugepages1G(Long.MAX_VALUE),
            b -> b.physicalMemoryBytes(256 * MIB).hugepages1G(Long.MIN_VALUE),
            b -> b.physicalMemoryBytes(256 * MIB).movableZoneBytes(128 * MIB).hugepages2M(65),
            b -> b.swapBytes(-PAGE),
            b -> b.swapBytes(1),
            b -> b.swapBytes((1L << 43) + PAGE),
            b -> b.thpMode(null),
            b -> b.forkBehaviour(null),
            b -> b.maxMapCount(-1),
            b -> b.maxMapCount(Integer.MIN_VALUE),
            b -> b.mmapMinAddrBytes(-PAGE),
            b -> b.mmapMinAddrBytes(1),
            b -> b.mmapMinAddrBytes(TASK_SIZE),
            b -> b.mmapMinAddrBytes(Long.MAX_VALUE & ~(PAGE - 1)));
        for (int i = 0; i < bad.size(); i++)
        {
            final UnaryOperator<HostConfig.Builder> config = bad.get(i);
            final KernelException e = assertErrno(Errno.EINVAL, () -> config.apply(HostConfig.builder()).build());
            assertThat(e.getMessage()).as("case %d", i).isNotBlank();
        }
    }

    @Test
    void hostConfigAcceptsItsBoundaryValues()
    {
        final Host smallest = new Host(HostConfig.builder().physicalMemoryBytes(64 * MIB).maxMapCount(1)
            .mmapMinAddrBytes(0).build());
        assertThat(smallest.physicalMemory().totalFrames()).isEqualTo(16384);
        assertFramesAddUp(smallest);

        final Host poolsFillNormal = new Host(HostConfig.builder().physicalMemoryBytes(256 * MIB)
            .movableZoneBytes(128 * MIB).hugepages2M(64).build());
        assertThat(poolsFillNormal.physicalMemory().zoneFreeFrames(Zone.NORMAL)).isZero();
        assertFramesAddUp(poolsFillNormal);

        final Host largest = new Host(HostConfig.builder().physicalMemoryBytes(4 * TIB).build());
        final UserProcess p = largest.spawn("big");
        final long va = p.mmapAnonymous(GIB);
        p.write(va + GIB - 1, new byte[] {42});
        assertThat(p.read(va + GIB - 1, 1)).containsExactly(42);
        assertFramesAddUp(largest);
    }

    @Test
    void maxMapCountOfOneStillAllowsOneMappingAndRefusesASplit()
    {
        final UserProcess p = process(c -> c.maxMapCount(1));
        final long va = p.mmapAnonymous(4 * PAGE);

        assertFailsUnchanged(p.host(), Errno.ENOMEM, () -> p.munmap(va + PAGE, PAGE));
        assertFailsUnchanged(p.host(), Errno.ENOMEM, () -> p.mprotect(va + PAGE, PAGE, Set.of(Prot.READ)));
        assertFailsUnchanged(p.host(), Errno.EAGAIN, () -> p.madvise(va, PAGE, Madvice.DONTFORK));
        p.munmap(va, PAGE);
        assertThat(p.vmaCount()).isEqualTo(1);
    }

    @Test
    void hostBootsWhenHugetlbPoolsTakeAllOfZoneNormal()
    {
        final Host h = new Host(HostConfig.builder().physicalMemoryBytes(2 * GIB).hugepages1G(1).hugepages2M(512)
            .build());
        final UserProcess p = h.spawn("starved");
        final long va = p.mmapAnonymous(PAGE);

        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.touch(va, 1, true));
        assertThat(h.hugepagesTotal(PageSize.SIZE_1G)).isEqualTo(1);
        assertThat(h.hugepagesTotal(PageSize.SIZE_2M)).isEqualTo(512);
    }

    // ---- rlimit

    @Test
    void negativeRlimitOtherThanInfinityFailsWithEinval()
    {
        final UserProcess p = process();

        assertErrno(Errno.EINVAL, () -> p.rlimitMemlockBytes(-2));
        assertErrno(Errno.EINVAL, () -> p.rlimitMemlockBytes(Long.MIN_VALUE));
        assertThat(p.rlimitMemlockBytes()).isEqualTo(UserProcess.DEFAULT_RLIMIT_MEMLOCK_BYTES);
        p.rlimitMemlockBytes(Long.MAX_VALUE);
        assertThat(p.rlimitMemlockBytes()).isEqualTo(Long.MAX_VALUE);
    }

    // ---- mmap

    @Test
    void mmapRejectsBadLengthsAndFlagCombinations()
    {
        final UserProcess p = process();
        p.mmap(FIXED_BASE, PAGE, Prot.READ_WRITE, anon(MapFlag.FIXED));
        final Host h = p.host();

        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mmap(0, 0, Prot.READ_WRITE, ANON));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mmap(0, -1, Prot.READ_WRITE, ANON));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mmap(0, Long.MIN_VALUE, Prot.READ_WRITE, ANON));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.mmap(0, Long.MAX_VALUE, Prot.READ_WRITE, ANON));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.mmap(0, TASK_SIZE, Prot.READ_WRITE, ANON));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.mmap(0, TASK_SIZE - PAGE + 1, Prot.READ_WRITE, ANON));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mmap(0, PAGE, Prot.READ_WRITE,
            flags(MapFlag.PRIVATE, MapFlag.SHARED, MapFlag.ANONYMOUS)));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mmap(0, PAGE, Prot.READ_WRITE, flags(MapFlag.ANONYMOUS)));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mmap(0, PAGE, Prot.READ_WRITE, flags()));
        assertFailsUnchanged(h, Errno.EOPNOTSUPP, () -> p.mmap(0, PAGE, Prot.READ_WRITE,
            flags(MapFlag.SHARED, MapFlag.ANONYMOUS)));
        assertFailsUnchanged(h, Errno.EOPNOTSUPP, () -> p.mmap(0, PAGE, Prot.READ_WRITE, flags(MapFlag.PRIVATE)));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mmap(0, PAGE, Prot.READ_WRITE,
            anon(MapFlag.HUGETLB, MapFlag.HUGE_2MB, MapFlag.HUGE_1GB)));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.mmap(0, PAGE, Prot.READ_WRITE, anon(MapFlag.HUGETLB)));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.mmap(0, PAGE, Prot.READ_WRITE,
            anon(MapFlag.HUGETLB, MapFlag.HUGE_1GB)));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.mmap(0, TASK_SIZE - HUGE, Prot.READ_WRITE,
            anon(MapFlag.HUGETLB)));
    }

    @Test
    void mmapFixedChecksAlignmentMinAddressTaskSizeAndNoReplace()
    {
        final UserProcess p = process(c -> c.hugepages2M(2));
        final long existing = p.mmap(FIXED_BASE, 4 * PAGE, Prot.READ_WRITE, anon(MapFlag.FIXED));
        final Host h = p.host();

        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mmap(FIXED_BASE + 1, PAGE, Prot.READ_WRITE,
            anon(MapFlag.FIXED)));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mmap(FIXED_BASE + 1, PAGE, Prot.READ_WRITE,
            anon(MapFlag.FIXED_NOREPLACE)));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mmap(FIXED_BASE + 0x10_0000 + PAGE, HUGE, Prot.READ_WRITE,
            anon(MapFlag.FIXED, MapFlag.HUGETLB)));
        assertFailsUnchanged(h, Errno.EPERM, () -> p.mmap(0, PAGE, Prot.READ_WRITE, anon(MapFlag.FIXED)));
        assertFailsUnchanged(h, Errno.EPERM, () -> p.mmap(PAGE, PAGE, Prot.READ_WRITE, anon(MapFlag.FIXED)));
        assertFailsUnchanged(h, Errno.EPERM, () -> p.mmap(HostConfig.DEFAULT_MMAP_MIN_ADDR_BYTES - PAGE, PAGE,
            Prot.READ_WRITE, anon(MapFlag.FIXED)));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.mmap(TASK_SIZE, PAGE, Prot.READ_WRITE, anon(MapFlag.FIXED)));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.mmap(TASK_SIZE - PAGE, 2 * PAGE, Prot.READ_WRITE,
            anon(MapFlag.FIXED)));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.mmap(TASK_SIZE + PAGE, PAGE, Prot.READ_WRITE,
            anon(MapFlag.FIXED)));
        assertFailsUnchanged(h, Errno.EEXIST, () -> p.mmap(existing + PAGE, 8 * PAGE, Prot.READ_WRITE,
            anon(MapFlag.FIXED_NOREPLACE)));
        assertFailsUnchanged(h, Errno.EEXIST, () -> p.mmap(existing - PAGE, 2 * PAGE, Prot.READ_WRITE,
            anon(MapFlag.FIXED, MapFlag.FIXED_NOREPLACE)));

        assertThat(p.mmap(HostConfig.DEFAULT_MMAP_MIN_ADDR_BYTES, PAGE, Prot.READ_WRITE, anon(MapFlag.FIXED)))
            .isEqualTo(HostConfig.DEFAULT_MMAP_MIN_ADDR_BYTES);
        assertThat(p.mmap(TASK_SIZE - PAGE, PAGE, Prot.READ_WRITE, anon(MapFlag.FIXED))).isEqualTo(TASK_SIZE - PAGE);
        p.write(TASK_SIZE - 1, new byte[] {5});
        assertThat(p.read(TASK_SIZE - 1, 1)).containsExactly(5);
        assertFramesAddUp(h);
    }

    @Test
    void mmapHintsThatCannotBeHonouredAreIgnored()
    {
        final UserProcess p = process();
        final long taken = p.mmap(FIXED_BASE, PAGE, Prot.READ_WRITE, anon(MapFlag.FIXED));

        for (final long hint : new long[] {Long.MIN_VALUE, -PAGE, 1, PAGE, taken, TASK_SIZE, Long.MAX_VALUE})
        {
            final long va = p.mmap(hint, PAGE, Prot.READ_WRITE, ANON);
            assertThat(va).as("hint 0x%x", hint).isBetween(HostConfig.DEFAULT_MMAP_MIN_ADDR_BYTES, TASK_SIZE - PAGE);
            assertThat(va).isNotEqualTo(taken);
        }
        assertThat(p.vmaAt(taken).lengthBytes()).isEqualTo(PAGE);
    }

    @Test
    void pageSizeOfBytesRejectsEverythingButTheThreeSizes()
    {
        for (final long bytes : new long[] {0, -1, 1, 4095, 8192, 1L << 22, Long.MIN_VALUE, Long.MAX_VALUE, -4096})
        {
            assertErrno(Errno.EINVAL, () -> PageSize.ofBytes(bytes));
        }
        assertThat(PageSize.ofBytes(1L << 30)).isEqualTo(PageSize.SIZE_1G);
    }

    @Test
    void mmapFixedAtZeroWorksWhenMmapMinAddrIsZero()
    {
        final UserProcess p = process(c -> c.mmapMinAddrBytes(0));

        assertThat(p.mmap(0, 2 * PAGE, Prot.READ_WRITE, anon(MapFlag.FIXED))).isZero();
        p.write(0, new byte[] {1, 2});
        assertThat(p.read(0, 2)).containsExactly(1, 2);
        p.munmap(0, PAGE);
        assertThat(p.vmaAt(0)).isNull();
        assertErrno(Errno.EFAULT, () -> p.read(0, 1));
        p.munmap(0, 2 * PAGE);
        assertThat(p.vmaCount()).isZero();
        assertFramesAddUp(p.host());
    }

    @Test
    void mmapFixedReplacesAnExistingMappingAndItsContents()
    {
        final UserProcess p = process();
        final long va = p.mmap(FIXED_BASE, 4 * PAGE, Prot.READ_WRITE, anon(MapFlag.FIXED));
        p.write(va + PAGE, new byte[] {1});
        final long free = p.host().physicalMemory().freeFrames();

        p.mmap(va, 4 * PAGE, Set.of(Prot.READ), anon(MapFlag.FIXED));

        assertThat(p.vmas()).singleElement().satisfies(v -> assertThat(v.permissions()).isEqualTo("r--p"));
        assertThat(p.read(va + PAGE, 1)).containsExactly(0);
        assertThat(p.host().physicalMemory().freeFrames()).isEqualTo(free + 1);
    }

    @Test
    void protNoneMappingFaultsOnEveryAccessAndPin()
    {
        final UserProcess p = process();
        final long va = p.mmap(0, 2 * PAGE, Set.of(), ANON);
        final Host h = p.host();

        assertFailsUnchanged(h, Errno.EFAULT, () -> p.touch(va, 1, false));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.touch(va, 1, true));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.read(va, 1));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.write(va, new byte[1]));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.pinUserPages(va, PAGE, false, true));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.pinUserPages(va, PAGE, true, true));
        assertThat(catchThrowable(() -> p.touch(va, 1, false))).isInstanceOf(SegmentationFault.class);

        p.mprotect(va, PAGE, Prot.READ_WRITE);
        p.write(va, new byte[] {3});
        p.mprotect(va, PAGE, Set.of());
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.read(va, 1));
        p.mprotect(va, PAGE, Set.of(Prot.READ));
        assertThat(p.read(va, 1)).containsExactly(3);
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.write(va, new byte[1]));
    }

    // ---- munmap

    @Test
    void munmapRejectsBadRangesAndToleratesNothingMapped()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        final Host h = p.host();

        assertFailsUnchanged(h, Errno.EINVAL, () -> p.munmap(va + 1, PAGE));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.munmap(va, 0));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.munmap(va, -1));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.munmap(va, Long.MIN_VALUE));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.munmap(va, Long.MAX_VALUE));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.munmap(Long.MIN_VALUE, PAGE));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.munmap(-PAGE, PAGE));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.munmap(TASK_SIZE, PAGE));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.munmap(TASK_SIZE - PAGE, 2 * PAGE));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.munmap(PAGE, TASK_SIZE));

        p.munmap(FIXED_BASE, PAGE);
        p.munmap(0, TASK_SIZE - PAGE);
        assertThat(p.vmaCount()).isZero();
        p.munmap(va, 4 * PAGE);
        p.munmap(0, TASK_SIZE);
        assertFramesAddUp(h);
    }

    @Test
    void munmapThroughAHugetlbPageFailsWithEinval()
    {
        final UserProcess p = process(c -> c.hugepages2M(2));
        final long va = p.mmap(0, 2 * HUGE, Prot.READ_WRITE, anon(MapFlag.HUGETLB));
        p.touch(va, 2 * HUGE, true);
        final Host h = p.host();

        assertFailsUnchanged(h, Errno.EINVAL, () -> p.munmap(va + PAGE, PAGE));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.munmap(va, PAGE));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mprotect(va + HUGE - PAGE, 2 * PAGE, Set.of(Prot.READ)));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.madvise(va + PAGE, PAGE, Madvice.DONTNEED));
        p.munmap(va, HUGE);
        assertThat(h.hugepagesFree(PageSize.SIZE_2M)).isEqualTo(1);
    }

    // ---- mprotect, madvise, mlock, munlock

    @Test
    void mprotectAndMadviseRejectBadRanges()
    {
        final UserProcess p = process();
        final long va = p.mmap(FIXED_BASE, 2 * PAGE, Prot.READ_WRITE, anon(MapFlag.FIXED));
        final Host h = p.host();

        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mprotect(va + 1, PAGE, Set.of()));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mprotect(va + 1, 0, Set.of()));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.mprotect(va, 3 * PAGE, Set.of()));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.mprotect(va - PAGE, 2 * PAGE, Set.of()));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.mprotect(va, Long.MAX_VALUE, Set.of()));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.mprotect(TASK_SIZE - PAGE, 2 * PAGE, Set.of()));
        p.mprotect(va, 0, Set.of());
        p.mprotect(0x7000_0000_0000L, 0, Set.of());

        assertFailsUnchanged(h, Errno.EINVAL, () -> p.madvise(va + 1, PAGE, Madvice.DONTNEED));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.madvise(va, -1, Madvice.DONTNEED));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.madvise(va, Long.MAX_VALUE, Madvice.HUGEPAGE));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.madvise(va, 3 * PAGE, Madvice.DONTNEED));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.madvise(va - PAGE, 2 * PAGE, Madvice.HUGEPAGE));
        p.madvise(va, 0, Madvice.DONTFORK);
        for (final Madvice advice : Madvice.values())
        {
            if (advice != Madvice.COLLAPSE)
            {
                p.madvise(va, 2 * PAGE, advice);
            }
        }
        // The range is VM_NOHUGEPAGE now: MADV_COLLAPSE refuses it (madvise_collapse: thp_vma_allowable_order).
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.madvise(va, 2 * PAGE, Madvice.COLLAPSE));
        p.madvise(va, 2 * PAGE, Madvice.HUGEPAGE);
        p.madvise(va, 2 * PAGE, Madvice.COLLAPSE);
        assertFramesAddUp(h);
    }

    @Test
    void mlockChecksLimitMappingAndDontneedOnLockedMemory()
    {
        final UserProcess p = process().rlimitMemlockBytes(4 * PAGE);
        final long va = p.mmap(FIXED_BASE, 8 * PAGE, Prot.READ_WRITE, anon(MapFlag.FIXED));
        final Host h = p.host();

        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.mlock(va, 5 * PAGE));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.mlock(va + 7 * PAGE, 2 * PAGE));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mlock(va, -1));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mlock(va + 1, Long.MAX_VALUE));
        p.mlock(va + 1, 4 * PAGE - 1);
        assertThat(p.lockedVmPages()).isEqualTo(4);
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.mlock(va + 4 * PAGE, PAGE));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.madvise(va, PAGE, Madvice.DONTNEED));
        p.mlock(va, 4 * PAGE);
        assertThat(p.lockedVmPages()).isEqualTo(4);
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.munlock(va, 9 * PAGE));
        p.munlock(va + 1, 1);
        assertThat(p.lockedVmPages()).isEqualTo(3);

        p.rlimitMemlockBytes(0);
        assertFailsUnchanged(h, Errno.EPERM, () -> p.mlock(va, PAGE));
        p.capIpcLock(true);
        p.mlock(va, 8 * PAGE);
        assertThat(p.lockedVmPages()).isEqualTo(8);
        assertFramesAddUp(h);
    }

    // ---- touch, read, write at the edges of user space

    @Test
    void cpuAccessOutsideMappingsFaultsWithEfaultAndZeroLengthsDoNothing()
    {
        final UserProcess p = process();
        final long va = p.mmap(TASK_SIZE - PAGE, PAGE, Prot.READ_WRITE, anon(MapFlag.FIXED));
        final Host h = p.host();

        assertFailsUnchanged(h, Errno.EFAULT, () -> p.touch(TASK_SIZE - 1, 2, false));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.touch(TASK_SIZE, 1, false));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.touch(-1, 1, true));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.touch(Long.MIN_VALUE, 1, true));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.touch(va, Long.MAX_VALUE, true));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.touch(Long.MAX_VALUE, Long.MAX_VALUE, true));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.read(va - 1, 2));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.read(Long.MAX_VALUE, 1));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.write(va + PAGE - 1, new byte[2]));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.write(Long.MAX_VALUE - 1, new byte[10]));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.write(-5, new byte[10]));

        assertThat(p.touch(-1, 0, true)).isZero();
        assertThat(p.touch(Long.MIN_VALUE, -5, true)).isZero();
        assertThat(p.read(-1, 0)).isEmpty();
        assertThat(p.read(-1, Integer.MIN_VALUE)).isEmpty();
        p.write(-1, new byte[0]);
        assertThat(p.translate(-1)).isEqualTo(-1);
        assertThat(p.translate(Long.MIN_VALUE)).isEqualTo(-1);
        assertThat(p.translate(TASK_SIZE)).isEqualTo(-1);
        assertThat(p.mappedPageSize(Long.MAX_VALUE)).isNull();
        assertThat(p.vmaAt(Long.MIN_VALUE)).isNull();
        assertThat(p.touch(TASK_SIZE - 1, 1, true)).isEqualTo(1);
    }

    // ---- pinning

    @Test
    void pinRejectsBadRangesInIbUmemGetOrder()
    {
        final UserProcess p = process();
        final long va = p.mmap(FIXED_BASE, 4 * PAGE, Prot.READ_WRITE, anon(MapFlag.FIXED));
        p.mmap(FIXED_BASE + 5 * PAGE, 2 * PAGE, Set.of(Prot.READ), anon(MapFlag.FIXED));
        final Host h = p.host();

        assertFailsUnchanged(h, Errno.EINVAL, () -> p.pinUserPages(va, -1, true, true));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.pinUserPages(va, Long.MAX_VALUE, true, true));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.pinUserPages(-PAGE, PAGE, true, true));
        // ib_umem_get compares unsigned: an end in the upper half is no overflow, and pinning it faults.
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.pinUserPages(Long.MAX_VALUE - 10, 5, true, true));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.pinUserPages(-PAGE, PAGE + 1, true, true));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.pinUserPages(va, 0, true, true));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.pinUserPages(va, 8 * MIB + 1, true, true));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.pinUserPages(TASK_SIZE - PAGE, 2 * PAGE, true, true));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.pinUserPages(TASK_SIZE, 1, false, false));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.pinUserPages(va, 5 * PAGE, true, true));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.pinUserPages(va + 3 * PAGE, 3 * PAGE, false, true));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.pinUserPages(FIXED_BASE + 5 * PAGE, PAGE, true, true));
        assertFailsUnchanged(h, Errno.EFAULT, () -> p.pinUserPages(0, PAGE, false, false));

        p.rlimitMemlockBytes(0);
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.pinUserPages(va, -1, true, true));
        assertFailsUnchanged(h, Errno.EPERM, () -> p.pinUserPages(va, 0, true, true));
        assertFailsUnchanged(h, Errno.EPERM, () -> p.pinUserPages(va, PAGE, true, true));

        p.rlimitMemlockBytes(2 * PAGE);
        final PinnedPages ok = p.pinUserPages(va + 1, PAGE, true, true);
        assertThat(ok.pageCount()).isEqualTo(2);
        assertFailsUnchanged(h, Errno.ENOMEM, () -> p.pinUserPages(va, 1, true, true));
        p.unpinUserPages(ok);
        assertThat(p.pinnedVmPages()).isZero();
        assertFramesAddUp(h);
    }

    @Test
    void unpinTwiceOrByAnotherProcessOrWithACopyFailsWithEinval()
    {
        final Host h = host(c -> c);
        final UserProcess a = h.spawn("a").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        final UserProcess b = h.spawn("b");
        final long va = a.mmapAnonymous(4 * PAGE);
        final PinnedPages pin = a.pinUserPages(va, 4 * PAGE, true, false);
        final PinnedPages copy = new PinnedPages(a, pin.startAddress(), pin.pageCount(), pin.write(),
            pin.longterm(), pin.runs());
        final PinnedPages inflated = new PinnedPages(a, pin.startAddress(), Long.MAX_VALUE, true, true,
            List.of(new PhysRun(0, Long.MAX_VALUE & ~(PAGE - 1), PAGE)));

        assertFailsUnchanged(h, Errno.EINVAL, () -> b.unpinUserPages(pin));
        assertFailsUnchanged(h, Errno.EINVAL, () -> a.unpinUserPages(copy));
        assertFailsUnchanged(h, Errno.EINVAL, () -> a.unpinUserPages(inflated));
        a.unpinUserPages(pin);
        assertFailsUnchanged(h, Errno.EINVAL, () -> a.unpinUserPages(pin));
        assertThat(a.pinnedVmPages()).isZero();
        assertFramesAddUp(h);
    }

    @Test
    void pinnedFramesOutliveMunmapAndExitAndAreFreedByTheLastUnpin()
    {
        final Host h = host(c -> c.thpMode(ThpMode.ALWAYS));
        final long freeAtBoot = h.physicalMemory().freeFrames();
        final UserProcess p = h.spawn("p").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        final long va = p.mmapAnonymous(4 * MIB);
        p.write(va + HUGE - 1, new byte[] {1, 2});
        final PinnedPages pin = p.pinUserPages(va + HUGE - PAGE, 2 * PAGE, true, true);
        final long pa = pin.runs().get(0).physAddr();

        p.munmap(va, 4 * MIB);
        final byte[] out = new byte[1];
        h.physicalMemory().read(pa + PAGE - 1, out, 0, 1);
        assertThat(out).containsExactly(1);
        p.exit();
        p.exit();
        assertThat(h.physicalMemory().freeFrames()).isLessThan(freeAtBoot);
        assertFramesAddUp(h);

        p.unpinUserPages(pin);
        assertThat(h.physicalMemory().freeFrames()).isEqualTo(freeAtBoot);
        assertFramesAddUp(h);
        assertErrno(Errno.EFAULT, () -> h.physicalMemory().read(pa, out, 0, 1));
    }

    // ---- after exit

    @Test
    void everyCallAfterExitFailsWithEinval()
    {
        final Host h = host(c -> c);
        final UserProcess p = h.spawn("gone");
        final long va = p.mmapAnonymous(PAGE);
        p.exit();
        assertThat(h.processes()).doesNotContain(p);
        assertThat(p.exited()).isTrue();
        assertThat(p.vmaCount()).isZero();

        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mmapAnonymous(PAGE));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mmap(va, PAGE, Prot.READ_WRITE, anon(MapFlag.FIXED)));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.munmap(va, PAGE));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mprotect(va, PAGE, Set.of()));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.madvise(va, PAGE, Madvice.DONTNEED));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.mlock(va, PAGE));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.munlock(va, PAGE));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.touch(va, PAGE, true));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.read(va, 1));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.write(va, new byte[1]));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.pinUserPages(va, PAGE, true, true));
        assertFailsUnchanged(h, Errno.EINVAL, () -> p.fork("zombie-child"));
        assertFailsUnchanged(h, Errno.EINVAL, () -> SmapsImporter.importEntries(p,
            parse("10000000-10001000 rw-p 00000000 00:00 0\n"), false));
        assertThat(h.processes()).isEmpty();
    }

    // ---- PhysicalMemory

    @Test
    void physicalAccessOutsideMemoryOrToFreeFramesFailsWithEfault()
    {
        final UserProcess p = process();
        final PhysicalMemory pm = p.host().physicalMemory();
        final long va = p.mmapAnonymous(PAGE);
        p.write(va, new byte[] {1});
        final long pa = p.translate(va);
        final long end = pm.totalFrames() * PAGE;
        final byte[] buf = new byte[16];
        final Host h = p.host();

        assertFailsUnchanged(h, Errno.EFAULT, () -> pm.read(-1, buf, 0, 1));
        assertFailsUnchanged(h, Errno.EFAULT, () -> pm.read(Long.MIN_VALUE, buf, 0, 1));
        assertFailsUnchanged(h, Errno.EFAULT, () -> pm.read(end + 2 * PAGE, buf, 0, 1));
        assertFailsUnchanged(h, Errno.EFAULT, () -> pm.read(pa, buf, 0, -1));
        assertFailsUnchanged(h, Errno.EFAULT, () -> pm.read(pa + PAGE, buf, 0, 1));
        assertFailsUnchanged(h, Errno.EFAULT, () -> pm.read(pa + PAGE - 8, buf, 0, 16));
        assertFailsUnchanged(h, Errno.EFAULT, () -> pm.write(pa + PAGE - 8, buf, 0, 16));
        assertFailsUnchanged(h, Errno.EFAULT, () -> pm.write(-PAGE, buf, 0, 1));
        assertFailsUnchanged(h, Errno.EFAULT, () -> pm.write(end, buf, 0, 1));
        assertFailsUnchanged(h, Errno.EFAULT, () -> pm.write(end - 8, buf, 0, 16));
        assertFailsUnchanged(h, Errno.EFAULT, () -> pm.write(pa, buf, 0, Integer.MIN_VALUE));

        pm.read(end, buf, 0, 16);
        assertThat(buf).containsOnly(0);
        pm.read(pa, buf, 0, 0);
        pm.write(pa, buf, 0, 0);
        assertThat(pm.isAllocated(pm.zeroPfn())).isTrue();
    }

    // ---- Host

    @Test
    void reclaimAndCompactTolerateGarbageTargets()
    {
        final Host h = host(c -> c.swapBytes(16 * MIB));
        final UserProcess p = h.spawn("r");
        final long va = p.mmapAnonymous(MIB);
        p.touch(va, MIB, true);

        assertThat(h.reclaim(0)).isZero();
        assertThat(h.reclaim(-1)).isZero();
        assertThat(h.reclaim(Long.MIN_VALUE)).isZero();
        assertThat(h.reclaim(Long.MAX_VALUE)).isEqualTo(256);
        assertThat(h.reclaim(Long.MAX_VALUE)).isZero();
        h.compact();
        assertFramesAddUp(h);
        assertThat(p.read(va, 1)).containsExactly(0);
    }

    // ---- SmapsParser

    @Test
    void smapsParserRejectsGarbageWithALineNumber()
    {
        final Map<String, Integer> bad = new HashMap<>();
        bad.put("Rss: 4 kB\n", 1);
        bad.put("hello\n", 1);
        bad.put("00400000-00401000 r-xp 00000000 08:01\n", 1);
        bad.put("00400000 r-xp 00000000 08:01 1 /bin/x\n", 1);
        bad.put("0040000g-00401000 r-xp 00000000 08:01 1\n", 1);
        bad.put("00401000-00400000 r-xp 00000000 08:01 1\n", 1);
        bad.put("00400000-00400000 r-xp 00000000 08:01 1\n", 1);
        bad.put("00400000-00401000 rwxq 00000000 08:01 1\n", 1);
        bad.put("00400000-00401000 r-x 00000000 08:01 1\n", 1);
        bad.put("00400000-00401000 r-xp 0000000z 08:01 1\n", 1);
        bad.put("00400000-00401000 r-xp 00000000 0801 1\n", 1);
        bad.put("00400000-00401000 r-xp 00000000 :01 1\n", 1);
        bad.put("00400000-00401000 r-xp 00000000 08:01 -1\n", 1);
        bad.put("00400000-00401000 r-xp 00000000 08:01 99999999999999999999999\n", 1);
        bad.put("00400000-00401000 r-xp 00000000000000000 08:01 1\n", 1);
        bad.put("10000000000000000-10000000000000001 r-xp 0 08:01 1\n", 1);
        bad.put(" 00400000-00401000 r-xp 00000000 08:01 1\n", 1);
        bad.put("00400000-00401000 r-xp 00000000 08:01 1\nRss: -4 kB\n", 2);
        bad.put("00400000-00401000 r-xp 00000000 08:01 1\nRss: 99999999999999999999 kB\n", 2);
        bad.put("00400000-00401000 r-xp 00000000 08:01 1\nRss: 9223372036854775808 kB\n", 2);
        bad.put("00400000-00401000 r-xp 00000000 08:01 1\nRss: 1.5 kB\n", 2);
        bad.put("00400000-00401000 r-xp 00000000 08:01 1\nRss: kB\n", 2);
        bad.put("00400000-00401000 r-xp 00000000 08:01 1\nRss: 4 kB\nRss: 4 kB\n", 3);
        bad.put("00400000-00401000 r-xp 00000000 08:01 1\nVmFlags: rd\nVmFlags: rd\n", 3);
        bad.put("00400000-00401000 r-xp 00000000 08:01 1\n\n\n:\n", 4);
        bad.put("00400000-00401000 r-xp 00000000 08:01 1\n" + "x".repeat(100_000) + "\n", 2);
        for (final Map.Entry<String, Integer> e : bad.entrySet())
        {
            final Throwable t = catchThrowable(() -> SmapsParser.parse(new StringReader(e.getKey())));
            assertThat(t).as("input %s", e.getKey().length() > 80 ? e.getKey().substring(0, 80) : e.getKey())
                .isInstanceOf(SmapsFormatException.class);
            assertThat(((SmapsFormatException)t).lineNumber()).as("line number for %s", e.getKey().strip())
                .isEqualTo(e.getValue());
            assertThat(t.getMessage().length()).isLessThan(1000);
        }
    }

    @Test
    void smapsParserAcceptsExtremesThatAreWellFormed() throws IOException
    {
        final List<SmapsEntry> entries = SmapsParser.parse(new StringReader("""
            ffffffffff600000-ffffffffff601000 --xp ffffffffffffffff ff:ff 18446744073709551615 [vsyscall]
            Rss: 9223372036854775807 kB
            VmFlags:
            0-1 ---s 0 0:0 0
            \t
            """));

        assertThat(entries).hasSize(2);
        assertThat(entries.get(0).inode()).isEqualTo(-1L);
        assertThat(entries.get(0).fieldKb("Rss")).isEqualTo(Long.MAX_VALUE);
        assertThat(entries.get(0).vmFlags()).isEmpty();
        assertThat(entries.get(1).lengthBytes()).isEqualTo(1);
    }

    @Test
    void smapsParserFuzzThrowsOnlySmapsFormatException()
    {
        final String valid = """
            55d4c8a00000-55d4c8a01000 r--p 00000000 fd:01 1234567                    /usr/bin/app
            Size:                  4 kB
            KernelPageSize:        4 kB
            Rss:                   4 kB
            THPeligible:    0
            VmFlags: rd mr mw me dw sd
            7f3a40000000-7f3a40400000 rw-p 00000000 00:00 0
            Size:               4096 kB
            Rss:                2048 kB
            AnonHugePages:      2048 kB
            VmFlags: rd wr mr mw me ac sd hg
            """;
        final String alphabet = "0123456789abcdefx-: \t\nkBrwxps/[]VmFlags_Rss";
        final Random rnd = new Random(42);
        for (int i = 0; i < 3000; i++)
        {
            final StringBuilder s = new StringBuilder(valid);
            final int edits = 1 + rnd.nextInt(6);
            for (int k = 0; k < edits && s.length() > 0; k++)
            {
                final int at = rnd.nextInt(s.length());
                switch (rnd.nextInt(3))
                {
                    case 0 -> s.deleteCharAt(at);
                    case 1 -> s.insert(at, alphabet.charAt(rnd.nextInt(alphabet.length())));
                    default -> s.setCharAt(at, (char)rnd.nextInt(0x3000));
                }
            }
            final String text = s.toString();
            final Throwable t = catchThrowable(() -> SmapsParser.parse(new StringReader(text)));
            if (t != null)
            {
                assertThat(t).as("input:\n%s", text).isInstanceOf(SmapsFormatException.class);
            }
        }
    }

    // ---- SmapsImporter

    @Test
    void smapsImporterRejectsOverlapsMisalignmentAndNonEmptyProcesses()
    {
        final Host h = host(c -> c.hugepages2M(1).maxMapCount(2));
        final UserProcess p = h.spawn("imp");

        assertFailsUnchanged(h, Errno.EINVAL, () -> SmapsImporter.importEntries(p, parse("""
            10000000-10003000 rw-p 00000000 00:00 0
            10002000-10004000 rw-p 00000000 00:00 0
            """), false));
        assertFailsUnchanged(h, Errno.EINVAL, () -> SmapsImporter.importEntries(p, parse("""
            10000800-10003000 rw-p 00000000 00:00 0
            """), false));
        assertFailsUnchanged(h, Errno.EINVAL, () -> SmapsImporter.importEntries(p, parse("""
            10000000-10000001 rw-p 00000000 00:00 0
            """), false));
        assertFailsUnchanged(h, Errno.EINVAL, () -> SmapsImporter.importEntries(p, parse("""
            20000000-20001000 rw-p 00000000 00:00 0
            10000000-10001000 rw-p 00000000 00:00 0
            """), false));
        assertFailsUnchanged(h, Errno.EINVAL, () -> SmapsImporter.importEntries(p, parse("""
            7f0000100000-7f0000300000 rw-p 00000000 00:00 0
            KernelPageSize:     2048 kB
            VmFlags: rd wr ht
            """), false));
        assertFailsUnchanged(h, Errno.EINVAL, () -> SmapsImporter.importEntries(p, parse("""
            7f0000000000-7f0000200000 rw-p 00000000 00:00 0
            KernelPageSize:        8 kB
            """), false));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> SmapsImporter.importEntries(p, parse("""
            7f0000000000-7f0000400000 rw-p 00000000 00:00 0
            KernelPageSize:     2048 kB
            """), false));
        assertFailsUnchanged(h, Errno.ENOMEM, () -> SmapsImporter.importEntries(p, parse("""
            10000000-10001000 rw-p 00000000 00:00 0
            10002000-10003000 rw-p 00000000 00:00 0
            10004000-10005000 rw-p 00000000 00:00 0
            """), false));
        p.mmapAnonymous(PAGE);
        assertFailsUnchanged(h, Errno.EINVAL, () -> SmapsImporter.importEntries(p, parse("""
            10000000-10001000 rw-p 00000000 00:00 0
            """), false));
    }

    @Test
    void smapsImporterSkipsKernelSpaceAndAreasCrossingTaskSizeAndSurvivesHugeFieldValues()
    {
        final Host h = host(c -> c);
        final UserProcess p = h.spawn("imp");
        final SmapsImporter.Report report = SmapsImporter.importEntries(p, parse("""
            10000000-10200000 rw-p 00000000 00:00 0
            Rss: 9223372036854775807 kB
            AnonHugePages: 9223372036854775807 kB
            Private_Hugetlb: 9223372036854775807 kB
            Swap: 9223372036854775807 kB
            20000000-20001000 r--p ffffffffffff0000 08:01 77 /lib/x.so
            Rss: 4 kB
            7ffffffff000-800000001000 rw-p 00000000 00:00 0 [stack]
            ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]
            """), true);

        assertThat(report.vmasImported()).isEqualTo(2);
        assertThat(report.notes()).anySatisfy(n -> assertThat(n).contains("[vsyscall]"))
            .anySatisfy(n -> assertThat(n).contains("[stack]"));
        assertThat(p.vmaCount()).isEqualTo(2);
        assertFramesAddUp(h);
    }

    // ---- fork

    @Test
    void forkThatRunsOutOfMemoryLeavesNoChildBehind()
    {
        // MODERN fork copies pinned pages for the child; with no free frame the copy fails and the child is reaped.
        final UserProcess p = smallHostWithoutSwap().rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        final Host h = p.host();
        final long va = p.mmapAnonymous(PAGE);
        final PinnedPages pin = p.pinUserPages(va, PAGE, true, false);
        exhaustMemory(p);

        assertErrno(Errno.ENOMEM, () -> p.fork("child"));
        assertThat(h.processes()).containsExactly(p);
        assertThat(h.physicalMemory().freeFrames()).isZero();
        p.unpinUserPages(pin);
        assertFramesAddUp(h);
    }

    @Test
    void pinsAcrossForkMunmapDontneedReclaimAndCompactionLeaveNoFrameOrPoolPageBehind()
    {
        for (final ForkBehaviour fb : ForkBehaviour.values())
        {
            final Host h = new Host(HostConfig.builder().physicalMemoryBytes(256 * MIB).hugepages2M(4)
                .thpMode(ThpMode.ALWAYS).forkBehaviour(fb).swapBytes(16 * MIB).build());
            final long boot = h.physicalMemory().freeFrames();
            final UserProcess parent = h.spawn("parent").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
            final long hv = parent.mmap(0, 2 * HUGE, Prot.READ_WRITE, anon(MapFlag.HUGETLB));
            parent.write(hv, new byte[] {9});
            final PinnedPages hp = parent.pinUserPages(hv + PAGE, PAGE, true, true);
            final long va = parent.mmapAnonymous(4 * MIB);
            parent.write(va, new byte[(int)(4 * MIB)]);
            final PinnedPages tp = parent.pinUserPages(va + HUGE - 2 * PAGE, 4 * PAGE, true, true);
            final UserProcess child = parent.fork("child");
            child.touch(hv, 2 * HUGE, true);
            parent.munmap(va + HUGE - PAGE, 2 * PAGE);
            parent.madvise(va, MIB, Madvice.DONTNEED);
            child.madvise(va, 4 * MIB, Madvice.DONTNEED);
            h.reclaim(Long.MAX_VALUE);
            h.compact();
            parent.touch(va, HUGE - PAGE, true);
            parent.touch(va + HUGE + PAGE, 4 * MIB - HUGE - PAGE, true);
            assertFramesAddUp(h);
            child.exit();
            parent.munmap(hv, 2 * HUGE);
            assertThat(h.hugepagesReserved(PageSize.SIZE_2M)).as("%s rsvd", fb).isZero();
            parent.exit();
            parent.unpinUserPages(hp);
            parent.unpinUserPages(tp);
            assertFramesAddUp(h);
            assertThat(h.hugepagesFree(PageSize.SIZE_2M)).as("%s pool", fb).isEqualTo(4);
            assertThat(h.physicalMemory().freeFrames()).as("%s all freed", fb).isEqualTo(boot);
            assertThat(h.reclaim(1)).isZero();
        }
    }

    // ============================================================================================== fuzz

    /** A pool of addresses and lengths that hit every boundary the model checks. */
    private static final long[] GARBAGE = {
        0, 1, -1, 4095, PAGE, PAGE + 1, 2 * PAGE, 3 * PAGE - 1, 64 * KIB, HUGE - PAGE, HUGE, HUGE + PAGE, 4 * MIB,
        GIB, Long.MAX_VALUE, Long.MIN_VALUE, Long.MAX_VALUE - PAGE + 1, -PAGE, TASK_SIZE, TASK_SIZE - 1,
        TASK_SIZE - PAGE, TASK_SIZE + PAGE, UserProcess.MMAP_BASE, UserProcess.MMAP_BASE - HUGE, FIXED_BASE,
        FIXED_BASE + PAGE, 1L << 47, 1L << 48, Integer.MAX_VALUE, Integer.MIN_VALUE};

    private static long pick(final Random rnd, final List<Long> interesting)
    {
        return switch (rnd.nextInt(4))
        {
            case 0 -> GARBAGE[rnd.nextInt(GARBAGE.length)];
            case 1 -> interesting.isEmpty() ? rnd.nextLong() : interesting.get(rnd.nextInt(interesting.size()))
                + (rnd.nextInt(5) - 2) * (rnd.nextBoolean() ? PAGE : 1);
            case 2 -> (long)rnd.nextInt(64) * PAGE;
            default -> rnd.nextLong();
        };
    }

    /** Lengths for calls that walk every page: bounded, or garbage that must be refused up front. */
    private static long pickWalkLength(final Random rnd)
    {
        return switch (rnd.nextInt(6))
        {
            case 0 -> new long[] {0, -1, Long.MIN_VALUE, Long.MAX_VALUE, TASK_SIZE, -PAGE}[rnd.nextInt(6)];
            case 1 -> rnd.nextInt((int)(2 * HUGE));
            default -> (1 + rnd.nextInt(32)) * PAGE;
        };
    }

    private static <T extends Enum<T>> Set<T> randomSet(final Random rnd, final Class<T> type)
    {
        final Set<T> out = EnumSet.noneOf(type);
        for (final T t : type.getEnumConstants())
        {
            if (rnd.nextInt(3) == 0)
            {
                out.add(t);
            }
        }
        return out;
    }

    @Test
    void randomGarbageCallsFailOnlyWithKernelExceptionAndChangeNothingWhenTheyFail()
    {
        final long seed = Long.getLong("adv.seed", 20240601L);
        final int ops = Integer.getInteger("adv.ops", 2500);
        final List<String> failures = new ArrayList<>();
        failures.addAll(fuzz(seed, ops, HostConfig.builder().physicalMemoryBytes(256 * MIB)
            .movableZoneBytes(64 * MIB).hugepages2M(8).swapBytes(64 * MIB).thpMode(ThpMode.ALWAYS).maxMapCount(40)
            .build()));
        failures.addAll(fuzz(seed + 1, ops, HostConfig.builder().physicalMemoryBytes(128 * MIB).hugepages2M(4)
            .thpMode(ThpMode.MADVISE).forkBehaviour(ForkBehaviour.LEGACY).maxMapCount(12).mmapMinAddrBytes(0)
            .build()));
        assertThat(failures).isEmpty();
    }

    /** Runs {@code ops} random calls on a host; returns what went wrong, one line each. */
    private static List<String> fuzz(final long seed, final int ops, final HostConfig config)
    {
        final Random rnd = new Random(seed);
        final Host h = new Host(config);
        final List<UserProcess> procs = new ArrayList<>(List.of(h.spawn("fuzz0")));
        final List<PinnedPages> pins = new ArrayList<>();
        final List<Long> interesting = new ArrayList<>();
        final PhysicalMemory pm = h.physicalMemory();
        final List<String> failures = new ArrayList<>();
        for (int i = 0; i < ops && failures.size() < 10; i++)
        {
            final UserProcess p = procs.get(rnd.nextInt(procs.size()));
            final long a = pick(rnd, interesting);
            final long len = pick(rnd, interesting);
            final long walk = pickWalkLength(rnd);
            final int op = rnd.nextInt(19);
            final String[] what = {""};
            final boolean[] mayChangeOnFailure = {false};
            final State before = State.of(h);
            final Throwable thrown = catchThrowable(() ->
            {
                switch (op)
                {
                    case 0, 1 ->
                    {
                        final Set<MapFlag> f = randomSet(rnd, MapFlag.class);
                        if (rnd.nextInt(3) > 0)
                        {
                            f.add(MapFlag.PRIVATE);
                            f.add(MapFlag.ANONYMOUS);
                            f.remove(MapFlag.SHARED);
                        }
                        final long l = rnd.nextBoolean() ? walk : len;
                        if (l > 16 * MIB)
                        {
                            f.remove(MapFlag.POPULATE);
                        }
                        final Set<Prot> prot = randomSet(rnd, Prot.class);
                        what[0] = "mmap(0x" + Long.toHexString(a) + ", " + l + ", " + prot + ", " + f + ")";
                        final long got = p.mmap(a, l, prot, f);
                        interesting.add(got);
                        interesting.add(got + Math.max(0, Math.min(l, 64 * MIB)));
                    }
                    case 2 ->
                    {
                        what[0] = "munmap(0x" + Long.toHexString(a) + ", " + len + ")";
                        p.munmap(a, len);
                    }
                    case 3 ->
                    {
                        final Set<Prot> prot = randomSet(rnd, Prot.class);
                        what[0] = "mprotect(0x" + Long.toHexString(a) + ", " + len + ", " + prot + ")";
                        p.mprotect(a, len, prot);
                    }
                    case 4 ->
                    {
                        final Madvice adv = Madvice.values()[rnd.nextInt(Madvice.values().length)];
                        what[0] = "madvise(0x" + Long.toHexString(a) + ", " + len + ", " + adv + ")";
                        // madvise_collapse keeps the parts it collapsed before a failing one.
                        mayChangeOnFailure[0] = adv == Madvice.COLLAPSE;
                        p.madvise(a, len, adv);
                    }
                    case 5 ->
                    {
                        what[0] = "mlock(0x" + Long.toHexString(a) + ", " + walk + ")";
                        mayChangeOnFailure[0] = true; // mlockThatRunsOutOfMemoryLeavesNoPageBehind
                        p.mlock(a, walk);
                    }
                    case 6 ->
                    {
                        what[0] = "munlock(0x" + Long.toHexString(a) + ", " + len + ")";
                        p.munlock(a, len);
                    }
                    case 7 ->
                    {
                        final boolean w = rnd.nextBoolean();
                        what[0] = "touch(0x" + Long.toHexString(a) + ", " + walk + ", " + w + ")";
                        mayChangeOnFailure[0] = true; // documented: pages touched before ENOMEM stay
                        p.touch(a, walk, w);
                    }
                    case 8 ->
                    {
                        final int n = (int)Math.max(Integer.MIN_VALUE, Math.min(64 * KIB, walk));
                        what[0] = "read(0x" + Long.toHexString(a) + ", " + n + ")";
                        p.read(a, n);
                    }
                    case 9 ->
                    {
                        final byte[] data = new byte[rnd.nextInt((int)(3 * PAGE))];
                        rnd.nextBytes(data);
                        what[0] = "write(0x" + Long.toHexString(a) + ", byte[" + data.length + "])";
                        mayChangeOnFailure[0] = true; // writeThatRunsOutOfMemoryLeavesNoPageBehind
                        p.write(a, data);
                    }
                    case 10, 11 ->
                    {
                        final boolean w = rnd.nextBoolean();
                        final boolean lt = rnd.nextBoolean();
                        what[0] = "pin(0x" + Long.toHexString(a) + ", " + walk + ", " + w + ", " + lt + ")";
                        mayChangeOnFailure[0] = true; // pinThatRunsOutOfMemoryLeavesNoPageBehind
                        pins.add(p.pinUserPages(a, walk, w, lt));
                    }
                    case 12 ->
                    {
                        if (pins.isEmpty())
                        {
                            return;
                        }
                        final PinnedPages pin = pins.get(rnd.nextInt(pins.size()));
                        final UserProcess by = rnd.nextInt(4) == 0 ? p : pin.process();
                        what[0] = "unpin(" + pin.startAddress() + "+" + pin.pageCount() + " of pid "
                            + pin.process().pid() + " by pid " + by.pid() + ")";
                        by.unpinUserPages(pin);
                    }
                    case 13 ->
                    {
                        final long pa = rnd.nextBoolean() && !interesting.isEmpty()
                            ? p.translate(interesting.get(rnd.nextInt(interesting.size())))
                            : Math.floorMod(rnd.nextLong(), pm.totalFrames() * PAGE + 8 * PAGE) - 4 * PAGE;
                        final int n = rnd.nextInt(3) == 0 ? -rnd.nextInt(10) : rnd.nextInt((int)(2 * PAGE));
                        final byte[] buf = new byte[Math.max(0, n)];
                        rnd.nextBytes(buf);
                        final boolean w = rnd.nextBoolean();
                        what[0] = (w ? "phys.write(0x" : "phys.read(0x") + Long.toHexString(pa) + ", " + n + ")";
                        if (w)
                        {
                            pm.write(pa, buf, 0, n);
                        }
                        else
                        {
                            pm.read(pa, buf, 0, n);
                        }
                    }
                    case 14 ->
                    {
                        if (procs.size() >= 4)
                        {
                            return;
                        }
                        what[0] = "fork(pid " + p.pid() + ")";
                        procs.add(p.fork("child" + procs.size()));
                    }
                    case 15 ->
                    {
                        if (procs.size() == 1 || rnd.nextInt(4) > 0)
                        {
                            return;
                        }
                        what[0] = "exit(pid " + p.pid() + ")";
                        p.exit();
                        procs.remove(p);
                    }
                    case 16 ->
                    {
                        final long target = rnd.nextBoolean() ? rnd.nextInt(600) : a;
                        what[0] = "reclaim(" + target + ") / compact()";
                        h.reclaim(target);
                        h.compact();
                    }
                    case 17 ->
                    {
                        final boolean cap = rnd.nextInt(3) == 0;
                        what[0] = "capIpcLock(" + cap + ")";
                        p.capIpcLock(cap);
                    }
                    default ->
                    {
                        final long limit = rnd.nextBoolean() ? len : (long)rnd.nextInt(64) * PAGE;
                        what[0] = "rlimitMemlockBytes(" + limit + ")";
                        p.rlimitMemlockBytes(limit);
                    }
                }
            });
            final PhysicalMemory phys = h.physicalMemory();
            if (phys.freeFrames() + phys.usedFrames() != phys.totalFrames())
            {
                failures.add("seed " + seed + " #" + i + " " + what[0] + ": free " + phys.freeFrames() + " + used "
                    + phys.usedFrames() + " != total " + phys.totalFrames());
            }
            if (thrown == null)
            {
                continue;
            }
            if (!(thrown instanceof KernelException))
            {
                failures.add("seed " + seed + " #" + i + " " + what[0] + " threw " + thrown);
                continue;
            }
            final boolean outOfMemory = ((KernelException)thrown).errno() == Errno.ENOMEM
                || ((KernelException)thrown).errno() == Errno.EAGAIN;
            if (!(mayChangeOnFailure[0] && outOfMemory) && !State.of(h).equals(before))
            {
                failures.add("seed " + seed + " #" + i + " " + what[0] + " failed with " + thrown.getMessage()
                    + " but changed the state");
            }
        }
        return failures;
    }

    @Test
    void randomSmapsImportsFailOnlyWithKernelExceptionAndLeaveTheProcessEmpty()
    {
        final Random rnd = new Random(Long.getLong("adv.seed", 7L));
        final String[] perms = {"rw-p", "r--p", "---p", "r-xp", "-w-p", "rw-s"};
        final String[] names = {"", "[heap]", "/usr/lib/libc.so.6", "/anon_hugepage (deleted)", "[anon:x]"};
        final Host h = new Host(HostConfig.builder().physicalMemoryBytes(64 * MIB).hugepages2M(4)
            .thpMode(ThpMode.MADVISE).maxMapCount(8).build());
        final List<String> failures = new ArrayList<>();
        for (int i = 0; i < 300 && failures.size() < 10; i++)
        {
            final StringBuilder text = new StringBuilder();
            long cursor = 0x10000L * (1 + rnd.nextInt(4));
            final int n = 1 + rnd.nextInt(6);
            for (int k = 0; k < n; k++)
            {
                final long gap = (long)rnd.nextInt(3) * HUGE + (rnd.nextInt(4) == 0 ? -PAGE : 0);
                final long size = rnd.nextInt(3) == 0 ? HUGE * (1 + rnd.nextInt(2)) : PAGE * (1 + rnd.nextInt(64));
                final long start = Math.max(PAGE, cursor + gap);
                final long end = start + size + (rnd.nextInt(10) == 0 ? 1 : 0);
                cursor = end;
                final boolean ht = rnd.nextInt(5) == 0;
                text.append(String.format("%x-%x %s %08x 00:00 %d %s%n", start, end, perms[rnd.nextInt(perms.length)],
                    0, rnd.nextInt(3) == 0 ? 99 : 0, names[rnd.nextInt(names.length)]));
                text.append("Size: ").append(size / KIB).append(" kB\n");
                text.append("KernelPageSize: ").append(ht ? 2048 : 4).append(" kB\n");
                text.append("Rss: ").append(rnd.nextInt(4) == 0 ? Long.MAX_VALUE : rnd.nextInt(8192)).append(" kB\n");
                text.append("AnonHugePages: ").append(rnd.nextInt(3) * 2048).append(" kB\n");
                text.append("Private_Hugetlb: ").append(ht ? rnd.nextInt(3) * 2048 : 0).append(" kB\n");
                text.append("VmFlags: rd wr").append(ht ? " ht" : "").append(rnd.nextBoolean() ? " hg" : " nh")
                    .append(rnd.nextInt(4) == 0 ? " lo" : "").append('\n');
            }
            final UserProcess p = h.spawn("imp" + i);
            final State before = State.of(h);
            final List<SmapsEntry> entries = parse(text.toString());
            final Throwable thrown = catchThrowable(() -> SmapsImporter.importEntries(p, entries, rnd.nextBoolean()));
            final PhysicalMemory pm = h.physicalMemory();
            if (pm.freeFrames() + pm.usedFrames() != pm.totalFrames())
            {
                failures.add("#" + i + " frames do not add up after import of\n" + text);
            }
            if (thrown != null && !(thrown instanceof KernelException))
            {
                failures.add("#" + i + " threw " + thrown + " for\n" + text);
            }
            else if (thrown != null && !State.of(h).equals(before))
            {
                failures.add("#" + i + " failed with " + thrown.getMessage() + " but changed the state for\n"
                    + text);
            }
            p.exit();
            if (pm.freeFrames() + pm.usedFrames() != pm.totalFrames())
            {
                failures.add("#" + i + " frames do not add up after exit of\n" + text);
            }
        }
        assertThat(failures).isEmpty();
    }
}
