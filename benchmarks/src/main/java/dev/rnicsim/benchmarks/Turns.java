package dev.rnicsim.benchmarks;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * Compares builds of the simulator by the CPU time of {@link RdmaWriteBenchmark#rdmaWrite} on a machine busy with
 * other work, where two JMH runs minutes apart see different loads. Each build's benchmarks jar is loaded in a class
 * loader of its own, so several builds run in one JVM; each builds its own {@code RdmaWriteBenchmark} world (set up
 * as JMH sets it up for {@code rdmaWrite}, with MRs of 4 KiB pages), and the builds take turns of
 * {@code opsPerTurn} WRITEs each (after one not timed), beside a raw {@link MemorySegment#copy} of the same bytes
 * between two native segments as a turn of its own, for {@code seconds}; each round of turns starts with the next
 * build, so that no build always follows the raw copy (whose 2 MiB leave the CPU's caches cold for the next turn).
 * A turn is timed by the thread's CPU time ({@link ThreadMXBean#getCurrentThreadCpuTime}), so the time spent waiting
 * for a core does not count, and turns
 * seconds apart see the same caches and load. Printed per build: the median and the smallest turn (the first quarter
 * of the turns left out as warm-up), per WRITE and per 4 KiB packet, and the raw copy's median over the build's
 * median (the bandwidth ratio of the 1 MiB target).
 *
 * <p>Each WRITE is called through a method handle that is not a constant, which adds a few ns a call: nothing beside a
 * 1 MiB WRITE (tens of µs), but not negligible beside a 64-byte one; compare builds with each other, not with JMH.
 *
 * <pre>
 * . bin/jdk25.sh &amp;&amp; mvn -pl benchmarks -am package -DskipTests
 * cp benchmarks/target/benchmarks.jar target/after.jar    # and a jar of the build to compare with, target/before.jar
 * java -cp target/after.jar dev.rnicsim.benchmarks.Turns 120 40 1048576 target/before.jar target/after.jar
 * </pre>
 *
 * Arguments: seconds, WRITEs per turn, payload bytes, then one benchmarks jar per build (a jar built before this class
 * existed cannot be loaded: it lacks {@link RdmaWriteBenchmark#prepare}).
 */
public final class Turns
{
    private static final String BENCHMARK = RdmaWriteBenchmark.class.getName();

    private Turns()
    {
    }

    /**
     * @param args seconds, WRITEs per turn, payload bytes, then the jars.
     * @throws Throwable when a build cannot be loaded or a WRITE fails.
     */
    public static void main(final String[] args) throws Throwable
    {
        if (args.length < 4)
        {
            System.err.println("usage: Turns SECONDS OPS_PER_TURN PAYLOAD_BYTES JAR...");
            System.exit(2);
        }
        final double seconds = Double.parseDouble(args[0]);
        final int opsPerTurn = Integer.parseInt(args[1]);
        final int payloadBytes = Integer.parseInt(args[2]);
        final int builds = args.length - 3;
        final MethodHandle[] writes = new MethodHandle[builds];
        for (int i = 0; i < builds; i++)
        {
            writes[i] = world(Path.of(args[3 + i]), payloadBytes);
        }
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        final List<List<Long>> turns = new ArrayList<>();
        for (int i = 0; i <= builds; i++)
        {
            turns.add(new ArrayList<>());
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment source = arena.allocate(RdmaWriteBenchmark.BUFFER_BYTES, 4096);
            final MemorySegment target = arena.allocate(RdmaWriteBenchmark.BUFFER_BYTES, 4096);
            source.fill((byte)3);
            target.fill((byte)1);
            final long end = System.nanoTime() + (long)(seconds * 1e9);
            for (int round = 0; System.nanoTime() < end; round++)
            {
                for (int k = 0; k < builds; k++)
                {
                    // Each round starts with the next build, so every build follows the raw copy's turn as often as
                    // each other; a turn starts with one WRITE not timed, so it times WRITEs after WRITEs of its own
                    // world (as JMH does), not the first one after another world's or the raw copy's turn.
                    final int i = (round + k) % builds;
                    if ((long)writes[i].invokeExact() != payloadBytes)
                    {
                        throw new IllegalStateException("a WRITE did not complete its bytes");
                    }
                    final long start = threads.getCurrentThreadCpuTime();
                    for (int op = 0; op < opsPerTurn; op++)
                    {
                        final long bytes = (long)writes[i].invokeExact();
                        if (bytes != payloadBytes)
                        {
                            throw new IllegalStateException("a WRITE completed " + bytes + " bytes");
                        }
                    }
                    turns.get(i).add((threads.getCurrentThreadCpuTime() - start) / opsPerTurn);
                }
                MemorySegment.copy(source, 0, target, 0, payloadBytes);
                final long start = threads.getCurrentThreadCpuTime();
                for (int op = 0; op < opsPerTurn; op++)
                {
                    MemorySegment.copy(source, 0, target, 0, payloadBytes);
                }
                turns.get(builds).add((threads.getCurrentThreadCpuTime() - start) / opsPerTurn);
            }
        }
        final double packets = Math.max(1.0, payloadBytes / 4096.0);
        final long[] raw = summary(turns.get(builds));
        for (int i = 0; i <= builds; i++)
        {
            final long[] s = summary(turns.get(i));
            System.out.printf(Locale.ROOT, "%-50s median %9d CPU ns/op (%7.1f per 4 KiB)  smallest %9d (%7.1f)"
                + "  turns %d%s%n", i < builds ? args[3 + i] : "raw MemorySegment.copy", s[0], s[0] / packets, s[1],
                s[1] / packets, s[2], i < builds ? String.format(Locale.ROOT, "  ratio to the raw copy %.3f",
                    (double)raw[0] / s[0]) : "");
        }
    }

    /** Median, smallest and count of the turns after the first quarter. */
    private static long[] summary(final List<Long> all)
    {
        final List<Long> kept = new ArrayList<>(all.subList(all.size() / 4, all.size()));
        Collections.sort(kept);
        return new long[] {kept.get(kept.size() / 2), kept.get(0), kept.size()};
    }

    /** Builds one world of {@link RdmaWriteBenchmark} from a jar; answers its {@code rdmaWrite} as {@code ()long}. */
    private static MethodHandle world(final Path jar, final int payloadBytes) throws Throwable
    {
        final URLClassLoader loader = new URLClassLoader(new URL[] {jar.toUri().toURL()},
            ClassLoader.getPlatformClassLoader());
        final Class<?> type = loader.loadClass(BENCHMARK);
        final Object benchmark = type.getConstructor().newInstance();
        type.getField("payloadBytes").setInt(benchmark, payloadBytes);
        type.getField("mrPageBytes").setInt(benchmark, 4096);
        type.getMethod("prepare", String.class).invoke(benchmark, "rdmaWrite");
        return MethodHandles.publicLookup().findVirtual(type, "rdmaWrite", MethodType.methodType(long.class))
            .bindTo(benchmark);
    }
}
