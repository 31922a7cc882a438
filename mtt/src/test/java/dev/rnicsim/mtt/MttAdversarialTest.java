package dev.rnicsim.mtt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.fail;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/**
 * Bad input against the adapter tables: the contract is that a refused call throws {@link TableException} with
 * EINVAL or ENOMEM and a message naming the value and the limit, leaves every table and counter as it was (the MTT
 * failure count excepted), that {@link MptTable#lookup} and {@link AdapterTables#translate} never throw, and that
 * nothing hangs or allocates absurd memory.
 *
 * <p>Tests marked {@code FINDING} fail against the current main code: each is named for the behaviour the contract
 * (or the Linux rule cited) asks for. The others are regression tests with the exact errno. The file is
 * self-contained (its helpers do not depend on the shared test helpers, which others edit).
 */
class MttAdversarialTest
{
    private static final long KIB = 1L << 10;
    private static final long MIB = 1L << 20;
    private static final long CAP_4K_2M = (1L << 12) | (1L << 21);
    private static final long CAP_4K_64K_2M = (1L << 12) | (1L << 16) | (1L << 21);
    private static final long CAP_4K_2M_1G = (1L << 12) | (1L << 21) | (1L << 30);
    private static final long VA = 0x7f0000200000L;
    private static final int PD = 7;
    private static final int RW = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ | AccessFlags.REMOTE_WRITE;
    private static final long[] EDGE_LONGS = {0, 1, -1, 4095, 4096, -4096, Long.MAX_VALUE, Long.MIN_VALUE,
        Long.MAX_VALUE - 1, Long.MIN_VALUE + 1, 0xffff_ffff_ffff_f000L, 1L << 32, 1L << 62};
    private static final int[] EDGE_INTS = {0, 1, -1, Integer.MAX_VALUE, Integer.MIN_VALUE, 0xff, 0x100, 0xffffff00};

    // ------------------------------------------------------------------------------------------------------------
    // Helpers

    /** Everything a refused call on the tables must leave as it was. */
    private record State(MttCounters mtt, long mptInUse, long mptAllocs, long mptFrees, long hits, long misses,
                         long evictions, long invalidations, long dropped, long written, long zapped)
    {
        static State of(final AdapterTables t)
        {
            final TranslationCache c = t.cache();
            return new State(noFailures(t.mtt().counters()), t.mpt().inUse(), t.mpt().allocations(),
                t.mpt().frees(), c.hits(), c.misses(), c.evictions(), c.invalidations(), c.entriesDropped(),
                t.entriesWritten(), t.entriesZapped());
        }
    }

    private record MptCounts(long inUse, long allocations, long frees)
    {
        static MptCounts of(final MptTable p)
        {
            return new MptCounts(p.inUse(), p.allocations(), p.frees());
        }
    }

    private static MttCounters noFailures(final MttCounters c)
    {
        return new MttCounters(c.capacityEntries(), c.entriesInUse(), c.entriesRequested(), c.entriesFree(),
            c.largestFreeBlock(), c.allocations(), 0, c.frees());
    }

    private static TableException assertErrno(final Errno errno, final ThrowingCallable call)
    {
        final Throwable thrown = catchThrowable(call);
        assertThat(thrown).as("exception thrown").isInstanceOf(TableException.class);
        final TableException e = (TableException)thrown;
        assertThat(e.errno()).as("errno of: %s", e.getMessage()).isEqualTo(errno);
        assertThat(e.getMessage()).as("message").startsWith(errno.name() + ": ");
        return e;
    }

    private static TableException assertRefused(final AdapterTables t, final Errno errno,
        final ThrowingCallable call)
    {
        final State before = State.of(t);
        final TableException e = assertErrno(errno, call);
        assertThat(State.of(t)).as("tables after the refused call (%s)", e.getMessage()).isEqualTo(before);
        return e;
    }

    private static TableException assertRefused(final Mtt m, final Errno errno, final ThrowingCallable call)
    {
        final MttCounters before = m.counters();
        final TableException e = assertErrno(errno, call);
        final MttCounters after = m.counters();
        assertThat(noFailures(after)).as("MTT counters after the refused call (%s)", e.getMessage())
            .isEqualTo(noFailures(before));
        assertThat(after.failures()).as("failure count").isEqualTo(before.failures() + (errno == Errno.ENOMEM ? 1 : 0));
        return e;
    }

    private static TableException assertRefused(final MptTable p, final Errno errno, final ThrowingCallable call)
    {
        final MptCounts before = MptCounts.of(p);
        final TableException e = assertErrno(errno, call);
        assertThat(MptCounts.of(p)).as("MPT counts after the refused call (%s)", e.getMessage()).isEqualTo(before);
        return e;
    }

    /**
     * Runs a call that must be refused with {@code errno} and leave {@code state} as it was.
     *
     * @return null when it was, else what happened instead.
     */
    private static String refusalProblem(final String what, final Errno errno, final Supplier<Object> state,
        final ThrowingCallable call)
    {
        final Object before = state.get();
        final Throwable thrown = catchThrowable(call);
        final Object after = state.get();
        final String changed = before.equals(after) ? "" : "; state changed from " + before + " to " + after;
        if (!(thrown instanceof TableException e))
        {
            return what + ": " + (thrown == null ? "returned normally" : "threw " + thrown) + changed;
        }
        if (e.errno() != errno)
        {
            return what + ": " + e.getMessage() + changed;
        }
        return changed.isEmpty() ? null : what + ": " + e.getMessage() + changed;
    }

    /** The MTT counters without the failure count, and every entry. */
    private static Supplier<Object> mttState(final Mtt m)
    {
        return () -> {
            final long cap = m.counters().capacityEntries();
            final long[] entries = new long[(int)Math.min(cap, 1 << 16)];
            for (int i = 0; i < entries.length; i++)
            {
                entries[i] = m.entry(i);
            }
            return List.of(noFailures(m.counters()), Arrays.toString(entries));
        };
    }

    private static AdapterTables tables(final long cap, final MttConfig mtt, final MptConfig mpt, final int cache,
        final int ways)
    {
        return new AdapterTables(new AdapterConfig(mtt, mpt, cap, cache, ways));
    }

    private static AdapterTables small()
    {
        return tables(CAP_4K_2M, MttConfig.buddy(6, 0), MptConfig.of(16, VariantPolicy.GENERATION), 16, 4);
    }

    private static MttRange range(final long first, final long entries, final long reserved)
    {
        return new MttRange(first, entries, reserved);
    }

    /** The DMA address of byte {@code offset} of the buffer, walked from the runs alone. */
    private static long expectedDma(final List<DmaRun> runs, final long address, final long offset)
    {
        long pos = (address & 0xfff) + offset;
        for (final DmaRun r : runs)
        {
            if (Long.compareUnsigned(pos, r.lengthBytes()) < 0)
            {
                return r.dmaAddr() + pos;
            }
            pos -= r.lengthBytes();
        }
        throw new AssertionError("offset " + offset + " beyond the runs");
    }

    private static KeyCheck outcome(final long translation)
    {
        return KeyCheck.ofTranslation(translation);
    }

    // ------------------------------------------------------------------------------------------------------------
    // DmaRun and PageSizeSelector: regression

    @Test
    void dmaRunRejectsNegativeUnalignedEmptyAndOverflowingRunsWithEinval()
    {
        final long[][] bad = {{-4096, 4096}, {Long.MIN_VALUE, 4096}, {0x1001, 4096}, {0x1000, 4095}, {0x1000, 0},
            {0x1000, -4096}, {0x1000, Long.MIN_VALUE}, {0x7fff_ffff_ffff_f000L, 4096},
            {0x1000, 0x7fff_ffff_ffff_f000L}, {Long.MAX_VALUE, 4096}, {0, Long.MAX_VALUE}};
        for (final long[] b : bad)
        {
            final TableException e = assertErrno(Errno.EINVAL, () -> new DmaRun(b[0], b[1]));
            assertThat(e.getMessage()).contains(Long.toHexString(b[0])).contains(Long.toString(b[1]));
        }
        assertThatCode(() -> new DmaRun(0, 0x7fff_ffff_ffff_f000L)).doesNotThrowAnyException();
        assertThatCode(() -> new DmaRun(0x7fff_ffff_ffff_e000L, 4096)).doesNotThrowAnyException();
    }

    @Test
    void chooseRejectsEmptyRunsAndNonPositiveLengthsWithEinval()
    {
        final List<DmaRun> one = List.of(new DmaRun(0x10000, 4096));
        assertThat(assertErrno(Errno.EINVAL, () -> PageSizeSelector.choose(List.of(), VA, 4096, VA, CAP_4K_2M))
            .getMessage()).contains("0 runs");
        for (final long len : new long[] {0, -1, Long.MIN_VALUE, -4096})
        {
            assertThat(assertErrno(Errno.EINVAL, () -> PageSizeSelector.choose(one, VA, len, VA, CAP_4K_2M))
                .getMessage()).contains("length=" + len);
        }
    }

    @Test
    void chooseRejectsRunsShorterThanTheBufferCountingThePageOffsetWithEinval()
    {
        final List<DmaRun> one = List.of(new DmaRun(0x10000, 4096));
        final long address = VA + 0x800;
        assertThat(PageSizeSelector.choose(one, address, 2048, address, CAP_4K_2M).pageSizeBytes()).isEqualTo(4096);
        assertThat(assertErrno(Errno.EINVAL, () -> PageSizeSelector.choose(one, address, 2049, address, CAP_4K_2M))
            .getMessage()).contains("2048").contains("length=2049");
        assertErrno(Errno.EINVAL, () -> PageSizeSelector.choose(one, VA, Long.MAX_VALUE, VA, CAP_4K_2M));
        assertErrno(Errno.EINVAL, () -> PageSizeSelector.choose(one, -1, 4096, -1, CAP_4K_2M));
    }

    @Test
    void chooseRejectsAnIovaWhoseEndWrapsPastTwoToThe64WithEinval()
    {
        final List<DmaRun> two = List.of(new DmaRun(0x10000, 8192));
        final List<DmaRun> three = List.of(new DmaRun(0x10000, 12288));
        for (final long iova : new long[] {-1, -4096, -4095, -8191, 0xffff_ffff_ffff_f001L})
        {
            final TableException e = assertErrno(Errno.EINVAL,
                () -> PageSizeSelector.choose(three, iova & 0xfff, 8192, iova, CAP_4K_2M));
            assertThat(e.getMessage()).contains(Long.toHexString(iova)).contains("overflows");
        }
        // Ending exactly at 2^64 does not wrap.
        assertThat(PageSizeSelector.choose(two, -8192, 8192, -8192, CAP_4K_2M))
            .isEqualTo(new PageSizeChoice(4096, 2));
        // A single byte at the very top of the address space.
        assertThat(PageSizeSelector.choose(List.of(new DmaRun(0x10000, 4096)), -1, 1, -1, CAP_4K_2M))
            .isEqualTo(new PageSizeChoice(4096, 1));
    }

