package dev.rnicsim.mtt;

import static dev.rnicsim.mtt.TableAssertions.assertErrno;
import static dev.rnicsim.mtt.TableAssertions.assertFailsUnchanged;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The tables' memory windows, fast-registration MRs and in-place changes: a window translates exactly as its MR at
 * the same address within its bounds and rights, a type 2 window answers only its QP, binds and invalidations
 * change or disable keys, a fast-registration MR is written by REG_MR and disabled by an invalidation, modify and
 * retranslate keep the key and drop the cached entries; refused calls change nothing.
 */
class AdapterTablesWindowsTest
{
    private static final long PAGE = 4096;
    private static final long MIB = 1L << 20;
    private static final long MLX5 = 0xfffffffffffff000L;
    private static final long VA = 0x7f0000200000L;
    private static final int PD = 7;
    private static final int OTHER_PD = 8;
    private static final int READ = AccessFlags.REMOTE_READ;
    private static final int WRITE = AccessFlags.REMOTE_WRITE;
    private static final int ATOMIC = AccessFlags.REMOTE_ATOMIC;
    private static final int RW = AccessFlags.LOCAL_WRITE | READ | WRITE;
    private static final int BINDABLE = AccessFlags.LOCAL_WRITE | AccessFlags.MW_BIND;
    private static final int VARIANT_BITS = 8;

    private static AdapterTables tables(final MttConfig mtt)
    {
        return new AdapterTables(new AdapterConfig(mtt, new MptConfig(64, VARIANT_BITS, VariantPolicy.GENERATION,
            IndexPolicy.CYCLIC, 0), MLX5, 256, 4));
    }

    private static AdapterTables tables()
    {
        return tables(MttConfig.buddy(14, 0));
    }

    /** {@code pages} scattered 4 KiB pages, in descending physical order so that no two merge. */
    private static List<DmaRun> scattered(final int pages, final long base)
    {
        final List<DmaRun> runs = new ArrayList<>();
        for (int i = 0; i < pages; i++)
        {
            runs.add(new DmaRun(base + (pages - i) * 0x20000L, PAGE));
        }
        return runs;
    }

    /** The key of the same index with the variant incremented (ib_inc_rkey). */
    private static int next(final int key)
    {
        return (key & 0xffffff00) | ((key + 1) & 0xff);
    }

    private static KeyCheck check(final long translation)
    {
        return KeyCheck.ofTranslation(translation);
    }

    private static long index(final int key)
    {
        return MKey.index(key, VARIANT_BITS);
    }

    // ------------------------------------------------------------------ allocateWindow, windowCount

    @Test
    void aNewWindowHasAnMptEntryOfItsOwnAndGrantsNothing()
    {
        final AdapterTables t = tables();
        final RegisteredMr mr = t.register(PD, scattered(4, 0x100000), VA, 4 * PAGE, VA, BINDABLE | READ);
        final long mttInUse = t.mtt().counters().entriesInUse();

        final int mw = t.allocateWindow(PD, 1);

        assertThat(t.isWindow(mw)).isTrue();
        assertThat(t.isWindow(mr.key())).isFalse();
        assertThat(index(mw)).isNotEqualTo(index(mr.key()));
        assertThat(t.windowCount()).isEqualTo(1);
        assertThat(t.mpt().inUse()).isEqualTo(2);
        assertThat(t.mtt().counters().entriesInUse()).as("a window owns no MTT entry").isEqualTo(mttInUse);
        assertThat(t.mpt().entry(mw).state()).isEqualTo(MptState.INVALID);
        assertThat(t.mpt().entry(mw).lengthBytes()).isZero();
        assertThat(check(t.translate(mw, PD, READ, VA, 1))).isNotEqualTo(KeyCheck.VALID);
        assertThat(check(t.translate(mw, PD, 0, VA, 1))).isNotEqualTo(KeyCheck.VALID);
    }

    @Test
    void onlyTypesOneAndTwoExist()
    {
        final AdapterTables t = tables();

        assertFailsUnchanged(t, Errno.EINVAL, () -> t.allocateWindow(PD, 3));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.allocateWindow(PD, 0));

