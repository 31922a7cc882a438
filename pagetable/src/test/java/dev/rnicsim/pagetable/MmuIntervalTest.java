package dev.rnicsim.pagetable;

import static dev.rnicsim.pagetable.KernelAssertions.ascii;
import static dev.rnicsim.pagetable.KernelAssertions.assertErrno;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.Test;

/**
 * Interval notifiers ({@code mmu_interval_notifier}) and {@code hmm_range_fault}: every host operation that unmaps,
 * replaces, write-protects or moves a present page tells the intervals over it first, with its event and reason,
 * while the page is still mapped and allocated; each invalidation advances the interval's sequence; nothing else
 * is told. The walk reports present pages, faults pages in on request and breaks copy-on-write for a write.
 */
class MmuIntervalTest
{
    private static final long MIB = 1L << 20;
    private static final long PAGE = PhysicalMemory.FRAME_BYTES;

    /** One callback as the interval's owner saw it. */
    record Seen(MmuRange range, long sequence, long physAtStart, boolean frameAllocated)
    {
    }

    /** Records every invalidation with what the page table and the frame looked like during the callback. */
    static final class Recorder implements MmuInterval.Ops
    {
        final List<Seen> seen = new ArrayList<>();

        @Override
        public void invalidate(final MmuInterval interval, final MmuRange range)
        {
            final UserProcess p = interval.process();
            final long phys = p.translate(range.startVa());
            final boolean allocated = phys >= 0 && p.host().physicalMemory().isAllocated(phys >>> 12);
            seen.add(new Seen(range, interval.readBegin(), phys, allocated));
        }

        List<String> reasons()
        {
            return seen.stream().map(s -> s.range().reason()).distinct().toList();
        }

        List<MmuNotifyEvent> events()
        {
            return seen.stream().map(s -> s.range().event()).distinct().toList();
        }
    }

    private static UserProcess process(final UnaryOperator<HostConfig.Builder> config)
    {
        return new Host(config.apply(HostConfig.builder().physicalMemoryBytes(256 * MIB).swapBytes(64 * MIB)
            .thpMode(ThpMode.NEVER)).build()).spawn("app").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
    }

    private static UserProcess process()
    {
        return process(c -> c);
    }

    /** Writes one tag per page so that every page has its own frame. */
    private static void fill(final UserProcess p, final long va, final int pages)
    {
        for (int i = 0; i < pages; i++)
        {
            p.write(va + i * PAGE, ascii("page-" + i));
        }
    }

    /** Every callback ran on a present, allocated page, and the sequence had advanced for each one. */
    private static void assertToldBeforeTheChange(final Recorder r, final long sequenceBefore)
    {
        assertThat(r.seen).isNotEmpty();
        for (int i = 0; i < r.seen.size(); i++)
        {
            final Seen s = r.seen.get(i);
            assertThat(s.physAtStart()).as("page still mapped during callback %d (%s)", i, s.range()).isNotEqualTo(-1);
            assertThat(s.frameAllocated()).as("frame still allocated during callback %d", i).isTrue();
            assertThat(s.sequence()).as("sequence at callback %d", i).isEqualTo(sequenceBefore + i + 1);
        }
    }

    // ------------------------------------------------------------------ one cause each

    @Test
    void munmapTellsUnmapBeforeThePagesGo()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        fill(p, va, 4);
        final Recorder r = new Recorder();
        final MmuInterval i = p.insertIntervalNotifier(va, 4 * PAGE, r);
        final long seq = i.readBegin();

        p.munmap(va + PAGE, 2 * PAGE);

