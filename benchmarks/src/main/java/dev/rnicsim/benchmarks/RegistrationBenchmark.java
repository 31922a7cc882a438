package dev.rnicsim.benchmarks;

import dev.rnicsim.mtt.AccessFlags;
import dev.rnicsim.mtt.AdapterConfig;
import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.mtt.DmaRun;
import dev.rnicsim.mtt.IndexPolicy;
import dev.rnicsim.mtt.KeyCheck;
import dev.rnicsim.mtt.MKey;
import dev.rnicsim.mtt.MptConfig;
import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.mtt.MttCounters;
import dev.rnicsim.mtt.RegisteredMr;
import dev.rnicsim.mtt.VariantPolicy;
import java.lang.management.ManagementFactory;
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
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The table half of {@code ibv_reg_mr} / {@code ibv_dereg_mr} ({@link AdapterTables#register} and
 * {@link AdapterTables#deregister}: page-size choice, MTT allocation and entry writes, MPT index and key; MPT free,
 * MTT zap, cache invalidation, MTT free) for small MRs, one at a time and a million at once, beside a plain
 * {@code int[]} free-list stack doing the same number of allocations and releases, all in one JMH run.
 *
 * <p><b>Device.</b> An MTT with the BUDDY allocator, {@code log_num_mtt} 20 and {@code log_mtts_per_seg} 0
 * (2^20 entries, one per segment); an MPT of {@code max_mr} 2^24 (the most 8 variant bits allow) with
 * generation-counted keys and CYCLIC indices; {@code page_size_cap} 4 KiB to 2 GiB; a translation cache of 4096
 * lines, 8 ways (deregistration invalidates in it). One device per trial, kept across invocations: with CYCLIC
 * indices every registration takes the next MPT index, so the index sweeps the whole 2^24 table over the run.
 *
 * <p><b>Steady state.</b> The MPT keeps the variant history of every index ever used, in chunks of 4096 indices
 * created on first use (about 5 bytes an index, so about 84 MiB once a CYCLIC index has gone round 2^24 entries),
 * and the rest of an entry in a per-chunk body that exists only while the chunk holds a live entry. Before the batch
 * benchmarks, set-up registers and deregisters batches until the index has gone once round the table (about
 * 17 batches, a few seconds), so they measure the steady state, not the table's first use.
 * {@link #registerDeregister} gets no such sweep and starts from index 1 like a fresh device.
 *
 * <p>{@code -p indexPolicy=LOWEST_FREE} reuses index 1 every time (a control for the one-at-a-time benchmark); in a
 * batch it would search from index 1 past every live index, so it is meant for that benchmark only.
 *
 * <p><b>MR.</b> {@code pages} (default 1) pages of 4 KiB at a 2 MiB aligned VA (iova = VA), as one {@link DmaRun}
 * whose DMA address is an odd 4 KiB page, so the MR gets 4 KiB pages and exactly {@code pages} MTT entries (checked
 * at setup). {@code -p pages=4} works for the one-at-a-time benchmarks only: a million 4-page MRs need 2^22 MTT
 * entries, four times this MTT.
 *
 * <p><b>Unit.</b> Every score is <em>nanoseconds per MR</em>.
 * <ul>
 *   <li>{@link #registerDeregister}: one register and one deregister per operation (the MR never outlives it);</li>
 *   <li>{@link #registerDeregisterBatch}: register {@value #BATCH} MRs, then deregister them all, in one invocation
 *       annotated {@code @OperationsPerInvocation(BATCH)}: ns per MR for both steps;</li>
 *   <li>{@link #registerBatch} and {@link #deregisterBatch}: the two halves of that, each timed alone (the other
 *       half runs before or after each invocation, outside the timing);</li>
 *   <li>{@link #baselineFreeListPerOp}: pop one slot from an {@code int[]} free-list stack and push it back;</li>
 *   <li>{@link #baselineFreeListBatch}: pop {@value #BATCH} slots into an {@code int[]} of handles, then push them
 *       all back.</li>
 * </ul>
 * Divide each score by its baseline's for the ratio the project reports. At the end of each trial a line starting with
 * {@code NOTE:} gives the heap in use after a full GC (the MPT's chunks, created as the CYCLIC index reaches them)
 * and checks that no MR or MTT entry is left.
 *
 * <p><b>Running</b> (about a minute and a half with the defaults, set-up sweeps included):
 * <pre>
 * mvn -pl benchmarks -am package -DskipTests
 * java -jar benchmarks/target/benchmarks.jar RegistrationBenchmark          # 1 fork, 3 x 1 s warm-up, 5 x 1 s
 * java -jar benchmarks/target/benchmarks.jar RegistrationBenchmark -f 1 -wi 2 -i 3
 * java -jar benchmarks/target/benchmarks.jar 'RegistrationBenchmark.registerDeregister$' -p pages=4 -prof gc
 * java -jar benchmarks/target/benchmarks.jar 'RegistrationBenchmark.registerDeregister$' -p indexPolicy=LOWEST_FREE
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 1, timeUnit = TimeUnit.SECONDS)
public class RegistrationBenchmark
{
    /** MRs per batch invocation. */
    public static final int BATCH = 1_000_000;

    private static final int PD = 3;
    private static final int ACCESS = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ | AccessFlags.REMOTE_WRITE;
    private static final long PAGE = 4096;
    private static final long VA = 0x7f12_3440_0000L;
    private static final long DMA = 0x2_0000_1000L;
    private static final long PAGE_SIZE_CAP = 0xffff_f000L;
    private static final long MAX_MR = 1L << 24;

    /** 4 KiB pages per MR. */
    @Param({"1"})
    public int pages;

    /** MPT index policy: CYCLIC (the device under test) or LOWEST_FREE (a control, see the class comment). */
    @Param({"CYCLIC"})
    public String indexPolicy;

    private String benchmark;
    private Device device;
    private final int[] keys = new int[BATCH];

    /** Baseline: the free slots, a stack; {@code top} is the count. */
    private int[] freeStack;
    private int top;
    private final int[] handles = new int[BATCH];

    /** One adapter and the MR everything registers. */
    static final class Device
    {
        final AdapterTables tables;
        final List<DmaRun> runs;
        final long lengthBytes;

        Device(final int pages, final String indexPolicy)
        {
            tables = new AdapterTables(new AdapterConfig(MttConfig.buddy(20, 0), new MptConfig(MAX_MR,
                MKey.DEFAULT_VARIANT_BITS, VariantPolicy.GENERATION, IndexPolicy.valueOf(indexPolicy), 0),
                PAGE_SIZE_CAP, 4096, 8));
            lengthBytes = pages * PAGE;
            runs = List.of(new DmaRun(DMA, lengthBytes));
            // Check the MR's shape and that a registration translates, and that its key dies with it.
            final RegisteredMr mr = register();
            if (mr.pageSizeBytes() != PAGE || mr.mtt().entries() != pages || mr.mtt().reservedEntries() != pages)
            {
                throw new IllegalStateException("MR of " + pages + " pages got page size " + mr.pageSizeBytes() + ", "
                    + mr.mtt().entries() + " MTT entries (" + mr.mtt().reservedEntries() + " reserved)");
            }
            final long dma = tables.translate(mr.key(), PD, AccessFlags.REMOTE_READ, VA + lengthBytes - 8, 8);
            if (dma != DMA + lengthBytes - 8)
            {
                throw new IllegalStateException("translation of the MR's last bytes gave " + dma);
            }
            tables.deregister(mr.key());
            final long after = tables.translate(mr.key(), PD, AccessFlags.REMOTE_READ, VA, 8);
            if (KeyCheck.ofTranslation(after) != KeyCheck.NO_SUCH_INDEX)
            {
                throw new IllegalStateException("a deregistered key still translates: " + after);
            }
        }

        RegisteredMr register()
        {
            return tables.register(PD, runs, VA, lengthBytes, VA, ACCESS);
        }

        void registerAll(final int[] into)
        {
            for (int i = 0; i < into.length; i++)
            {
                into[i] = register().key();
            }
        }

        /**
         * Registers and deregisters batches until the CYCLIC index has gone once round the whole MPT, so that every
         * MPT chunk exists and the timed batches measure the steady state, not the table's first use.
         */
        void sweepMpt(final int[] scratch)
        {
            if (tables.mpt().config().indexPolicy() != IndexPolicy.CYCLIC)
            {
                return;
            }
            while (tables.mpt().allocations() < MAX_MR)
            {
                registerAll(scratch);
                deregisterAll(scratch);
            }
        }

        long deregisterAll(final int[] from)
        {
            long dropped = 0;
            for (int i = 0; i < from.length; i++)
            {
                dropped += tables.deregister(from[i]);
            }
            return dropped;
        }

        /** Checks that nothing is left registered and prints the heap in use and the table counters. */
        void report(final String benchmark, final int pages)
        {
            final MttCounters c = tables.mtt().counters();
            if (tables.mpt().inUse() != 0 || c.entriesInUse() != 0)
            {
                throw new IllegalStateException(benchmark + ": " + tables.mpt().inUse() + " MRs and "
                    + c.entriesInUse() + " MTT entries left after the trial");
            }
            System.out.printf(Locale.ROOT, "%nNOTE: %s pages=%d indexPolicy=%s: %,d MRs registered and deregistered"
                + " in the trial (set-up sweep included); heap in use after full GC: %,d MiB%n", benchmark, pages,
                tables.mpt().config().indexPolicy(), tables.mpt().allocations(), usedHeapAfterGc() >> 20);
        }
    }

    static void requireBatchFits(final String benchmark, final int pages)
    {
        if (pages != 1)
        {
            throw new IllegalStateException(benchmark + " registers " + BATCH + " MRs at once: with pages=" + pages
                + " they need " + (long)BATCH * Long.highestOneBit(2L * pages - 1) + " MTT entries, the MTT has "
                + (1 << 20) + "; run it with pages=1");
        }
    }

    static long usedHeapAfterGc()
    {
        System.gc();
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /**
     * Builds the device (for the adapter benchmarks) or the free list (for the baselines).
     *
     * @param params the benchmark being run.
     */
    @Setup(Level.Trial)
    public void setUp(final BenchmarkParams params)
    {
        final String name = params.getBenchmark();
        benchmark = name.substring(name.lastIndexOf('.') + 1);
        if (benchmark.startsWith("baseline"))
        {
            freeStack = new int[BATCH];
            for (int i = 0; i < BATCH; i++)
            {
                freeStack[i] = BATCH - i;
            }
            top = BATCH;
            return;
        }
        switch (benchmark)
        {
            case "registerDeregister" -> device = new Device(pages, indexPolicy);
            case "registerDeregisterBatch" ->
            {
                requireBatchFits(benchmark, pages);
                device = new Device(pages, indexPolicy);
                device.sweepMpt(keys);
            }
            default ->
            {
                // registerBatch and deregisterBatch use the device of their Phase state
            }
        }
    }

    /** Checks that no MR is left (adapter benchmarks) or no slot is lost (baselines), and prints the heap note. */
    @TearDown(Level.Trial)
    public void tearDown()
    {
        if (device != null)
        {
            device.report(benchmark, pages);
        }
        if (freeStack != null && top != BATCH)
        {
            throw new IllegalStateException(benchmark + ": free list holds " + top + " of " + BATCH + " slots");
        }
    }

    /**
     * Registers one MR and deregisters it.
     *
     * @param bh receives the key and the count of cache entries the invalidation dropped.
     */
    @Benchmark
    public void registerDeregister(final Blackhole bh)
    {
        final AdapterTables t = device.tables;
        final int key = device.register().key();
        bh.consume(key);
        bh.consume(t.deregister(key));
    }

    /**
     * Registers {@value #BATCH} MRs, then deregisters them all.
     *
     * @return the cache entries the invalidations dropped.
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long registerDeregisterBatch()
    {
        device.registerAll(keys);
        return device.deregisterAll(keys);
    }

    /**
     * Registers {@value #BATCH} MRs (deregistered after the invocation, outside the timing).
     *
     * @param phase the device and its keys.
     * @return the last key.
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int registerBatch(final Phase phase)
    {
        phase.device.registerAll(phase.keys);
        phase.live = true;
        return phase.keys[BATCH - 1];
    }

    /**
     * Deregisters {@value #BATCH} MRs (registered before the invocation, outside the timing).
     *
     * @param phase the device and its keys.
     * @return the cache entries the invalidations dropped.
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long deregisterBatch(final Phase phase)
    {
        final long dropped = phase.device.deregisterAll(phase.keys);
        phase.live = false;
        return dropped;
    }

    /**
     * Baseline: pops one slot from the free-list stack and pushes it back.
     *
     * @return the slot.
     */
    @Benchmark
    public int baselineFreeListPerOp()
    {
        final int slot = freeStack[--top];
        freeStack[top++] = slot;
        return slot;
    }

    /**
     * Baseline: pops {@value #BATCH} slots from the free-list stack into an array of handles, then pushes them all
     * back (in the order they were taken, as the batch deregisters).
     *
     * @return a checksum of the slots taken.
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long baselineFreeListBatch()
    {
        final int[] stack = freeStack;
        final int[] h = handles;
        int t = top;
        long sum = 0;
        for (int i = 0; i < h.length; i++)
        {
            h[i] = stack[--t];
        }
        for (int i = 0; i < h.length; i++)
        {
            sum += h[i];
            stack[t++] = h[i];
        }
        top = t;
        return sum;
    }

    /**
     * State of {@link #registerBatch} and {@link #deregisterBatch}: a device of its own and, around each invocation,
     * the half of the batch that is not timed. Kept apart from the outer state so that its per-invocation fixtures
     * do not apply to the per-operation benchmarks.
     */
    @State(Scope.Thread)
    public static class Phase
    {
        /** 4 KiB pages per MR; must be 1 (see the class comment). */
        @Param({"1"})
        public int pages;

        /** MPT index policy, as in the outer state. */
        @Param({"CYCLIC"})
        public String indexPolicy;

        Device device;
        final int[] keys = new int[BATCH];
        /** True while {@link #keys} holds live MRs. */
        boolean live;
        private String benchmark;

        /**
         * @param params the benchmark being run.
         */
        @Setup(Level.Trial)
        public void setUp(final BenchmarkParams params)
        {
            final String name = params.getBenchmark();
            benchmark = name.substring(name.lastIndexOf('.') + 1);
            requireBatchFits(benchmark, pages);
            device = new Device(pages, indexPolicy);
            device.sweepMpt(keys);
        }

        /** Registers the batch before {@link #deregisterBatch}. */
        @Setup(Level.Invocation)
        public void before()
        {
            if (benchmark.equals("deregisterBatch"))
            {
                device.registerAll(keys);
                live = true;
            }
        }

        /** Deregisters the batch after {@link #registerBatch}. */
        @TearDown(Level.Invocation)
        public void after()
        {
            if (live)
            {
                device.deregisterAll(keys);
                live = false;
            }
        }

        /** Checks that no MR is left and prints the heap note. */
        @TearDown(Level.Trial)
        public void tearDown()
        {
            device.report(benchmark, pages);
        }
    }
}
