package dev.rnicsim.mtt;

import static dev.rnicsim.mtt.TableAssertions.assertErrno;
import static dev.rnicsim.mtt.TableAssertions.assertFailsUnchanged;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

/**
 * The MPT and its keys: layout (index << 8 | variant, index 0 reserved), the three variant policies on reuse,
 * the order of the lookup checks, range edge cases, exhaustion, stale frees and the index policies.
 */
class MptKeysTest
{
    private static final MttRange NO_MTT = new MttRange(0, 1, 1);
    private static final int ALL_RIGHTS = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE
        | AccessFlags.REMOTE_READ | AccessFlags.REMOTE_ATOMIC;

    private static MptTable table(final long maxMr, final VariantPolicy policy, final IndexPolicy index,
        final long seed)
    {
        return new MptTable(new MptConfig(maxMr, 8, policy, index, seed));
    }

    private static int reg(final MptTable t, final int pd, final long iova, final long length)
    {
        return t.allocate(MptState.VALID, pd, iova, length, ALL_RIGHTS, 12, NO_MTT);
    }

    @Test
    void shouldBuildKeysAsIndexShiftedByEightOrVariant()
    {
        final MptTable t = table(16, VariantPolicy.GENERATION, IndexPolicy.CYCLIC, 0);

        final int k1 = reg(t, 1, 0x1000, 0x1000);
        final int k2 = reg(t, 1, 0x1000, 0x1000);

        assertThat(k1).isEqualTo(1 << 8 | MKey.variant(k1, 8));
        assertThat(MKey.index(k1, 8)).isEqualTo(1);
        assertThat(MKey.index(k2, 8)).isEqualTo(2);
        assertThat(k1).isEqualTo(0x100); // generation starts at 0
        assertThat(MKey.make(0xabcdef, 0x12, 8)).isEqualTo(0xabcdef12);
        assertThat(MKey.index(0xabcdef12, 8)).isEqualTo(0xabcdefL);
        assertThat(MKey.variant(0xabcdef12, 8)).isEqualTo(0x12);
        assertThat(MKey.toHex(0x100)).isEqualTo("0x00000100");
        assertThat(t.entry(k1)).isEqualTo(new MptEntry(k1, MptState.VALID, 1, 0x1000, 0x1000, ALL_RIGHTS, 12,
            NO_MTT));
    }

    @Test
    void shouldNeverHandOutIndexZeroOrKeyZeroUnderAnyPolicy()
    {
        for (final VariantPolicy policy : VariantPolicy.values())
        {
            for (final IndexPolicy index : IndexPolicy.values())
            {
                final MptTable t = table(64, policy, index, 7);
                final List<Integer> live = new ArrayList<>();
                final List<Integer> keys = new ArrayList<>();
                for (int round = 0; round < 5; round++)
                {
                    while (t.inUse() < 63)
                    {
                        final int k = reg(t, 1, 0, 1);
                        live.add(k);
                        keys.add(k);
                    }
                    for (int i = live.size() - 1; i >= 0; i -= 3)
                    {
                        t.free(live.remove(i));
                    }
                }
                assertThat(keys).as("%s %s", policy, index).allSatisfy(k ->
                {
                    assertThat(k).isNotZero();
                    assertThat(MKey.index(k, 8)).isBetween(1L, 63L);
                });
                assertThat(t.lookup(0, 1, 0, 0, 0)).isEqualTo(KeyCheck.NO_SUCH_INDEX);
                assertThat(t.lookup(0x000000ff, 1, 0, 0, 0)).isEqualTo(KeyCheck.NO_SUCH_INDEX);
            }
        }
    }

    @Test
    void shouldLetAGenerationKeyValidateAgainAfterExactly256ReusesOfItsIndex()
    {
        final MptTable t = table(4, VariantPolicy.GENERATION, IndexPolicy.LOWEST_FREE, 0);
        final int old = reg(t, 1000, 0x10000, 0x1000);
        int current = old;

        for (int reuse = 1; reuse <= 256; reuse++)
        {
            t.free(current);
            final int pd = 1000 + reuse;
            final long iova = 0x10000L * (reuse + 1);
            current = reg(t, pd, iova, 0x1000);
            assertThat(MKey.index(current, 8)).isEqualTo(MKey.index(old, 8));
            final KeyCheck check = t.lookup(old, pd, AccessFlags.REMOTE_READ, iova, 0x1000);
            if (reuse < 256)
            {
                assertThat(check).as("old key after reuse %d", reuse).isEqualTo(KeyCheck.VARIANT_MISMATCH);
                assertThat(MKey.variant(current, 8)).isEqualTo(reuse);
            }
            else
            {
                assertThat(check).as("old key after reuse 256").isEqualTo(KeyCheck.VALID);
                assertThat(current).isEqualTo(old);
            }
        }
    }

