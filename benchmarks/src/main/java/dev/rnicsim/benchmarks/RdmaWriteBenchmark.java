package dev.rnicsim.benchmarks;

import dev.rnicsim.mtt.TranslationCache;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * RDMA WRITE through the whole simulated stack (verbs post, QP execution, DMA engine key checks and translation
 * through both devices' translation caches and MTTs, the copy between the two hosts' physical memories, cost model,
 * counters, completion), with a warm translation cache, beside a raw {@link MemorySegment#copy} of the same size
 * between two native segments, all in one JMH run.
 *
 * <p><b>Set-up.</b> A {@link SimFabric} with two hosts (default {@link HostConfig}), a
 * {@link DeviceProfiles#connectx5()} device in each, opened by one process per host (with CAP_IPC_LOCK, so
 * RLIMIT_MEMLOCK does not limit the pins). On each side: a PD, a CQ of 1024 entries and an RC QP; the two QPs are
 * connected, the responder with REMOTE_WRITE. A {@value #BUFFER_BYTES}-byte source buffer on host A and target
 * buffer on host B ({@link Backing#BASE_PAGES}), both written once with non-zero bytes so every frame holds data,
 * registered as MRs (source LOCAL_WRITE; target LOCAL_WRITE and REMOTE_WRITE). The work request, one SGE of
 * {@code payloadBytes} at the start of the source written at the start of the target, is built once. Set-up posts
 * it a few times (which warms the translation caches), checks that it completes with SUCCESS and that the target
 * then holds the source's bytes; teardown checks that no translation missed the cache during the trial.
 *
 * <p><b>Parameters.</b> {@code payloadBytes}: 64 (one cache line: the cost of the stack itself) and 1048576
 * (1 MiB: 256 pages of 4 KiB, where the copy should dominate).
 *
 * <p><b>Benchmarks.</b>
 * <ul>
 *   <li>{@link #rdmaWrite}: one signalled {@code postSend} of the prebuilt RDMA WRITE, then one {@code poll} of the
 *       CQ, which must return exactly its completion with status SUCCESS (anything else throws, so a failure is
 *       never measured). The post only queues the WQE; the poll drives the NIC engine, which moves the message
 *       as packets of the path MTU (256 of 4 KiB for 1 MiB) and writes the completion (docs/async.md).</li>
 *   <li>{@link #baselineSegmentCopy}: {@code MemorySegment.copy} of {@code payloadBytes} between two native
 *       segments of {@value #BUFFER_BYTES} bytes (page aligned, written once like the buffers above): the floor a
 *       pure-Java copy of the same bytes reaches on this machine.</li>
 * </ul>
 *
 * <p><b>Unit.</b> Every score is <em>operations per second</em> (one WRITE with its completion, or one copy), on
 * one thread. To get bandwidth, multiply by the payload: {@code GB/s = score * payloadBytes / 1e9} (for 1 MiB,
 * {@code score * 1048576 / 1e9}; divide by 2^30 instead of 1e9 for GiB/s). As both benchmarks move the same bytes
 * per operation, {@code rdmaWrite / baselineSegmentCopy} at the same {@code payloadBytes} is the bandwidth ratio.
 * The project's targets: at 1 MiB, at least 0.6 of the baseline; at 64 B, at least 3,000,000 ops/s on one thread.
 * {@code bin/bench targets} ({@link Targets}) runs this class with the {@link CpuTimeProfiler} and prints both as
 * ratios, by the wall clock and by CPU time per operation.
 *
 * <p><b>Running</b> (about 40 seconds with the defaults):
 * <pre>
 * mvn -pl benchmarks -am package -DskipTests
 * java -jar benchmarks/target/benchmarks.jar RdmaWriteBenchmark            # 1 fork, 3 x 1 s warm-up, 5 x 1 s
 * java -jar benchmarks/target/benchmarks.jar RdmaWriteBenchmark -p payloadBytes=64 -prof gc
 * bin/bench RdmaWriteBenchmark.rdmaWrite -prof stack
 * bin/bench targets -f 1 -wi 3 -i 5                                        # the targets table
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 1, timeUnit = TimeUnit.SECONDS)
public class RdmaWriteBenchmark
{
    /** Bytes of the source and target buffers (and of the baseline's segments): 2 MiB. */
    public static final long BUFFER_BYTES = 2L << 20;
    /** Entries asked for each CQ. */
    public static final int CQ_ENTRIES = 1024;

    /** Most completions taken by one poll; one operation produces exactly one. */
    private static final int POLL_BATCH = 16;
    /** Work requests posted in set-up before the check: they bring every page the WRITE touches into the caches. */
    private static final int WARM_WRITES = 4;

    /** Bytes written by one operation: {@code 64} or {@code 1048576} (any value up to {@value #BUFFER_BYTES}). */
    @Param({"64", "1048576"})
    public int payloadBytes;

    private String benchmark;
    private SimFabric fabric;
    private SimDevice deviceA;
    private SimDevice deviceB;
    private SimContext contextA;
    private SimContext contextB;
    private QueuePair qpA;
    private CompletionQueue cqA;
    private SendWr write;
    private int sourceKey;
    private int targetKey;
    private long missesAtStart;

    private Arena arena;
    private MemorySegment baselineSource;
    private MemorySegment baselineTarget;

    /**
     * Builds the two hosts and their verbs objects, or the baseline's segments, and checks the path once.
     *
     * @param params the benchmark being run.
     */
    @Setup(Level.Trial)
    public void setUp(final BenchmarkParams params)
    {
        final String name = params.getBenchmark();
        benchmark = name.substring(name.lastIndexOf('.') + 1);
        if (payloadBytes <= 0 || payloadBytes > BUFFER_BYTES)
        {
            throw new IllegalArgumentException("payloadBytes=" + payloadBytes + " must be 1.." + BUFFER_BYTES);
        }
        final byte[] pattern = pattern();
        if (benchmark.equals("baselineSegmentCopy"))
        {
            arena = Arena.ofShared();
            baselineSource = arena.allocate(BUFFER_BYTES, 4096);
            baselineTarget = arena.allocate(BUFFER_BYTES, 4096);
            MemorySegment.copy(pattern, 0, baselineSource, ValueLayout.JAVA_BYTE, 0, pattern.length);
            baselineTarget.fill((byte)1);
            baselineSegmentCopy();
            if (baselineTarget.asSlice(0, payloadBytes).mismatch(baselineSource.asSlice(0, payloadBytes)) != -1)
            {
                throw new IllegalStateException("the baseline copy did not copy");
            }
            return;
        }

        fabric = new SimFabric();
        final SimHost hostA = fabric.addHost("a", HostConfig.builder().build());
        final SimHost hostB = fabric.addHost("b", HostConfig.builder().build());
        deviceA = hostA.addDevice("sim:a/mlx5_0", DeviceProfiles.connectx5());
        deviceB = hostB.addDevice("sim:b/mlx5_0", DeviceProfiles.connectx5());
        contextA = deviceA.open(hostA.host().spawn("writer").capIpcLock(true));
        contextB = deviceB.open(hostB.host().spawn("target").capIpcLock(true));
        final ProtectionDomain pdA = contextA.allocPd();
        final ProtectionDomain pdB = contextB.allocPd();
        cqA = contextA.createCq(CQ_ENTRIES);
        final CompletionQueue cqB = contextB.createCq(CQ_ENTRIES);
        qpA = pdA.createQp(QpInitAttr.rc(cqA));
        final QueuePair qpB = pdB.createQp(QpInitAttr.rc(cqB));
        qpA.connect(qpB.address(), EnumSet.noneOf(Access.class));
        qpB.connect(qpA.address(), EnumSet.of(Access.REMOTE_WRITE));

        final long source = contextA.memory().allocate(BUFFER_BYTES, Backing.BASE_PAGES);
        final long target = contextB.memory().allocate(BUFFER_BYTES, Backing.BASE_PAGES);
        contextA.memory().write(source, pattern);
        final byte[] ones = new byte[(int)BUFFER_BYTES];
        Arrays.fill(ones, (byte)1);
        contextB.memory().write(target, ones);
        final MemoryRegion sourceMr = pdA.regMr(source, BUFFER_BYTES, EnumSet.of(Access.LOCAL_WRITE));
        final MemoryRegion targetMr = pdB.regMr(target, BUFFER_BYTES,
            EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
        sourceKey = sourceMr.lkey();
        targetKey = targetMr.rkey();
        write = SendWr.write(1, List.of(new Sge(source, payloadBytes, sourceKey)), target, targetKey);

        for (int i = 0; i < WARM_WRITES; i++)
        {
            qpA.postSend(write);
            final List<WorkCompletion> wcs = cqA.poll(POLL_BATCH);
            if (wcs.size() != 1 || wcs.get(0).status() != WcStatus.SUCCESS || wcs.get(0).byteLen() != payloadBytes)
            {
                throw new IllegalStateException("set-up write " + i + " completed with " + wcs);
            }
        }
        final byte[] landed = contextB.memory().read(target, payloadBytes);
        if (!Arrays.equals(landed, 0, payloadBytes, pattern, 0, payloadBytes))
        {
            throw new IllegalStateException("the target does not hold the source's bytes after the write");
        }
        missesAtStart = misses();
    }

    /** Non-zero bytes for the source: {@code 1 + i % 251}, so every 4 KiB page differs from its neighbours. */
    private static byte[] pattern()
    {
        final byte[] b = new byte[(int)BUFFER_BYTES];
        for (int i = 0; i < b.length; i++)
        {
            b[i] = (byte)(1 + i % 251);
        }
        return b;
    }

    private long misses()
    {
        return deviceA.tables().cache().misses() + deviceB.tables().cache().misses();
    }

    /** Checks that the measured writes never missed the translation caches, prints their counts, frees everything. */
    @TearDown(Level.Trial)
    public void tearDown()
    {
        if (arena != null)
        {
            arena.close();
            arena = null;
            return;
        }
        if (fabric == null)
        {
            return;
        }
        final long misses = misses() - missesAtStart;
        final TranslationCache a = deviceA.tables().cache();
        final TranslationCache b = deviceB.tables().cache();
        System.out.printf(Locale.ROOT, "%nNOTE: %s payloadBytes=%d: %d writes on the DMA engine, %d translations;"
            + " MR pages of %d bytes (source) and %d bytes (target); translation cache hits %d + %d, misses after"
            + " warm-up %d; simulated clock %.3f s%n", benchmark, payloadBytes, deviceA.dmaEngine().operations(),
            deviceA.dmaEngine().translations(), 1L << deviceA.tables().mpt().entry(sourceKey).pageShift(),
            1L << deviceB.tables().mpt().entry(targetKey).pageShift(), a.hits(), b.hits(), misses,
            fabric.clock().nowNs() / 1e9);
        contextA.close();
        contextB.close();
        fabric = null;
        if (misses != 0)
        {
            throw new IllegalStateException("rdmaWrite missed the translation cache " + misses + " times: the"
                + " cache was not warm");
        }
    }

    /**
     * One signalled RDMA WRITE of {@code payloadBytes} from host A to host B, and the poll that takes its
     * completion.
     *
     * @return the bytes the completion reports.
     */
    @Benchmark
    public long rdmaWrite()
    {
        qpA.postSend(write);
        final List<WorkCompletion> wcs = cqA.poll(POLL_BATCH);
        if (wcs.size() != 1)
        {
            throw new IllegalStateException("one write gave " + wcs.size() + " completions: " + wcs);
        }
        final WorkCompletion wc = wcs.get(0);
        if (wc.status() != WcStatus.SUCCESS)
        {
            throw new IllegalStateException("write completed with " + wc);
        }
        return wc.byteLen();
    }

    /** Baseline: one {@code MemorySegment.copy} of {@code payloadBytes} between two native segments. */
    @Benchmark
    public void baselineSegmentCopy()
    {
        MemorySegment.copy(baselineSource, 0, baselineTarget, 0, payloadBytes);
    }
}
