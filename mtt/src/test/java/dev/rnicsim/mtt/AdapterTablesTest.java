package dev.rnicsim.mtt;

import static dev.rnicsim.mtt.TableAssertions.assertErrno;
import static dev.rnicsim.mtt.TableAssertions.assertFailsUnchanged;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The tables together: registration chooses the page size, reserves MTT entries, takes an MPT index and writes
 * the entries; translation returns the DMA address of every byte; deregistration zaps, invalidates and frees; a
 * refused registration leaves nothing behind.
 */
class AdapterTablesTest
{
    private static final long KIB = 1L << 10;
    private static final long MIB = 1L << 20;
    private static final long GIB = 1L << 30;
    private static final long IRDMA = 0x40201000L;
    private static final long MLX5 = 0xfffffffffffff000L;
    private static final long CX3 = 0xfffffe00L;
    private static final long VA = 0x7f0000200000L;
    private static final int PD = 7;
    private static final int RW = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ | AccessFlags.REMOTE_WRITE;

    private static AdapterTables tables(final long cap, final MttConfig mtt, final long maxMr, final int cacheEntries,
        final int ways)
    {
        return new AdapterTables(new AdapterConfig(mtt, new MptConfig(maxMr, 8, VariantPolicy.GENERATION,
            IndexPolicy.CYCLIC, 0), cap, cacheEntries, ways));
    }

    private static AdapterTables tables(final long cap)
    {
        return tables(cap, MttConfig.buddy(14, 0), 64, 256, 4);
    }

    /** The DMA address of byte {@code offset} of the buffer, walked from the runs alone. */
    static long expectedDma(final List<DmaRun> runs, final long address, final long offset)
    {
        long pos = (address & 0xfff) + offset;
        for (final DmaRun r : runs)
        {
            if (pos < r.lengthBytes())
            {
                return r.dmaAddr() + pos;
            }
            pos -= r.lengthBytes();
        }
        throw new AssertionError("offset " + offset + " beyond the runs");
    }

    /** The first, a middle and the last byte of every 4 KiB page of the buffer, as offsets. */
    private static List<Long> offsetsOfEveryPage(final long address, final long length)
    {
        final List<Long> offsets = new ArrayList<>();
        final long pgoff = address & 0xfff;
        for (long pageStart = -pgoff; pageStart < length; pageStart += 4096)
        {
            offsets.add(Math.max(0, pageStart));
            if (pageStart + 2048 >= 0 && pageStart + 2048 < length)
            {
                offsets.add(pageStart + 2048);
            }
            offsets.add(Math.min(length - 1, pageStart + 4095));
        }
        return offsets;
    }

    private static void assertTranslatesEveryPage(final AdapterTables t, final RegisteredMr mr,
        final List<DmaRun> runs, final long address, final long length, final long iova)
    {
        for (final long off : offsetsOfEveryPage(address, length))
        {
            final long dma = t.translate(mr.key(), PD, AccessFlags.REMOTE_READ, iova + off, 1);
            assertThat(dma).as("DMA address of offset 0x%x (%s)", off, KeyCheck.ofTranslation(dma))
                .isEqualTo(expectedDma(runs, address, off));
        }
    }