    @Test
    void chooseIgnoresRunsPastTheBufferEvenWhenTheirTotalWouldOverflow()
    {
        // The kernel's scatterlist holds only the buffer's pages: what lies past them cannot matter.
        final List<DmaRun> huge = List.of(new DmaRun(0, 0x7fff_ffff_ffff_f000L), new DmaRun(0, 0x7fff_ffff_ffff_f000L));
        assertThat(PageSizeSelector.choose(huge, 0, 4096, 0, CAP_4K_2M))
            .isEqualTo(PageSizeSelector.choose(List.of(new DmaRun(0, 4096)), 0, 4096, 0, CAP_4K_2M));
    }

    @Test
    void pageSizeCapExtremesFollowTheKernelAlgorithm()
    {
        final List<DmaRun> one = List.of(new DmaRun(0x10000, 4096));
        // Only bit 0: 1-byte pages, one entry a byte (the kernel has allowed sub-PAGE_SIZE sizes since 6.7,
        // commit 4fbc3a52cd4d "Fix umem iterator when PAGE_SIZE is greater then HCA pgsz").
        assertThat(PageSizeSelector.choose(one, 0x10000, 4096, 0x10000, 1)).isEqualTo(new PageSizeChoice(1, 4096));
        // Only bits below 12: the largest, 2 KiB.
        assertThat(PageSizeSelector.choose(one, 0x10000, 4096, 0x10000, 0xfff)).isEqualTo(new PageSizeChoice(2048, 2));
        // All ones: the smallest size that still covers the buffer in one page.
        assertThat(PageSizeSelector.choose(one, 0x10000, 4096, 0x10000, -1L)).isEqualTo(new PageSizeChoice(4096, 1));
        assertThat(PageSizeSelector.choose(List.of(new DmaRun(0x4000_0000L, 2 * MIB)), VA, 2 * MIB, VA, -1L))
            .isEqualTo(new PageSizeChoice(2 * MIB, 1));
        // Nothing in the cap: size 0, not an exception; the AdapterConfig refuses such a cap.
        assertThat(PageSizeSelector.choose(one, 0x10000, 4096, 0x10000, 0)).isEqualTo(new PageSizeChoice(0, 0));
        assertThat(assertErrno(Errno.EINVAL, () -> new AdapterConfig(MttConfig.buddy(4, 0),
            MptConfig.of(4, VariantPolicy.GENERATION), 0, 0, 1)).getMessage()).contains("page_size_cap=0");
        // Only 2 MiB and VA, PA congruent modulo 2 MiB: one 2 MiB page around the 4 KiB buffer, as the kernel does.
        assertThat(PageSizeSelector.choose(one, 0x10000, 4096, 0x10000, 1L << 21))
            .isEqualTo(new PageSizeChoice(2 * MIB, 1));
        // Only 2 MiB and not congruent: no size fits (0).
        assertThat(PageSizeSelector.choose(List.of(new DmaRun(0x30000, 4096)), 0x10000, 4096, 0x10000, 1L << 21))
            .isEqualTo(new PageSizeChoice(0, 0));
    }

    @Test
    void registerRefusesACapWhereNoPageSizeFitsWithEinvalAndChangesNothing()
    {
        final AdapterTables t = tables(1L << 21, MttConfig.buddy(6, 0), MptConfig.of(16, VariantPolicy.GENERATION),
            16, 4);
        final TableException e = assertRefused(t, Errno.EINVAL,
            () -> t.register(PD, List.of(new DmaRun(0x30000, 4096)), 0x10000, 4096, 0x10000, RW));
        assertThat(e.getMessage()).contains("page_size_cap=0x200000").contains("0x10000");
    }

    // ------------------------------------------------------------------------------------------------------------
    // MttConfig, MptConfig, AdapterConfig, TranslationCache geometry: regression

    @Test
    void mttConfigAcceptsItsBoundsAndRefusesOneBeyondWithEinval()
    {
        assertThat(MttConfig.buddy(0, 0).entries()).isEqualTo(1);
        assertThat(MttConfig.buddy(28, 3).entries()).isEqualTo(1L << 31);
        assertThat(MttConfig.buddy(24, 7).entries()).isEqualTo(1L << 31);
        assertThat(new MttConfig(MttAllocatorKind.EXACT, 31, 0, 0).entries()).isEqualTo(1L << 31);
        assertThat(new MttConfig(MttAllocatorKind.EXACT, 0, 0, 0).entries()).isEqualTo(1);
        assertThat(MttConfig.exact(1L << 31).entries()).isEqualTo(1L << 31);

        assertThat(assertErrno(Errno.EINVAL, () -> MttConfig.buddy(29, 0)).getMessage()).contains("log_num_mtt=29");
        assertThat(assertErrno(Errno.EINVAL, () -> MttConfig.buddy(31, 0)).getMessage()).contains("log_num_mtt=31");
        assertThat(assertErrno(Errno.EINVAL, () -> MttConfig.buddy(28, 4)).getMessage()).contains("log_num_mtt=28");
        assertThat(assertErrno(Errno.EINVAL, () -> MttConfig.buddy(4, 8)).getMessage())
            .contains("log_mtts_per_seg=8");
        assertErrno(Errno.EINVAL, () -> MttConfig.buddy(4, -1));
        assertErrno(Errno.EINVAL, () -> MttConfig.buddy(-1, 0));
        assertErrno(Errno.EINVAL, () -> MttConfig.buddy(Integer.MAX_VALUE, 0));
        assertErrno(Errno.EINVAL, () -> MttConfig.buddy(Integer.MIN_VALUE, 7));
        assertErrno(Errno.EINVAL, () -> new MttConfig(MttAllocatorKind.EXACT, 32, 0, 0));
        assertErrno(Errno.EINVAL, () -> new MttConfig(MttAllocatorKind.EXACT, 0, 1, 5));
        assertErrno(Errno.EINVAL, () -> new MttConfig(MttAllocatorKind.BUDDY, 4, 0, 16));
        assertErrno(Errno.EINVAL, () -> new MttConfig(null, 4, 0, 0));
        assertThat(assertErrno(Errno.EINVAL, () -> MttConfig.exact((1L << 31) + 1)).getMessage())
            .contains("capacityEntries=" + ((1L << 31) + 1));
        for (final long c : new long[] {0, -1, Long.MIN_VALUE})
        {
            assertThat(assertErrno(Errno.EINVAL, () -> MttConfig.exact(c)).getMessage())
                .contains("capacityEntries=" + c);
        }
        assertErrno(Errno.EINVAL, () -> new MttConfig(MttAllocatorKind.EXACT, 0, 0, Long.MAX_VALUE));
        assertErrno(Errno.EINVAL, () -> new MttConfig(MttAllocatorKind.EXACT, 0, 0, -1));
    }

    @Test
    void largestMttsAreBuiltAndUsedWithoutExcess()
    {
        final Mtt buddy = new Mtt(MttConfig.buddy(28, 3));
        final MttRange r = buddy.allocate(1);
        assertThat(r).isEqualTo(range(0, 1, 8));
        buddy.free(r);
        assertThat(buddy.counters().largestFreeBlock()).isEqualTo(1L << 31);
        final Mtt exact = new Mtt(MttConfig.exact(1L << 31));
        assertRefused(exact, Errno.ENOMEM, () -> exact.allocate((1L << 31) + 1));
        final MttRange last = exact.allocate(1);
        exact.write(last, 0, 0x1000);
        assertThat(exact.entry(0)).isEqualTo(0x1000 | Mtt.PRESENT);
    }

    @Test
    void mptConfigAcceptsItsBoundsAndRefusesOneBeyondWithEinval()
    {
        assertThatCode(() -> MptConfig.of(2, VariantPolicy.GENERATION)).doesNotThrowAnyException();
        assertThatCode(() -> MptConfig.of(1L << 24, VariantPolicy.GENERATION)).doesNotThrowAnyException();
        assertThatCode(() -> new MptConfig(1L << 16, 16, VariantPolicy.RANDOM, IndexPolicy.CYCLIC, 0))
            .doesNotThrowAnyException();
        assertThatCode(() -> new MptConfig(2, 1, VariantPolicy.RANDOM, IndexPolicy.CYCLIC, 0))
            .doesNotThrowAnyException();
        for (final long maxMr : new long[] {1, 0, -1, Long.MIN_VALUE, (1L << 24) + 1, Long.MAX_VALUE})
        {
            assertThat(assertErrno(Errno.EINVAL, () -> MptConfig.of(maxMr, VariantPolicy.GENERATION)).getMessage())
                .contains("max_mr=" + maxMr).contains(Long.toString(1L << 24));
        }
        assertErrno(Errno.EINVAL, () -> new MptConfig((1L << 16) + 1, 16, VariantPolicy.RANDOM, IndexPolicy.CYCLIC, 0));
        for (final int bits : new int[] {0, 17, -1, Integer.MIN_VALUE, Integer.MAX_VALUE})
        {
            assertThat(assertErrno(Errno.EINVAL,
                () -> new MptConfig(16, bits, VariantPolicy.GENERATION, IndexPolicy.CYCLIC, 0)).getMessage())
                .contains("variantBits=" + bits);
        }
        assertErrno(Errno.EINVAL, () -> new MptConfig(16, 8, null, IndexPolicy.CYCLIC, 0));
        assertErrno(Errno.EINVAL, () -> new MptConfig(16, 8, VariantPolicy.RANDOM, null, 0));
    }

    @Test
    void adapterConfigRefusesMissingTablesWithEinval()
    {
        assertErrno(Errno.EINVAL, () -> new AdapterConfig(null, MptConfig.of(4, VariantPolicy.GENERATION), 4096, 0, 1));
        assertErrno(Errno.EINVAL, () -> new AdapterConfig(MttConfig.buddy(2, 0), null, 4096, 0, 1));
    }

    @Test
    void translationCacheRefusesImpossibleGeometryWithEinval()
    {
        final int[][] bad = {{7, 2}, {10, 4}, {16, 0}, {16, -1}, {-1, 1}, {-4, 2}, {Integer.MIN_VALUE, 1},
            {Integer.MAX_VALUE, 2}, {5, Integer.MIN_VALUE}};
        for (final int[] b : bad)
        {
            final TableException e = assertErrno(Errno.EINVAL, () -> new TranslationCache(b[0], b[1]));
            assertThat(e.getMessage()).contains(Integer.toString(b[0])).contains(Integer.toString(b[1]));
        }
        final AdapterConfig cfg = new AdapterConfig(MttConfig.buddy(2, 0), MptConfig.of(4, VariantPolicy.GENERATION),
            4096, 7, 2);
        assertErrno(Errno.EINVAL, () -> new AdapterTables(cfg));
    }

    @Test
    void cacheOfZeroLinesMissesEveryAccessWhateverItsWays()
    {
        final TranslationCache c = new TranslationCache(0, Integer.MAX_VALUE);
        assertThat(c.access(5)).isFalse();
        assertThat(c.access(5)).isFalse();
        assertThat(c.contains(5)).isFalse();
        assertThat(c.invalidate(5, 0, 10)).isZero();
        assertThat(c.flush()).isZero();
        assertThat(c.misses()).isEqualTo(2);
        assertThat(c.hits()).isZero();
    }

