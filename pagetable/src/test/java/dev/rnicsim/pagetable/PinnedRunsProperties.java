package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * Plain properties of one {@code pinUserPages} call on a small host (64 MiB, a quarter ZONE_MOVABLE, four 2 MiB
 * hugetlb pages): over a mapping whose pages are a random mix of 2 MiB THP leaves, 4 KiB leaves (after a partial
 * MADV_DONTNEED and refault or an mprotect split) and untouched pages, or over a MAP_HUGETLB mapping, a pin of a
 * random byte range returns runs that cover exactly the widened page range, in virtual-address order, physically
 * contiguous, each of one page size that matches the leaf mapping it, merged as far as possible, never in
 * ZONE_MOVABLE for a long-term pin; the pins and {@code pinned_vm} are exact and go back to zero on unpin, and
 * pinned frames outlive the mapping until the unpin frees them.
 */
class PinnedRunsProperties
{
    private static final long MIB = 1L << 20;
    private static final long HUGE = 2 * MIB;
    private static final int PAGE = 4096;

    /** A process with one mapping laid out as the parameters say; the pin comes after. */
    private record Layout(Host host, UserProcess process, long va, long length)
    {
    }

    private static Layout layout(final ThpMode thp, final boolean hugetlb, final int hugePages, final int touchedPages,
        final int holeStart, final int holePages, final boolean mprotectSplit)
    {
        final Host host = new Host(HostConfig.builder().physicalMemoryBytes(64 * MIB).movableZoneBytes(16 * MIB)
            .hugepages2M(4).swapBytes(64 * MIB).thpMode(thp).build());
        final UserProcess p = host.spawn("app").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        final long length = hugePages * HUGE;
        final long va = hugetlb
            ? p.mmap(0, length, Prot.READ_WRITE, Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.HUGETLB))
            : p.mmapAnonymous(length);
        final long totalPages = length / PAGE;
        final long touched = Math.min(totalPages, touchedPages);
        p.touch(va, touched * PAGE, true);
        if (!hugetlb)
        {
            final long start = Math.floorMod(holeStart, totalPages);
            final long pages = Math.min(holePages, totalPages - start);
            p.madvise(va + start * PAGE, pages * PAGE, Madvice.DONTNEED);
            p.touch(va + start * PAGE, Math.min(pages, 3) * PAGE, false);
            if (mprotectSplit)
            {
                p.mprotect(va + start * PAGE, PAGE, Set.of(Prot.READ));
                p.mprotect(va + start * PAGE, PAGE, Prot.READ_WRITE);
            }
        }
        p.write(va + 8, new byte[] {1, 2, 3});
        return new Layout(host, p, va, length);
    }

    @Property(tries = 300)
    void pinnedRunsCoverExactlyThePinnedPagesContiguouslyAndNeverMixPageSizes(
        @ForAll final ThpMode thp, @ForAll final boolean hugetlb,
        @ForAll @IntRange(min = 1, max = 2) final int hugePages,
        @ForAll @IntRange(min = 0, max = 1024) final int touchedPages, @ForAll final int holeStart,
        @ForAll @IntRange(min = 0, max = 700) final int holePages, @ForAll final boolean mprotectSplit,
        @ForAll @LongRange(min = 0, max = 4 * MIB) final long offset,
        @ForAll @LongRange(min = 1, max = 4 * MIB) final long len,
        @ForAll final boolean write, @ForAll final boolean longterm)
    {
        final Layout l = layout(thp, hugetlb, hugePages, touchedPages, holeStart, holePages, mprotectSplit);
        final UserProcess p = l.process();
        final PhysicalMemory pm = l.host().physicalMemory();
        final long address = l.va() + Math.floorMod(offset, l.length());
        final long length = Math.min(len, l.va() + l.length() - address);
        final long first = address & ~(long)(PAGE - 1);
        final long pageCount = (address + length + PAGE - 1) / PAGE - address / PAGE;

        final PinnedPages pin = p.pinUserPages(address, length, write, longterm);

        assertThat(pin.startAddress()).as("start address").isEqualTo(first);
        assertThat(pin.pageCount()).as("page count").isEqualTo(pageCount);
        assertThat(pin.runs().stream().mapToLong(PhysRun::frames).sum()).as("frames in runs").isEqualTo(pageCount);
        assertThat(p.pinnedVmPages()).as("pinned_vm").isEqualTo(pageCount);
        final List<Long> pfns = new ArrayList<>();
        PhysRun previous = null;
        long va = first;
        for (final PhysRun run : pin.runs())
        {
            assertThat(run.pageSizeBytes()).as("page size of %s", run).isIn(4096L, HUGE, 1L << 30);
            assertThat(run.lengthBytes()).as("length of %s", run).isPositive();
            assertThat(run.physAddr() % PAGE).as("alignment of %s", run).isZero();
            assertThat(run.lengthBytes() % PAGE).as("length of %s", run).isZero();
            if (previous != null)
            {
                assertThat(previous.physAddr() + previous.lengthBytes() == run.physAddr()
                    && previous.pageSizeBytes() == run.pageSizeBytes())
                    .as("runs %s and %s are contiguous with one page size but were not merged", previous, run)
                    .isFalse();
            }
            for (long f = 0; f < run.frames(); f++, va += PAGE)
            {
                final long pfn = run.firstPfn() + f;
                assertThat(p.translate(va)).as("translate(0x%x) vs run %s", va, run).isEqualTo(pfn * PAGE);
                assertThat(p.mappedPageSize(va)).as("leaf size at 0x%x vs run %s", va, run).isNotNull();
                assertThat(p.mappedPageSize(va).bytes()).as("leaf size at 0x%x vs run %s", va, run)
                    .isEqualTo(run.pageSizeBytes());
                assertThat(pm.isAllocated(pfn)).as("pinned frame 0x%x allocated", pfn).isTrue();
                if (longterm)
                {
                    assertThat(pm.zoneOf(pfn)).as("zone of long-term pinned frame 0x%x", pfn).isEqualTo(Zone.NORMAL);
                }
                pfns.add(pfn);
            }
            previous = run;
        }
        assertThat(p.read(l.va() + 8, 3)).as("bytes written before the pin").containsExactly(1, 2, 3);
        for (final long pfn : pfns)
        {
            final long folio = pm.folioSize(pfn).frames();
            final long head = pfn & ~(folio - 1);
            final long pinnedInFolio = pfns.stream().filter(x -> (x & ~(folio - 1)) == head).count();
            assertThat(pm.pinCount(pfn)).as("pin count of frame 0x%x", pfn).isEqualTo((int)pinnedInFolio);
        }

        p.unpinUserPages(pin);

        assertThat(p.pinnedVmPages()).as("pinned_vm after unpin").isZero();
        for (final long pfn : pfns)
        {
            assertThat(pm.pinCount(pfn)).as("pin count of frame 0x%x after unpin", pfn).isZero();
        }
        assertThat(pm.freeFrames() + pm.usedFrames()).isEqualTo(pm.totalFrames());
    }

    /**
     * The {@link PhysRun} contract: a run covers only part of a huge page at either end of the pinned range, so
     * every run but the first starts on a boundary of its page size and every run but the last ends on one.
     */
    @Property(tries = 200)
    void partialHugePagesOccurOnlyAtTheEndsOfAPinnedRange(
        @ForAll final ThpMode thp, @ForAll final boolean hugetlb,
        @ForAll @IntRange(min = 1, max = 2) final int hugePages,
        @ForAll @IntRange(min = 0, max = 1024) final int touchedPages, @ForAll final int holeStart,
        @ForAll @IntRange(min = 0, max = 700) final int holePages, @ForAll final boolean mprotectSplit,
        @ForAll @LongRange(min = 0, max = 4 * MIB) final long offset,
        @ForAll @LongRange(min = 1, max = 4 * MIB) final long len,
        @ForAll final boolean write, @ForAll final boolean longterm)
    {
        final Layout l = layout(thp, hugetlb, hugePages, touchedPages, holeStart, holePages, mprotectSplit);
        final long address = l.va() + Math.floorMod(offset, l.length());
        final long length = Math.min(len, l.va() + l.length() - address);

        final List<PhysRun> runs = l.process().pinUserPages(address, length, write, longterm).runs();

        for (int k = 0; k < runs.size(); k++)
        {
            final PhysRun run = runs.get(k);
            if (k > 0)
            {
                assertThat(run.physAddr() % run.pageSizeBytes())
                    .as("run %d of %s starts inside a page of its size", k, runs).isZero();
            }
            if (k < runs.size() - 1)
            {
                assertThat((run.physAddr() + run.lengthBytes()) % run.pageSizeBytes())
                    .as("run %d of %s ends inside a page of its size", k, runs).isZero();
            }
        }
    }

    @Property(tries = 200)
    void pinnedFramesOutliveTheMappingAndUnpinFreesThem(
        @ForAll final ThpMode thp, @ForAll final boolean hugetlb,
        @ForAll @IntRange(min = 1, max = 2) final int hugePages,
        @ForAll @IntRange(min = 0, max = 1024) final int touchedPages,
        @ForAll @LongRange(min = 0, max = 4 * MIB) final long offset,
        @ForAll @LongRange(min = 1, max = 4 * MIB) final long len,
        @ForAll final boolean write, @ForAll final boolean longterm, @ForAll final boolean reclaimAndCompact)
    {
        final Layout l = layout(thp, hugetlb, hugePages, touchedPages, 0, 0, false);
        final UserProcess p = l.process();
        final PhysicalMemory pm = l.host().physicalMemory();
        final long address = l.va() + Math.floorMod(offset, l.length());
        final long length = Math.min(len, l.va() + l.length() - address);
        final byte[] marker = {(byte)0xA5, 0x5A};
        p.write(address & ~(long)(PAGE - 1), marker);
        final PinnedPages pin = p.pinUserPages(address, length, write, longterm);
        final long firstPhys = pin.runs().get(0).physAddr();

        p.munmap(l.va(), l.length());
        if (reclaimAndCompact)
        {
            l.host().reclaim(1L << 20);
            l.host().compact();
        }

        for (final PhysRun run : pin.runs())
        {
            for (long pfn = run.firstPfn(); pfn < run.firstPfn() + run.frames(); pfn++)
            {
                assertThat(pm.isAllocated(pfn)).as("pinned frame 0x%x after munmap", pfn).isTrue();
            }
        }
        final byte[] seen = new byte[2];
        pm.read(firstPhys, seen, 0, 2);
        assertThat(seen).as("bytes of the first pinned frame after munmap").containsExactly(marker);
        assertThat(p.pinnedVmPages()).isEqualTo(pin.pageCount());

        p.unpinUserPages(pin);
        p.exit();

        final long pool = l.host().hugepagesTotal(PageSize.SIZE_2M) * PageSize.SIZE_2M.frames();
        assertThat(p.pinnedVmPages()).isZero();
        assertThat(pm.usedFrames()).as("used frames after unpin and exit (hugetlb pool only)").isEqualTo(pool);
        assertThat(pm.freeFrames() + pool).isEqualTo(pm.totalFrames());
    }
}
