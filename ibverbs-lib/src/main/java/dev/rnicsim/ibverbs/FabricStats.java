package dev.rnicsim.ibverbs;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * Where the fabric server's time goes, printed per process when {@code RNICSIM_FABRIC_STATS} is set in the
 * environment: the wall-clock time and the CPU time of the serving thread spent in the model (progress and
 * polling) and in moving the real bytes. On a machine shared with other work the two differ by the time the
 * thread waited for a core; the CPU time is the cost of the mechanism itself.
 *
 * <p>Not thread safe: updated under the fabric's lock.
 */
final class FabricStats
{
    /** True when {@code RNICSIM_FABRIC_STATS} is set. */
    static final boolean ENABLED = System.getenv("RNICSIM_FABRIC_STATS") != null;
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    long modelNs;
    long modelCpuNs;
    long copyNs;
    long copyCpuNs;

    /** @return the calling thread's CPU time in nanoseconds, or 0 when statistics are off (it costs a system call). */
    static long cpuNs()
    {
        return ENABLED ? THREADS.getCurrentThreadCpuTime() : 0;
    }

    /** @return the wall clock in nanoseconds, or 0 when statistics are off. */
    static long wallNs()
    {
        return ENABLED ? System.nanoTime() : 0;
    }
}