    @Test
    void shouldLetARecycledKeyValidateAgainRightAfterReuse()
    {
        final MptTable t = table(8, VariantPolicy.RECYCLED, IndexPolicy.LOWEST_FREE, 0);
        final int old = reg(t, 1, 0x1000, 0x1000);

        t.free(old);
        assertThat(t.lookup(old, 1, 0, 0x1000, 1)).isEqualTo(KeyCheck.NO_SUCH_INDEX);
        final int reused = reg(t, 2, 0x9000, 0x1000);

        assertThat(reused).isEqualTo(old);
        assertThat(t.lookup(old, 2, AccessFlags.REMOTE_READ, 0x9000, 0x1000)).isEqualTo(KeyCheck.VALID);
    }

    @Test
    void shouldGiveFreshRecycledIndicesTheNextValueOfADeviceWideCounter()
    {
        final MptTable t = table(8, VariantPolicy.RECYCLED, IndexPolicy.LOWEST_FREE, 0);

        final int a = reg(t, 1, 0, 1);
        final int b = reg(t, 1, 0, 1);
        t.free(a);
        final int a2 = reg(t, 1, 0, 1);
        final int c = reg(t, 1, 0, 1);

        assertThat(new int[] {a, b, a2, c}).containsExactly(0x100, 0x201, 0x100, 0x302);
    }

    @Test
    void shouldRepeatRandomKeysForTheSameSeed()
    {
        final List<Integer> first = randomKeys(42);
        final List<Integer> second = randomKeys(42);
        final List<Integer> other = randomKeys(43);

        assertThat(second).isEqualTo(first);
        assertThat(other).isNotEqualTo(first);
    }

    private static List<Integer> randomKeys(final long seed)
    {
        final MptTable t = table(8, VariantPolicy.RANDOM, IndexPolicy.LOWEST_FREE, seed);
        final List<Integer> keys = new ArrayList<>();
        int k = reg(t, 1, 0, 1);
        keys.add(k);
        for (int i = 0; i < 64; i++)
        {
            t.free(k);
            k = reg(t, 1, 0, 1);
            keys.add(k);
            keys.add(reg(t, 1, 0, 1));
            t.free(keys.getLast());
        }
        return keys;
    }

    @Test
    void shouldGiveARandomReuseAVariantDifferentFromTheIndexPreviousOne()
    {
        final MptTable t = table(4, VariantPolicy.RANDOM, IndexPolicy.LOWEST_FREE, 5);
        int previous = reg(t, 1, 0, 1);
        final Set<Integer> variants = new HashSet<>();
        for (int i = 0; i < 2000; i++)
        {
            t.free(previous);
            final int next = reg(t, 1, 0, 1);
            assertThat(MKey.index(next, 8)).isEqualTo(1);
            assertThat(MKey.variant(next, 8)).as("reuse %d", i).isNotEqualTo(MKey.variant(previous, 8));
            assertThat(t.lookup(previous, 1, 0, 0, 1)).isEqualTo(KeyCheck.VARIANT_MISMATCH);
            variants.add(MKey.variant(next, 8));
            previous = next;
        }
        assertThat(variants).as("variants seen").hasSizeGreaterThan(200);
    }

    @Test
    void shouldFailAStaleKeyAfterFreeWithNoSuchIndex()
    {
        for (final VariantPolicy policy : VariantPolicy.values())
        {
            final MptTable t = table(8, policy, IndexPolicy.CYCLIC, 1);
            final int k = reg(t, 1, 0x1000, 0x1000);
            t.free(k);

            assertThat(t.lookup(k, 1, 0, 0x1000, 1)).as("%s", policy).isEqualTo(KeyCheck.NO_SUCH_INDEX);
            assertThat(t.entry(k)).isNull();
        }
    }

