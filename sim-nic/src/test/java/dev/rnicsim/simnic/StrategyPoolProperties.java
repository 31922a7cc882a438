package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.StrategyRig.LOCAL;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.strategy.MemoryPool;
import dev.rnicsim.verbs.strategy.MemoryPool.Fragment;
import dev.rnicsim.verbs.strategy.StrategyCounters;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.RandomDistribution;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;

/**
 * Random allocate/free sequences on a {@link MemoryPool} over the simulator, checked against a model of the buddy
 * blocks: live fragments never overlap and sit aligned to their power-of-two block in a live MR of the pool whose
 * keys they carry; a chunk is registered only when no chunk has a free aligned block of the size, ENOMEM comes
 * only when none has one and maxChunks are registered; the counters and the device's MR count agree; once
 * everything is freed a whole chunk can be allocated without a new registration.
 */
class StrategyPoolProperties
{
    /** The largest size asked for; sizes above the pool's chunk must give EINVAL. */
    private static final long MAX_ASK = 64 * 1024;

    /** One step. */
    sealed interface Op permits Alloc, Free, FreeAgain
    {
    }

    /** @param bytes bytes asked for (0 or above the chunk for EINVAL). */
    record Alloc(long bytes) implements Op
    {
    }

    /** @param pick which live fragment (modulo their number). */
    record Free(int pick) implements Op
    {
    }

    /** @param pick which freed fragment (modulo their number) to free once more. */
    record FreeAgain(int pick) implements Op
    {
    }

    /** A live fragment and the buddy block behind it. */
    private record Live(Fragment fragment, long blockBytes, int seed)
    {
    }

    @Provide
    Arbitrary<List<Op>> ops()
    {
        final Arbitrary<Op> alloc = Arbitraries.frequencyOf(Tuple.of(6, Arbitraries.longs().between(1, 512)),
            Tuple.of(4, Arbitraries.longs().between(1, 8192)), Tuple.of(2, Arbitraries.longs().between(1, MAX_ASK)),
            Tuple.of(1, Arbitraries.of(0L, -5L, MAX_ASK + 1))).map(Alloc::new);
        final Arbitrary<Op> free = Arbitraries.integers().between(0, 1000).map(Free::new);
        final Arbitrary<Op> again = Arbitraries.integers().between(0, 1000).map(FreeAgain::new);
        return Arbitraries.frequencyOf(Tuple.of(6, alloc), Tuple.of(3, free), Tuple.of(1, again)).list()
            .ofMinSize(1).ofMaxSize(100).withSizeDistribution(RandomDistribution.uniform());
    }

    @Property(tries = 200)
    void shouldKeepFragmentsDisjointInsideTheirChunkMrAndRegisterOnlyWhenNoChunkHasRoom(
        @ForAll @IntRange(min = 12, max = 16) final int chunkShift,
        @ForAll @IntRange(min = 6, max = 12) final int minShift,
        @ForAll @IntRange(min = 1, max = 4) final int maxChunks,
        @ForAll("ops") final List<Op> ops)
    {
        final long chunk = 1L << chunkShift;
        final long min = 1L << Math.min(minShift, chunkShift);
        final StrategyRig.Single s = new StrategyRig.Single(DeviceProfiles.connectx5());
        final long mrsBase = s.mrLive();
        final MemoryPool pool = MemoryPool.create(StrategyRig.enumSetAccess(s.pd), s.memory(),
            new MemoryPool.Config(chunk, maxChunks, min, Backing.BASE_PAGES, LOCAL));
        final List<Live> live = new ArrayList<>();
        final List<Fragment> freed = new ArrayList<>();
        final long[] allocations = {0};
        int seed = 0;

        for (final Op op : ops)
        {
            switch (op)
            {
                case Alloc a ->
                {
                    seed++;
                    alloc(s, pool, chunk, min, maxChunks, live, a.bytes(), seed, allocations);
                }
                case Free f ->
                {
                    if (!live.isEmpty())
                    {
                        final Live victim = live.remove(f.pick() % live.size());
                        checkContent(s, victim);
                        pool.free(victim.fragment());
                        freed.add(victim.fragment());
                    }
                }
                case FreeAgain f ->
                {
                    if (!freed.isEmpty())
                    {
                        final Fragment stale = freed.get(f.pick() % freed.size());
                        final boolean reused = live.stream().anyMatch(l -> l.fragment().addr() == stale.addr()
                            && l.fragment().lkey() == stale.lkey());
                        if (!reused)
                        {
                            final VerbsException e = StrategyRig.fails(() -> pool.free(stale));
                            assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
                        }
                    }
                }
            }
            assertInvariants(s, pool, chunk, maxChunks, live, mrsBase, allocations[0]);
        }

        for (final Live l : List.copyOf(live))
        {
            checkContent(s, l);
            pool.free(l.fragment());
            live.remove(l);
        }
        assertThat(pool.liveFragments()).isZero();
        final long registrations = pool.counters().registrations();
        final long mrs = s.mrLive();
        final Fragment whole = pool.allocate(chunk);
        assertThat(whole.lengthBytes()).isEqualTo(chunk);
        if (registrations > 0)
        {
            assertThat(pool.counters().registrations()).as("a whole chunk is free again after freeing everything")
                .isEqualTo(registrations);
            assertThat(s.mrLive()).isEqualTo(mrs);
        }
        else
        {
            assertThat(pool.counters().registrations()).isEqualTo(1);
        }
        pool.close();
        assertThat(s.mrLive()).isEqualTo(mrsBase);
    }

