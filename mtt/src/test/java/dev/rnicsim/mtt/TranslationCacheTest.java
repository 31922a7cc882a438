package dev.rnicsim.mtt;

import static dev.rnicsim.mtt.TableAssertions.assertErrno;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The set-associative translation cache: LRU within a set, hit and miss counts, invalidation by key (its MPT entry
 * and its MTT range), flush, a cache of capacity 0, and refused geometries.
 */
class TranslationCacheTest
{
    /**
     * Tags that share {@code a}'s set in any cache of {@code sets} sets, found by trying: in a direct-mapped
     * probe cache with the same number of sets, a candidate shares a's set iff filling it evicts a.
     */
    private static List<Long> sameSetAs(final long a, final int sets, final int wanted)
    {
        final List<Long> found = new ArrayList<>();
        for (long candidate = 0; found.size() < wanted && candidate < 100_000; candidate++)
        {
            final long tag = TranslationCache.mptTag(candidate);
            if (tag == a)
            {
                continue;
            }
            final TranslationCache probe = new TranslationCache(sets, 1);
            probe.access(a);
            probe.access(tag);
            if (!probe.contains(a))
            {
                found.add(tag);
            }
        }
        assertThat(found).as("tags in the set of %d", a).hasSize(wanted);
        return found;
    }

    @Test
    void shouldEvictTheLeastRecentlyUsedLineOfTheSet()
    {
        final TranslationCache cache = new TranslationCache(8, 2); // 4 sets of 2 ways
        final long a = TranslationCache.mptTag(1);
        final List<Long> same = sameSetAs(a, 4, 2);
        final long b = same.get(0);
        final long c = same.get(1);

        assertThat(cache.access(a)).isFalse();
        assertThat(cache.access(b)).isFalse();
        assertThat(cache.access(a)).isTrue();
        assertThat(cache.access(c)).isFalse();

        assertThat(cache.contains(a)).isTrue();
        assertThat(cache.contains(b)).as("B, least recently used, evicted").isFalse();
        assertThat(cache.contains(c)).isTrue();
        assertThat(new long[] {cache.hits(), cache.misses(), cache.evictions()}).containsExactly(1, 3, 1);

        // now A is the least recently used of {A, C}
        assertThat(cache.access(b)).isFalse();
        assertThat(cache.contains(a)).isFalse();
        assertThat(cache.contains(c)).isTrue();
        assertThat(cache.evictions()).isEqualTo(2);
    }

    @Test
    void shouldCountHitsAndMissesExactly()
    {
        final TranslationCache cache = new TranslationCache(64, 4);
        final long x = TranslationCache.mptTag(3);
        final long y = TranslationCache.mttTag(3);

        cache.access(x);
        cache.access(x);
        cache.access(y);
        cache.access(x);
        cache.access(y);

        assertThat(x).isNotEqualTo(y);
        assertThat(new long[] {cache.hits(), cache.misses(), cache.evictions()}).containsExactly(3, 2, 0);
        // contains counts nothing
        assertThat(cache.contains(x)).isTrue();
        assertThat(cache.contains(TranslationCache.mptTag(4))).isFalse();
        assertThat(new long[] {cache.hits(), cache.misses()}).containsExactly(3, 2);
        assertThat(cache.capacityEntries()).isEqualTo(64);
    }

    @Test
    void shouldDropTheMptEntryAndTheMttRangeOfAnInvalidatedKey()
    {
        final TranslationCache cache = new TranslationCache(64, 4);
        cache.access(TranslationCache.mptTag(5));
        for (long i = 10; i <= 13; i++)
        {
            cache.access(TranslationCache.mttTag(i));
        }
        cache.access(TranslationCache.mptTag(6));
        assertThat(cache.evictions()).as("precondition: nothing evicted").isZero();

        final long dropped = cache.invalidate(5, 10, 3);

        assertThat(dropped).isEqualTo(4);
        assertThat(cache.contains(TranslationCache.mptTag(5))).isFalse();
        for (long i = 10; i <= 12; i++)
        {
            assertThat(cache.contains(TranslationCache.mttTag(i))).as("MTT %d", i).isFalse();
        }
        assertThat(cache.contains(TranslationCache.mttTag(13))).isTrue();
        assertThat(cache.contains(TranslationCache.mptTag(6))).isTrue();
        assertThat(new long[] {cache.invalidations(), cache.entriesDropped()}).containsExactly(1, 4);
    }

