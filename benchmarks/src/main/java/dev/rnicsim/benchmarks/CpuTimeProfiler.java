package dev.rnicsim.benchmarks;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * CPU time of the benchmark's JVM per operation, beside JMH's wall-clock score: {@code cpu.ns/op} and its inverse
 * {@code cpu.ops/s}. On a machine shared with other work, the wall-clock score falls whenever the benchmark thread
 * waits for a core; the CPU time it used per operation does not, so the ratio of two benchmarks' {@code cpu.ns/op}
 * stays meaningful where the ratio of their scores does not.
 *
 * <p>The CPU time is the process's ({@code OperatingSystemMXBean.getProcessCpuTime}), so it includes the garbage
 * collector's work for the garbage the operations made (a fair part of their cost) and the JIT compiler's (small
 * after warm-up); it is divided by every operation of the iteration ({@code getAllOps}). Use with one benchmark
 * thread: {@code -prof dev.rnicsim.benchmarks.CpuTimeProfiler}.
 */
public final class CpuTimeProfiler implements InternalProfiler
{
    /** The secondary result's label: CPU nanoseconds per operation. */
    public static final String NS_PER_OP = "cpu.ns/op";
    /** The secondary result's label: operations per CPU second. */
    public static final String OPS_PER_S = "cpu.ops/s";

    private final com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean)ManagementFactory.getOperatingSystemMXBean();
    private long cpuAtStartNs;

    @Override
    public String getDescription()
    {
        return "process CPU time per operation (robust to a shared machine)";
    }

    @Override
    public void beforeIteration(final BenchmarkParams benchmarkParams, final IterationParams iterationParams)
    {
        cpuAtStartNs = os.getProcessCpuTime();
    }

    @Override
    public Collection<? extends Result> afterIteration(final BenchmarkParams benchmarkParams,
        final IterationParams iterationParams, final IterationResult result)
    {
        final long cpuNs = os.getProcessCpuTime() - cpuAtStartNs;
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