        assertToldBeforeTheChange(r, seq);
        assertThat(r.seen).extracting(s -> s.range().startVa()).containsExactly(va + PAGE, va + 2 * PAGE);
        assertThat(r.seen).allSatisfy(s -> assertThat(s.range().lengthBytes()).isEqualTo(PAGE));
        assertThat(r.events()).containsExactly(MmuNotifyEvent.UNMAP);
        assertThat(r.reasons()).containsExactly("munmap");
        assertThat(r.seen).extracting(s -> s.range().operationId()).containsOnly(r.seen.get(0).range().operationId());
        assertThat(i.readRetry(seq)).isTrue();
        assertThat(p.translate(va + PAGE)).isEqualTo(-1);
        assertThat(p.translate(va)).isNotEqualTo(-1);
    }

    @Test
    void mmapFixedOverMappedPagesTellsUnmap()
    {
        // MAP_FIXED unmaps what was there first (do_vmi_munmap), as munmap does.
        final UserProcess p = process();
        final long va = p.mmapAnonymous(2 * PAGE);
        fill(p, va, 2);
        final Recorder r = new Recorder();
        final MmuInterval i = p.insertIntervalNotifier(va, 2 * PAGE, r);
        final long seq = i.readBegin();

        p.mmap(va, 2 * PAGE, Prot.READ_WRITE, Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.FIXED));

        assertToldBeforeTheChange(r, seq);
        assertThat(r.seen).hasSize(2);
        assertThat(r.events()).containsExactly(MmuNotifyEvent.UNMAP);
        assertThat(p.translate(va)).isEqualTo(-1);
    }

    @Test
    void madviseDontneedTellsClear()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        fill(p, va, 4);
        final Recorder r = new Recorder();
        final MmuInterval i = p.insertIntervalNotifier(va, 4 * PAGE, r);
        final long seq = i.readBegin();

        p.madvise(va, 4 * PAGE, Madvice.DONTNEED);

        assertToldBeforeTheChange(r, seq);
        assertThat(r.seen).hasSize(4);
        assertThat(r.events()).containsExactly(MmuNotifyEvent.CLEAR);
        assertThat(r.reasons()).containsExactly("madvise(MADV_DONTNEED)");
        assertThat(p.translate(va)).isEqualTo(-1);
    }

    @Test
    void mprotectRemovingWriteTellsProtectionVmaAndAddingItTellsNothing()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(2 * PAGE);
        fill(p, va, 2);
        final long phys = p.translate(va);
        final Recorder r = new Recorder();
        final MmuInterval i = p.insertIntervalNotifier(va, 2 * PAGE, r);
        final long seq = i.readBegin();

        p.mprotect(va, 2 * PAGE, Set.of(Prot.READ));

        assertToldBeforeTheChange(r, seq);
        assertThat(r.seen).hasSize(2);
        assertThat(r.events()).containsExactly(MmuNotifyEvent.PROTECTION_VMA);
        assertThat(r.reasons()).containsExactly("mprotect");
        assertThat(p.translate(va)).isEqualTo(phys);

        final int told = r.seen.size();
        p.mprotect(va, 2 * PAGE, Prot.READ_WRITE);
        p.write(va, ascii("again"));

        assertThat(r.seen).as("write access coming back changes no frame").hasSize(told);
        assertThat(p.translate(va)).isEqualTo(phys);
    }

    @Test
    void forkTellsProtectionPageForTheParentsWriteProtectedPages()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(2 * PAGE);
        fill(p, va, 2);
        final Recorder r = new Recorder();
        final MmuInterval i = p.insertIntervalNotifier(va, 2 * PAGE, r);
        final long seq = i.readBegin();

        final UserProcess child = p.fork("child");

        assertToldBeforeTheChange(r, seq);
        assertThat(r.seen).hasSize(2);
        assertThat(r.events()).containsExactly(MmuNotifyEvent.PROTECTION_PAGE);
        assertThat(r.reasons()).containsExactly("fork");
        assertThat(child.translate(va)).isEqualTo(p.translate(va));
        assertThat(child.intervalNotifierCount()).as("intervals are not inherited").isZero();
    }

    @Test
    void copyOnWriteBreakTellsClearWhileTheSharedFrameIsStillMapped()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(PAGE);
        p.write(va, ascii("before"));
        final long shared = p.translate(va);
        final UserProcess child = p.fork("child");
        final Recorder r = new Recorder();
        final MmuInterval i = p.insertIntervalNotifier(va, PAGE, r);
        final long seq = i.readBegin();

        p.write(va, ascii("parent"));

        assertToldBeforeTheChange(r, seq);
        assertThat(r.seen).hasSize(1);
        assertThat(r.seen.get(0).physAtStart()).as("the old frame during the callback").isEqualTo(shared);
        assertThat(r.events()).containsExactly(MmuNotifyEvent.CLEAR);
        assertThat(r.reasons()).containsExactly("copy-on-write");
        assertThat(p.translate(va)).isNotEqualTo(shared);
        assertThat(child.translate(va)).isEqualTo(shared);
        assertThat(child.read(va, 6)).isEqualTo(ascii("before"));
    }

    @Test
    void writeAfterAReadOfTheZeroPageTellsCopyOnWrite()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(PAGE);
        final Recorder r = new Recorder();
        p.insertIntervalNotifier(va, PAGE, r);

        p.read(va, 8);
        assertThat(r.seen).as("a read fault that replaces nothing").isEmpty();
        final long zero = p.translate(va);
        assertThat(zero >>> 12).isEqualTo(p.host().physicalMemory().zeroPfn());

        p.write(va, ascii("x"));

        assertThat(r.seen).hasSize(1);
        assertThat(r.seen.get(0).physAtStart()).isEqualTo(zero);
        assertThat(r.reasons()).containsExactly("copy-on-write");
    }

    @Test
    void faultsThatFillEmptyEntriesTellNothing()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        final Recorder r = new Recorder();
        final MmuInterval i = p.insertIntervalNotifier(va, 4 * PAGE, r);
        final long seq = i.readBegin();

        p.touch(va, 2 * PAGE, false);
        p.touch(va + 2 * PAGE, 2 * PAGE, true);
        p.write(va + 3 * PAGE, ascii("sole owner"));

        assertThat(r.seen).isEmpty();
        assertThat(i.readRetry(seq)).isFalse();
    }

    @Test
    void reclaimTellsClearBeforeTheSwapOut()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        fill(p, va, 4);
        final Recorder r = new Recorder();
        final MmuInterval i = p.insertIntervalNotifier(va, 4 * PAGE, r);
        final long seq = i.readBegin();

        assertThat(p.host().reclaim(4)).isEqualTo(4);

        assertToldBeforeTheChange(r, seq);
        assertThat(r.seen).hasSize(4);
        assertThat(r.events()).containsExactly(MmuNotifyEvent.CLEAR);
        assertThat(r.reasons()).containsExactly("reclaim");
        assertThat(p.translate(va)).isEqualTo(-1);
        assertThat(p.read(va, 6)).isEqualTo(ascii("page-0"));
    }

    @Test
    void oneReclaimPassIsOneOperation()
    {
        // MmuRange: every leaf of one reclaim pass carries the same operation id.
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        fill(p, va, 4);
        final Recorder r = new Recorder();
        p.insertIntervalNotifier(va, 4 * PAGE, r);

        p.host().reclaim(4);

        assertThat(r.seen).hasSize(4);
        assertThat(r.seen).extracting(s -> s.range().operationId()).containsOnly(r.seen.get(0).range().operationId());
    }

    @Test
    void oneForkIsOneOperationAcrossItsVmas()
    {
        // MmuRange: every leaf of one fork carries the same operation id, whatever VMA it lies in.
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        fill(p, va, 4);
        p.mprotect(va + 2 * PAGE, 2 * PAGE, Set.of(Prot.READ, Prot.WRITE, Prot.EXEC));
        assertThat(p.vmaCount()).isGreaterThanOrEqualTo(2);
        final Recorder r = new Recorder();
        p.insertIntervalNotifier(va, 4 * PAGE, r);

        p.fork("child");

        assertThat(r.seen).hasSize(4);
        assertThat(r.seen).extracting(s -> s.range().operationId()).containsOnly(r.seen.get(0).range().operationId());
    }

    @Test
    void compactionTellsMigration()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(8 * PAGE);
        fill(p, va, 8);
        final long[] before = new long[8];
        for (int k = 0; k < 8; k++)
        {
            before[k] = p.translate(va + k * PAGE);
        }
        final Recorder r = new Recorder();
        final MmuInterval i = p.insertIntervalNotifier(va, 8 * PAGE, r);
        final long seq = i.readBegin();

        final long migrated = p.host().compact();

        assertThat(migrated).isPositive();
        final List<Long> moved = new ArrayList<>();
        for (int k = 0; k < 8; k++)
        {
            if (p.translate(va + k * PAGE) != before[k])
            {
                moved.add(va + k * PAGE);
            }
        }
        assertThat(moved).isNotEmpty();
        assertToldBeforeTheChange(r, seq);
        assertThat(r.seen).extracting(s -> s.range().startVa()).containsExactlyElementsOf(moved);
        for (final Seen s : r.seen)
        {
            assertThat(s.physAtStart()).isEqualTo(before[(int)((s.range().startVa() - va) / PAGE)]);
        }
        assertThat(r.events()).containsExactly(MmuNotifyEvent.CLEAR);
        assertThat(r.reasons()).containsExactly("migration");
        for (int k = 0; k < 8; k++)
        {
            assertThat(p.read(va + k * PAGE, 6)).isEqualTo(ascii("page-" + k));
        }
    }

    @Test
    void thpSplitOfAFolioTellsTheProcessesMappingIt()
    {
        // A long-term read pin of a THP in ZONE_MOVABLE that a legacy fork left shared: the folio cannot move whole,
        // so every PMD mapping it is split first, then the 4 KiB page migrates.
        final UserProcess p = process(c -> c.physicalMemoryBytes(512 * MIB).movableZoneBytes(256 * MIB)
            .thpMode(ThpMode.ALWAYS).forkBehaviour(ForkBehaviour.LEGACY));
        final long va = p.mmapAnonymous(2 * MIB);
        p.touch(va, 2 * MIB, true);
        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_2M);
        assertThat(p.host().physicalMemory().zoneOf(p.translate(va) >>> 12)).isEqualTo(Zone.MOVABLE);
        final UserProcess child = p.fork("child");
        final Recorder r = new Recorder();
        child.insertIntervalNotifier(va, 2 * MIB, r);

        p.pinUserPages(va, PAGE, false, true);

        assertThat(child.mappedPageSize(va)).isEqualTo(PageSize.SIZE_4K);
        assertThat(r.seen).isNotEmpty();
        final Seen split = r.seen.get(0);
        assertThat(split.range().event()).isEqualTo(MmuNotifyEvent.CLEAR);
        assertThat(split.range().reason()).isEqualTo("THP split");
        assertThat(split.range().startVa()).isEqualTo(va);
        assertThat(split.range().lengthBytes()).isEqualTo(2 * MIB);
        assertThat(split.physAtStart()).isNotEqualTo(-1);
        assertThat(split.frameAllocated()).isTrue();
    }

    @Test
    void exitTellsRelease()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(2 * PAGE);
        fill(p, va, 2);
        final Recorder r = new Recorder();
        final MmuInterval i = p.insertIntervalNotifier(va, 2 * PAGE, r);
        final long seq = i.readBegin();

        p.exit();

        assertToldBeforeTheChange(r, seq);
        assertThat(r.seen).hasSize(2);
        assertThat(r.events()).containsExactly(MmuNotifyEvent.RELEASE);
        assertThat(r.reasons()).containsExactly("exit");
    }

    // ------------------------------------------------------------------ who is told

    @Test
    void onlyOverlappingIntervalsAreTold()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(8 * PAGE);
        fill(p, va, 8);
        final Recorder low = new Recorder();
        final Recorder high = new Recorder();
        final Recorder both = new Recorder();
        final MmuInterval lowI = p.insertIntervalNotifier(va, 4 * PAGE, low);
        final MmuInterval highI = p.insertIntervalNotifier(va + 4 * PAGE, 4 * PAGE, high);
        p.insertIntervalNotifier(va + 3 * PAGE, 2 * PAGE, both);
        final long highSeq = highI.readBegin();

        p.madvise(va, 2 * PAGE, Madvice.DONTNEED);

        assertThat(low.seen).hasSize(2);
        assertThat(high.seen).isEmpty();
        assertThat(both.seen).isEmpty();
        assertThat(highI.readRetry(highSeq)).isFalse();

        p.munmap(va + 3 * PAGE, 2 * PAGE);

        assertThat(low.seen).hasSize(3);
        assertThat(high.seen).hasSize(1);
        assertThat(both.seen).hasSize(2);
        assertThat(lowI.readBegin()).isEqualTo(3);
    }

    @Test
    void changesOutsideAnyIntervalTellNobody()
    {
        final UserProcess p = process();
        final long watched = p.mmapAnonymous(2 * PAGE);
        final long other = p.mmapAnonymous(2 * PAGE);
        fill(p, watched, 2);
        fill(p, other, 2);
        final Recorder r = new Recorder();
        p.insertIntervalNotifier(watched, 2 * PAGE, r);

        p.munmap(other, 2 * PAGE);

        assertThat(r.seen).isEmpty();
    }

    @Test
    void removeStopsNotificationsAndIsIdempotent()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        fill(p, va, 4);
        final Recorder kept = new Recorder();
        final Recorder gone = new Recorder();
        p.insertIntervalNotifier(va, 4 * PAGE, kept);
        final MmuInterval removed = p.insertIntervalNotifier(va, 4 * PAGE, gone);
        assertThat(p.intervalNotifierCount()).isEqualTo(2);

        removed.remove();
        removed.remove();

        assertThat(removed.isRemoved()).isTrue();
        assertThat(p.intervalNotifierCount()).isEqualTo(1);
        p.munmap(va, PAGE);
        assertThat(gone.seen).isEmpty();
        assertThat(kept.seen).hasSize(1);
    }

    @Test
    void anIntervalRemovedByAnotherCallbackIsNotToldAnyMore()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(2 * PAGE);
        fill(p, va, 2);
        final Recorder second = new Recorder();
        final MmuInterval[] victim = new MmuInterval[1];
        p.insertIntervalNotifier(va, 2 * PAGE, (i, range) -> victim[0].remove());
        victim[0] = p.insertIntervalNotifier(va, 2 * PAGE, second);

        p.munmap(va, 2 * PAGE);

        assertThat(second.seen).isEmpty();
        assertThat(p.intervalNotifierCount()).isEqualTo(1);
    }

    @Test
    void theIntervalIsWidenedToWholePages()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        final MmuInterval i = p.insertIntervalNotifier(va + PAGE + 100, PAGE, (x, r) -> { });

        assertThat(i.startVa()).isEqualTo(va + PAGE);
        assertThat(i.endVa()).isEqualTo(va + 3 * PAGE);
        assertThat(i.process()).isSameAs(p);
        assertThat(i.readBegin()).isZero();
    }

    @Test
    void insertIntervalNotifierRefusesBadRangesWithEinval()
    {
        final UserProcess p = process();
        final MmuInterval.Ops ops = (i, r) -> { };

        assertErrno(Errno.EINVAL, () -> p.insertIntervalNotifier(0x10000, 0, ops));
        assertErrno(Errno.EINVAL, () -> p.insertIntervalNotifier(0x10000, -PAGE, ops));
        assertErrno(Errno.EINVAL, () -> p.insertIntervalNotifier(-PAGE, PAGE, ops));
        assertErrno(Errno.EINVAL, () -> p.insertIntervalNotifier(Long.MAX_VALUE - 10, PAGE, ops));
        assertErrno(Errno.EINVAL, () -> p.insertIntervalNotifier(UserProcess.TASK_SIZE - PAGE, 2 * PAGE, ops));
        assertThat(p.intervalNotifierCount()).isZero();
        p.insertIntervalNotifier(UserProcess.TASK_SIZE - PAGE, PAGE, ops);
        assertThat(p.intervalNotifierCount()).isEqualTo(1);

        p.exit();

        assertErrno(Errno.EINVAL, () -> p.insertIntervalNotifier(0x10000, PAGE, ops));
    }

    // ------------------------------------------------------------------ hmm_range_fault

    /** One page an hmm walk reported. */
    record Page(long va, long phys, boolean writable)
    {
    }

    private static List<Page> walk(final UserProcess p, final long va, final long length, final boolean fault,
        final boolean write)
    {
        final List<Page> out = new ArrayList<>();
        final long n = p.hmmRangeFault(va, length, fault, write, (v, phys, w) -> out.add(new Page(v, phys, w)));
        assertThat(n).isEqualTo(out.size());
        return out;
    }

    @Test
    void hmmWithoutFaultReportsOnlyPresentPagesAndFaultsNothing()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        p.write(va, ascii("a"));
        p.read(va + 2 * PAGE, 1);
        final long faults = p.host().counter(VmEvent.PGFAULT);

        final List<Page> pages = walk(p, va, 4 * PAGE, false, false);

        assertThat(pages).containsExactly(new Page(va, p.translate(va), true),
            new Page(va + 2 * PAGE, p.translate(va + 2 * PAGE), false));
        assertThat(p.host().counter(VmEvent.PGFAULT)).isEqualTo(faults);
        assertThat(p.translate(va + PAGE)).isEqualTo(-1);
    }

    @Test
    void hmmWithoutFaultSkipsSwappedPages()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(2 * PAGE);
        fill(p, va, 2);
        p.host().reclaim(2);
        final long swapIns = p.host().counter(VmEvent.PSWPIN);

        assertThat(walk(p, va, 2 * PAGE, false, false)).isEmpty();
        assertThat(p.host().counter(VmEvent.PSWPIN)).isEqualTo(swapIns);
    }

    @Test
    void hmmWithFaultFaultsPagesIn()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        final long faults = p.host().counter(VmEvent.PGFAULT);

        final List<Page> read = walk(p, va, 2 * PAGE, true, false);

        assertThat(p.host().counter(VmEvent.PGFAULT)).isEqualTo(faults + 2);
        assertThat(read).extracting(Page::va).containsExactly(va, va + PAGE);
        assertThat(read).allSatisfy(pg -> assertThat(pg.writable()).as("a read fault maps the zero page").isFalse());
        assertThat(read.get(0).phys() >>> 12).isEqualTo(p.host().physicalMemory().zeroPfn());

        final List<Page> written = walk(p, va, 4 * PAGE, true, true);

        assertThat(written).hasSize(4);
        assertThat(written).allSatisfy(pg ->
        {
            assertThat(pg.writable()).isTrue();
            assertThat(pg.phys()).isEqualTo(p.translate(pg.va()));
            assertThat(pg.phys() >>> 12).isNotEqualTo(p.host().physicalMemory().zeroPfn());
        });
        assertThat(p.host().counter(VmEvent.PGFAULT)).isEqualTo(faults + 6);
    }

    @Test
    void hmmFaultSwapsPagesBackIn()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(2 * PAGE);
        fill(p, va, 2);
        p.host().reclaim(2);
        final long major = p.host().counter(VmEvent.PGMAJFAULT);

        final List<Page> pages = walk(p, va, 2 * PAGE, true, false);

        assertThat(pages).hasSize(2);
        assertThat(p.host().counter(VmEvent.PGMAJFAULT)).isEqualTo(major + 2);
        final byte[] bytes = new byte[6];
        p.host().physicalMemory().read(pages.get(1).phys(), bytes, 0, 6);
        assertThat(bytes).isEqualTo(ascii("page-1"));
    }

    @Test
    void hmmWriteFaultBreaksCopyOnWriteAfterFork()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(PAGE);
        p.write(va, ascii("shared"));
        final UserProcess child = p.fork("child");
        assertThat(walk(p, va, PAGE, false, false)).containsExactly(new Page(va, child.translate(va), false));
        final Recorder r = new Recorder();
        p.insertIntervalNotifier(va, PAGE, r);

        final List<Page> pages = walk(p, va, PAGE, true, true);

        assertThat(pages).hasSize(1);
        assertThat(pages.get(0).writable()).isTrue();
        assertThat(pages.get(0).phys()).isNotEqualTo(child.translate(va)).isEqualTo(p.translate(va));
        assertThat(r.reasons()).containsExactly("copy-on-write");
        assertThat(child.read(va, 6)).isEqualTo(ascii("shared"));
        assertThat(p.read(va, 6)).isEqualTo(ascii("shared"));
    }

    @Test
    void hmmReadFaultLeavesCopyOnWriteShared()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(PAGE);
        p.write(va, ascii("shared"));
        final UserProcess child = p.fork("child");

        final List<Page> pages = walk(p, va, PAGE, true, false);

        assertThat(pages).containsExactly(new Page(va, child.translate(va), false));
    }

    @Test
    void hmmFaultIsEfaultWithoutAVmaOrWithoutTheRight()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        p.munmap(va + 2 * PAGE, PAGE);
        p.mprotect(va + 3 * PAGE, PAGE, Set.of(Prot.READ));
        final long none = p.mmap(0, PAGE, EnumSet.noneOf(Prot.class), Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS));

        assertErrno(Errno.EFAULT, () -> walk(p, va + 2 * PAGE, PAGE, true, false));
        assertErrno(Errno.EFAULT, () -> walk(p, va + 3 * PAGE, PAGE, true, true));
        assertErrno(Errno.EFAULT, () -> walk(p, none, PAGE, true, false));
        assertThat(walk(p, va + 3 * PAGE, PAGE, true, false)).hasSize(1);
        assertThat(walk(p, va + 2 * PAGE, PAGE, false, false)).as("without fault a hole is no error").isEmpty();

        // Pages before the failure stay faulted in.
        assertErrno(Errno.EFAULT, () -> walk(p, va, 3 * PAGE, true, true));
        assertThat(p.translate(va)).isNotEqualTo(-1);
        assertThat(p.translate(va + PAGE)).isNotEqualTo(-1);
    }

    @Test
    void hmmRefusesEmptyOrOutOfRangeWalksWithEfault()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(PAGE);

        assertErrno(Errno.EFAULT, () -> walk(p, va, 0, false, false));
        assertErrno(Errno.EFAULT, () -> walk(p, -PAGE, PAGE, false, false));
        assertErrno(Errno.EFAULT, () -> walk(p, UserProcess.TASK_SIZE - PAGE, 2 * PAGE, false, false));
    }
}