    @Test
    void shouldDropOnlyTheRangeWhenTheRangeIsLargerThanTheCache()
    {
        final TranslationCache cache = new TranslationCache(4, 4);
        cache.access(TranslationCache.mttTag(100));
        cache.access(TranslationCache.mttTag(101));
        cache.access(TranslationCache.mptTag(100));
        cache.access(TranslationCache.mttTag(200));

        final long dropped = cache.invalidate(7, 100, 50);

        assertThat(dropped).isEqualTo(2);
        assertThat(cache.contains(TranslationCache.mttTag(100))).isFalse();
        assertThat(cache.contains(TranslationCache.mttTag(101))).isFalse();
        assertThat(cache.contains(TranslationCache.mptTag(100))).as("an MPT tag with the same number").isTrue();
        assertThat(cache.contains(TranslationCache.mttTag(200))).isTrue();
        assertThat(cache.entriesDropped()).isEqualTo(2);
    }

    @Test
    void shouldFlushEverythingAndCountIt()
    {
        final TranslationCache cache = new TranslationCache(16, 2);
        cache.access(TranslationCache.mptTag(1));
        cache.access(TranslationCache.mttTag(1));
        cache.access(TranslationCache.mttTag(2));
        final long cached = 3 - cache.evictions();

        assertThat(cache.flush()).isEqualTo(cached);
        assertThat(cache.flush()).isZero();

        assertThat(cache.contains(TranslationCache.mptTag(1))).isFalse();
        assertThat(cache.contains(TranslationCache.mttTag(1))).isFalse();
        assertThat(cache.contains(TranslationCache.mttTag(2))).isFalse();
        assertThat(new long[] {cache.invalidations(), cache.entriesDropped()}).containsExactly(2, cached);
        assertThat(cache.access(TranslationCache.mptTag(1))).isFalse();
    }

    @Test
    void shouldAlwaysMissWithCapacityZero()
    {
        final TranslationCache cache = new TranslationCache(0, 1);
        final long tag = TranslationCache.mptTag(1);

        assertThat(cache.access(tag)).isFalse();
        assertThat(cache.access(tag)).isFalse();
        assertThat(cache.contains(tag)).isFalse();
        assertThat(cache.invalidate(1, 0, 10)).isZero();
        assertThat(cache.flush()).isZero();
        assertThat(new long[] {cache.hits(), cache.misses(), cache.evictions(), cache.entriesDropped()})
            .containsExactly(0, 2, 0, 0);
        assertThat(cache.capacityEntries()).isZero();
    }

    @Test
    void shouldRefuseImpossibleGeometriesWithEinval()
    {
        assertErrno(Errno.EINVAL, () -> new TranslationCache(10, 4));
        assertErrno(Errno.EINVAL, () -> new TranslationCache(8, 0));
        assertErrno(Errno.EINVAL, () -> new TranslationCache(0, 0));
        assertErrno(Errno.EINVAL, () -> new TranslationCache(-4, 2));
        assertErrno(Errno.EINVAL, () -> new TranslationCache(4, -1));
        final TableException e = assertErrno(Errno.EINVAL, () -> new AdapterTables(new AdapterConfig(
            MttConfig.exact(16), MptConfig.of(4, VariantPolicy.GENERATION), 0x1000, 6, 4)));
        assertThat(e.getMessage()).contains("6", "4");
    }
}