    @Test
    void cacheOfOneSetWithAllWaysKeepsTheLeastRecentlyUsedOrder()
    {
        final TranslationCache c = new TranslationCache(3, 3);
        for (final long tag : new long[] {TranslationCache.mptTag(0), TranslationCache.mptTag(0xffff_ffffL),
            TranslationCache.mttTag(0), TranslationCache.mttTag((1L << 31) - 1)})
        {
            c.access(tag);
        }
        assertThat(c.evictions()).isEqualTo(1);
        assertThat(c.contains(TranslationCache.mptTag(0))).isFalse();
        assertThat(c.invalidate(0xffff_ffffL, (1L << 31) - 1, 1)).isEqualTo(2);
    }

    // ------------------------------------------------------------------------------------------------------------
    // Mtt: regression

    @Test
    void mttAllocateRefusesNonPositiveCountsWithEinvalAndCountsNoFailure()
    {
        for (final Mtt m : new Mtt[] {new Mtt(MttConfig.buddy(4, 2)), new Mtt(MttConfig.exact(50))})
        {
            m.allocate(3);
            for (final long n : new long[] {0, -1, Long.MIN_VALUE, -64})
            {
                assertThat(assertRefused(m, Errno.EINVAL, () -> m.allocate(n)).getMessage())
                    .contains("entries=" + n);
            }
        }
    }

    @Test
    void mttAllocateRefusesMoreThanTheTableWithEnomemNamingTheCountAndTheLimit()
    {
        for (final Mtt m : new Mtt[] {new Mtt(MttConfig.buddy(4, 2)), new Mtt(MttConfig.exact(64))})
        {
            for (final long n : new long[] {65, Long.MAX_VALUE, 1L << 40, (1L << 62) + 1})
            {
                final TableException e = assertRefused(m, Errno.ENOMEM, () -> m.allocate(n));
                assertThat(e.getMessage()).contains(Long.toString(n)).contains("of 64 free");
            }
            final MttRange all = m.allocate(64);
            assertThat(all.reservedEntries()).isEqualTo(64);
            assertThat(assertRefused(m, Errno.ENOMEM, () -> m.allocate(1)).getMessage()).contains("0 of 64 free");
            m.free(all);
            assertThat(m.counters().entriesFree()).isEqualTo(64);
        }
    }

    @Test
    void buddyRoundsToSegmentsAndPowersOfTwoAtEveryLogMttsPerSeg()
    {
        for (int seg = 0; seg <= 7; seg++)
        {
            final Mtt m = new Mtt(MttConfig.buddy(2, seg));
            final long cap = 4L << seg;
            assertThat(m.reservedFor(1)).isEqualTo(1L << seg);
            assertThat(m.reservedFor(cap)).isEqualTo(cap);
            final MttRange r = m.allocate((1L << seg) + 1);
            assertThat(r.reservedEntries()).isEqualTo(Math.max(2L << seg, 2));
            final int s = seg;
            assertRefused(m, Errno.ENOMEM, () -> m.allocate((2L << s) + 1));
            m.free(r);
            assertThat(m.counters().largestFreeBlock()).isEqualTo(cap);
        }
    }

    @Test
    void oneEntryTablesServeOneAllocationAndRefuseTheSecondWithEnomem()
    {
        for (final Mtt m : new Mtt[] {new Mtt(MttConfig.buddy(0, 0)), new Mtt(MttConfig.exact(1))})
        {
            final MttRange r = m.allocate(1);
            assertRefused(m, Errno.ENOMEM, () -> m.allocate(1));
            m.free(r);
            assertThat(m.allocate(1)).isEqualTo(r);
        }
    }

    // ------------------------------------------------------------------------------------------------------------
    // MptTable: regression

    @Test
    void mptRefusesFreeStateAndFullTableAndChangesNothing()
    {
        final MptTable p = new MptTable(MptConfig.of(2, VariantPolicy.GENERATION));
        assertThat(assertRefused(p, Errno.EINVAL,
            () -> p.allocate(MptState.FREE, 1, 0, 4096, 0, 12, range(0, 1, 1))).getMessage()).contains("INVALID");
        final int key = p.allocate(MptState.VALID, 1, 0, 4096, 0, 12, range(0, 1, 1));
        assertThat(MKey.index(key, 8)).isEqualTo(1);
        assertThat(assertRefused(p, Errno.ENOMEM,
            () -> p.allocate(MptState.VALID, 1, 0, 4096, 0, 12, range(0, 1, 1))).getMessage())
            .contains("max_mr=1");
        p.free(key);
        assertThat(p.allocate(MptState.INVALID, 1, 0, 4096, 0, 12, range(0, 1, 1))).isEqualTo(key + 1);
    }

    @Test
    void mptFreeAndSetStateRefuseKeysThatNameNoLiveEntryWithEinval()
    {
        final MptTable p = new MptTable(MptConfig.of(64, VariantPolicy.GENERATION));
        final MptTable other = new MptTable(MptConfig.of(1L << 24, VariantPolicy.RANDOM));
        final int live = p.allocate(MptState.VALID, 1, 0x1000, 4096, RW, 12, range(0, 1, 1));
        final int stale = p.allocate(MptState.VALID, 1, 0x1000, 4096, RW, 12, range(1, 1, 1));
        p.free(stale);
        final int foreign = other.allocate(MptState.VALID, 1, 0x1000, 4096, RW, 12, range(0, 1, 1));
        final List<Integer> bad = new ArrayList<>(List.of(0, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, stale,
            live + 1, live ^ 0xff, live | (63 << 8), live | (64 << 8), foreign));
        for (final int k : bad)
        {
            if (k == live)
            {
                continue;
            }
            assertThat(assertRefused(p, Errno.EINVAL, () -> p.free(k)).getMessage()).contains(MKey.toHex(k));
            assertThat(assertRefused(p, Errno.EINVAL, () -> p.setState(k, MptState.INVALID)).getMessage())
                .contains(MKey.toHex(k));
        }
        assertRefused(p, Errno.EINVAL, () -> p.setState(live, MptState.FREE));
        assertThat(p.lookup(live, 1, RW, 0x1000, 4096)).isEqualTo(KeyCheck.VALID);
        p.free(live);
        assertRefused(p, Errno.EINVAL, () -> p.free(live));
        assertThat(p.inUse()).isZero();
    }