    @Test
    void shouldCheckInRxeOrderPdThenRightsThenStateThenRange()
    {
        final MptTable t = table(8, VariantPolicy.GENERATION, IndexPolicy.CYCLIC, 0);
        final int k = t.allocate(MptState.INVALID, 3, 0x10000, 0x1000, AccessFlags.LOCAL_WRITE, 12, NO_MTT);
        final long outside = 0x20000;

        assertThat(t.lookup(k + 1, 4, AccessFlags.REMOTE_READ, outside, 8)).isEqualTo(KeyCheck.VARIANT_MISMATCH);
        assertThat(t.lookup(k, 4, AccessFlags.REMOTE_READ, outside, 8)).isEqualTo(KeyCheck.WRONG_PD);
        assertThat(t.lookup(k, 3, AccessFlags.REMOTE_READ, outside, 8)).isEqualTo(KeyCheck.RIGHTS_MISSING);
        assertThat(t.lookup(k, 3, AccessFlags.LOCAL_WRITE, outside, 8)).isEqualTo(KeyCheck.WRONG_STATE);
        t.setState(k, MptState.VALID);
        assertThat(t.lookup(k, 3, AccessFlags.LOCAL_WRITE, outside, 8)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(t.lookup(k, 3, AccessFlags.LOCAL_WRITE, 0x10000, 8)).isEqualTo(KeyCheck.VALID);
        t.setState(k, MptState.INVALID);
        assertThat(t.lookup(k, 3, AccessFlags.LOCAL_WRITE, 0x10000, 8)).isEqualTo(KeyCheck.WRONG_STATE);
        assertThat(t.entry(k).state()).isEqualTo(MptState.INVALID);
    }

    @Test
    void shouldRefuseSetStateOnAStaleKeyOrToFreeWithEinval()
    {
        final MptTable t = table(8, VariantPolicy.GENERATION, IndexPolicy.CYCLIC, 0);
        final int k = reg(t, 1, 0x1000, 0x1000);
        final int stale = reg(t, 1, 0x1000, 0x1000);
        t.free(stale);

        assertFailsUnchanged(t, Errno.EINVAL, () -> t.setState(k, MptState.FREE));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.setState(stale, MptState.VALID));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.setState(k ^ 1, MptState.INVALID));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.allocate(MptState.FREE, 1, 0, 1, 0, 12, NO_MTT));
        assertThat(t.entry(k).state()).isEqualTo(MptState.VALID);
    }

    @Test
    void shouldFindRangesOutsideTheMrIncludingWrapsPastTwoToTheSixtyFour()
    {
        final MptTable t = table(8, VariantPolicy.GENERATION, IndexPolicy.CYCLIC, 0);
        final int low = reg(t, 1, 0x1000, 0x1000);
        final int top = reg(t, 1, -0x2000L, 0x2000); // [2^64 - 8K, 2^64)

        assertThat(t.lookup(low, 1, 0, 0x1000, 0x1000)).isEqualTo(KeyCheck.VALID);
        assertThat(t.lookup(low, 1, 0, 0x1fff, 1)).isEqualTo(KeyCheck.VALID);
        assertThat(t.lookup(low, 1, 0, 0x2000, 0)).isEqualTo(KeyCheck.VALID); // rxe: iova + 0 <= end
        assertThat(t.lookup(low, 1, 0, 0x1fff, 2)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(t.lookup(low, 1, 0, 0x0fff, 1)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(t.lookup(low, 1, 0, 0x2000, 1)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(t.lookup(low, 1, 0, 0x1000, Long.MAX_VALUE)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        // a length of 2^64 - 0x800 would wrap iova + length back to 0x1000
        assertThat(t.lookup(low, 1, 0, 0x1800, -0x800L)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(t.lookup(low, 1, 0, -1L, 0x1002)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(t.lookup(low, 1, 0, 0x1000, -1L)).isEqualTo(KeyCheck.OUT_OF_RANGE);

        assertThat(t.lookup(top, 1, 0, -0x2000L, 0x2000)).isEqualTo(KeyCheck.VALID);
        assertThat(t.lookup(top, 1, 0, -1L, 1)).isEqualTo(KeyCheck.VALID);
        assertThat(t.lookup(top, 1, 0, -1L, 2)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(t.lookup(top, 1, 0, 0, 1)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(t.lookup(top, 1, 0, -0x2001L, 1)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(t.lookup(top, 1, 0, -0x2000L, 0x2001)).isEqualTo(KeyCheck.OUT_OF_RANGE);
        assertThat(t.lookup(top, 1, 0, Long.MAX_VALUE, 1)).isEqualTo(KeyCheck.OUT_OF_RANGE);
    }

    @Test
    void shouldAnswerKeysBeyondTheTableWithNoSuchIndex()
    {
        final MptTable t = table(8, VariantPolicy.GENERATION, IndexPolicy.CYCLIC, 0);
        reg(t, 1, 0, 1);

        assertThat(t.lookup(8 << 8, 1, 0, 0, 1)).isEqualTo(KeyCheck.NO_SUCH_INDEX);
        assertThat(t.lookup(0xffffff00, 1, 0, 0, 1)).isEqualTo(KeyCheck.NO_SUCH_INDEX);
        assertThat(t.lookup(-1, 1, 0, 0, 1)).isEqualTo(KeyCheck.NO_SUCH_INDEX);
        assertThat(t.entry(-1)).isNull();
        assertErrno(Errno.EINVAL, () -> t.free(-1));
    }

    @Test
    void shouldRefuseWithEnomemNamingMaxMrWhenTheMptIsFull()
    {
        final MptTable t = table(4, VariantPolicy.GENERATION, IndexPolicy.CYCLIC, 0);
        reg(t, 1, 0, 1);
        reg(t, 1, 0, 1);
        reg(t, 1, 0, 1);

        final TableException e = assertFailsUnchanged(t, Errno.ENOMEM, () -> reg(t, 1, 0, 1));

        // A 4-entry table holds 3 MRs besides the reserved index 0: a device reporting max_mr=3.
        assertThat(e.getMessage()).contains("max_mr=3");
        assertThat(t.inUse()).isEqualTo(3);
        assertThat(t.failures()).isEqualTo(1);
    }

    @Test
    void shouldRefuseTheFreeOfAStaleKeyWithEinvalAndLeaveTheReusedEntryAlone()
    {
        final MptTable t = table(4, VariantPolicy.GENERATION, IndexPolicy.LOWEST_FREE, 0);
        final int stale = reg(t, 1, 0x1000, 0x1000);
        t.free(stale);
        final int live = reg(t, 2, 0x5000, 0x1000);
        final MptEntry before = t.entry(live);

        assertFailsUnchanged(t, Errno.EINVAL, () -> t.free(stale));
        assertFailsUnchanged(t, Errno.EINVAL, () -> t.free(0));

        assertThat(t.entry(live)).isEqualTo(before);
        assertThat(t.lookup(live, 2, 0, 0x5000, 1)).isEqualTo(KeyCheck.VALID);
        // a stale free must not advance the index's generation either
        t.free(live);
        assertThat(MKey.variant(reg(t, 2, 0x5000, 0x1000), 8)).isEqualTo(2);
    }

    @Test
    void shouldDelayReuseOfAFreedIndexUnderCyclicButReuseAtOnceUnderLowestFree()
    {
        final MptTable cyclic = table(5, VariantPolicy.GENERATION, IndexPolicy.CYCLIC, 0);
        final int c1 = reg(cyclic, 1, 0, 1);
        reg(cyclic, 1, 0, 1);
        cyclic.free(c1);
        final List<Long> cyclicIndices = new ArrayList<>();
        cyclicIndices.add(MKey.index(reg(cyclic, 1, 0, 1), 8));
        cyclicIndices.add(MKey.index(reg(cyclic, 1, 0, 1), 8)); // 4 is the last index, then wrap to 1
        cyclicIndices.add(MKey.index(reg(cyclic, 1, 0, 1), 8));
        assertThat(cyclicIndices).containsExactly(3L, 4L, 1L);

        final MptTable lowest = table(5, VariantPolicy.GENERATION, IndexPolicy.LOWEST_FREE, 0);
        final int l1 = reg(lowest, 1, 0, 1);
        reg(lowest, 1, 0, 1);
        lowest.free(l1);
        assertThat(MKey.index(reg(lowest, 1, 0, 1), 8)).isEqualTo(1);
    }

    @Test
    void shouldRefuseImpossibleMptConfigurationsWithEinval()
    {
        assertErrno(Errno.EINVAL, () -> new MptConfig(1, 8, VariantPolicy.GENERATION, IndexPolicy.CYCLIC, 0));
        assertErrno(Errno.EINVAL, () -> new MptConfig((1L << 24) + 1, 8, VariantPolicy.GENERATION,
            IndexPolicy.CYCLIC, 0));
        assertErrno(Errno.EINVAL, () -> new MptConfig(16, 0, VariantPolicy.GENERATION, IndexPolicy.CYCLIC, 0));
        assertErrno(Errno.EINVAL, () -> new MptConfig(16, 17, VariantPolicy.GENERATION, IndexPolicy.CYCLIC, 0));
        assertErrno(Errno.EINVAL, () -> new MptConfig(16, 8, null, IndexPolicy.CYCLIC, 0));
        assertErrno(Errno.EINVAL, () -> new MptConfig(16, 8, VariantPolicy.RANDOM, null, 0));
        assertThat(new MptConfig(1L << 24, 8, VariantPolicy.GENERATION, IndexPolicy.CYCLIC, 0).maxMr())
            .isEqualTo(1L << 24);
    }
}
