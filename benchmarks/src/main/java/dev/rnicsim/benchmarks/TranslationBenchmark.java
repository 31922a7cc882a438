package dev.rnicsim.benchmarks;

import dev.rnicsim.mtt.AccessFlags;
import dev.rnicsim.mtt.AdapterConfig;
import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.mtt.DmaRun;
import dev.rnicsim.mtt.KeyCheck;
import dev.rnicsim.mtt.MKey;
import dev.rnicsim.mtt.MptConfig;
import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.mtt.RegisteredMr;
import dev.rnicsim.mtt.TranslationCache;
import dev.rnicsim.mtt.VariantPolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.Blackhole;

/**
 * {@link AdapterTables#translate} (key check through the MPT, then the page's MTT entry, each through the
 * translation cache) on a small working set, beside a baseline of the same number of lookups into a plain
 * {@code long[]}, all in one JMH run.
 *
 * <p><b>Tables.</b> ConnectX-3-like: a buddy MTT of 2^20 segments of one entry, {@code max_mr} 2^16 with
 * generation-counted keys and cyclic indices, {@code page_size_cap} 4 KiB to 2 GiB. {@value #MRS} MRs are
 * registered, each {@value #PAGES_PER_MR} pages of 4 KiB whose DMA pages are not contiguous (so each MR gets 4 KiB
 * pages and {@value #PAGES_PER_MR} MTT entries).
 *
 * <p><b>Working set.</b> {@value #LOOKUPS} (key, iova) pairs: one per page of every MR, interleaved across the MRs
 * (MR 0 page 0, MR 1 page 0, ..., MR 0 page 1, ...), each reading 64 bytes at a different offset in its page. One
 * translation touches two cache tags (the MPT entry and the MTT entry), so the set is {@value #MRS} + {@value #LOOKUPS}
 * tags.
 *
 * <p><b>Unit.</b> Every score is <em>nanoseconds per lookup</em>: each benchmark method does {@value #LOOKUPS}
 * lookups and is annotated {@code @OperationsPerInvocation(LOOKUPS)}; each result goes to a {@link Blackhole}.
 *
 * <p><b>Benchmarks.</b>
 * <ul>
 *   <li>{@link #translateHit}: a cache of 4096 lines, 8 ways (the geometry {@code HostDemo} assumes), far larger
 *       than the working set. Setup warms it and checks that a full pass is all hits with the right DMA
 *       addresses; teardown checks that the measured passes missed nothing. The project's target is
 *       <b>at most 20 ns per lookup</b>.</li>
 *   <li>{@link #translateMissTinyCache}: one set of 4 ways (4 lines, LRU): the working set cycles through it, so
 *       every access misses and evicts (checked in setup). The miss path of the simulator: LRU victim search,
 *       eviction count.</li>
 *   <li>{@link #translateNoCache}: a cache of 0 lines: every access is counted as a miss with no search at all;
 *       the table walk alone.</li>
 *   <li>{@link #baselineArrayLoad}: the same pairs translated through a flat {@code long[]} holding the same
 *       entries: MR number from the key, page from the iova (one load of the MR's base iova), one load of the
 *       entry, the page offset put back. The floor a translation with no checks and no cache model can reach.</li>
 * </ul>
 * Divide each score by {@code baselineArrayLoad}'s for the ratio the project reports.
 *
 * <p><b>Running</b> (about a minute with the defaults):
 * <pre>
 * mvn -pl benchmarks -am package -DskipTests
 * java -jar benchmarks/target/benchmarks.jar TranslationBenchmark            # 1 fork, 3 x 1 s warm-up, 5 x 1 s
 * java -jar benchmarks/target/benchmarks.jar TranslationBenchmark -f 1 -wi 2 -i 3
 * java -jar benchmarks/target/benchmarks.jar TranslationBenchmark.translateHit -prof stack
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@OperationsPerInvocation(TranslationBenchmark.LOOKUPS)
@Fork(1)
@Warmup(iterations = 3, time = 1, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 1, timeUnit = TimeUnit.SECONDS)
public class TranslationBenchmark
{
    /** MRs registered. */
    public static final int MRS = 4;
    /** 4 KiB pages (and MTT entries) per MR. */
    public static final int PAGES_PER_MR = 16;
    /** Lookups per benchmark invocation: one per page of every MR. */
    public static final int LOOKUPS = MRS * PAGES_PER_MR;

    private static final int PD = 7;
    private static final int ACCESS = AccessFlags.REMOTE_READ;
    private static final long LENGTH = 64;
    private static final long PAGE = 4096;
    private static final long MR_BYTES = PAGES_PER_MR * PAGE;
    /** User VA (and iova) of MR 0; MR m is at {@code VA + m * 1 MiB}. */
    private static final long VA = 0x7f00_0000_0000L;
    private static final long MR_STRIDE = 1L << 20;
    /** DMA address of the first page; pages are every other 4 KiB page from here, so none are contiguous. */
    private static final long DMA_BASE = 0x1_0000_0000L;
    private static final long PAGE_SIZE_CAP = 0xffff_f000L;

    private String benchmark;
    private Device hit;
    private Device tiny;
    private Device none;

    /** iova of each lookup, and the DMA address it must translate to. */
    private final long[] iovas = new long[LOOKUPS];
    private final long[] expected = new long[LOOKUPS];
    /** Which MR each lookup reads. */
    private final int[] mrOf = new int[LOOKUPS];

    /** Baseline: the MTT entries of all MRs in one array, MR m at {@code m * PAGES_PER_MR}. */
    private long[] flatEntries;
    /** Baseline: base iova of each MR, by MR number. */
    private long[] flatBase;
    /** Baseline: the key of each lookup (of the {@code hit} device; all three devices hand out the same keys). */
    private int[] baselineKeys;
    /** Baseline: MPT index of MR 0, to turn a key into an MR number. */
    private int firstIndex;

    /** One adapter with the {@value #MRS} MRs registered, and the key of each lookup. */
    private static final class Device
    {
        final String name;
        final AdapterTables tables;
        final int[] keys = new int[LOOKUPS];
        long hitsAtStart;
        long missesAtStart;

        Device(final String name, final int cacheEntries, final int cacheWays)
        {
            this.name = name;
            this.tables = new AdapterTables(new AdapterConfig(MttConfig.buddy(20, 0),
                MptConfig.of(1 << 16, VariantPolicy.GENERATION), PAGE_SIZE_CAP, cacheEntries, cacheWays));
        }
    }

    /**
     * Registers the MRs on the three adapters, builds the baseline table and checks every path: each translation
     * gives the expected DMA address, the {@code hit} cache holds the whole working set, the {@code tiny} cache
     * misses on every access.
     *
     * @param params the benchmark being run.
     */
    @Setup(Level.Trial)
    public void setUp(final BenchmarkParams params)
    {
        final String name = params.getBenchmark();
        benchmark = name.substring(name.lastIndexOf('.') + 1);

        final List<List<DmaRun>> runs = new ArrayList<>();
        for (int m = 0; m < MRS; m++)
        {
            final List<DmaRun> mr = new ArrayList<>();
            for (int p = 0; p < PAGES_PER_MR; p++)
            {
                mr.add(new DmaRun(dmaOf(m, p), PAGE));
            }
            runs.add(List.copyOf(mr));
        }
        for (int i = 0; i < LOOKUPS; i++)
        {
            final int m = i % MRS;
            final int p = i / MRS;
            final long offset = (i * 64L) % PAGE;
            mrOf[i] = m;
            iovas[i] = VA + m * MR_STRIDE + p * PAGE + offset;
            expected[i] = dmaOf(m, p) + offset;
        }

        hit = device("hit", 4096, 8, runs);
        tiny = device("tiny", 4, 4, runs);
        none = device("none", 0, 1, runs);

        flatEntries = new long[LOOKUPS];
        flatBase = new long[MRS];
        for (int m = 0; m < MRS; m++)
        {
            flatBase[m] = VA + m * MR_STRIDE;
            for (int p = 0; p < PAGES_PER_MR; p++)
            {
                flatEntries[m * PAGES_PER_MR + p] = dmaOf(m, p) | 1;
            }
        }
        baselineKeys = hit.keys.clone();
        firstIndex = (int)MKey.index(hit.keys[0], MKey.DEFAULT_VARIANT_BITS);
        for (int i = 0; i < LOOKUPS; i++)
        {
            if (tiny.keys[i] != hit.keys[i] || none.keys[i] != hit.keys[i])
            {
                throw new IllegalStateException("the three adapters handed out different keys");
            }
            final int mr = (int)MKey.index(hit.keys[i], MKey.DEFAULT_VARIANT_BITS) - firstIndex;
            if (mr != mrOf[i])
            {
                throw new IllegalStateException("keys are not consecutive MPT indices: lookup " + i);
            }
        }
        final long[] base = baselinePass();
        for (int i = 0; i < LOOKUPS; i++)
        {
            if (base[i] != expected[i])
            {
                throw new IllegalStateException("baseline lookup " + i + " gave 0x" + Long.toHexString(base[i]));
            }
        }

        // Warm pass (fills the caches), then a checked pass whose counters must show all hits / all misses.
        for (final Device d : List.of(hit, tiny, none))
        {
            checkedPass(d);
            final TranslationCache c = d.tables.cache();
            final long h0 = c.hits();
            final long m0 = c.misses();
            checkedPass(d);
            final long hits = c.hits() - h0;
            final long misses = c.misses() - m0;
            final boolean ok = switch (d.name)
            {
                case "hit" -> misses == 0 && hits == 2L * LOOKUPS;
                default -> hits == 0 && misses == 2L * LOOKUPS;
            };
            if (!ok)
            {
                throw new IllegalStateException("cache '" + d.name + "' (" + c.capacityEntries() + " lines): a pass of "
                    + LOOKUPS + " lookups gave " + hits + " hits and " + misses + " misses");
            }
            d.hitsAtStart = c.hits();
            d.missesAtStart = c.misses();
        }
    }

    private static long dmaOf(final int mr, final int page)
    {
        return DMA_BASE + (mr * PAGES_PER_MR + page) * 2 * PAGE;
    }

    private Device device(final String name, final int cacheEntries, final int cacheWays,
        final List<List<DmaRun>> runs)
    {
        final Device d = new Device(name, cacheEntries, cacheWays);
        final int[] keyOfMr = new int[MRS];
        for (int m = 0; m < MRS; m++)
        {
            final long va = VA + m * MR_STRIDE;
            final RegisteredMr mr = d.tables.register(PD, runs.get(m), va, MR_BYTES, va,
                AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ | AccessFlags.REMOTE_WRITE);
            if (mr.pageSizeBytes() != PAGE || mr.mtt().entries() != PAGES_PER_MR)
            {
                throw new IllegalStateException("MR " + m + ": page size " + mr.pageSizeBytes() + ", "
                    + mr.mtt().entries() + " MTT entries; expected 4 KiB pages and " + PAGES_PER_MR + " entries");
            }
            keyOfMr[m] = mr.key();
        }
        for (int i = 0; i < LOOKUPS; i++)
        {
            d.keys[i] = keyOfMr[mrOf[i]];
        }
        return d;
    }

    private void checkedPass(final Device d)
    {
        for (int i = 0; i < LOOKUPS; i++)
        {
            final long r = d.tables.translate(d.keys[i], PD, ACCESS, iovas[i], LENGTH);
            if (r != expected[i])
            {
                throw new IllegalStateException("cache '" + d.name + "': lookup " + i + " gave "
                    + (r < 0 ? KeyCheck.ofTranslation(r) : "0x" + Long.toHexString(r)) + ", expected 0x"
                    + Long.toHexString(expected[i]));
            }
        }
    }

    private long[] baselinePass()
    {
        final long[] out = new long[LOOKUPS];
        for (int i = 0; i < LOOKUPS; i++)
        {
            out[i] = baselineLookup(baselineKeys[i], iovas[i]);
        }
        return out;
    }

    /** Checks that the measured passes of {@code translateHit} never missed, and prints each cache's counts. */
    @TearDown(Level.Trial)
    public void tearDown()
    {
        final Device d = switch (benchmark)
        {
            case "translateHit" -> hit;
            case "translateMissTinyCache" -> tiny;
            case "translateNoCache" -> none;
            default -> null;
        };
        if (d == null)
        {
            return;
        }
        final TranslationCache c = d.tables.cache();
        final long hits = c.hits() - d.hitsAtStart;
        final long misses = c.misses() - d.missesAtStart;
        System.out.printf(Locale.ROOT, "%nNOTE: %s: cache '%s' (%d lines): %d accesses during warm-up and measurement,"
            + " hit ratio %.4f, %d evictions since the cache was built%n", benchmark, d.name, c.capacityEntries(), hits + misses,
            hits + misses == 0 ? 0.0 : hits / (double)(hits + misses), c.evictions());
        if (d == hit && misses != 0)
        {
            throw new IllegalStateException("translateHit missed " + misses + " times: the working set does not stay"
                + " cached");
        }
    }

    /**
     * {@value #LOOKUPS} translations that all hit a 4096-line, 8-way cache.
     *
     * @param bh receives each DMA address.
     */
    @Benchmark
    public void translateHit(final Blackhole bh)
    {
        translateAll(hit, bh);
    }

    /**
     * {@value #LOOKUPS} translations through a 4-line cache that misses on every access.
     *
     * @param bh receives each DMA address.
     */
    @Benchmark
    public void translateMissTinyCache(final Blackhole bh)
    {
        translateAll(tiny, bh);
    }

    /**
     * {@value #LOOKUPS} translations with no cache (0 lines): every access a counted miss.
     *
     * @param bh receives each DMA address.
     */
    @Benchmark
    public void translateNoCache(final Blackhole bh)
    {
        translateAll(none, bh);
    }

    private void translateAll(final Device d, final Blackhole bh)
    {
        final AdapterTables t = d.tables;
        final int[] keys = d.keys;
        final long[] va = iovas;
        for (int i = 0; i < LOOKUPS; i++)
        {
            bh.consume(t.translate(keys[i], PD, ACCESS, va[i], LENGTH));
        }
    }

    /**
     * Baseline: the same {@value #LOOKUPS} (key, iova) pairs translated through a flat {@code long[]}.
     *
     * @param bh receives each DMA address.
     */
    @Benchmark
    public void baselineArrayLoad(final Blackhole bh)
    {
        final int[] keys = baselineKeys;
        final long[] va = iovas;
        for (int i = 0; i < LOOKUPS; i++)
        {
            bh.consume(baselineLookup(keys[i], va[i]));
        }
    }

    /** MR number from the key, page from the iova, one entry load, page offset put back; no checks. */
    private long baselineLookup(final int key, final long iova)
    {
        final int mr = (key >>> MKey.DEFAULT_VARIANT_BITS) - firstIndex;
        final long entry = flatEntries[mr * PAGES_PER_MR + (int)((iova - flatBase[mr]) >>> 12)];
        return (entry & -PAGE) | (iova & (PAGE - 1));
    }
}