    @Test
    void shouldTranslateEveryPageOfScatteredFourKibPages()
    {
        final AdapterTables t = tables(IRDMA);
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 4 * KIB), new DmaRun(0x30000, 4 * KIB),
            new DmaRun(0x50000, 4 * KIB), new DmaRun(0x90000, 4 * KIB), new DmaRun(0x70000, 4 * KIB));

        final RegisteredMr mr = t.register(PD, runs, VA, 20 * KIB, VA, RW);

        assertThat(mr.pageSizeBytes()).isEqualTo(4 * KIB);
        assertThat(mr.mtt()).isEqualTo(new MttRange(0, 5, 8));
        assertThat(t.mtt().entry(3)).isEqualTo(0x90000L | Mtt.PRESENT);
        assertThat(t.entriesWritten()).isEqualTo(5);
        assertTranslatesEveryPage(t, mr, runs, VA, 20 * KIB, VA);
    }

    @Test
    void shouldTranslateEveryPageOfThpRunsThroughTwoMibEntries()
    {
        final AdapterTables t = tables(IRDMA);
        final List<DmaRun> runs = List.of(new DmaRun(0x1_4000_0000L, 2 * MIB), new DmaRun(0x2_8000_0000L, 2 * MIB),
            new DmaRun(0x3fe0_0000L, 2 * MIB));

        final RegisteredMr mr = t.register(PD, runs, VA, 6 * MIB, VA, RW);

        assertThat(mr.pageSizeBytes()).isEqualTo(2 * MIB);
        assertThat(mr.mtt().entries()).isEqualTo(3);
        assertTranslatesEveryPage(t, mr, runs, VA, 6 * MIB, VA);
    }

    @Test
    void shouldTranslateEveryPageOfThpsFollowedByScatteredFourKibPages()
    {
        final AdapterTables t = tables(MLX5);
        final List<DmaRun> runs = List.of(new DmaRun(0x1_4000_0000L, 2 * MIB), new DmaRun(0x2_8000_0000L, 2 * MIB),
            new DmaRun(0x5000_0000L, 4 * KIB), new DmaRun(0x5000_2000L, 8 * KIB));
        final long length = 4 * MIB + 10 * KIB;

        final RegisteredMr mr = t.register(PD, runs, VA, length, VA, RW);

        assertThat(mr.pageSizeBytes()).isEqualTo(4 * KIB);
        assertThat(mr.mtt().entries()).isEqualTo(1024 + 3);
        assertTranslatesEveryPage(t, mr, runs, VA, length, VA);
    }

    @Test
    void shouldTranslateEveryByteOfABufferThatStartsInsideAPage()
    {
        final AdapterTables t = tables(IRDMA);
        final List<DmaRun> runs = List.of(new DmaRun(0x1_4000_0000L, 2 * MIB), new DmaRun(0x2_8000_0000L, 2 * MIB));
        final long address = VA + 0x345;
        final long length = 4 * MIB - 0x345 - 0x100;

        final RegisteredMr mr = t.register(PD, runs, address, length, address, RW);

        assertThat(mr.pageSizeBytes()).isEqualTo(2 * MIB);
        assertThat(t.translate(mr.key(), PD, 0, address, 1)).isEqualTo(0x1_4000_0345L);
        assertThat(t.translate(mr.key(), PD, 0, address + length - 1, 1)).isEqualTo(0x2_8000_0000L + 2 * MIB - 0x101);
        assertTranslatesEveryPage(t, mr, runs, address, length, address);

        final List<DmaRun> pages = List.of(new DmaRun(0x7000, 4 * KIB), new DmaRun(0x3000, 4 * KIB),
            new DmaRun(0x11000, 4 * KIB));
        final RegisteredMr small = t.register(PD, pages, VA + 0xabc, 2 * 4 * KIB, VA + 0xabc, RW);
        assertThat(small.mtt().entries()).isEqualTo(3);
        assertTranslatesEveryPage(t, small, pages, VA + 0xabc, 2 * 4 * KIB, VA + 0xabc);
    }

    @Test
    void shouldTranslateThroughAnIovaThatDiffersFromTheAddress()
    {
        final AdapterTables t = tables(IRDMA);
        final List<DmaRun> runs = List.of(new DmaRun(0x1_4000_0000L, 2 * MIB), new DmaRun(0x2_8000_0000L, 2 * MIB));
        final long address = VA + 0x345;
        final long length = 4 * MIB - 0x345;

        // iova congruent with the address modulo 2 MiB: still 2 MiB pages
        final long iova2m = 0x4000_0000L + 0x345;
        final RegisteredMr big = t.register(PD, runs, address, length, iova2m, RW);
        assertThat(big.pageSizeBytes()).isEqualTo(2 * MIB);
        assertTranslatesEveryPage(t, big, runs, address, length, iova2m);
        assertThat(KeyCheck.ofTranslation(t.translate(big.key(), PD, 0, address, 1)))
            .as("the user address is not the MR's iova").isEqualTo(KeyCheck.OUT_OF_RANGE);

        // iova only 4 KiB-congruent: 4 KiB pages
        final long iova4k = 0x1000 + 0x345;
        final RegisteredMr small = t.register(PD, runs, address, length, iova4k, RW);
        assertThat(small.pageSizeBytes()).isEqualTo(4 * KIB);
        assertTranslatesEveryPage(t, small, runs, address, length, iova4k);
    }

    @Test
    void shouldTranslateEveryPageOfABufferStartingInsideAPageOnConnectX3()
    {
        final AdapterTables t = tables(CX3);
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 8 * KIB), new DmaRun(0x40000, 4 * KIB));
        final long iova = 0x5000_0200L; // same offset in its 4 KiB page as the address (ib_uverbs_reg_mr)

        final RegisteredMr mr = t.register(PD, runs, VA + 0x200, 12 * KIB - 0x200, iova, RW);

        // Address and iova agree below 4 KiB (the kernel insists), and here up to 8 KiB: the first run is 8 KiB
        // long and 8 KiB aligned in both spaces, and the discontinuity falls on an 8 KiB boundary of the iova.
        assertThat(mr.pageSizeBytes()).isEqualTo(8 * KIB);
        assertThat(mr.mtt().entries()).isEqualTo(PageSizeSelector.numDmaBlocks(iova, 12 * KIB - 0x200, 8 * KIB));
        assertTranslatesEveryPage(t, mr, runs, VA + 0x200, 12 * KIB - 0x200, iova);
    }

    @Test
    void shouldTranslateAContiguousBufferThroughOneGibEntry()
    {
        final AdapterTables t = tables(IRDMA);
        final List<DmaRun> runs = List.of(new DmaRun(0x1_4000_0000L, 4 * MIB));

        final RegisteredMr mr = t.register(PD, runs, VA, 4 * MIB, 0x8000_0000L, RW);

        assertThat(mr.pageSizeBytes()).isEqualTo(GIB);
        assertThat(mr.mtt().entries()).isEqualTo(1);
        assertThat(t.mtt().entry(mr.mtt().firstEntry())).isEqualTo(0x1_4000_0000L | Mtt.PRESENT);
        assertTranslatesEveryPage(t, mr, runs, VA, 4 * MIB, 0x8000_0000L);
    }

    @Test
    void shouldReportEachFailedCheckAsANegativeCode()
    {
        final AdapterTables t = tables(IRDMA);
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 4 * KIB));
        final RegisteredMr mr = t.register(PD, runs, VA, 4 * KIB, VA, AccessFlags.LOCAL_WRITE);

        assertThat(KeyCheck.ofTranslation(t.translate(mr.key() + 1, PD, 0, VA, 1)))
            .isEqualTo(KeyCheck.VARIANT_MISMATCH);
        assertThat(KeyCheck.ofTranslation(t.translate(mr.key(), PD + 1, 0, VA, 1))).isEqualTo(KeyCheck.WRONG_PD);
        assertThat(KeyCheck.ofTranslation(t.translate(mr.key(), PD, AccessFlags.REMOTE_WRITE, VA, 1)))
            .isEqualTo(KeyCheck.RIGHTS_MISSING);
        assertThat(KeyCheck.ofTranslation(t.translate(mr.key(), PD, 0, VA + 4 * KIB, 1)))
            .isEqualTo(KeyCheck.OUT_OF_RANGE);
        t.mpt().setState(mr.key(), MptState.INVALID);
        assertThat(KeyCheck.ofTranslation(t.translate(mr.key(), PD, 0, VA, 1))).isEqualTo(KeyCheck.WRONG_STATE);
        assertThat(KeyCheck.ofTranslation(t.translate(0x7f00, PD, 0, VA, 1))).isEqualTo(KeyCheck.NO_SUCH_INDEX);
        assertThat(t.translate(mr.key(), PD, 0, VA, 1)).isEqualTo(KeyCheck.WRONG_STATE.code());
    }

    @Test
    void shouldZapInvalidateAndFreeEverythingOnDeregister()
    {
        final AdapterTables t = tables(IRDMA, MttConfig.buddy(10, 0), 16, 256, 4);
        final MttCounters initial = t.mtt().counters();
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 4 * KIB), new DmaRun(0x30000, 4 * KIB),
            new DmaRun(0x50000, 4 * KIB));
        final RegisteredMr mr = t.register(PD, runs, VA, 12 * KIB, VA, RW);
        assertTranslatesEveryPage(t, mr, runs, VA, 12 * KIB, VA);
        final long index = MKey.index(mr.key(), 8);
        final long first = mr.mtt().firstEntry();
        assertThat(t.cache().evictions()).as("precondition: nothing evicted").isZero();
        assertThat(t.cache().contains(TranslationCache.mptTag(index))).isTrue();
        for (long i = first; i < first + 3; i++)
        {
            assertThat(t.cache().contains(TranslationCache.mttTag(i))).isTrue();
        }

        final long dropped = t.deregister(mr.key());

        assertThat(dropped).isEqualTo(1 + 3);
        assertThat(t.cache().entriesDropped()).isEqualTo(4);
        assertThat(t.cache().invalidations()).isEqualTo(1);
        assertThat(t.cache().contains(TranslationCache.mptTag(index))).isFalse();
        for (long i = first; i < first + 3; i++)
        {
            assertThat(t.mtt().entry(i)).as("MTT entry %d", i).isZero();
            assertThat(t.cache().contains(TranslationCache.mttTag(i))).isFalse();
        }
        assertThat(t.mtt().counters()).isEqualTo(new MttCounters(initial.capacityEntries(), 0, 0,
            initial.entriesFree(), initial.largestFreeBlock(), 1, 0, 1));
        assertThat(t.mpt().inUse()).isZero();
        assertThat(new long[] {t.entriesWritten(), t.entriesZapped()}).containsExactly(3, 3);
        assertThat(KeyCheck.ofTranslation(t.translate(mr.key(), PD, 0, VA, 1))).isEqualTo(KeyCheck.NO_SUCH_INDEX);
    }

    @Test
    void shouldRefuseTheDeregistrationOfAStaleKeyWithEinvalChangingNothing()
    {
        final AdapterTables t = tables(IRDMA);
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 4 * KIB));
        final RegisteredMr mr = t.register(PD, runs, VA, 4 * KIB, VA, RW);
        t.deregister(mr.key());
        final RegisteredMr other = t.register(PD, runs, VA, 4 * KIB, VA, RW);
        t.translate(other.key(), PD, 0, VA, 1);

        assertFailsUnchanged(t, Errno.EINVAL, () -> t.deregister(mr.key()));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.deregister(0));

        assertThat(t.translate(other.key(), PD, 0, VA, 1)).isEqualTo(0x10000);
    }

    @Test
    void shouldGiveBackTheMttRangeWhenTheMptIsFull()
    {
        final AdapterTables t = tables(IRDMA, MttConfig.buddy(6, 0), 3, 16, 4);
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 4 * KIB), new DmaRun(0x30000, 4 * KIB));
        t.register(PD, runs, VA, 8 * KIB, VA, RW);
        t.register(PD, runs, VA, 8 * KIB, VA, RW);
        final MttCounters before = t.mtt().counters();

        final TableException e = assertErrno(Errno.ENOMEM, () -> t.register(PD, runs, VA, 8 * KIB, VA, RW));

        assertThat(e.getMessage()).contains("max_mr=2");
        final MttCounters after = t.mtt().counters();
        assertThat(new long[] {after.entriesInUse(), after.entriesRequested(), after.entriesFree(),
            after.largestFreeBlock()}).containsExactly(before.entriesInUse(), before.entriesRequested(),
            before.entriesFree(), before.largestFreeBlock());
        assertThat(t.mpt().inUse()).isEqualTo(2);
        assertThat(t.mpt().failures()).isEqualTo(1);
    }

    @Test
    void shouldLeaveEveryCounterAsItWasWhenARegistrationIsRefusedForAFullMpt()
    {
        final AdapterTables t = tables(IRDMA, MttConfig.buddy(6, 0), 3, 16, 4);
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 4 * KIB), new DmaRun(0x30000, 4 * KIB));
        t.register(PD, runs, VA, 8 * KIB, VA, RW);
        t.register(PD, runs, VA, 8 * KIB, VA, RW);

        // TableException: "An operation that throws this leaves the tables as they were."
        assertFailsUnchanged(t, Errno.ENOMEM, () -> t.register(PD, runs, VA, 8 * KIB, VA, RW));
    }

    @Test
    void shouldRefuseARegistrationWithEnomemWhenTheMttIsFullChangingNothing()
    {
        final AdapterTables t = tables(IRDMA, MttConfig.buddy(2, 0), 16, 16, 4); // 4 entries
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 4 * KIB), new DmaRun(0x30000, 4 * KIB),
            new DmaRun(0x50000, 4 * KIB));
        t.register(PD, runs, VA, 12 * KIB, VA, RW); // 3 entries, 4 reserved

        final TableException e = assertFailsUnchanged(t, Errno.ENOMEM,
            () -> t.register(PD, runs.subList(0, 1), VA, 4 * KIB, VA, RW));

        assertThat(e.getMessage()).contains("1 entry (", "0 of 4 free");
        assertThat(t.mtt().counters().failures()).isEqualTo(1);
        assertThat(t.mpt().failures()).isZero();
    }

    @Test
    void shouldRefuseARegistrationWithEinvalWhenNoPageSizeFitsChangingNothing()
    {
        final AdapterTables t = tables(2 * MIB | GIB);
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 4 * KIB), new DmaRun(0x30000, 4 * KIB));

        final TableException e = assertFailsUnchanged(t, Errno.EINVAL,
            () -> t.register(PD, runs, VA, 8 * KIB, VA, RW));

        assertThat(e.getMessage()).contains("page_size_cap=0x40200000");
        // an iova that differs from the address below 4 KiB fits no size of a 4 KiB-and-up device
        final AdapterTables irdma = tables(IRDMA);
        assertFailsUnchanged(irdma, Errno.EINVAL, () -> irdma.register(PD, runs, VA, 8 * KIB, VA + 0x100, RW));
        // bad runs
        assertFailsUnchanged(irdma, Errno.EINVAL, () -> irdma.register(PD, List.of(), VA, 8 * KIB, VA, RW));
        assertFailsUnchanged(irdma, Errno.EINVAL, () -> irdma.register(PD, runs, VA, 8 * KIB + 1, VA, RW));
        assertFailsUnchanged(irdma, Errno.EINVAL, () -> irdma.register(PD, runs, VA, 8 * KIB, -4096L, RW));
    }

    @Test
    void shouldRefuseImpossibleAdapterConfigurationsWithEinval()
    {
        final MptConfig mpt = MptConfig.of(16, VariantPolicy.GENERATION);
        assertErrno(Errno.EINVAL, () -> new AdapterConfig(null, mpt, IRDMA, 0, 1));
        assertErrno(Errno.EINVAL, () -> new AdapterConfig(MttConfig.exact(16), null, IRDMA, 0, 1));
        assertErrno(Errno.EINVAL, () -> new AdapterConfig(MttConfig.exact(16), mpt, 0, 0, 1));
    }

    @Test
    void shouldNotReadPastTheMrsMttRangeForAZeroLengthAccessAtItsEnd()
    {
        // Two 1-page MRs side by side in an exact MTT: MR a at entry 0, MR b at entry 1.
        final AdapterTables t = tables(IRDMA, MttConfig.exact(16), 16, 256, 4);
        final RegisteredMr a = t.register(PD, List.of(new DmaRun(0x10000, 4 * KIB)), VA, 4 * KIB, VA, RW);
        final RegisteredMr b = t.register(PD, List.of(new DmaRun(0x90000, 4 * KIB)), VA, 4 * KIB, VA, RW);
        assertThat(b.mtt().firstEntry()).isEqualTo(a.mtt().firstEntry() + 1);
        // rxe's range check accepts a zero-length access at iova + length
        assertThat(t.mpt().lookup(a.key(), PD, 0, VA + 4 * KIB, 0)).isEqualTo(KeyCheck.VALID);

        final long result = t.translate(a.key(), PD, 0, VA + 4 * KIB, 0);

        assertThat(t.cache().contains(TranslationCache.mttTag(b.mtt().firstEntry())))
            .as("MR a's translation fetched MR b's MTT entry (result 0x%x)", result).isFalse();
        assertThat(result & ~0xfffL).as("an address inside MR b's page").isNotEqualTo(0x90000L);
    }

    @Test
    void shouldNotThrowForAZeroLengthAccessAtTheEndOfAnMrInTheLastMttEntry()
    {
        final AdapterTables t = tables(IRDMA, MttConfig.exact(1 << 16), 16, 256, 4);
        t.mtt().allocate((1 << 16) - 1);
        final RegisteredMr mr = t.register(PD, List.of(new DmaRun(0x10000, 4 * KIB)), VA, 4 * KIB, VA, RW);
        assertThat(mr.mtt().firstEntry()).isEqualTo((1 << 16) - 1);

        // "Allocates nothing and never throws."
        assertThatCode(() -> t.translate(mr.key(), PD, 0, VA + 4 * KIB, 0)).doesNotThrowAnyException();
    }

    @Test
    void shouldRegisterAnIovaRangeCrossingTwoToTheSixtyThirdCorrectlyOrRefuseItCleanly()
    {
        // iova 0x7ffffffffffff000, 8 KiB: unsigned, nothing overflows; the range only crosses the sign bit.
        final AdapterTables t = tables(IRDMA);
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 4 * KIB), new DmaRun(0x30000, 4 * KIB));
        final long iova = 0x7ffffffffffff000L;
        final TableAssertions.State before = TableAssertions.State.of(t);
        final RegisteredMr[] mr = new RegisteredMr[1];

        final Throwable thrown = catchThrowable(() -> mr[0] = t.register(PD, runs, VA, 8 * KIB, iova, RW));

        if (thrown != null)
        {
            assertThat(thrown).as("a refusal must be a TableException").isInstanceOf(TableException.class);
            assertThat(TableAssertions.State.of(t)).as("a refusal changes nothing").isEqualTo(before);
            return;
        }
        assertThat(mr[0].pageSizeBytes()).isEqualTo(4 * KIB);
        assertTranslatesEveryPage(t, mr[0], runs, VA, 8 * KIB, iova);
    }

    @Test
    void shouldTranslateABufferEndingAtTheTopOfTheIovaSpace()
    {
        final AdapterTables t = tables(IRDMA);
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 4 * KIB), new DmaRun(0x30000, 4 * KIB));
        final long iova = -8 * KIB;

        final RegisteredMr mr = t.register(PD, runs, VA, 8 * KIB, iova, RW);

        assertTranslatesEveryPage(t, mr, runs, VA, 8 * KIB, iova);
    }
}
