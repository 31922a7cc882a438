package dev.rnicsim.benchmarks;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Runs {@link RdmaWriteBenchmark} (both payloads, beside its baseline) with the {@link CpuTimeProfiler} and prints
 * the speed targets as a table: each measured value, its baseline from the same run, the ratio and the target, once
 * by the wall clock (JMH's score) and once by the benchmark thread's CPU time per operation (which a machine busy
 * with other work skews far less; see {@link CpuTimeProfiler}). Run with {@code bin/bench targets}; further
 * arguments are JMH options ({@code -f 1 -wi 2 -i 3}).
 *
 * <p>The targets (issue #19): an RDMA WRITE of 1 MiB moves its bytes at 0.6 or more of the rate of a raw
 * {@code MemorySegment.copy} of 1 MiB, packet by packet (one engine step per path MTU); 64-byte WRITEs reach
 * 3,000,000 operations per second on one thread (post, engine, poll). The 64-byte target is absolute, so its ratio is
 * against the target itself; the 64-byte raw copy is printed beside it for scale. The 1 MiB WRITE is also given
 * against {@code baselineHostCopy}, the copy of the same bytes between the same two hosts' frames from the same
 * set-up (like with like: the same buffers and cache state; see {@link RdmaWriteBenchmark}).
 */
public final class Targets
{
    /** The 1 MiB WRITE's bandwidth over the raw copy's, at least. */
    public static final double BULK_RATIO_TARGET = 0.6;
    /** 64-byte WRITEs per second on one thread, at least. */
    public static final double SMALL_OPS_TARGET = 3_000_000;

    private Targets()
    {
    }

    /**
     * @param args JMH options (forks, iterations, times); the benchmark and profiler are set here.
     * @throws RunnerException            when JMH fails.
     * @throws CommandLineOptionException when an option is not JMH's.
     */
    public static void main(final String[] args) throws RunnerException, CommandLineOptionException
    {
        final Options options = new OptionsBuilder().parent(new CommandLineOptions(args))
            .include(RdmaWriteBenchmark.class.getSimpleName() + "\\.")
            .addProfiler(CpuTimeProfiler.class)
            .build();
        final Collection<RunResult> results = new Runner(options).run();
        System.out.println();
        System.out.print(table(results));
    }

    /** The targets table for the results of one run. */
    static String table(final Collection<RunResult> results)
    {
        final Measured small = find(results, "rdmaWrite", 64);
        final Measured smallCopy = find(results, "baselineSegmentCopy", 64);
        final Measured bulk = find(results, "rdmaWrite", 1 << 20);
        final Measured bulkCopy = find(results, "baselineSegmentCopy", 1 << 20);
        final Measured bulkHostCopy = find(results, "baselineHostCopy", 1 << 20);
        final List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"target", "clock", "measured (ops/s)", "baseline in this run (ops/s)", "ratio",
            "target ratio", "verdict"});
        if (bulk != null && bulkCopy != null)
        {
            rows.add(row("1 MiB WRITE vs raw 1 MiB copy", "wall", bulk.wall, bulk.wallError, bulkCopy.wall,
                bulkCopy.wallError, bulk.wall / bulkCopy.wall, BULK_RATIO_TARGET));
            rows.add(row("1 MiB WRITE vs raw 1 MiB copy", "CPU", bulk.cpu, bulk.cpuError, bulkCopy.cpu,
                bulkCopy.cpuError, bulk.cpu / bulkCopy.cpu, BULK_RATIO_TARGET));
        }
        if (bulk != null && bulkHostCopy != null)
        {
            rows.add(row("1 MiB WRITE vs 1 MiB copy between the same frames", "wall", bulk.wall, bulk.wallError,
                bulkHostCopy.wall, bulkHostCopy.wallError, bulk.wall / bulkHostCopy.wall, BULK_RATIO_TARGET));
            rows.add(row("1 MiB WRITE vs 1 MiB copy between the same frames", "CPU", bulk.cpu, bulk.cpuError,
                bulkHostCopy.cpu, bulkHostCopy.cpuError, bulk.cpu / bulkHostCopy.cpu, BULK_RATIO_TARGET));
        }
        if (small != null)
        {
            final double copyWall = smallCopy == null ? Double.NaN : smallCopy.wall;
            final double copyCpu = smallCopy == null ? Double.NaN : smallCopy.cpu;
            rows.add(row("64 B WRITEs vs 3,000,000 ops/s (raw 64 B copy beside)", "wall", small.wall,
                small.wallError, copyWall, Double.NaN, small.wall / SMALL_OPS_TARGET, 1.0));
            rows.add(row("64 B WRITEs vs 3,000,000 ops/s (raw 64 B copy beside)", "CPU", small.cpu, small.cpuError,
                copyCpu, Double.NaN, small.cpu / SMALL_OPS_TARGET, 1.0));
        }
        return format(rows);
    }

    private static String[] row(final String what, final String clock, final double value, final double error,
        final double baseline, final double baselineError, final double ratio, final double target)
    {
        return new String[] {what, clock, ops(value, error), ops(baseline, baselineError),
            String.format(Locale.ROOT, "%.2f", ratio), String.format(Locale.ROOT, "%.2f", target),
            Double.isNaN(ratio) ? "?" : ratio >= target ? "meets" : "misses"};
    }

    private static String ops(final double value, final double error)
    {
        if (Double.isNaN(value))
        {
            return "-";
        }
        return Double.isNaN(error) ? String.format(Locale.ROOT, "%,.0f", value)
            : String.format(Locale.ROOT, "%,.0f ± %,.0f", value, error);
    }

    private static String format(final List<String[]> rows)
    {
        final int[] width = new int[rows.get(0).length];
        for (final String[] r : rows)
        {
            for (int i = 0; i < r.length; i++)
            {
                width[i] = Math.max(width[i], r[i].length());
            }
        }
        final StringBuilder out = new StringBuilder();
        for (final String[] r : rows)
        {
            out.append('|');
            for (int i = 0; i < r.length; i++)
            {
                out.append(' ').append(r[i]).append(" ".repeat(width[i] - r[i].length())).append(" |");
            }
            out.append('\n');
            if (r == rows.get(0))
            {
                out.append('|');
                for (final int w : width)
                {
                    out.append("-".repeat(w + 2)).append('|');
                }
                out.append('\n');
            }
        }
        return out.toString();
    }

    /** A benchmark's wall-clock score and its CPU-time rate, each with its 99.9% error. */
    private record Measured(double wall, double wallError, double cpu, double cpuError)
    {
    }

    private static Measured find(final Collection<RunResult> results, final String method, final int payloadBytes)
    {
        for (final RunResult r : results)
        {
            final String name = r.getParams().getBenchmark();
            final String mrPages = r.getParams().getParam("mrPageBytes");
            // The targets are for MRs of 4 KiB pages; runs with other page sizes are left out of the table.
            if (name.endsWith("." + method) && String.valueOf(payloadBytes).equals(r.getParams().getParam(
                "payloadBytes")) && (mrPages == null || mrPages.equals("4096")))
            {
                final Result<?> primary = r.getPrimaryResult();
                final Result<?> cpu = r.getSecondaryResults().get(CpuTimeProfiler.OPS_PER_S);
                return new Measured(primary.getScore(), primary.getScoreError(),
                    cpu == null ? Double.NaN : cpu.getScore(), cpu == null ? Double.NaN : cpu.getScoreError());
            }
        }
        return null;
    }
}
