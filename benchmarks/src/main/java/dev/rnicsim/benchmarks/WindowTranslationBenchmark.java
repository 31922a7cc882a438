package dev.rnicsim.benchmarks;

import dev.rnicsim.mtt.AccessFlags;
import dev.rnicsim.mtt.AdapterConfig;
import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.mtt.DmaRun;
import dev.rnicsim.mtt.MKey;
import dev.rnicsim.mtt.MptConfig;
import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.mtt.VariantPolicy;
import java.util.List;
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
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * {@link AdapterTables#translate(int, int, int, int, long, long)} while memory windows are live: every translation
 * first asks whether its key names a type 2 window bound to another QP, a lookup by MPT index. {@value #WINDOWS}
 * type 2 windows are bound, one per MR, at MPT indices past 127 (where a boxed {@code Long} index would be a new
 * object per lookup); the working set translates through the windows' rkeys ({@link #throughWindows}) and through
 * the MRs' keys ({@link #throughMrs}), one 4 KiB page each.
 *
 * <p><b>Unit.</b> Nanoseconds per translation. Run with {@code -prof gc}: {@code gc.alloc.rate.norm} is the bytes
 * a translation allocates, which should be 0.
 * <pre>
 * bin/bench WindowTranslationBenchmark -prof gc
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@OperationsPerInvocation(WindowTranslationBenchmark.WINDOWS)
@Fork(1)
@Warmup(iterations = 3, time = 1, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 1, timeUnit = TimeUnit.SECONDS)
public class WindowTranslationBenchmark
{
    /** MRs, and type 2 windows (one bound to each MR). */
    public static final int WINDOWS = 256;

    private static final int PD = 3;
    private static final int QPN = 17;
    private static final long PAGE = 4096;
    private static final long VA = 0x7f00_0000_0000L;

    private AdapterTables tables;
    private final int[] mrKeys = new int[WINDOWS];
    private final int[] windowKeys = new int[WINDOWS];
    private final long[] iovas = new long[WINDOWS];

    /** Registers the MRs past MPT index 127, binds a type 2 window to each, and checks one translation of each. */
    @Setup(Level.Trial)
    public void setUp()
    {
        tables = new AdapterTables(new AdapterConfig(MttConfig.buddy(16, 0),
            MptConfig.of(1 << 12, VariantPolicy.GENERATION), 0xffff_f000L, 4096, 8));
        for (int i = 0; i < 128; i++)
        {
            // Take MPT indices 1-128 and leave them live, so the MRs and windows below sit past 127.
            tables.register(PD, List.of(new DmaRun(0x1000_0000L, PAGE)), VA, PAGE, VA, 0);
        }
        final int access = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.MW_BIND;
        for (int w = 0; w < WINDOWS; w++)
        {
            iovas[w] = VA + (w + 1) * PAGE * 2;
            mrKeys[w] = tables.register(PD, List.of(new DmaRun(0x2000_0000L + w * PAGE * 2, PAGE)), iovas[w], PAGE,
                iovas[w], access).key();
        }
        for (int w = 0; w < WINDOWS; w++)
        {
            final int mw = tables.allocateWindow(PD, 2);
            final int bound = MKey.make(MKey.index(mw, MKey.DEFAULT_VARIANT_BITS), 1, MKey.DEFAULT_VARIANT_BITS);
            tables.bindWindow(mw, bound, mrKeys[w], QPN, iovas[w], PAGE, AccessFlags.REMOTE_WRITE);
            windowKeys[w] = bound;
        }
        for (int w = 0; w < WINDOWS; w++)
        {
            final long expected = 0x2000_0000L + w * PAGE * 2 + 64;
            if (tables.translate(windowKeys[w], PD, QPN, AccessFlags.REMOTE_WRITE, iovas[w] + 64, 8) != expected
                || tables.translate(mrKeys[w], PD, QPN, AccessFlags.REMOTE_WRITE, iovas[w] + 64, 8) != expected)
            {
                throw new IllegalStateException("window " + w + " does not translate to 0x"
                    + Long.toHexString(expected));
            }
        }
    }

    /**
     * @param bh the sink.
     */
    @Benchmark
    public void throughWindows(final Blackhole bh)
    {
        for (int w = 0; w < WINDOWS; w++)
        {
            bh.consume(tables.translate(windowKeys[w], PD, QPN, AccessFlags.REMOTE_WRITE, iovas[w] + 64, 8));
        }
    }

    /**
     * @param bh the sink.
     */
    @Benchmark
    public void throughMrs(final Blackhole bh)
    {
        for (int w = 0; w < WINDOWS; w++)
        {
            bh.consume(tables.translate(mrKeys[w], PD, QPN, AccessFlags.REMOTE_WRITE, iovas[w] + 64, 8));
        }
    }
}
