package dev.rnicsim.mtt;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Random sequences of lookups, key invalidations, flushes and large range invalidations on small caches, checked
 * after every step against a model that keeps each set's lines and their last use side by side and searches the set
 * for every lookup: the answer of every lookup (hit or miss), which tags are cached, and every counter are the same.
 * Whatever shortcuts the cache takes (the line of the last hit, the hint slots that remember where a tag sits and its
 * last use; any layout made for speed) must never change what it answers or counts. Repeated walks over consecutive MTT
 * entries (a message's pages) on larger caches use the hint slots the most.
 */
class TranslationCacheProperties
{
    /** The model: a set-associative LRU cache searched set by set, with the same set function as the cache. */
    private static final class Model
    {
        final int sets;
        final int ways;
        final long[] tags;
        final long[] lastUse;
        long clock;
        long hits;
        long misses;
        long evictions;
        long invalidations;
        long dropped;

        Model(final int capacity, final int ways)
        {
            this.sets = capacity / ways;
            this.ways = ways;
            this.tags = new long[capacity];
            this.lastUse = new long[capacity];
            Arrays.fill(tags, -1);
        }

        /** The set function of the cache: Fibonacci hashing, then a multiply-shift reduction. */
        int setOf(final long tag)
        {
            final long h = (tag * 0x9E3779B97F4A7C15L) >>> 32;
            return (int)((h * sets) >>> 32);
        }

        boolean access(final long tag)
        {
            if (sets == 0)
            {
                misses++;
                return false;
            }
            final int base = setOf(tag) * ways;
            for (int w = base; w < base + ways; w++)
            {
                if (tags[w] == tag)
                {
                    lastUse[w] = ++clock;
                    hits++;
                    return true;
                }
            }
            int victim = base;
            for (int w = base + 1; w < base + ways; w++)
            {
                if (lastUse[w] < lastUse[victim])
                {
                    victim = w;
                }
            }
            misses++;
            if (tags[victim] != -1)
            {
                evictions++;
            }
            tags[victim] = tag;
            lastUse[victim] = ++clock;
            return false;
        }

        boolean contains(final long tag)
        {
            if (sets == 0)
            {
                return false;
            }
            final int base = setOf(tag) * ways;
            for (int w = base; w < base + ways; w++)
            {
                if (tags[w] == tag)
                {
                    return true;
                }
            }
            return false;
        }

        long dropIf(final java.util.function.LongPredicate which)
        {
            long n = 0;
            for (int w = 0; w < tags.length; w++)
            {
                if (tags[w] != -1 && which.test(tags[w]))
                {
                    tags[w] = -1;
                    lastUse[w] = 0;
                    n++;
                }
            }
            dropped += n;
            invalidations++;
            return n;
        }
    }

    /** One step: a lookup of an MPT or MTT tag, a key invalidation, or a flush. */
    record Step(int kind, long a, long b)
    {
    }

    @Provide
    Arbitrary<List<Step>> steps()
    {
        // Few distinct indices, so sets fill, lines are evicted and tags come back; runs of consecutive MTT entries.
        final Arbitrary<Step> lookup = Combinators.combine(Arbitraries.integers().between(0, 1),
            Arbitraries.longs().between(0, 300)).as((mtt, i) -> new Step(mtt, i, 0));
        final Arbitrary<Step> run = Arbitraries.longs().between(0, 300).map(i -> new Step(2, i, 0));
        final Arbitrary<Step> invalidate = Combinators.combine(Arbitraries.longs().between(0, 300),
            Arbitraries.longs().between(0, 300), Arbitraries.longs().between(0, 120))
            .as((mpt, first, n) -> new Step(3, mpt, first * 1000 + n));
        final Arbitrary<Step> flush = Arbitraries.just(new Step(4, 0, 0));
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(12, lookup), net.jqwik.api.Tuple.of(3, run),
            net.jqwik.api.Tuple.of(2, invalidate), net.jqwik.api.Tuple.of(1, flush)).list().ofMaxSize(400);
    }

    @Provide
    Arbitrary<List<Step>> walks()
    {
        // Walks over the pages of a few messages, again and again (from the second walk on the tags are found through
        // their hint slots), between lookups that evict lines (hinted ones too), take over hint slots (an MPT tag and
        // MTT tags whose indices share low bits), invalidations of a key's range and flushes.
        final Arbitrary<Step> walk = Combinators.combine(Arbitraries.of(0L, 700L, 1024L, 2048L + 5),
            Arbitraries.integers().between(1, 300)).as((first, n) -> new Step(5, first, n));
        final Arbitrary<Step> lookup = Combinators.combine(Arbitraries.integers().between(0, 1),
            Arbitraries.longs().between(0, 3000)).as((mtt, i) -> new Step(mtt, i, 0));
        final Arbitrary<Step> invalidate = Combinators.combine(Arbitraries.longs().between(0, 3000),
            Arbitraries.longs().between(0, 2500), Arbitraries.longs().between(0, 400))
            .as((mpt, first, n) -> new Step(3, mpt, first * 1000 + n));
        final Arbitrary<Step> flush = Arbitraries.just(new Step(4, 0, 0));
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(6, walk), net.jqwik.api.Tuple.of(10, lookup),
            net.jqwik.api.Tuple.of(2, invalidate), net.jqwik.api.Tuple.of(1, flush)).list().ofMaxSize(60);
    }

    @Property(tries = 100)
    void shouldAnswerAndCountAsASetSearchedCacheOverRepeatedWalks(
        @ForAll @IntRange(min = 3, max = 8) final int setsLog, @ForAll @IntRange(min = 0, max = 3) final int waysLog,
        @ForAll("walks") final List<Step> steps)
    {
        check(setsLog, waysLog, steps);
    }

    @Property(tries = 300)
    void shouldAnswerAndCountAsASetSearchedCache(@ForAll @IntRange(min = 0, max = 4) final int setsLog,
        @ForAll @IntRange(min = 0, max = 3) final int waysLog, @ForAll("steps") final List<Step> steps)
    {
        check(setsLog, waysLog, steps);
    }

    private static void check(final int setsLog, final int waysLog, final List<Step> steps)
    {
        final int ways = 1 << waysLog;
        final int capacity = setsLog == 0 && waysLog == 0 ? 0 : (1 << setsLog) * ways;
        final TranslationCache cache = new TranslationCache(capacity, ways);
        final Model model = new Model(capacity, ways);
        for (final Step s : steps)
        {
            switch (s.kind())
            {
                case 0 -> assertThat(cache.access(TranslationCache.mptTag(s.a())))
                    .isEqualTo(model.access(TranslationCache.mptTag(s.a())));
                case 1 -> assertThat(cache.access(TranslationCache.mttTag(s.a())))
                    .isEqualTo(model.access(TranslationCache.mttTag(s.a())));
                case 2 ->
                {
                    for (long i = s.a(); i < s.a() + 40; i++)
                    {
                        assertThat(cache.access(TranslationCache.mttTag(i)))
                            .isEqualTo(model.access(TranslationCache.mttTag(i)));
                    }
                }
                case 5 ->
                {
                    // a DMA walk's lookups, as AdapterTables.blockDmaAddress makes them
                    for (long i = s.a(); i < s.a() + s.b(); i++)
                    {
                        assertThat(cache.accessHinted(TranslationCache.mttTag(i)))
                            .isEqualTo(model.access(TranslationCache.mttTag(i)));
                    }
                }
                case 3 ->
                {
                    final long mpt = s.a();
                    final long first = s.b() / 1000;
                    final long n = s.b() % 1000;
                    final long mptTag = TranslationCache.mptTag(mpt);
                    assertThat(cache.invalidate(mpt, first, n)).isEqualTo(model.dropIf(t -> t == mptTag
                        || t >= TranslationCache.mttTag(first) && t < TranslationCache.mttTag(first + n)));
                }
                default -> assertThat(cache.flush()).isEqualTo(model.dropIf(t -> true));
            }
            assertThat(new long[] {cache.hits(), cache.misses(), cache.evictions(), cache.invalidations(),
                cache.entriesDropped()}).containsExactly(model.hits, model.misses, model.evictions,
                model.invalidations, model.dropped);
        }
        for (long i = 0; i <= 3000; i++)
        {
            assertThat(cache.contains(TranslationCache.mptTag(i))).isEqualTo(model.contains(
                TranslationCache.mptTag(i)));
            assertThat(cache.contains(TranslationCache.mttTag(i))).isEqualTo(model.contains(
                TranslationCache.mttTag(i)));
        }
    }
}
