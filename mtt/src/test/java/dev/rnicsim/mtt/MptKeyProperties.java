package dev.rnicsim.mtt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import net.jqwik.api.ForAll;
import net.jqwik.api.From;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * Random register / deregister / lookup sequences on a small MPT, for every variant policy, index policy and a
 * few variant widths, against a model that maps each index to its current key: a key validates iff its index is
 * live and its variant matches (NO_SUCH_INDEX for a free index, VARIANT_MISMATCH for a live index with another
 * variant); each policy gives a reused index the variant it promises; the index policies pick the index they
 * promise; a full table refuses with ENOMEM and a stale free with EINVAL, changing nothing.
 */
class MptKeyProperties
{
    private record Entry(int key, int pd, long iova, long length)
    {
    }

    @Provide
    Arbitrary<Integer> variantBits()
    {
        return Arbitraries.of(1, 2, 3, 8);
    }

    @Property(tries = 1000)
    void aKeyValidatesIffItsEntryIsLiveAndItsVariantMatches(@ForAll final VariantPolicy policy,
        @ForAll final IndexPolicy indexPolicy, @ForAll @From("variantBits") final int variantBits,
        @ForAll @IntRange(min = 2, max = 8) final int maxMr, @ForAll final long seed,
        @ForAll @Size(max = 120) final List<@IntRange(min = 0, max = 1 << 20) Integer> ops)
    {
        final MptTable t = new MptTable(new MptConfig(maxMr, variantBits, policy, indexPolicy, seed));
        final Map<Long, Entry> current = new HashMap<>();
        final Map<Long, Integer> lastKey = new HashMap<>();
        final Map<Long, Integer> freesOf = new HashMap<>();
        final Set<Integer> issued = new LinkedHashSet<>();
        final int variantMask = (1 << variantBits) - 1;
        long cursor = 1;
        int freshCounter = 0;

        for (final int op : ops)
        {
            switch (op % 4)
            {
                case 0, 1 ->
                {
                    final int pd = op >>> 2 & 7;
                    final long iova = (op & 0xff00L) << 4;
                    final long length = 1 + (op >>> 8 & 0xfff);
                    if (current.size() == maxMr - 1)
                    {
                        final long inUse = t.inUse();
                        final Throwable thrown = catchThrowable(() ->
                            t.allocate(MptState.VALID, pd, iova, length, 0, 12, new MttRange(0, 1, 1)));
                        assertThat(thrown).isInstanceOf(TableException.class);
                        assertThat(((TableException)thrown).errno()).isEqualTo(Errno.ENOMEM);
                        assertThat(t.inUse()).isEqualTo(inUse);
                        break;
                    }
                    final long expectedIndex = nextFree(current, indexPolicy == IndexPolicy.CYCLIC ? cursor : 1,
                        maxMr);
                    final int key = t.allocate(MptState.VALID, pd, iova, length, 0, 12, new MttRange(0, 1, 1));
                    final long index = MKey.index(key, variantBits);
                    final int variant = MKey.variant(key, variantBits);
                    assertThat(key).isEqualTo(MKey.make(index, variant, variantBits)).isNotZero();
                    assertThat(index).as("index under %s", indexPolicy).isEqualTo(expectedIndex);
                    final Integer previous = lastKey.get(index);
                    switch (policy)
                    {
                        case FIXED -> assertThat(variant).as("fixed variant of index %d", index).isZero();
                        case GENERATION -> assertThat(variant).as("generation of index %d", index)
                            .isEqualTo(freesOf.getOrDefault(index, 0) & variantMask);
                        case RECYCLED ->
                        {
                            if (previous != null)
                            {
                                assertThat(key).as("recycled key of index %d", index).isEqualTo(previous);
                            }
                            else
                            {
                                assertThat(variant).isEqualTo(freshCounter & variantMask);
                                freshCounter++;
                            }
                        }
                        case RANDOM ->
                        {
                            if (previous != null)
                            {
                                assertThat(variant).as("random variant of reused index %d", index)
                                    .isNotEqualTo(MKey.variant(previous, variantBits));
                            }
                        }
                    }
                    current.put(index, new Entry(key, pd, iova, length));
                    lastKey.put(index, key);
                    issued.add(key);
                    cursor = index + 1 >= maxMr ? 1 : index + 1;
                }
                case 2 ->
                {
                    final List<Integer> keys = new ArrayList<>(issued);
                    if (keys.isEmpty())
                    {
                        break;
                    }
                    final int key = keys.get((op >>> 2) % keys.size());
                    final long index = MKey.index(key, variantBits);
                    final Entry live = current.get(index);
                    if (live != null && live.key() == key)
                    {
                        final MptEntry freed = t.free(key);
                        assertThat(freed.key()).isEqualTo(key);
                        current.remove(index);
                        freesOf.merge(index, 1, Integer::sum);
                    }
                    else
                    {
                        final long inUse = t.inUse();
                        final long frees = t.frees();
                        final Throwable thrown = catchThrowable(() -> t.free(key));
                        assertThat(thrown).as("free of stale key %s", MKey.toHex(key))
                            .isInstanceOf(TableException.class);
                        assertThat(((TableException)thrown).errno()).isEqualTo(Errno.EINVAL);
                        assertThat(new long[] {t.inUse(), t.frees()}).containsExactly(inUse, frees);
                    }
                }
                default ->
                {
                    // a key never issued, from the op bits
                    issued.add(op * 0x9E3779B1);
                }
            }
            for (final int key : issued)
            {
                checkKey(t, current, key, variantBits);
            }
            assertThat(t.inUse()).isEqualTo(current.size());
        }
    }

    private static void checkKey(final MptTable t, final Map<Long, Entry> current, final int key,
        final int variantBits)
    {
        final long index = MKey.index(key, variantBits);
        final Entry live = current.get(index);
        if (live == null)
        {
            assertThat(t.lookup(key, 0, 0, 0, 0)).as("key %s of a free index", MKey.toHex(key))
                .isEqualTo(KeyCheck.NO_SUCH_INDEX);
            assertThat(t.entry(key)).isNull();
            return;
        }
        final KeyCheck check = t.lookup(key, live.pd(), 0, live.iova(), live.length());
        if (live.key() == key)
        {
            assertThat(check).as("current key %s", MKey.toHex(key)).isEqualTo(KeyCheck.VALID);
            assertThat(t.entry(key).pd()).isEqualTo(live.pd());
        }
        else
        {
            assertThat(check).as("key %s, current %s", MKey.toHex(key), MKey.toHex(live.key()))
                .isEqualTo(KeyCheck.VARIANT_MISMATCH);
            assertThat(t.entry(key)).isNull();
        }
    }

    private static long nextFree(final Map<Long, Entry> current, final long start, final long maxMr)
    {
        for (long i = start; i < maxMr; i++)
        {
            if (!current.containsKey(i))
            {
                return i;
            }
        }
        for (long i = 1; i < start; i++)
        {
            if (!current.containsKey(i))
            {
                return i;
            }
        }
        throw new AssertionError("no free index");
    }
}