    @Test
    void lookupNeverThrowsAndJudgesEveryBoundaryOfAnMr()
    {
        final MptTable p = new MptTable(MptConfig.of(1L << 24, VariantPolicy.GENERATION));
        final long iova = 0x10000;
        final int key = p.allocate(MptState.VALID, PD, iova, 8192, RW, 12, range(0, 2, 2));
        assertThat(p.lookup(key, PD, RW, iova, 8192)).isEqualTo(KeyCheck.VALID);
        assertThat(p.lookup(key, PD, RW, iova, 0)).isEqualTo(KeyCheck.VALID);
        assertThat(p.lookup(key, PD, RW, iova + 8192, 0)).isEqualTo(KeyCheck.VALID);
        assertThat(p.lookup(key, PD, RW, iova + 8191, 1)).isEqualTo(KeyCheck.VALID);
        assertThat(p.lookup(key, PD, RW, iova + 8192, 1)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(p.lookup(key, PD, RW, iova + 8193, 0)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(p.lookup(key, PD, RW, iova - 1, 1)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(p.lookup(key, PD, RW, iova - 1, 2)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(p.lookup(key, PD, RW, iova, 8193)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(p.lookup(key, PD, RW, iova, -1)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(p.lookup(key, PD, RW, iova, Long.MAX_VALUE)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(p.lookup(key, PD, RW, iova, Long.MIN_VALUE)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(p.lookup(key, PD, RW, iova + 1, -1)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(p.lookup(key, PD, RW, Long.MIN_VALUE, 1)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(p.lookup(key, PD + 1, RW, iova, 1)).isEqualTo(KeyCheck.WRONG_PD);
        assertThat(p.lookup(key, PD, -1, iova, 1)).isEqualTo(KeyCheck.RIGHTS_MISSING);
        assertThat(p.lookup(key, PD, AccessFlags.REMOTE_ATOMIC, iova, 1)).isEqualTo(KeyCheck.RIGHTS_MISSING);
        assertThat(p.lookup(key ^ 1, PD, RW, iova, 1)).isEqualTo(KeyCheck.VARIANT_MISMATCH);
        for (final int k : EDGE_INTS)
        {
            if (MKey.index(k, 8) != MKey.index(key, 8))
            {
                assertThat(p.lookup(k, PD, RW, iova, 1)).as("key %s", MKey.toHex(k))
                    .isEqualTo(KeyCheck.NO_SUCH_INDEX);
            }
        }
        p.setState(key, MptState.INVALID);
        assertThat(p.lookup(key, PD, RW, iova, 1)).isEqualTo(KeyCheck.WRONG_STATE);
        for (final int k : new int[] {key, key ^ 1, 0, -1, Integer.MIN_VALUE})
        {
            for (final int pd : EDGE_INTS)
            {
                for (final long a : EDGE_LONGS)
                {
                    for (final long l : EDGE_LONGS)
                    {
                        assertThatCode(() -> p.lookup(k, pd, pd, a, l)).doesNotThrowAnyException();
                    }
                }
            }
        }
    }

    @Test
    void generationKeysValidateAgainAfterExactlyTwoToTheVariantBitsReuses()
    {
        for (final int bits : new int[] {1, 8, 16})
        {
            final MptTable p = new MptTable(new MptConfig(2, bits, VariantPolicy.GENERATION,
                IndexPolicy.LOWEST_FREE, 0));
            final int first = p.allocate(MptState.VALID, 1, 0, 1, 0, 12, range(0, 1, 1));
            p.free(first);
            for (int reuse = 1; reuse < (1 << bits); reuse++)
            {
                final int k = p.allocate(MptState.VALID, 1, 0, 1, 0, 12, range(0, 1, 1));
                assertThat(k).isNotEqualTo(first);
                if (reuse == 1 || reuse == (1 << bits) - 1)
                {
                    assertThat(p.lookup(first, 1, 0, 0, 1)).isEqualTo(KeyCheck.VARIANT_MISMATCH);
                }
                p.free(k);
            }
            assertThat(p.allocate(MptState.VALID, 1, 0, 1, 0, 12, range(0, 1, 1))).isEqualTo(first);
        }
    }

    @Test
    void keysOfTheWidestAndNarrowestLayoutsRoundTrip()
    {
        final MptTable wide = new MptTable(new MptConfig(1L << 16, 16, VariantPolicy.RANDOM, IndexPolicy.CYCLIC, 3));
        final MptTable narrow = new MptTable(new MptConfig(1L << 24, 8, VariantPolicy.RECYCLED,
            IndexPolicy.LOWEST_FREE, 0));
        for (final MptTable p : new MptTable[] {wide, narrow})
        {
            final int vb = p.config().variantBits();
            final int k = p.allocate(MptState.VALID, 1, -4096, 4096, 0, 12, range(0, 1, 1));
            assertThat(MKey.make(MKey.index(k, vb), MKey.variant(k, vb), vb)).isEqualTo(k);
            assertThat(p.lookup(k, 1, 0, -1, 1)).isEqualTo(KeyCheck.VALID);
            assertThat(p.lookup(k, 1, 0, 0, 0)).isEqualTo(KeyCheck.VALID);
            assertThat(p.lookup(-1, 1, 0, -1, 1)).isEqualTo(KeyCheck.NO_SUCH_INDEX);
        }
    }

    // ------------------------------------------------------------------------------------------------------------
    // AdapterTables: regression

    @Test
    void registerRefusesGarbageWithEinvalAndChangesNothing()
    {
        final AdapterTables t = small();
        final RegisteredMr keep = t.register(PD, List.of(new DmaRun(0x10000, 4096)), VA, 4096, VA, RW);
        final List<DmaRun> two = List.of(new DmaRun(0x20000, 8192));
        assertRefused(t, Errno.EINVAL, () -> t.register(PD, List.of(), VA, 4096, VA, RW));
        for (final long len : new long[] {0, -1, Long.MIN_VALUE, 8193, Long.MAX_VALUE})
        {
            assertRefused(t, Errno.EINVAL, () -> t.register(PD, two, VA, len, VA, RW));
        }
        for (final long iova : new long[] {-1, -4096, -4097, 0xffff_ffff_ffff_f001L})
        {
            assertRefused(t, Errno.EINVAL, () -> t.register(PD, two, iova, 8192, iova, RW));
        }
        // Offset within the page differs (kernel: ib_uverbs_reg_mr EINVAL): no 4K/2M page size fits either.
        assertRefused(t, Errno.EINVAL, () -> t.register(PD, two, VA, 4096, VA + 1, RW));
        assertThat(t.translate(keep.key(), PD, 0, VA, 4096)).isEqualTo(0x10000);
    }

    @Test
    void registerWhenTheMptIsFullGivesTheMttRangeBackAndChangesNothing()
    {
        final AdapterTables t = tables(CAP_4K_2M, MttConfig.exact(64), MptConfig.of(2, VariantPolicy.GENERATION),
            8, 2);
        final RegisteredMr mr = t.register(PD, List.of(new DmaRun(0x10000, 4096)), VA, 4096, VA, RW);
        final TableException e = assertRefused(t, Errno.ENOMEM,
            () -> t.register(PD, List.of(new DmaRun(0x20000, 8192)), VA, 8192, VA, RW));
        assertThat(e.getMessage()).contains("max_mr=1");
        assertThat(t.mtt().counters().failures()).isZero();
        assertThat(t.mtt().entry(1)).isZero();
        t.deregister(mr.key());
        assertThat(t.mtt().counters().entriesFree()).isEqualTo(64);
    }

    @Test
    void registerWhenTheMttIsFullRefusesWithEnomemNamingTheEntries()
    {
        final AdapterTables t = tables(CAP_4K_2M, MttConfig.buddy(2, 0), MptConfig.of(16, VariantPolicy.GENERATION),
            8, 2);
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 4096), new DmaRun(0x30000, 4096),
            new DmaRun(0x50000, 4096), new DmaRun(0x70000, 4096), new DmaRun(0x90000, 4096));
        final TableException e = assertRefused(t, Errno.ENOMEM, () -> t.register(PD, runs, VA, 5 * 4096, VA, RW));
        assertThat(e.getMessage()).contains("5 entries").contains("of 4 free");
        assertThat(t.mtt().counters().failures()).isEqualTo(1);
    }

    @Test
    void deregisterRefusesKeysThatNameNoLiveMrWithEinvalAndChangesNothing()
    {
        final AdapterTables t = small();
        final AdapterTables other = small();
        final RegisteredMr live = t.register(PD, List.of(new DmaRun(0x10000, 4096)), VA, 4096, VA, RW);
        final RegisteredMr gone = t.register(PD, List.of(new DmaRun(0x20000, 4096)), VA, 4096, VA, RW);
        t.deregister(gone.key());
        other.register(PD, List.of(new DmaRun(0x10000, 4096)), VA, 4096, VA, RW);
        final RegisteredMr foreign = other.register(PD, List.of(new DmaRun(0x10000, 4096)), VA, 4096, VA, RW);
        for (final int k : new int[] {0, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, gone.key(), live.key() + 1,
            live.key() ^ 0xff, foreign.key(), live.key() + (1 << 8), 16 << 8, 0xffffff00})
        {
            assertThat(assertRefused(t, Errno.EINVAL, () -> t.deregister(k)).getMessage()).contains(MKey.toHex(k));
            assertRefused(t, Errno.EINVAL, () -> t.mpt().setState(k, MptState.VALID));
            assertRefused(t, Errno.EINVAL, () -> t.mpt().free(k));
        }
        assertThat(t.deregister(live.key())).isGreaterThanOrEqualTo(0);
        assertRefused(t, Errno.EINVAL, () -> t.deregister(live.key()));
        assertThat(t.mtt().counters().entriesInUse()).isZero();
    }

    @Test
    void translateJudgesEveryBoundaryOfAnMrAndNeverThrows()
    {
        final AdapterTables t = small();
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 4096), new DmaRun(0x30000, 4096));
        final long address = VA + 0x123;
        final long len = 8192 - 0x123;
        final RegisteredMr mr = t.register(PD, runs, address, len, address, RW);
        final int k = mr.key();
        assertThat(t.translate(k, PD, RW, address, len)).isEqualTo(0x10123);
        assertThat(t.translate(k, PD, RW, address, 0)).isEqualTo(0x10123);
        assertThat(t.translate(k, PD, RW, address + len - 1, 1)).isEqualTo(0x30fff);
        assertThat(t.translate(k, PD, RW, address + len, 0)).as("empty access past the end").isEqualTo(0x31000);
        assertThat(outcome(t.translate(k, PD, RW, address + len, 1))).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(outcome(t.translate(k, PD, RW, address - 1, 1))).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(outcome(t.translate(k, PD, RW, address - 1, 0))).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(outcome(t.translate(k, PD, RW, address, len + 1))).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(outcome(t.translate(k, PD, RW, address, Long.MAX_VALUE))).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(outcome(t.translate(k, PD, RW, address + 1, -1))).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(outcome(t.translate(k, PD, RW, Long.MIN_VALUE, 1))).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(outcome(t.translate(k, PD + 1, RW, address, 1))).isEqualTo(KeyCheck.WRONG_PD);
        assertThat(outcome(t.translate(k, PD, -1, address, 1))).isEqualTo(KeyCheck.RIGHTS_MISSING);
        assertThat(outcome(t.translate(k ^ 1, PD, RW, address, 1))).isEqualTo(KeyCheck.VARIANT_MISMATCH);
        assertThat(outcome(t.translate(0, PD, RW, address, 1))).isEqualTo(KeyCheck.NO_SUCH_INDEX);
        assertThat(outcome(t.translate(-1, PD, RW, address, 1))).isEqualTo(KeyCheck.NO_SUCH_INDEX);
        assertThat(outcome(t.translate(Integer.MIN_VALUE, PD, RW, address, 1))).isEqualTo(KeyCheck.NO_SUCH_INDEX);
        for (final int key : new int[] {k, k ^ 1, 0, -1, Integer.MIN_VALUE, Integer.MAX_VALUE})
        {
            for (final int v : EDGE_INTS)
            {
                for (final long a : EDGE_LONGS)
                {
                    for (final long l : EDGE_LONGS)
                    {
                        assertThatCode(() -> outcome(t.translate(key, v, v & RW, a, l))).doesNotThrowAnyException();
                        assertThatCode(() -> outcome(t.translate(key, PD, 0, address + a, l)))
                            .doesNotThrowAnyException();
                    }
                }
            }
        }
        t.mpt().setState(k, MptState.INVALID);
        assertThat(outcome(t.translate(k, PD, RW, address, 1))).isEqualTo(KeyCheck.WRONG_STATE);
        t.deregister(k);
        assertThat(outcome(t.translate(k, PD, RW, address, 1))).isEqualTo(KeyCheck.NO_SUCH_INDEX);
    }

    @Test
    void anMrEndingExactlyAtTwoToThe64TranslatesItsLastByteAndItsEnd()
    {
        final AdapterTables t = small();
        final RegisteredMr mr = t.register(PD, List.of(new DmaRun(0x10000, 4096)), 0x5000, 4096, -4096, RW);
        assertThat(t.translate(mr.key(), PD, 0, -4096, 4096)).isEqualTo(0x10000);
        assertThat(t.translate(mr.key(), PD, 0, -1, 1)).isEqualTo(0x10fff);
        assertThat(t.translate(mr.key(), PD, 0, 0, 0)).as("end, wrapped to 0").isEqualTo(0x11000);
        assertThat(outcome(t.translate(mr.key(), PD, 0, 0, 1))).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(outcome(t.translate(mr.key(), PD, 0, -1, 2))).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(outcome(t.translate(mr.key(), PD, 0, -4096, Long.MAX_VALUE))).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(outcome(t.translate(mr.key(), PD, 0, -4097, 1))).isEqualTo(KeyCheck.OUT_OF_RANGE);
        t.deregister(mr.key());
        assertThat(t.mtt().counters().entriesInUse()).isZero();
    }

    @Test
    void twoKibPagesTranslateEveryByteTheyMap()
    {
        final AdapterTables t = tables(0x801, MttConfig.exact(4096), MptConfig.of(16, VariantPolicy.GENERATION), 16,
            4);
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 4096), new DmaRun(0x30000, 4096));
        final long address = VA + 0x900;
        final RegisteredMr mr = t.register(PD, runs, address, 4096, address, RW);
        assertThat(mr.pageSizeBytes()).isEqualTo(2048);
        for (long off = 0; off < 4096; off += 97)
        {
            assertThat(t.translate(mr.key(), PD, 0, address + off, 1)).isEqualTo(expectedDma(runs, address, off));
        }
        assertThat(t.translate(mr.key(), PD, 0, address + 4096, 0)).isEqualTo(expectedDma(runs, address, 4095) + 1);
    }

    // ------------------------------------------------------------------------------------------------------------
    // Seeded fuzz

    private static final class Mr
    {
        final RegisteredMr reg;
        final List<DmaRun> runs;
        final long address;
        final long length;
        final long iova;
        final int pd;
        final int access;
        boolean valid = true;

        Mr(final RegisteredMr reg, final List<DmaRun> runs, final long address, final long length, final long iova,
            final int pd, final int access)
        {
            this.reg = reg;
            this.runs = runs;
            this.address = address;
            this.length = length;
            this.iova = iova;
            this.pd = pd;
            this.access = access;
        }
    }

    private enum Expect
    {
        OK_OR_ENOMEM, EINVAL, ANY
    }

    private record Reg(List<DmaRun> runs, long address, long length, long iova, Expect expect)
    {
    }

    private static Reg randomRegistration(final SplittableRandom rnd)
    {
        final boolean huge = rnd.nextInt(5) == 0;
        final long unit = huge ? 2 * MIB : 4096;
        final long pgoff = rnd.nextBoolean() ? 0 : rnd.nextLong(4096);
        final List<DmaRun> runs = new ArrayList<>();
        final int n = 1 + rnd.nextInt(4);
        long total = 0;
        for (int i = 0; i < n; i++)
        {
            final long len = unit * (1 + rnd.nextInt(huge ? 2 : 4));
            final long dma = i > 0 && rnd.nextInt(3) == 0
                ? runs.get(i - 1).dmaAddr() + runs.get(i - 1).lengthBytes()
                : unit * (1 + rnd.nextLong((1L << 40) / unit));
            runs.add(new DmaRun(dma, len));
            total += len;
        }
        final long maxLen = total - pgoff;
        final long lastLen = runs.get(n - 1).lengthBytes();
        long length = maxLen - rnd.nextLong(Math.min(lastLen, maxLen));
        long address = (rnd.nextLong(1L << 47) & -unit) | pgoff;
        final long pages = (pgoff + length + unit - 1) / unit;
        long iova = switch (rnd.nextInt(4))
        {
            case 0 -> address;
            case 1 -> (rnd.nextLong() & -unit) | pgoff;
            case 2 -> -(pages * unit) + pgoff;
            default -> (rnd.nextLong(1L << 20) * unit) | pgoff;
        };
        if (Long.compareUnsigned(iova + length - 1, iova) < 0)
        {
            iova = address;
        }
        List<DmaRun> useRuns = runs;
        Expect expect = Expect.OK_OR_ENOMEM;
        if (rnd.nextInt(5) < 2)
        {
            switch (rnd.nextInt(8))
            {
                case 0 -> {
                    length = new long[] {0, -1, Long.MIN_VALUE, -rnd.nextLong(1L << 40) - 1}[rnd.nextInt(4)];
                    expect = Expect.EINVAL;
                }
                case 1 -> {
                    length = maxLen + 1 + rnd.nextLong(1L << 20);
                    expect = Expect.EINVAL;
                }
                case 2 -> {
                    useRuns = List.of();
                    expect = Expect.EINVAL;
                }
                case 3 -> {
                    if (length >= 2)
                    {
                        iova = -1 - rnd.nextLong(length - 1);
                        expect = Expect.EINVAL;
                    }
                }
                case 4 -> {
                    iova = EDGE_LONGS[rnd.nextInt(EDGE_LONGS.length)];
                    expect = Expect.ANY;
                }
                case 5 -> {
                    iova = rnd.nextLong();
                    expect = Expect.ANY;
                }
                case 6 -> {
                    address = EDGE_LONGS[rnd.nextInt(EDGE_LONGS.length)];
                    expect = Expect.ANY;
                }
                default -> {
                    length = Long.MAX_VALUE;
                    expect = Expect.EINVAL;
                }
            }
        }
        return new Reg(useRuns, address, length, iova, expect);
    }

    private static int pickKey(final SplittableRandom rnd, final Map<Integer, Mr> live, final List<Integer> dead)
    {
        final int r = rnd.nextInt(10);
        if (r < 6 && !live.isEmpty())
        {
            return new ArrayList<>(live.keySet()).get(rnd.nextInt(live.size()));
        }
        if (r < 8 && !dead.isEmpty())
        {
            return dead.get(rnd.nextInt(dead.size()));
        }
        return r == 8 ? EDGE_INTS[rnd.nextInt(EDGE_INTS.length)] : rnd.nextInt();
    }

    /** The model of a translation: the failed check, or the DMA address. */
    private static long expectedTranslation(final Map<Integer, Mr> live, final int variantBits, final int key,
        final int pd, final int access, final long iova, final long length)
    {
        final Mr mr = live.get(key);
        if (mr == null)
        {
            final long index = MKey.index(key, variantBits);
            final boolean indexLive = live.keySet().stream().anyMatch(k -> MKey.index(k, variantBits) == index);
            return (indexLive ? KeyCheck.VARIANT_MISMATCH : KeyCheck.NO_SUCH_INDEX).code();
        }
        if (mr.pd != pd)
        {
            return KeyCheck.WRONG_PD.code();
        }
        if ((mr.access & access) != access)
        {
            return KeyCheck.RIGHTS_MISSING.code();
        }
        if (!mr.valid)
        {
            return KeyCheck.WRONG_STATE.code();
        }
        final long off = iova - mr.iova;
        if (length < 0 || Long.compareUnsigned(off, mr.length) > 0 || Long.compareUnsigned(length, mr.length - off) > 0)
        {
            return KeyCheck.OUT_OF_RANGE.code();
        }
        return off == mr.length ? expectedDma(mr.runs, mr.address, off - 1) + 1 : expectedDma(mr.runs, mr.address, off);
    }

    private static void fuzzAdapterTables(final AdapterConfig cfg, final long seed, final int steps)
    {
        final AdapterTables t = new AdapterTables(cfg);
        final int vb = cfg.mpt().variantBits();
        final SplittableRandom rnd = new SplittableRandom(seed);
        final Map<Integer, Mr> live = new LinkedHashMap<>();
        final List<Integer> dead = new ArrayList<>();
        final long capacity = t.mtt().counters().capacityEntries();
        final long[] stats = new long[4];
        for (int step = 0; step < steps; step++)
        {
            final String where = "seed " + seed + " step " + step;
            final int op = rnd.nextInt(10);
            final State before = State.of(t);
            Throwable thrown = null;
            Expect expect = Expect.ANY;
            try
            {
                if (op < 4)
                {
                    final Reg r = randomRegistration(rnd);
                    expect = r.expect();
                    final int pd = rnd.nextInt(3);
                    // Any combination ib_check_mr_access accepts: remote write and atomic bring local write along.
                    final int drawn = rnd.nextInt(1 << 5);
                    final int access = (drawn & (AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_ATOMIC)) != 0
                        ? drawn | AccessFlags.LOCAL_WRITE : drawn;
                    final RegisteredMr reg = t.register(pd, r.runs(), r.address(), r.length(), r.iova(), access);
                    assertThat(live).as(where + ": new key already live").doesNotContainKey(reg.key());
                    final Mr mr = new Mr(reg, r.runs(), r.address(), r.length(), r.iova(), pd, access);
                    live.put(reg.key(), mr);
                    stats[0]++;
                    assertThat(expect).as(where + ": registration that must be refused succeeded: %s", r)
                        .isNotEqualTo(Expect.EINVAL);
                    assertThat(t.entriesWritten()).as(where).isEqualTo(before.written() + reg.mtt().entries());
                    for (final long off : new long[] {0, r.length() - 1, rnd.nextLong(r.length()), r.length() / 2})
                    {
                        assertThat(t.translate(reg.key(), pd, access, r.iova() + off, 1))
                            .as(where + ": translate offset %d of %s", off, r)
                            .isEqualTo(expectedDma(r.runs(), r.address(), off));
                    }
                }
                else if (op < 6)
                {
                    final int k = pickKey(rnd, live, dead);
                    expect = live.containsKey(k) ? Expect.OK_OR_ENOMEM : Expect.EINVAL;
                    final long dropped = t.deregister(k);
                    assertThat(expect).as(where + ": deregister of dead key %s succeeded", MKey.toHex(k))
                        .isNotEqualTo(Expect.EINVAL);
                    assertThat(dropped).isGreaterThanOrEqualTo(0);
                    final Mr mr = live.remove(k);
                    dead.add(k);
                    stats[1]++;
                    assertThat(t.entriesZapped()).as(where).isEqualTo(before.zapped() + mr.reg.mtt().entries());
                    for (long e = 0; e < mr.reg.mtt().entries(); e++)
                    {
                        assertThat(t.mtt().entry(mr.reg.mtt().firstEntry() + e)).as(where + ": zapped").isZero();
                    }
                }
                else if (op == 6)
                {
                    final int k = pickKey(rnd, live, dead);
                    final MptState s = MptState.values()[rnd.nextInt(3)];
                    expect = live.containsKey(k) && s != MptState.FREE ? Expect.OK_OR_ENOMEM : Expect.EINVAL;
                    t.mpt().setState(k, s);
                    assertThat(expect).as(where + ": setState(%s, %s) succeeded", MKey.toHex(k), s)
                        .isNotEqualTo(Expect.EINVAL);
                    live.get(k).valid = s == MptState.VALID;
                }
                else
                {
                    final int k = pickKey(rnd, live, dead);
                    final Mr mr = live.get(k);
                    final boolean inside = mr != null && rnd.nextBoolean();
                    final int pd = mr != null && (inside || rnd.nextInt(4) != 0) ? mr.pd : rnd.nextInt(4);
                    final int access = mr != null && (inside || rnd.nextInt(4) != 0) ? mr.access & rnd.nextInt()
                        : rnd.nextInt(32);
                    final long iova;
                    final long length;
                    if (inside)
                    {
                        final long off = rnd.nextLong(mr.length + 1);
                        iova = mr.iova + off;
                        length = rnd.nextLong(mr.length - off + 1);
                    }
                    else if (mr != null && rnd.nextInt(3) != 0)
                    {
                        final long[] offs = {0, mr.length - 1, mr.length, mr.length + 1, -1, rnd.nextLong(mr.length)};
                        iova = mr.iova + offs[rnd.nextInt(offs.length)];
                        final long[] lens = {0, 1, mr.length, mr.length + 1, -1, Long.MAX_VALUE, Long.MIN_VALUE,
                            rnd.nextLong(mr.length + 1)};
                        length = lens[rnd.nextInt(lens.length)];
                    }
                    else
                    {
                        iova = rnd.nextBoolean() ? rnd.nextLong() : EDGE_LONGS[rnd.nextInt(EDGE_LONGS.length)];
                        length = rnd.nextBoolean() ? rnd.nextLong() : EDGE_LONGS[rnd.nextInt(EDGE_LONGS.length)];
                    }
                    final long want = expectedTranslation(live, vb, k, pd, access, iova, length);
                    assertThat(t.translate(k, pd, access, iova, length))
                        .as(where + ": translate(%s, %d, %d, 0x%x, %d)", MKey.toHex(k), pd, access, iova, length)
                        .isEqualTo(want);
                    stats[2] += want >= 0 ? 1 : 0;
                    final KeyCheck check = t.mpt().lookup(k, pd, access, iova, length);
                    assertThat(check).as(where + ": lookup").isEqualTo(KeyCheck.ofTranslation(want));
                }
            }
            catch (final AssertionError e)
            {
                throw e;
            }
            catch (final Throwable e)
            {
                thrown = e;
            }
            if (thrown != null)
            {
                assertThat(thrown).as(where + ": only TableException may be thrown").isInstanceOf(TableException.class);
                final Errno errno = ((TableException)thrown).errno();
                if (expect == Expect.EINVAL)
                {
                    assertThat(errno).as(where + ": %s", thrown.getMessage()).isEqualTo(Errno.EINVAL);
                }
                else if (expect == Expect.OK_OR_ENOMEM)
                {
                    assertThat(errno).as(where + ": %s", thrown.getMessage()).isEqualTo(Errno.ENOMEM);
                }
                assertThat(State.of(t)).as(where + ": state after %s", thrown.getMessage()).isEqualTo(before);
                stats[3]++;
            }
            // Invariants.
            final MttCounters c = t.mtt().counters();
            assertThat(c.entriesFree() + c.entriesInUse()).as(where + ": free + in use").isEqualTo(capacity);
            assertThat(c.entriesInUse()).as(where + ": in use").isEqualTo(
                live.values().stream().mapToLong(m -> m.reg.mtt().reservedEntries()).sum());
            assertThat(c.entriesRequested()).as(where + ": requested").isEqualTo(
                live.values().stream().mapToLong(m -> m.reg.mtt().entries()).sum());
            assertThat(t.mpt().inUse()).as(where + ": MPT in use").isEqualTo(live.size());
            for (final Mr mr : live.values())
            {
                final long got = t.translate(mr.reg.key(), mr.pd, 0, mr.iova, 1);
                if (mr.valid)
                {
                    assertThat(got).as(where + ": live key %s at its iova", MKey.toHex(mr.reg.key()))
                        .isEqualTo(expectedDma(mr.runs, mr.address, 0));
                }
                else
                {
                    assertThat(outcome(got)).as(where).isEqualTo(KeyCheck.WRONG_STATE);
                }
            }
        }
        assertThat(t.mpt().allocations() - t.mpt().frees()).isEqualTo(live.size());
        // The run exercised every path, not only refusals.
        assertThat(Arrays.stream(stats).min().orElse(0))
            .as("fewest of registrations, deregistrations, valid random translations, refusals: %s",
                Arrays.toString(stats))
            .isGreaterThan(steps / 50);
    }

    @Test
    void fuzzBuddyGenerationCyclicKeepsTheContractAndTheInvariants()
    {
        fuzzAdapterTables(new AdapterConfig(MttConfig.buddy(5, 2), new MptConfig(16, 8, VariantPolicy.GENERATION,
            IndexPolicy.CYCLIC, 0), CAP_4K_64K_2M, 16, 4), 1, 2500);
    }

    @Test
    void fuzzExactRandomLowestFreeWithEveryPageSizeKeepsTheContractAndTheInvariants()
    {
        fuzzAdapterTables(new AdapterConfig(MttConfig.exact(100), new MptConfig(9, 2, VariantPolicy.RANDOM,
            IndexPolicy.LOWEST_FREE, 42), -1L, 0, 1), 2, 2500);
    }

    @Test
    void fuzzBuddyRecycledWideVariantsKeepsTheContractAndTheInvariants()
    {
        fuzzAdapterTables(new AdapterConfig(MttConfig.buddy(3, 4), new MptConfig(5, 16, VariantPolicy.RECYCLED,
            IndexPolicy.CYCLIC, 0), CAP_4K_2M_1G, 12, 3), 3, 2500);
    }

    @Test
    void fuzzMttAllocateAndFreeKeepsRangesDisjointAndCountersExact()
    {
        for (final MttConfig cfg : new MttConfig[] {MttConfig.buddy(4, 2), MttConfig.buddy(6, 0), MttConfig.exact(77),
            MttConfig.buddy(0, 7)})
        {
            final Mtt m = new Mtt(cfg);
            final long cap = cfg.entries();
            final SplittableRandom rnd = new SplittableRandom(cap);
            final List<MttRange> live = new ArrayList<>();
            final Map<MttRange, Long> tagOf = new HashMap<>();
            long nextTag = 1;
            for (int step = 0; step < 3000; step++)
            {
                final String where = cfg + " step " + step;
                if (rnd.nextInt(5) < 3 || live.isEmpty())
                {
                    final long n = rnd.nextInt(8) == 0
                        ? new long[] {0, -1, Long.MIN_VALUE, Long.MAX_VALUE, cap + 1, 2 * cap}[rnd.nextInt(6)]
                        : 1 + rnd.nextLong(Math.max(1, cap / (rnd.nextBoolean() ? 8 : 2)));
                    final MttCounters before = m.counters();
                    final Throwable thrown = catchThrowable(() -> live.add(m.allocate(n)));
                    if (n <= 0)
                    {
                        assertThat(thrown).as(where).isInstanceOf(TableException.class);
                        assertThat(((TableException)thrown).errno()).as(where).isEqualTo(Errno.EINVAL);
                        assertThat(m.counters()).as(where).isEqualTo(before);
                    }
                    else if (n > cap || before.largestFreeBlock() < m.reservedFor(n))
                    {
                        assertThat(thrown).as(where + " n=" + n).isInstanceOf(TableException.class);
                        assertThat(((TableException)thrown).errno()).as(where).isEqualTo(Errno.ENOMEM);
                        assertThat(noFailures(m.counters())).as(where).isEqualTo(noFailures(before));
                        assertThat(m.counters().failures()).isEqualTo(before.failures() + 1);
                    }
                    else
                    {
                        assertThat(thrown).as(where + " n=" + n).isNull();
                        final MttRange r = live.get(live.size() - 1);
                        assertThat(r.entries()).isEqualTo(n);
                        assertThat(r.reservedEntries()).isEqualTo(m.reservedFor(n)).isGreaterThanOrEqualTo(n);
                        assertThat(r.firstEntry()).isGreaterThanOrEqualTo(0);
                        assertThat(r.firstEntry() + r.reservedEntries()).isLessThanOrEqualTo(cap);
                        if (cfg.allocator() == MttAllocatorKind.BUDDY)
                        {
                            assertThat(Long.bitCount(r.reservedEntries())).isEqualTo(1);
                            assertThat(r.firstEntry() % r.reservedEntries()).isZero();
                        }
                        for (final MttRange o : live)
                        {
                            if (o != r)
                            {
                                assertThat(r.firstEntry() + r.reservedEntries() <= o.firstEntry()
                                    || o.firstEntry() + o.reservedEntries() <= r.firstEntry())
                                    .as(where + ": %s overlaps %s", r, o).isTrue();
                            }
                        }
                        final long tag = nextTag++;
                        tagOf.put(r, tag);
                        for (long b = 0; b < r.entries(); b++)
                        {
                            m.write(r, b, (tag << 24) | (b << 12));
                        }
                    }
                }
                else
                {
                    final MttRange r = live.remove(rnd.nextInt(live.size()));
                    m.free(r);
                    for (long b = 0; b < r.entries(); b++)
                    {
                        assertThat(m.entry(r.firstEntry() + b)).as(where + ": zapped").isZero();
                    }
                    for (final MttRange o : live)
                    {
                        for (long b = 0; b < o.entries(); b++)
                        {
                            assertThat(m.entry(o.firstEntry() + b)).as(where + ": neighbour intact")
                                .isEqualTo((tagOf.get(o) << 24) | (b << 12) | Mtt.PRESENT);
                        }
                    }
                }
                final MttCounters c = m.counters();
                assertThat(c.entriesFree() + c.entriesInUse()).as(where).isEqualTo(cap);
                assertThat(c.entriesInUse()).as(where)
                    .isEqualTo(live.stream().mapToLong(MttRange::reservedEntries).sum());
                assertThat(c.entriesRequested()).as(where).isEqualTo(live.stream().mapToLong(MttRange::entries).sum());
                assertThat(c.allocations() - c.frees()).as(where).isEqualTo(live.size());
                assertThat(c.largestFreeBlock()).as(where).isLessThanOrEqualTo(c.entriesFree());
            }
        }
    }

    @Test
    void fuzzMptKeysWithOneVariantBitAgreesWithAModelOfLiveKeys()
    {
        for (final VariantPolicy policy : VariantPolicy.values())
        {
            for (final IndexPolicy ip : IndexPolicy.values())
            {
                final MptTable p = new MptTable(new MptConfig(5, 1, policy, ip, 9));
                final SplittableRandom rnd = new SplittableRandom(policy.ordinal() * 7L + ip.ordinal());
                final Map<Integer, Boolean> live = new LinkedHashMap<>();
                final List<Integer> dead = new ArrayList<>();
                for (int step = 0; step < 1500; step++)
                {
                    final String where = policy + "/" + ip + " step " + step;
                    final int op = rnd.nextInt(4);
                    final MptCounts before = MptCounts.of(p);
                    final int k = rnd.nextInt(3) == 0 || live.isEmpty()
                        ? (dead.isEmpty() || rnd.nextBoolean() ? EDGE_INTS[rnd.nextInt(EDGE_INTS.length)]
                            : dead.get(rnd.nextInt(dead.size())))
                        : new ArrayList<>(live.keySet()).get(rnd.nextInt(live.size()));
                    final Throwable thrown;
                    final boolean mustFail;
                    if (op == 0)
                    {
                        mustFail = live.size() == 4;
                        final int[] got = new int[1];
                        thrown = catchThrowable(() -> got[0] = p.allocate(MptState.VALID, 1, 0, 4096, 0, 12,
                            range(0, 1, 1)));
                        if (thrown == null)
                        {
                            assertThat(live).as(where).doesNotContainKey(got[0]);
                            live.put(got[0], true);
                        }
                    }
                    else if (op == 1)
                    {
                        mustFail = !live.containsKey(k);
                        thrown = catchThrowable(() -> p.free(k));
                        if (thrown == null)
                        {
                            live.remove(k);
                            dead.add(k);
                        }
                    }
                    else if (op == 2)
                    {
                        final MptState s = MptState.values()[rnd.nextInt(3)];
                        mustFail = !live.containsKey(k) || s == MptState.FREE;
                        thrown = catchThrowable(() -> p.setState(k, s));
                        if (thrown == null)
                        {
                            live.put(k, s == MptState.VALID);
                        }
                    }
                    else
                    {
                        mustFail = false;
                        final KeyCheck got = p.lookup(k, 1, 0, 0, 1);
                        final Boolean v = live.get(k);
                        if (v != null)
                        {
                            assertThat(got).as(where).isEqualTo(v ? KeyCheck.VALID : KeyCheck.WRONG_STATE);
                        }
                        else
                        {
                            assertThat(got).as(where).isIn(KeyCheck.NO_SUCH_INDEX, KeyCheck.VARIANT_MISMATCH);
                        }
                        thrown = null;
                    }
                    if (mustFail)
                    {
                        assertThat(thrown).as(where + " key " + MKey.toHex(k)).isInstanceOf(TableException.class);
                        assertThat(((TableException)thrown).errno()).as(where)
                            .isEqualTo(op == 0 ? Errno.ENOMEM : Errno.EINVAL);
                        assertThat(MptCounts.of(p)).as(where).isEqualTo(before);
                    }
                    else
                    {
                        assertThat(thrown).as(where + " key " + MKey.toHex(k)).isNull();
                    }
                    assertThat(p.inUse()).as(where).isEqualTo(live.size());
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------------------------
    // FINDINGS: each test below fails against the current main code.

    /** FINDING F1: a second free of the same range silently inflates the free count (mlx4's buddy would double-book). */
    @Test
    void secondFreeOfTheSameMttRangeIsRefusedWithEinvalAndChangesNothing()
    {
        final List<String> problems = new ArrayList<>();
        for (final MttConfig cfg : new MttConfig[] {MttConfig.buddy(3, 0), MttConfig.exact(10)})
        {
            final Mtt m = new Mtt(cfg);
            final MttRange a = m.allocate(1);
            final MttRange b = m.allocate(1);
            m.write(b, 0, 0x5000);
            m.free(a);
            problems.add(refusalProblem(cfg.allocator() + " second free(" + a + ")", Errno.EINVAL, mttState(m),
                () -> m.free(a)));
        }
        assertThat(problems).as("double frees not refused").containsOnlyNulls();
    }

    /**
     * FINDING F2 (API misuse; the library should defend): Mtt.free is public and MttRange a public record, so a
     * forged range, or one of another Mtt, reaches the allocator. Today: silent corruption of the counters or an
     * ArrayIndexOutOfBoundsException after the entries were zapped.
     */
    @Test
    void freeOfARangeThisMttDidNotHandOutIsRefusedWithEinvalAndChangesNothing()
    {
        final Mtt other = new Mtt(MttConfig.buddy(3, 0));
        other.allocate(2);
        final MttRange foreign = other.allocate(4);
        final MttRange[] forged = {range(4, 3, 3), range(0, 1, 1), range(2, 2, 2), foreign, range(-1, 1, 1),
            range(8, 1, 1), range(0, 1, 0), range(0, 2, 3), range(1L << 40, 1, 1), range(0, Long.MAX_VALUE, 8)};
        final List<String> problems = new ArrayList<>();
        for (final MttConfig cfg : new MttConfig[] {MttConfig.buddy(3, 0), MttConfig.exact(8)})
        {
            for (final MttRange r : forged)
            {
                final Mtt m = new Mtt(cfg);
                final MttRange live = m.allocate(2);
                m.write(live, 0, 0x7000);
                m.write(live, 1, 0x9000);
                problems.add(refusalProblem(cfg.allocator() + " free(" + r + ")", Errno.EINVAL, mttState(m),
                    () -> m.free(r)));
            }
        }
        assertThat(problems).as("forged ranges not refused").containsOnlyNulls();
    }

    /**
     * FINDING F3: Mtt.write past the end of its range silently overwrites the next MR's entry; write, entry and zap
     * outside the table throw ArrayIndexOutOfBoundsException.
     */
    @Test
    void writeOutsideItsRangeAndEntryOrZapOutsideTheTableAreRefusedWithEinval()
    {
        final Mtt m = new Mtt(MttConfig.exact(10));
        final MttRange a = m.allocate(1);
        final MttRange b = m.allocate(1);
        m.write(b, 0, 0x5000);
        final Supplier<Object> state = mttState(m);
        final List<String> problems = new ArrayList<>();
        problems.add(refusalProblem("write(a, block 1)", Errno.EINVAL, state, () -> m.write(a, 1, 0x7000)));
        problems.add(refusalProblem("write(a, block -1)", Errno.EINVAL, state, () -> m.write(a, -1, 0x7000)));
        problems.add(refusalProblem("write(a, block 2^40)", Errno.EINVAL, state, () -> m.write(a, 1L << 40, 0x7000)));
        problems.add(refusalProblem("entry(-1)", Errno.EINVAL, state, () -> m.entry(-1)));
        problems.add(refusalProblem("entry(2^40)", Errno.EINVAL, state, () -> m.entry(1L << 40)));
        problems.add(refusalProblem("zap(range(-1, 2, 2))", Errno.EINVAL, state, () -> m.zap(range(-1, 2, 2))));
        problems.add(refusalProblem("zap(range(1, 2^20, 2^20))", Errno.EINVAL, state,
            () -> m.zap(range(1, 1 << 20, 1 << 20))));
        assertThat(problems).containsOnlyNulls();
    }

    /** FINDING F4: Mtt.zap says the device stops translating through zapped entries, but translate returns DMA address 0 + offset. */
    @Test
    void translateThroughAZappedEntryFailsInsteadOfReturningDmaAddressZero()
    {
        final AdapterTables t = small();
        final RegisteredMr mr = t.register(PD, List.of(new DmaRun(0x10000, 4096)), VA, 4096, VA, RW);
        t.mtt().zap(mr.mtt());
        final long got = t.translate(mr.key(), PD, 0, VA + 0x10, 1);
        assertThat(got).as("translation through a zapped entry (0x%x)", got).isNegative();
    }

    /**
     * FINDING F5: MptTable.allocate takes a null argument (NPE) after it has already consumed the index's variant,
     * history and (RANDOM) the seeded random stream: the next key differs from that of an untouched table.
     */
    @Test
    void failedMptAllocateWithNullArgumentsIsRefusedWithEinvalAndLeavesTheNextKeyUnchanged()
    {
        final MptConfig cfg = new MptConfig(16, 8, VariantPolicy.RANDOM, IndexPolicy.CYCLIC, 5);
        final MptTable p = new MptTable(cfg);
        final MptTable fresh = new MptTable(cfg);
        final int[] keysFresh = {fresh.allocate(MptState.VALID, 1, 0, 1, 0, 12, range(0, 1, 1)), 0};
        fresh.free(keysFresh[0]);
        keysFresh[1] = fresh.allocate(MptState.VALID, 1, 0, 1, 0, 12, range(0, 1, 1));

        final int k0 = p.allocate(MptState.VALID, 1, 0, 1, 0, 12, range(0, 1, 1));
        p.free(k0);
        final Throwable nullRange = catchThrowable(() -> p.allocate(MptState.VALID, 1, 0, 1, 0, 12, null));
        final Throwable nullState = catchThrowable(() -> p.allocate(null, 1, 0, 1, 0, 12, range(0, 1, 1)));
        final int k1 = p.allocate(MptState.VALID, 1, 0, 1, 0, 12, range(0, 1, 1));
        assertThat(k1).as("key after two refused allocations").isEqualTo(keysFresh[1]);
        assertThat(nullRange).isInstanceOf(TableException.class);
        assertThat(nullState).isInstanceOf(TableException.class);
    }

    /**
     * FINDING F6: null arguments throw NullPointerException, which the package does not document. Either document
     * it (then drop this test) or refuse with EINVAL as below.
     */
    @Test
    void nullArgumentsAreRefusedWithNullPointerExceptionOrEinvalAndChangeNothing()
    {
        // The package documents NullPointerException for null arguments; a null range is simply not live (EINVAL).
        final AdapterTables t = small();
        t.register(PD, List.of(new DmaRun(0x10000, 4096)), VA, 4096, VA, RW);
        final int key = t.register(PD, List.of(new DmaRun(0x20000, 4096)), VA, 4096, VA, RW).key();
        final List<DmaRun> withNull = Arrays.asList(new DmaRun(0x10000, 4096), null);
        final Object before = State.of(t);
        final List<ThrowingCallable> calls = List.of(
            () -> t.register(PD, null, VA, 4096, VA, RW),
            () -> t.register(PD, withNull, VA, 8192, VA, RW),
            () -> t.mpt().setState(key, null),
            () -> t.mtt().free(null),
            () -> t.mtt().zap(null),
            () -> PageSizeSelector.choose(null, VA, 4096, VA, 4096));
        for (final ThrowingCallable call : calls)
        {
            final Throwable thrown = catchThrowable(call);
            assertThat(thrown).isNotNull();
            if (thrown instanceof TableException e)
            {
                assertThat(e.errno()).isEqualTo(Errno.EINVAL);
            }
            else
            {
                assertThat(thrown).isInstanceOf(NullPointerException.class);
            }
            assertThat(State.of(t)).isEqualTo(before);
        }
    }

    /**
     * FINDING F7: MptTable.allocate packs pageShift into 8 bits of a word without checking it: -1 sets the state
     * byte to 0xff, after which entry()/free() throw ArrayIndexOutOfBoundsException and the index is lost for good;
     * 64..255 set the past-end bit or spill into the MTT index. A negative length makes the MR cover up to 2^64
     * bytes, and iova + length may wrap.
     */
    @Test
    void mptAllocateRefusesPageShiftsOutsideZeroTo63AndNegativeOrWrappingLengthsWithEinval()
    {
        final List<String> problems = new ArrayList<>();
        for (final int shift : new int[] {-1, 64, 255, 256, Integer.MIN_VALUE, Integer.MAX_VALUE})
        {
            final MptTable p = new MptTable(MptConfig.of(16, VariantPolicy.GENERATION));
            problems.add(refusalProblem("pageShift=" + shift, Errno.EINVAL, () -> MptCounts.of(p),
                () -> p.allocate(MptState.VALID, 1, 0, 4096, 0, shift, range(0, 1, 1))));
        }
        for (final long[] il : new long[][] {{0x1000, -1}, {0x1000, Long.MIN_VALUE}, {-4096, 8192}})
        {
            final MptTable p = new MptTable(MptConfig.of(16, VariantPolicy.GENERATION));
            problems.add(refusalProblem("iova=" + il[0] + " lengthBytes=" + il[1], Errno.EINVAL, () -> MptCounts.of(p),
                () -> p.allocate(MptState.VALID, 1, il[0], il[1], 0, 12, range(0, 1, 1))));
        }
        assertThat(problems).containsOnlyNulls();
    }

    /**
     * FINDING F8: a translation cache of Integer.MAX_VALUE lines is accepted and the constructor dies with
     * OutOfMemoryError; the geometry check should bound the capacity (a NIC caches thousands of entries).
     */
    @Test
    void cacheOfAbsurdCapacityIsRefusedWithEinvalNotOutOfMemory()
    {
        final AdapterConfig cfg = new AdapterConfig(MttConfig.buddy(2, 0), MptConfig.of(4, VariantPolicy.GENERATION),
            4096, Integer.MAX_VALUE, 1);
        final List<String> problems = new ArrayList<>();
        problems.add(refusalProblem("TranslationCache(MAX, 1)", Errno.EINVAL, () -> "",
            () -> new TranslationCache(Integer.MAX_VALUE, 1)));
        problems.add(refusalProblem("TranslationCache(MAX, MAX)", Errno.EINVAL, () -> "",
            () -> new TranslationCache(Integer.MAX_VALUE, Integer.MAX_VALUE)));
        problems.add(refusalProblem("AdapterTables(cacheEntries=MAX)", Errno.EINVAL, () -> "",
            () -> new AdapterTables(cfg)));
        assertThat(problems).containsOnlyNulls();
    }

    /** Runs in a child JVM: a hang there can be killed, unlike a thread. */
    static final class InvalidateProbe
    {
        public static void main(final String[] args)
        {
            try
            {
                final long entries = args.length > 0 && args[0].equals("sane") ? 10 : Long.MAX_VALUE;
                final long dropped = new TranslationCache(8, 2).invalidate(0, 0, entries);
                System.out.println("returned " + dropped);
            }
            catch (final TableException e)
            {
                System.out.println("threw " + e.getMessage());
            }
        }
    }

    /**
     * FINDING F9: TranslationCache.invalidate(mpt, first, Long.MAX_VALUE) on a cache of 2 or more ways never
     * returns: mttEntries * ways overflows to a negative number, so it walks 2^63 entries one by one.
     */
    @Test
    void invalidateOfAnAbsurdRangeReturnsPromptly() throws Exception
    {
        assertThat(runProbe("sane")).as("the child JVM harness itself").isEqualTo("returned 0");
        final String out = runProbe("absurd");
        assertThat(out).as("TranslationCache(8, 2).invalidate(0, 0, Long.MAX_VALUE)")
            .matches("returned \\d+|threw EINVAL: .*");
    }

    /** Runs {@link InvalidateProbe} in a child JVM for at most 4 s; returns its output, or "timed out". */
    private static String runProbe(final String mode) throws Exception
    {
        final String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        final Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp", cp, InvalidateProbe.class.getName(), mode).redirectErrorStream(true).start();
        try
        {
            if (!child.waitFor(4, TimeUnit.SECONDS))
            {
                return "timed out after 4 s";
            }
            return new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        }
        finally
        {
            child.destroyForcibly();
            child.waitFor();
        }
    }

    /**
     * FINDING F10: an MPT of 2^31 entries (variantBits 1, allowed by MptConfig) allocates ~260 MiB up front for
     * its live bitmap, though the class says tables cost memory only where used; the buddy MTT bounds itself to
     * 64 MiB. Either bound maxMr (every known device has 8 variant bits, so 2^24) or make the bitmap lazy.
     */
    @Test
    void largestMptCostsNoMoreThanTheLargestMttUpFront()
    {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final long id = Thread.currentThread().threadId();
        final long before = threads.getThreadAllocatedBytes(id);
        final Throwable thrown = catchThrowable(() -> new MptTable(new MptConfig(1L << 31, 1,
            VariantPolicy.GENERATION, IndexPolicy.CYCLIC, 0)));
        final long allocated = threads.getThreadAllocatedBytes(id) - before;
        if (thrown != null)
        {
            assertThat(thrown).isInstanceOf(TableException.class);
            return;
        }
        assertThat(allocated).as("bytes allocated by new MptTable(maxMr=2^31)").isLessThanOrEqualTo(64 * MIB);
    }

    /** FINDING F11: PageSizeSelector.numDmaBlocks is public but divides by zero or returns garbage on bad input. */
    @Test
    void numDmaBlocksRefusesAZeroOrNonPowerOfTwoPageAndAnEmptyLengthWithEinval()
    {
        final List<String> problems = new ArrayList<>();
        for (final long[] a : new long[][] {{0, 4096, 0}, {0, 4096, 3000}, {0, 4096, -4096}, {0, 0, 4096},
            {0, -1, 4096}})
        {
            problems.add(refusalProblem("numDmaBlocks(" + a[0] + ", " + a[1] + ", " + a[2] + ")", Errno.EINVAL,
                () -> "", () -> {
                    final long n = PageSizeSelector.numDmaBlocks(a[0], a[1], a[2]);
                    throw new IllegalStateException("returned " + n);
                }));
        }
        assertThat(problems).containsOnlyNulls();
    }

    /**
     * FINDING F12: ib_uverbs_reg_mr refuses an iova whose offset within the page differs from the buffer's
     * ({@code (cmd.start & ~PAGE_MASK) != (cmd.hca_va & ~PAGE_MASK)} gives -EINVAL). register accepts it whenever
     * page_size_cap has a size below 4 KiB, and then maps the MR with 1-byte (or 2 KiB) pages.
     */
    @Test
    void registerRefusesAnIovaWhosePageOffsetDiffersFromTheBuffersWithEinval()
    {
        final AdapterTables t = tables(-1L, MttConfig.exact(1 << 12), MptConfig.of(16, VariantPolicy.GENERATION),
            16, 4);
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 4096));
        final Supplier<Object> state = () -> State.of(t);
        final List<String> problems = new ArrayList<>();
        problems.add(refusalProblem("address 0x10000, iova 0x20001", Errno.EINVAL, state,
            () -> t.register(PD, runs, 0x10000, 64, 0x20001, RW)));
        problems.add(refusalProblem("address 0x10800, iova 0x20000", Errno.EINVAL, state,
            () -> t.register(PD, runs, 0x10800, 64, 0x20000, RW)));
        assertThat(problems).containsOnlyNulls();
    }

    /**
     * FINDING F13: ib_umem_get refuses a buffer whose address + length overflows, or whose page-aligned end
     * overflows ({@code (addr + size) < addr || PAGE_ALIGN(addr + size) < (addr + size)} gives -EINVAL); register
     * looks only at the address's page offset and accepts it.
     */
    @Test
    void registerRefusesABufferWhoseAddressPlusLengthWrapsWithEinval()
    {
        final AdapterTables t = small();
        final List<DmaRun> runs = List.of(new DmaRun(0x20000, 8192));
        final Supplier<Object> state = () -> State.of(t);
        final List<String> problems = new ArrayList<>();
        problems.add(refusalProblem("address 0xfffffffffffff800 + 4096", Errno.EINVAL, state,
            () -> t.register(PD, runs, 0xffff_ffff_ffff_f800L, 4096, 0x10800, RW)));
        problems.add(refusalProblem("address 0xffffffffffffe800 + 4096 (page-aligned end wraps)", Errno.EINVAL, state,
            () -> t.register(PD, runs, 0xffff_ffff_ffff_e800L, 4096, 0x10800, RW)));
        assertThat(problems).containsOnlyNulls();
    }

    /**
     * FINDING F14: ib_check_mr_access (include/rdma/ib_verbs.h) refuses REMOTE_WRITE or REMOTE_ATOMIC without
     * LOCAL_WRITE, and unknown bits, with -EINVAL; register stores any int as the access rights. (There is no verbs
     * layer in the project yet, so the tables are the only place this can be checked.)
     */
    @Test
    void registerRefusesAccessFlagsTheKernelRefusesWithEinval()
    {
        final AdapterTables t = small();
        final List<DmaRun> runs = List.of(new DmaRun(0x20000, 4096));
        final Supplier<Object> state = () -> State.of(t);
        final List<String> problems = new ArrayList<>();
        for (final int access : new int[] {AccessFlags.REMOTE_WRITE, AccessFlags.REMOTE_ATOMIC, -1, 1 << 30})
        {
            problems.add(refusalProblem("access=0x" + Integer.toHexString(access), Errno.EINVAL, state,
                () -> t.register(PD, runs, VA, 4096, VA, access)));
        }
        assertThat(problems).containsOnlyNulls();
    }

    /**
     * FINDING F15: the umem's scatterlist covers exactly the pages of the buffer, so ib_umem_find_best_pgsz never
     * sees a run past the last page. Here a run past the buffer is accepted and its discontinuity shrinks a 2 MiB
     * MR to 512 4 KiB entries. Either refuse such runs (EINVAL, like runs that are too short) or ignore them.
     */
    @Test
    void runsPastTheBuffersLastPageAreRefusedOrDoNotShrinkThePageSize()
    {
        final List<DmaRun> runs = List.of(new DmaRun(0x4000_0000L, 2 * MIB), new DmaRun(0x9000_1000L, 4096));
        final Throwable thrown = catchThrowable(() -> {
            final PageSizeChoice c = PageSizeSelector.choose(runs, VA, 2 * MIB, VA, CAP_4K_2M);
            assertThat(c).as("choice for a 2 MiB buffer with one extra 4 KiB run after it")
                .isEqualTo(new PageSizeChoice(2 * MIB, 1));
        });
        if (thrown instanceof TableException e)
        {
            assertThat(e.errno()).isEqualTo(Errno.EINVAL);
        }
        else
        {
            assertThat(thrown).isNull();
        }
    }

    /** FINDING F16: a cap with bit 63 yields a page size of Long.MIN_VALUE: a negative "power of two". */
    @Test
    void chosenPageSizeIsNeverNegative()
    {
        final PageSizeChoice c = PageSizeSelector.choose(List.of(new DmaRun(0x100000, 4096)), 0x100000, 4096,
            0x100000, Long.MIN_VALUE);
        assertThat(c.pageSizeBytes()).as("page size from page_size_cap=1<<63").isGreaterThanOrEqualTo(0);
    }

    /**
     * FINDING F19: with 1-byte pages (page_size_cap bit 0) the MTT entry's PRESENT flag is bit 0 of the DMA
     * address, so translate clears it: every odd byte translates to the even byte before it. Either translate
     * correctly or refuse page sizes the entry format cannot hold (mlx4 MTT entries hold 4 KiB-aligned
     * addresses, mlx4_write_mtt_chunk; its page_size_cap is 0xfffff000).
     */
    @Test
    void oneBytePagesTranslateOddBytesToOddAddressesOrAreRefused()
    {
        final List<DmaRun> runs = List.of(new DmaRun(0x10000, 4096), new DmaRun(0x30000, 4096));
        final long lastPage = VA + 0xfc0;
        final List<String> wrong = new ArrayList<>();
        final Throwable refused = catchThrowable(() -> {
            final AdapterTables b = tables(1, MttConfig.exact(4096), MptConfig.of(16, VariantPolicy.GENERATION), 16,
                4);
            final RegisteredMr bytes = b.register(PD, runs, lastPage, 100, lastPage, RW);
            assertThat(bytes.pageSizeBytes()).isEqualTo(1);
            for (long off = 0; off < 100; off++)
            {
                final long got = b.translate(bytes.key(), PD, 0, lastPage + off, 1);
                if (got != expectedDma(runs, lastPage, off))
                {
                    wrong.add("byte " + off + " -> 0x" + Long.toHexString(got));
                }
            }
        });
        if (refused != null)
        {
            assertThat(refused).isInstanceOf(TableException.class);
            assertThat(((TableException)refused).errno()).isEqualTo(Errno.EINVAL);
        }
        assertThat(wrong).as("bytes translated to the wrong DMA address").isEmpty();
    }

    /**
     * FINDING F18: the cache marks an empty line with the tag -1, so access(-1) hits on an empty cache and
     * invalidate(-1, ...) counts an empty line as dropped. No table produces tag -1, but both methods are public.
     */
    @Test
    void tagMinusOneNeverHitsAnEmptyLine()
    {
        final TranslationCache c = new TranslationCache(8, 2);
        final Throwable thrown = catchThrowable(() -> c.access(-1));
        if (thrown != null)
        {
            assertThat(thrown).isInstanceOf(TableException.class);
        }
        assertThat(c.hits()).as("hits after access(-1) on an empty cache").isZero();
        final Throwable invalidated = catchThrowable(() -> assertThat(c.invalidate(-1, 0, 0)).isZero());
        if (invalidated != null)
        {
            assertThat(invalidated).isInstanceOf(TableException.class);
        }
        assertThat(c.entriesDropped()).isZero();
    }

    /** FINDING F17: runs whose total wraps are refused, but the message says they hold a negative byte count. */
    @Test
    void runsTooShortForTheBufferAreReportedWithTheBytesNeeded()
    {
        final List<DmaRun> shortRuns = List.of(new DmaRun(0, 4096), new DmaRun(0x10000, 4096));
        final TableException e = assertErrno(Errno.EINVAL,
            () -> PageSizeSelector.choose(shortRuns, 0x800, 8192, 0x800, CAP_4K_2M));
        assertThat(e.getMessage()).contains("8192 bytes of pages").contains("12288");
    }
}
