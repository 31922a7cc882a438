package dev.rnicsim.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * CPU time of the benchmark's threads per operation, beside JMH's wall-clock score: {@code cpu.ns/op} and its
 * inverse {@code cpu.ops/s}. On a machine shared with other work, the wall-clock score falls whenever the benchmark
 * thread waits for a core; the CPU time it used per operation falls much less, so the ratio of two benchmarks'
 * {@code cpu.ns/op} stays meaningful where the ratio of their scores does not.
 *
 * <p>The CPU time is that of JMH's worker threads (named {@code ...-jmh-worker-N}) during the iteration, so neither
 * the JIT compiler nor the garbage collector counts (see {@code -prof gc} for the garbage); it is divided by every
 * operation of the iteration ({@code getAllOps}). Use: {@code -prof dev.rnicsim.benchmarks.CpuTimeProfiler}.
 */
public final class CpuTimeProfiler implements InternalProfiler
{
    /** The secondary result's label: CPU nanoseconds per operation. */
    public static final String NS_PER_OP = "cpu.ns/op";
    /** The secondary result's label: operations per CPU second. */
    public static final String OPS_PER_S = "cpu.ops/s";

    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final Map<Long, Long> cpuAtStartNs = new HashMap<>();

    @Override
    public String getDescription()
    {
        return "CPU time of the benchmark threads per operation (robust to a shared machine)";
    }

    @Override
    public void beforeIteration(final BenchmarkParams benchmarkParams, final IterationParams iterationParams)
    {
        cpuAtStartNs.clear();
        for (final ThreadInfo t : threads.dumpAllThreads(false, false))
        {
            if (t != null && t.getThreadName().contains("-jmh-worker-"))
            {
                cpuAtStartNs.put(t.getThreadId(), threads.getThreadCpuTime(t.getThreadId()));
            }
        }
    }

    @Override
    public Collection<? extends Result> afterIteration(final BenchmarkParams benchmarkParams,
        final IterationParams iterationParams, final IterationResult result)
    {
        long cpuNs = 0;
        for (final ThreadInfo t : threads.dumpAllThreads(false, false))
        {
            if (t != null && t.getThreadName().contains("-jmh-worker-"))
            {
                final long now = threads.getThreadCpuTime(t.getThreadId());
                if (now > 0)
                {
                    // A worker that started during the iteration used all its CPU time in it.
                    cpuNs += now - cpuAtStartNs.getOrDefault(t.getThreadId(), 0L);
                }
            }
        }
        final long ops = result.getMetadata().getAllOps();
        final List<Result> out = new ArrayList<>(2);
        if (ops > 0 && cpuNs > 0)
        {
            final double nsPerOp = (double)cpuNs / ops;
            out.add(new ScalarResult(NS_PER_OP, nsPerOp, "ns/op", AggregationPolicy.AVG));
            out.add(new ScalarResult(OPS_PER_S, 1e9 / nsPerOp, "ops/s", AggregationPolicy.AVG));
        }
        return out;
    }
}