    private static void alloc(final StrategyRig.Single s, final MemoryPool pool, final long chunk, final long min,
        final int maxChunks, final List<Live> live, final long bytes, final int seed, final long[] allocations)
    {
        if (bytes < 1 || bytes > chunk)
        {
            final StrategyCounters before = pool.counters();
            assertThat(StrategyRig.fails(() -> pool.allocate(bytes)).errnoName()).isEqualTo(Errno.EINVAL);
            assertThat(pool.counters()).isEqualTo(before);
            return;
        }
        final long block = Math.max(min, blockOf(bytes));
        final boolean room = hasRoom(pool, chunk, min, live, block);
        final int chunksBefore = pool.memoryRegions().size();
        final Fragment f;
        try
        {
            f = pool.allocate(bytes);
        }
        catch (final VerbsException e)
        {
            assertThat(e.errnoName()).isEqualTo(Errno.ENOMEM);
            assertThat(room).as("ENOMEM although a chunk has a free aligned block of %d bytes", block).isFalse();
            assertThat(chunksBefore).as("ENOMEM before maxChunks are registered").isEqualTo(maxChunks);
            assertThat(e).hasMessageContaining("maxChunks=" + maxChunks);
            return;
        }
        allocations[0]++;
        final int chunksAfter = pool.memoryRegions().size();
        if (room)
        {
            assertThat(chunksAfter).as("registered although a chunk had room for %d bytes", block)
                .isEqualTo(chunksBefore);
        }
        else
        {
            assertThat(chunksAfter).as("a full pool must register a chunk").isEqualTo(chunksBefore + 1);
            assertThat(f.lkey()).isEqualTo(pool.memoryRegions().getLast().lkey());
        }
        assertThat(f.lengthBytes()).isEqualTo(bytes);
        final MemoryRegion mr = mrOf(pool, f);
        assertThat((f.addr() - mr.addr()) % block).as("a block is aligned to its size in the chunk").isZero();
        final Live l = new Live(f, block, seed);
        live.add(l);
        writeContent(s, l);
    }

    private static long blockOf(final long bytes)
    {
        return Long.bitCount(bytes) == 1 ? bytes : Long.highestOneBit(bytes) << 1;
    }

    /** Whether some registered chunk has a free block of that size at an offset aligned to it. */
    private static boolean hasRoom(final MemoryPool pool, final long chunk, final long min, final List<Live> live,
        final long block)
    {
        final Map<Integer, BitSet> used = new HashMap<>();
        final Map<Integer, Long> bases = new HashMap<>();
        for (final MemoryRegion mr : pool.memoryRegions())
        {
            used.put(mr.lkey(), new BitSet());
            bases.put(mr.lkey(), mr.addr());
        }
        for (final Live l : live)
        {
            final int from = (int)((l.fragment().addr() - bases.get(l.fragment().lkey())) / min);
            used.get(l.fragment().lkey()).set(from, from + (int)(l.blockBytes() / min));
        }
        final int units = (int)(block / min);
        for (final BitSet b : used.values())
        {
            for (int at = 0; at < chunk / min; at += units)
            {
                final int next = b.nextSetBit(at);
                if (next < 0 || next >= at + units)
                {
                    return true;
                }
            }
        }
        return false;
    }