        assertThat(t.windowCount()).isZero();
    }

    @Test
    void windowCountCountsLiveWindowsOnly()
    {
        final AdapterTables t = tables();
        t.register(PD, scattered(2, 0x100000), VA, 2 * PAGE, VA, BINDABLE);
        t.allocateFastReg(PD, 4);
        final int a = t.allocateWindow(PD, 1);
        final int b = t.allocateWindow(PD, 2);
        t.allocateWindow(OTHER_PD, 1);
        assertThat(t.windowCount()).isEqualTo(3);

        t.freeWindow(a);
        assertThat(t.windowCount()).isEqualTo(2);
        t.freeWindow(b);
        assertThat(t.windowCount()).isEqualTo(1);
        assertThat(t.mpt().inUse()).isEqualTo(3);
        assertThat(t.windowBinds()).isZero();
    }

    // ------------------------------------------------------------------ bindWindow

    @Test
    void aBoundWindowTranslatesAsItsMrWithinItsBoundsAndRights()
    {
        final AdapterTables t = tables();
        final RegisteredMr mr = t.register(PD, scattered(8, 0x100000), VA, 8 * PAGE, VA, BINDABLE | RW);
        final int mw = t.allocateWindow(PD, 1);
        final long lo = VA + PAGE + 0x80;
        final long length = 3 * PAGE;

        t.bindWindow(mw, next(mw), mr.key(), -1, lo, length, READ);
        final int key = next(mw);

        assertThat(t.isWindow(key)).isTrue();
        assertThat(t.isWindow(mw)).isFalse();
        assertThat(t.windowBinds()).isEqualTo(1);
        assertThat(t.invalidations()).isEqualTo(1);
        for (long off = 0; off < length; off += 0x3c1)
        {
            final long dma = t.translate(key, PD, READ, lo + off, 1);
            assertThat(dma).as("offset 0x%x: %s", off, check(dma)).isNotNegative()
                .isEqualTo(t.translate(mr.key(), PD, READ, lo + off, 1));
        }
        assertThat(t.translate(key, PD, READ, lo, length)).isEqualTo(t.translate(mr.key(), PD, READ, lo, length));
        assertThat(check(t.translate(key, PD, READ, lo + length - 1, 1))).isEqualTo(KeyCheck.VALID);
        assertThat(check(t.translate(key, PD, READ, lo - 1, 1))).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(check(t.translate(key, PD, READ, lo + length, 1))).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(check(t.translate(key, PD, READ, lo, length + 1))).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(check(t.translate(key, PD, WRITE, lo, 1))).isEqualTo(KeyCheck.RIGHTS_MISSING);
        assertThat(check(t.translate(key, PD, ATOMIC, lo, 8))).isEqualTo(KeyCheck.RIGHTS_MISSING);
        assertThat(check(t.translate(key, OTHER_PD, READ, lo, 1))).isEqualTo(KeyCheck.WRONG_PD);
        assertThat(check(t.translate(mw, PD, READ, lo, 1))).as("the key before the bind")
            .isEqualTo(KeyCheck.VARIANT_MISMATCH);
        // The page walk of a DMA through the window: the block index of every page matches the MR's.
        assertThat(t.pageShift(key)).isEqualTo(t.pageShift(mr.key()));
        assertThat(t.blockIndex(key, lo + 2 * PAGE)).isEqualTo(t.blockIndex(mr.key(), lo + 2 * PAGE));
    }

    @Test
    void aWindowInsideAnMrOfTwoMibPagesTranslatesAsTheMr()
    {
        final AdapterTables t = tables();
        final List<DmaRun> runs = List.of(new DmaRun(0x1_4000_0000L, 2 * MIB), new DmaRun(0x2_8000_0000L, 2 * MIB),
            new DmaRun(0x3fe0_0000L, 2 * MIB));
        final RegisteredMr mr = t.register(PD, runs, VA, 6 * MIB, VA, BINDABLE | RW);
        assertThat(mr.pageSizeBytes()).isEqualTo(2 * MIB);
        final int mw = t.allocateWindow(PD, 2);
        final long lo = VA + MIB + 0x123;
        final long length = 4 * MIB;

        t.bindWindow(mw, next(mw), mr.key(), 9, lo, length, READ | WRITE);

        for (long off = 0; off < length; off += 0x4_0001)
        {
            assertThat(t.translate(next(mw), PD, 9, WRITE, lo + off, 1))
                .isEqualTo(t.translate(mr.key(), PD, WRITE, lo + off, 1)).isNotNegative();
        }
        assertThat(t.translate(next(mw), PD, 9, READ, lo + length - 1, 1))
            .isEqualTo(AdapterTablesTest.expectedDma(runs, VA, lo + length - 1 - VA));
    }

    @Test
    void bindingUnderAKeyOfAnotherIndexIsRefused()
    {
        final AdapterTables t = tables();
        final RegisteredMr mr = t.register(PD, scattered(2, 0x100000), VA, 2 * PAGE, VA, BINDABLE);
        final int mw = t.allocateWindow(PD, 1);
        t.bindWindow(mw, next(mw), mr.key(), -1, VA, PAGE, READ);
        final int key = next(mw);
        final long binds = t.windowBinds();
        final long invalidations = t.invalidations();

        assertFailsUnchanged(t, Errno.EINVAL, () -> t.bindWindow(key, key + (1 << VARIANT_BITS), mr.key(), -1, VA,
            PAGE, READ));

        assertThat(t.windowBinds()).isEqualTo(binds);
        assertThat(t.invalidations()).isEqualTo(invalidations);
        assertThat(check(t.translate(key, PD, READ, VA, 1))).isEqualTo(KeyCheck.VALID);
    }

    @Test
    void bindingANonWindowOrAStaleWindowKeyIsRefused()
    {
        final AdapterTables t = tables();
        final RegisteredMr mr = t.register(PD, scattered(2, 0x100000), VA, 2 * PAGE, VA, BINDABLE | RW);
        final int fr = t.allocateFastReg(PD, 2);
        final int mw = t.allocateWindow(PD, 1);
        t.bindWindow(mw, next(mw), mr.key(), -1, VA, PAGE, READ);

        assertFailsUnchanged(t, Errno.EINVAL, () -> t.bindWindow(mr.key(), next(mr.key()), mr.key(), -1, VA, PAGE,
            READ));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.bindWindow(fr, next(fr), mr.key(), -1, VA, PAGE, READ));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.bindWindow(mw, next(next(mw)), mr.key(), -1, VA, PAGE, READ));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.bindWindow(MKey.make(40, 1, VARIANT_BITS),
            MKey.make(40, 2, VARIANT_BITS), mr.key(), -1, VA, PAGE, READ));

        assertThat(t.mpt().entry(mr.key()).access()).isEqualTo(BINDABLE | RW);
        assertThat(check(t.translate(mr.key(), PD, READ, VA, 1))).isEqualTo(KeyCheck.VALID);
        assertThat(check(t.translate(next(mw), PD, READ, VA, 1))).isEqualTo(KeyCheck.VALID);
    }

    /**
     * The checks of the MR a window is bound to: a live MR key (not a window's), a range inside it. The window
     * keeps its key, state, range and rights. Not checked here: bindWindow runs these checks after it has counted
     * the bind in windowBinds() and invalidations() and dropped the window's cache entry, so those move on a
     * refused bind (a known deviation from "a refused call changes nothing").
     */
    @Test
    void bindingOutsideTheMrOrToANonMrIsRefusedAndTheWindowKeepsItsBinding()
    {
        final AdapterTables t = tables();
        final RegisteredMr mr = t.register(PD, scattered(4, 0x100000), VA + PAGE, 2 * PAGE, VA + PAGE, BINDABLE);
        final int other = t.allocateWindow(PD, 1);
        final int mw = t.allocateWindow(PD, 1);
        t.bindWindow(mw, next(mw), mr.key(), -1, VA + PAGE, PAGE, READ);
        final int key = next(mw);
        final MptEntry before = t.mpt().entry(key);
        final long mttInUse = t.mtt().counters().entriesInUse();
        final long mptInUse = t.mpt().inUse();
        final long start = VA + PAGE;
        final long end = start + 2 * PAGE;

        assertErrno(Errno.EINVAL, () -> t.bindWindow(key, next(key), mr.key(), -1, start - 1, PAGE, READ));
        assertErrno(Errno.EINVAL, () -> t.bindWindow(key, next(key), mr.key(), -1, start, 2 * PAGE + 1, READ));
        assertErrno(Errno.EINVAL, () -> t.bindWindow(key, next(key), mr.key(), -1, end, 1, READ));
        assertErrno(Errno.EINVAL, () -> t.bindWindow(key, next(key), mr.key(), -1, end - 8, 16, READ));
        assertErrno(Errno.EINVAL, () -> t.bindWindow(key, next(key), mr.key(), -1, start, -PAGE, READ));
        assertErrno(Errno.EINVAL, () -> t.bindWindow(key, next(key), other, -1, start, PAGE, READ));
        assertErrno(Errno.EINVAL, () -> t.bindWindow(key, next(key), next(mr.key()), -1, start, PAGE, READ));

        assertThat(t.mpt().entry(key)).isEqualTo(before);
        assertThat(t.mpt().entry(next(key))).isNull();
        assertThat(t.mtt().counters().entriesInUse()).isEqualTo(mttInUse);
        assertThat(t.mpt().inUse()).isEqualTo(mptInUse);
        assertThat(check(t.translate(key, PD, READ, start, PAGE))).isEqualTo(KeyCheck.VALID);
        // The whole MR, and its last byte alone, are inside.
        t.bindWindow(key, next(key), mr.key(), -1, start, 2 * PAGE, READ);
        t.bindWindow(next(key), next(next(key)), mr.key(), -1, end - 1, 1, READ);
        assertThat(check(t.translate(next(next(key)), PD, READ, end - 1, 1))).isEqualTo(KeyCheck.VALID);
    }

    @Test
    void aZeroLengthBindUnbindsUnderANewKey()
    {
        final AdapterTables t = tables();
        final RegisteredMr mr = t.register(PD, scattered(2, 0x100000), VA, 2 * PAGE, VA, BINDABLE);
        final int mw = t.allocateWindow(PD, 1);
        t.bindWindow(mw, next(mw), mr.key(), -1, VA, PAGE, READ);
        final int bound = next(mw);

        t.bindWindow(bound, next(bound), 0, -1, 0, 0, 0);

        assertThat(t.windowBinds()).isEqualTo(2);
        assertThat(t.invalidations()).isEqualTo(2);
        assertThat(t.isWindow(next(bound))).isTrue();
        assertThat(t.mpt().entry(next(bound)).state()).isEqualTo(MptState.INVALID);
        assertThat(check(t.translate(bound, PD, READ, VA, 1))).isEqualTo(KeyCheck.VARIANT_MISMATCH);
        assertThat(check(t.translate(next(bound), PD, READ, VA, 1))).isNotEqualTo(KeyCheck.VALID);
    }

    @Test
    void aBindDropsTheWindowsCachedEntry()
    {
        final AdapterTables t = tables();
        final RegisteredMr mr = t.register(PD, scattered(2, 0x100000), VA, 2 * PAGE, VA, BINDABLE);
        final int mw = t.allocateWindow(PD, 1);
        t.bindWindow(mw, next(mw), mr.key(), -1, VA, PAGE, READ);
        t.translate(next(mw), PD, READ, VA, 1);
        assertThat(t.cache().contains(TranslationCache.mptTag(index(mw)))).isTrue();

        final long dropped = t.bindWindow(next(mw), next(next(mw)), mr.key(), -1, VA, 2 * PAGE, READ);

        assertThat(dropped).isPositive();
        assertThat(t.cache().contains(TranslationCache.mptTag(index(mw)))).isFalse();
        assertThat(t.cache().contains(TranslationCache.mttTag(mr.mtt().firstEntry())))
            .as("the MR's MTT entries stay cached").isTrue();
    }

    // ------------------------------------------------------------------ type 2: WRONG_QP

    @Test
    void aType2WindowAnswersOnlyTheQpItIsBoundTo()
    {
        final AdapterTables t = tables();
        final RegisteredMr mr = t.register(PD, scattered(2, 0x100000), VA, 2 * PAGE, VA, BINDABLE | RW);
        final int two = t.allocateWindow(PD, 2);
        final int one = t.allocateWindow(PD, 1);
        t.bindWindow(two, next(two), mr.key(), 5, VA, 2 * PAGE, READ);
        t.bindWindow(one, next(one), mr.key(), 5, VA, 2 * PAGE, READ);
        final int key = next(two);

        assertThat(t.translate(key, PD, 5, READ, VA + 10, 1)).isEqualTo(t.translate(mr.key(), PD, READ, VA + 10, 1));
        assertThat(check(t.translate(key, PD, 6, READ, VA + 10, 1))).isEqualTo(KeyCheck.WRONG_QP);
        assertThat(check(t.translate(key, PD, READ, VA + 10, 1))).as("presented through no QP")
            .isEqualTo(KeyCheck.WRONG_QP);
        // The PD is checked first; a stale key is a stale key.
        assertThat(check(t.translate(key, OTHER_PD, 6, READ, VA + 10, 1))).isEqualTo(KeyCheck.WRONG_PD);
        assertThat(check(t.translate(two, PD, 6, READ, VA + 10, 1))).isEqualTo(KeyCheck.VARIANT_MISMATCH);
        // A type 1 window answers every QP.
        assertThat(check(t.translate(next(one), PD, 6, READ, VA + 10, 1))).isEqualTo(KeyCheck.VALID);
        assertThat(check(t.translate(next(one), PD, READ, VA + 10, 1))).isEqualTo(KeyCheck.VALID);

        // Invalidated, then bound through QP 6.
        t.invalidateWindow(key);
        assertThat(check(t.translate(key, PD, 5, READ, VA + 10, 1))).as("bound to no QP now: no QP's key, refused by its MPT entry")
            .isNotIn(KeyCheck.VALID, KeyCheck.WRONG_QP);
        t.bindWindow(key, next(key), mr.key(), 6, VA, PAGE, READ);
        assertThat(check(t.translate(next(key), PD, 6, READ, VA + 10, 1))).isEqualTo(KeyCheck.VALID);
        assertThat(check(t.translate(next(key), PD, 5, READ, VA + 10, 1))).isEqualTo(KeyCheck.WRONG_QP);
    }

    @Test
    void invalidateWindowKeepsTheKeyAndStopsTheTranslation()
    {
        final AdapterTables t = tables();
        final RegisteredMr mr = t.register(PD, scattered(2, 0x100000), VA, 2 * PAGE, VA, BINDABLE);
        final int mw = t.allocateWindow(PD, 2);
        t.bindWindow(mw, next(mw), mr.key(), 3, VA, PAGE, READ);
        final int key = next(mw);
        t.translate(key, PD, 3, READ, VA, 1);
        final long invalidations = t.invalidations();

        final long dropped = t.invalidateWindow(key);

        assertThat(dropped).isEqualTo(1);
        assertThat(t.invalidations()).isEqualTo(invalidations + 1);
        assertThat(t.isWindow(key)).as("same key, still a window").isTrue();
        assertThat(t.mpt().entry(key).state()).isEqualTo(MptState.INVALID);
        assertThat(check(t.translate(key, PD, 3, READ, VA, 1))).isNotEqualTo(KeyCheck.VALID);
        assertThat(t.windowCount()).isEqualTo(1);

        assertFailsUnchanged(t, Errno.EINVAL, () -> t.invalidateWindow(mw));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.invalidateWindow(mr.key()));
    }

    // ------------------------------------------------------------------ freeWindow, deregister

    @Test
    void freeingTheWindowThenDeregisteringTheMrLeavesNothing()
    {
        final AdapterTables t = tables();
        final RegisteredMr mr = t.register(PD, scattered(4, 0x100000), VA, 4 * PAGE, VA, BINDABLE);
        final int mw = t.allocateWindow(PD, 1);
        t.bindWindow(mw, next(mw), mr.key(), -1, VA, 2 * PAGE, READ | WRITE);
        final int key = next(mw);
        t.translate(key, PD, READ, VA, 1);
        final long invalidations = t.invalidations();

        assertFailsUnchanged(t, Errno.EINVAL, () -> t.freeWindow(mw));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.freeWindow(mr.key()));
        t.freeWindow(key);

        assertThat(t.invalidations()).isEqualTo(invalidations + 1);
        assertThat(t.isWindow(key)).isFalse();
        assertThat(t.windowCount()).isZero();
        assertThat(t.cache().contains(TranslationCache.mptTag(index(key)))).isFalse();
        assertThat(check(t.translate(key, PD, READ, VA, 1))).isEqualTo(KeyCheck.NO_SUCH_INDEX);
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.freeWindow(key));

        t.deregister(mr.key());

        assertThat(t.mpt().inUse()).isZero();
        assertThat(t.mtt().counters().entriesInUse()).isZero();
        assertThat(check(t.translate(mr.key(), PD, 0, VA, 1))).isEqualTo(KeyCheck.NO_SUCH_INDEX);
    }

    @Test
    void deregisterRefusesAWindowKey()
    {
        final AdapterTables t = tables();
        final RegisteredMr mr = t.register(PD, scattered(2, 0x100000), VA, 2 * PAGE, VA, BINDABLE);
        final int mw = t.allocateWindow(PD, 1);
        final int unbound = t.allocateWindow(PD, 2);
        t.bindWindow(mw, next(mw), mr.key(), -1, VA, PAGE, READ);

        assertFailsUnchanged(t, Errno.EINVAL, () -> t.deregister(next(mw)));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.deregister(unbound));

        assertThat(t.windowCount()).isEqualTo(2);
        assertThat(check(t.translate(next(mw), PD, READ, VA, 1))).isEqualTo(KeyCheck.VALID);
    }

    // ------------------------------------------------------------------ fast registration

    @Test
    void aFastRegistrationMrIsWrittenByRegMrAndDisabledByAnInvalidation()
    {
        final AdapterTables t = tables();
        final List<DmaRun> runs = scattered(3, 0x400000);
        final long mttBefore = t.mtt().counters().entriesInUse();

        final int key = t.allocateFastReg(PD, 4);

        assertThat(t.isFastReg(key)).isTrue();
        assertThat(t.isWindow(key)).isFalse();
        assertThat(t.mtt().counters().entriesInUse()).as("entries reserved at allocation")
            .isEqualTo(mttBefore + 4);
        assertThat(t.mpt().entry(key).state()).isEqualTo(MptState.INVALID);
        assertThat(check(t.translate(key, PD, READ, VA, 1))).isNotEqualTo(KeyCheck.VALID);

        final long written = t.fastRegister(key, next(key), runs, VA + 0x100, 3 * PAGE - 0x100, VA + 0x100, RW);
        final int valid = next(key);

        assertThat(written).isEqualTo(3);
        assertThat(t.isFastReg(valid)).isTrue();
        assertThat(t.isFastReg(key)).isFalse();
        assertThat(t.mpt().entry(valid).state()).isEqualTo(MptState.VALID);
        assertThat(t.mtt().counters().entriesInUse()).isEqualTo(mttBefore + 4);
        for (long off = 0; off < 3 * PAGE - 0x100; off += 0x555)
        {
            assertThat(t.translate(valid, PD, WRITE, VA + 0x100 + off, 1))
                .isEqualTo(AdapterTablesTest.expectedDma(runs, VA + 0x100, off));
        }
        assertThat(check(t.translate(valid, PD, READ, VA + 0xff, 1))).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(check(t.translate(valid, PD, READ, VA + 3 * PAGE, 1))).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(check(t.translate(valid, PD, ATOMIC, VA + 0x100, 8))).isEqualTo(KeyCheck.RIGHTS_MISSING);
        assertThat(check(t.translate(key, PD, READ, VA + 0x100, 1))).isEqualTo(KeyCheck.VARIANT_MISMATCH);

        assertFailsUnchanged(t, Errno.EINVAL, () -> t.fastRegister(valid, next(valid), runs, VA, 3 * PAGE, VA, RW));

        final long invalidations = t.invalidations();
        t.invalidateFastReg(valid);

        assertThat(t.invalidations()).isEqualTo(invalidations + 1);
        assertThat(t.isFastReg(valid)).as("an invalidation keeps the key").isTrue();
        assertThat(t.cache().contains(TranslationCache.mptTag(index(valid)))).isFalse();
        assertThat(check(t.translate(valid, PD, READ, VA + 0x100, 1))).isEqualTo(KeyCheck.WRONG_STATE);

        // Registered again, one page now, under the next key.
        assertThat(t.fastRegister(valid, next(valid), scattered(1, 0x800000), VA, PAGE, VA, RW)).isEqualTo(1);
        assertThat(t.translate(next(valid), PD, READ, VA + 5, 1))
            .isEqualTo(AdapterTablesTest.expectedDma(scattered(1, 0x800000), VA, 5));
        assertThat(check(t.translate(valid, PD, READ, VA + 5, 1))).isEqualTo(KeyCheck.VARIANT_MISMATCH);
    }

    @Test
    void fastRegisterRefusesBadKeysPagesAndRights()
    {
        final AdapterTables t = tables();
        final RegisteredMr mr = t.register(PD, scattered(2, 0x100000), VA, 2 * PAGE, VA, BINDABLE);
        final int mw = t.allocateWindow(PD, 2);
        final int fr = t.allocateFastReg(PD, 4);
        final List<DmaRun> five = scattered(5, 0x400000);
        final List<DmaRun> four = scattered(4, 0x400000);

        assertFailsUnchanged(t, Errno.EINVAL, () -> t.fastRegister(fr, next(fr) + (1 << VARIANT_BITS), four, VA,
            4 * PAGE, VA, RW));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.fastRegister(fr, next(fr), five, VA, 5 * PAGE, VA, RW));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.fastRegister(fr, next(fr), five, VA + 1, 4 * PAGE, VA + 1,
            RW));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.fastRegister(fr, next(fr), four, VA, 4 * PAGE, VA, WRITE));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.fastRegister(next(fr), next(next(fr)), four, VA, 4 * PAGE, VA,
            RW));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.fastRegister(mr.key(), next(mr.key()), four, VA, 4 * PAGE, VA,
            RW));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.fastRegister(mw, next(mw), four, VA, 4 * PAGE, VA, RW));

        assertThat(t.mpt().entry(fr).state()).isEqualTo(MptState.INVALID);
        assertThat(t.fastRegister(fr, next(fr), four, VA, 4 * PAGE, VA, RW)).isEqualTo(4);
    }

    @Test
    void onlyAFastRegistrationMrCanBeInvalidatedAsOne()
    {
        final AdapterTables t = tables();
        final RegisteredMr mr = t.register(PD, scattered(2, 0x100000), VA, 2 * PAGE, VA, BINDABLE | RW);
        final int mw = t.allocateWindow(PD, 2);
        final int fr = t.allocateFastReg(PD, 1);
        t.fastRegister(fr, next(fr), scattered(1, 0x400000), VA, PAGE, VA, RW);

        assertFailsUnchanged(t, Errno.EINVAL, () -> t.invalidateFastReg(mr.key()));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.invalidateFastReg(mw));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.invalidateFastReg(fr));

        assertThat(check(t.translate(mr.key(), PD, READ, VA, 1))).isEqualTo(KeyCheck.VALID);
        assertThat(check(t.translate(next(fr), PD, READ, VA, 1))).isEqualTo(KeyCheck.VALID);
    }

    @Test
    void allocateFastRegChecksItsSizeAndTheMtt()
    {
        final AdapterTables t = tables(MttConfig.exact(8));
        t.register(PD, scattered(4, 0x100000), VA, 4 * PAGE, VA, RW);

        assertFailsUnchanged(t, Errno.EINVAL, () -> t.allocateFastReg(PD, 0));
        assertFailsUnchanged(t, Errno.ENOMEM, () -> t.allocateFastReg(PD, 5));

        final int fr = t.allocateFastReg(PD, 4);
        assertThat(t.mtt().counters().entriesFree()).isZero();
        t.deregister(fr);
        assertThat(t.mtt().counters().entriesFree()).as("deregistration frees the reserved entries").isEqualTo(4);
        assertThat(t.isFastReg(fr)).isFalse();
    }

    // ------------------------------------------------------------------ modify, retranslate

    @Test
    void modifyKeepsTheKeyAndDropsTheCachedEntries()
    {
        final AdapterTables t = tables();
        final List<DmaRun> runs = scattered(4, 0x100000);
        final RegisteredMr mr = t.register(PD, runs, VA, 4 * PAGE, VA, RW);
        final long dma = t.translate(mr.key(), PD, WRITE, VA + PAGE + 3, 1);
        assertThat(t.cache().contains(TranslationCache.mptTag(index(mr.key())))).isTrue();
        assertThat(t.cache().contains(TranslationCache.mttTag(mr.mtt().firstEntry() + 1))).isTrue();
        final long written = t.entriesWritten();
        final long invalidations = t.invalidations();

        final long dropped = t.modify(mr.key(), OTHER_PD, AccessFlags.LOCAL_WRITE | READ);

        assertThat(dropped).isEqualTo(2);
        assertThat(t.invalidations()).isEqualTo(invalidations + 1);
        assertThat(t.entriesWritten()).isEqualTo(written);
        assertThat(t.cache().contains(TranslationCache.mptTag(index(mr.key())))).isFalse();
        assertThat(t.cache().contains(TranslationCache.mttTag(mr.mtt().firstEntry() + 1))).isFalse();
        final MptEntry e = t.mpt().entry(mr.key());
        assertThat(e).as("the same key").isNotNull();
        assertThat(e.pd()).isEqualTo(OTHER_PD);
        assertThat(e.access()).isEqualTo(AccessFlags.LOCAL_WRITE | READ);
        assertThat(e.mtt()).isEqualTo(mr.mtt());
        assertThat(t.translate(mr.key(), OTHER_PD, READ, VA + PAGE + 3, 1)).isEqualTo(dma);
        assertThat(check(t.translate(mr.key(), PD, READ, VA + PAGE + 3, 1))).isEqualTo(KeyCheck.WRONG_PD);
        assertThat(check(t.translate(mr.key(), OTHER_PD, WRITE, VA + PAGE + 3, 1)))
            .isEqualTo(KeyCheck.RIGHTS_MISSING);
    }

    @Test
    void modifyRefusesWhatIsNoLiveUserMrAndBadRights()
    {
        final AdapterTables t = tables();
        final RegisteredMr mr = t.register(PD, scattered(2, 0x100000), VA, 2 * PAGE, VA, RW);
        final int mw = t.allocateWindow(PD, 1);
        final int fr = t.allocateFastReg(PD, 1);

        assertFailsUnchanged(t, Errno.EINVAL, () -> t.modify(mw, PD, READ));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.modify(fr, PD, READ));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.modify(next(mr.key()), PD, READ));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.modify(mr.key(), PD, WRITE));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.modify(mr.key(), PD, 1 << 30));

        assertThat(t.mpt().entry(mr.key()).access()).isEqualTo(RW);
        assertThat(t.invalidations()).isZero();
    }

    @Test
    void retranslateKeepsTheKeyWritesTheNewPagesAndFreesTheOld()
    {
        final AdapterTables t = tables();
        final List<DmaRun> oldRuns = scattered(4, 0x100000);
        final RegisteredMr mr = t.register(PD, oldRuns, VA, 4 * PAGE, VA, RW);
        for (long p = 0; p < 4; p++)
        {
            t.translate(mr.key(), PD, READ, VA + p * PAGE, 1);
        }
        final long oldFirst = mr.mtt().firstEntry();
        assertThat(t.cache().contains(TranslationCache.mttTag(oldFirst + 3))).isTrue();
        final List<DmaRun> newRuns = scattered(6, 0x900000);
        final long newVa = VA + 64 * PAGE + 0x40;
        final long zapped = t.entriesZapped();
        final long written = t.entriesWritten();
        final long invalidations = t.invalidations();

        final RegisteredMr moved = t.retranslate(mr.key(), OTHER_PD, newRuns, newVa, 6 * PAGE - 0x40, newVa,
            AccessFlags.LOCAL_WRITE | READ);

        assertThat(moved.key()).isEqualTo(mr.key());
        assertThat(moved.mtt().entries()).isEqualTo(6);
        assertThat(moved.mtt().firstEntry()).isNotEqualTo(oldFirst);
        assertThat(t.entriesZapped()).isEqualTo(zapped + 4);
        assertThat(t.entriesWritten()).isEqualTo(written + 6);
        assertThat(t.invalidations()).isEqualTo(invalidations + 1);
        assertThat(t.mtt().counters().entriesInUse()).isEqualTo(moved.mtt().reservedEntries());
        for (long p = 0; p < 4; p++)
        {
            assertThat(t.mtt().entry(oldFirst + p)).as("old entry %d zapped", p).isZero();
            assertThat(t.cache().contains(TranslationCache.mttTag(oldFirst + p))).isFalse();
        }
        assertThat(t.cache().contains(TranslationCache.mptTag(index(mr.key())))).isFalse();
        for (long off = 0; off < 6 * PAGE - 0x40; off += 0x777)
        {
            assertThat(t.translate(mr.key(), OTHER_PD, READ, newVa + off, 1))
                .isEqualTo(AdapterTablesTest.expectedDma(newRuns, newVa, off));
        }
        assertThat(check(t.translate(mr.key(), OTHER_PD, READ, VA, 1))).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(check(t.translate(mr.key(), PD, READ, newVa, 1))).isEqualTo(KeyCheck.WRONG_PD);
        assertThat(check(t.translate(mr.key(), OTHER_PD, WRITE, newVa, 1))).isEqualTo(KeyCheck.RIGHTS_MISSING);

        t.deregister(mr.key());
        assertThat(t.mtt().counters().entriesInUse()).isZero();
    }

    @Test
    void retranslateRefusesBadInputAndAFullMttAndKeepsTheOldTranslation()
    {
        final AdapterTables t = tables(MttConfig.exact(8));
        final List<DmaRun> runs = scattered(4, 0x100000);
        final RegisteredMr mr = t.register(PD, runs, VA, 4 * PAGE, VA, RW);
        final int mw = t.allocateWindow(PD, 1);
        final long dma = t.translate(mr.key(), PD, READ, VA + 2 * PAGE, 1);

        assertFailsUnchanged(t, Errno.ENOMEM, () -> t.retranslate(mr.key(), PD, scattered(5, 0x900000), VA, 5 * PAGE,
            VA, RW));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.retranslate(mr.key(), PD, runs, VA, 0, VA, RW));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.retranslate(mr.key(), PD, runs, VA, 4 * PAGE, VA + 1, RW));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.retranslate(mr.key(), PD, runs, VA, 4 * PAGE, VA, WRITE));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.retranslate(mw, PD, runs, VA, 4 * PAGE, VA, RW));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.retranslate(next(mr.key()), PD, runs, VA, 4 * PAGE, VA, RW));

        assertThat(t.translate(mr.key(), PD, READ, VA + 2 * PAGE, 1)).isEqualTo(dma);
        // Four free entries are enough for a four-page translation while the old one is still held.
        assertThat(t.retranslate(mr.key(), PD, scattered(4, 0x900000), VA, 4 * PAGE, VA, RW).key())
            .isEqualTo(mr.key());
    }

    // ------------------------------------------------------------------ keyChanges

    /**
     * The count the DMA engine compares before it checks a message's keys again per packet: every change that can
     * alter a check's or a translation's answer moves it (a revocation too: the entry stays, its MTT entries go),
     * checks and translations do not.
     */
    @Test
    void keyChangesMovesOnEveryChangeACheckCouldSeeAndOnNothingElse()
    {
        final AdapterTables t = tables();
        final long start = t.keyChanges();
        final RegisteredMr mr = t.register(PD, scattered(2, 0x100000), VA, 2 * PAGE, VA, BINDABLE | RW);
        final long registered = t.keyChanges();
        assertThat(registered).as("register").isGreaterThan(start);

        t.check(mr.key(), PD, 5, READ, VA, PAGE);
        t.translate(mr.key(), PD, READ, VA + 10, 1);
        t.blockDmaAddress(t.translate(mr.key(), PD, READ, VA, 1) >>> 7, 12);
        assertThat(t.keyChanges()).as("checks and translations").isEqualTo(registered);

        final int mw = t.allocateWindow(PD, 2);
        final long allocated = t.keyChanges();
        assertThat(allocated).as("allocate a window").isGreaterThan(registered);
        t.bindWindow(mw, next(mw), mr.key(), 5, VA, PAGE, READ);
        final long bound = t.keyChanges();
        assertThat(bound).as("bind").isGreaterThan(allocated);
        t.invalidateWindow(next(mw));
        final long invalidated = t.keyChanges();
        assertThat(invalidated).as("invalidate the window").isGreaterThan(bound);
        t.freeWindow(next(mw));
        final long freed = t.keyChanges();
        assertThat(freed).as("free the window").isGreaterThan(invalidated);
        t.modify(mr.key(), OTHER_PD, RW);
        final long modified = t.keyChanges();
        assertThat(modified).as("modify (rereg of PD and access)").isGreaterThan(freed);
        t.retranslate(mr.key(), OTHER_PD, scattered(2, 0x300000), VA, 2 * PAGE, VA, RW);
        final long retranslated = t.keyChanges();
        assertThat(retranslated).as("retranslate (rereg of the translation)").isGreaterThan(modified);
        // The key still names the MR after a revocation, but its pages are gone: a message in flight must look again.
        t.revoke(mr.key());
        final long revoked = t.keyChanges();
        assertThat(revoked).as("revoke (a peer-memory client's invalidation)").isGreaterThan(retranslated);
        assertThat(t.translate(mr.key(), OTHER_PD, READ, VA, 1)).isEqualTo(KeyCheck.NOT_PRESENT.code());
        t.deregister(mr.key());
        assertThat(t.keyChanges()).as("deregister").isGreaterThan(revoked);
    }
}