    private static MemoryRegion mrOf(final MemoryPool pool, final Fragment f)
    {
        for (final MemoryRegion mr : pool.memoryRegions())
        {
            if (mr.lkey() == f.lkey())
            {
                return mr;
            }
        }
        throw new AssertionError("fragment " + f + " carries the lkey of no MR of the pool");
    }

    /** Marks the first and last bytes of the fragment (the CPU writes through the mapping). */
    private static void writeContent(final StrategyRig.Single s, final Live l)
    {
        final int n = (int)Math.min(8, l.fragment().lengthBytes());
        s.memory().write(l.fragment().addr(), StrategyRig.pattern(n, l.seed()));
        s.memory().write(l.fragment().addr() + l.fragment().lengthBytes() - n, StrategyRig.pattern(n, l.seed() + 7));
    }

    private static void checkContent(final StrategyRig.Single s, final Live l)
    {
        final int n = (int)Math.min(8, l.fragment().lengthBytes());
        if (l.fragment().lengthBytes() >= 2L * n)
        {
            assertThat(s.memory().read(l.fragment().addr(), n)).as("head of %s", l.fragment())
                .isEqualTo(StrategyRig.pattern(n, l.seed()));
        }
        assertThat(s.memory().read(l.fragment().addr() + l.fragment().lengthBytes() - n, n))
            .as("tail of %s", l.fragment()).isEqualTo(StrategyRig.pattern(n, l.seed() + 7));
    }

    private static void assertInvariants(final StrategyRig.Single s, final MemoryPool pool, final long chunk,
        final int maxChunks, final List<Live> live, final long mrsBase, final long allocations)
    {
        final List<MemoryRegion> mrs = pool.memoryRegions();
        // Live fragments (and the blocks behind them) never overlap.
        final List<Live> sorted = new ArrayList<>(live);
        sorted.sort(Comparator.comparingLong(l -> l.fragment().addr()));
        for (int i = 1; i < sorted.size(); i++)
        {
            final Live prev = sorted.get(i - 1);
            assertThat(prev.fragment().addr() + prev.blockBytes()).as("%s overlaps %s", prev.fragment(),
                sorted.get(i).fragment()).isLessThanOrEqualTo(sorted.get(i).fragment().addr());
        }
        // Every byte of every live fragment lies in a live MR of the pool with the fragment's keys.
        for (final Live l : live)
        {
            final Fragment f = l.fragment();
            assertThat(mrs).as("an MR of the pool holds %s with its lkey", f).anySatisfy(mr ->
            {
                assertThat(mr.lkey()).isEqualTo(f.lkey());
                assertThat(mr.rkey()).isEqualTo(f.rkey());
                assertThat(mr.isClosed()).isFalse();
                assertThat(f.addr()).isGreaterThanOrEqualTo(mr.addr());
                assertThat(f.addr() + f.lengthBytes()).isLessThanOrEqualTo(mr.addr() + mr.lengthBytes());
            });
        }
        assertThat(pool.liveFragments()).isEqualTo(live.size());
        assertThat(mrs).hasSizeLessThanOrEqualTo(maxChunks);
        assertThat(mrs).allSatisfy(mr -> assertThat(mr.lengthBytes()).isEqualTo(chunk));
        final StrategyCounters c = pool.counters();
        assertThat(c.registrations()).isEqualTo(mrs.size());
        assertThat(c.misses()).isEqualTo(mrs.size());
        assertThat(c.liveMrs()).isEqualTo(mrs.size());
        assertThat(c.liveBytes()).isEqualTo(mrs.size() * chunk);
        assertThat(c.bytesRegistered()).isEqualTo(mrs.size() * chunk);
        assertThat(c.hits() + c.misses()).isEqualTo(allocations);
        assertThat(c.evictions()).isZero();
        assertThat(c.invalidations()).isZero();
        assertThat(s.mrLive()).isEqualTo(mrsBase + mrs.size());
    }
}
