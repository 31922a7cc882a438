package dev.rnicsim.benchmarks;

import dev.rnicsim.mtt.TranslationCache;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.PhysicalMemory;
import dev.rnicsim.pagetable.UserProcess;
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
 * buffer on host B, both written once with non-zero bytes so every frame holds data, registered as MRs (source
 * LOCAL_WRITE; target LOCAL_WRITE and REMOTE_WRITE). The work request, one SGE of {@code payloadBytes} at the start
 * of the source written at the start of the target, is built once. Set-up posts it a few times (which warms the
 * translation caches), checks that it completes with SUCCESS and that the target then holds the source's bytes;
 * teardown checks that no translation missed the cache during the trial.
 *
 * <p><b>MR page size: 4 KiB, always</b> (by default; {@code mrPageBytes}). The page size of an MR is the kernel's
 * choice ({@code ib_umem_find_best_pgsz}): the largest supported size at which the iova and the DMA address agree
 * below the page size, so a buffer of 4 KiB pages whose frames happen to lie back to back from a 2 MiB boundary
 * would get 2 MiB pages and another would not, depending on what the host allocated before. To make it not depend
 * on that, the buffers are {@link Backing#BASE_PAGES} and each MR is registered with {@code ibv_reg_mr_iova} at an
 * iova that differs from its first frame's address in bit 12 (the same offset within a 4 KiB page, as the verb
 * requires): no page larger than 4 KiB can agree, so both MRs have 4 KiB pages, and a 1 MiB WRITE crosses 256 MR
 * pages on each side, one MTT entry fetched through each device's translation cache per packet. Set-up checks the
 * page size and fails otherwise. With {@code -p mrPageBytes=2097152} the buffers are
 * {@link Backing#TRANSPARENT_HUGE_PAGES} and the iova agrees with the frames below 2 MiB: 2 MiB MR pages, one MTT
 * entry per side for the whole message (the packets still move one per MTU).
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
 *   <li>{@link #baselineHostCopy}: the same set-up as {@link #rdmaWrite}, then one {@code PhysicalMemory.copy} of
 *       {@code payloadBytes} from the source buffer's frames on host A to the target buffer's frames on host B (per
 *       run of frames that lie back to back on both sides; one run here): the same bytes, between the same
 *       buffers, from the same cache state as the WRITE, without the NIC model.</li>
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

    /** The MRs' page size: {@code 4096} (256 MR pages per 1 MiB WRITE) or {@code 2097152}; see the class comment. */
    @Param({"4096"})
    public int mrPageBytes;

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

    private PhysicalMemory sourceMemory;
    private PhysicalMemory targetMemory;
    /** Runs of frames that lie back to back on both sides: source address, target address, bytes (of the payload). */
    private long[] hostRuns;

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
        prepare(name.substring(name.lastIndexOf('.') + 1));
    }

    /**
     * What {@link #setUp} does for one benchmark of this class, outside JMH ({@link Turns}): the fields
     * {@code payloadBytes} and {@code mrPageBytes} set first.
     *
     * @param benchmarkName the benchmark method's name: {@code rdmaWrite}, {@code baselineHostCopy} or
     *                      {@code baselineSegmentCopy}.
     */
    public void prepare(final String benchmarkName)
    {
        benchmark = benchmarkName;
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

        if (mrPageBytes != 4096 && mrPageBytes != 2 << 20)
        {
            throw new IllegalArgumentException("mrPageBytes=" + mrPageBytes + " must be 4096 or 2097152");
        }
        final Backing backing = mrPageBytes == 4096 ? Backing.BASE_PAGES : Backing.TRANSPARENT_HUGE_PAGES;
        final long source = contextA.memory().allocate(BUFFER_BYTES, backing);
        final long target = contextB.memory().allocate(BUFFER_BYTES, backing);
        contextA.memory().write(source, pattern);
        final byte[] ones = new byte[(int)BUFFER_BYTES];
        Arrays.fill(ones, (byte)1);
        contextB.memory().write(target, ones);
        final UserProcess processA = contextA.process();
        final UserProcess processB = contextB.process();
        final long sourceIova = iovaFor(source, processA.translate(source));
        final long targetIova = iovaFor(target, processB.translate(target));
        final MemoryRegion sourceMr = pdA.regMr(source, BUFFER_BYTES, sourceIova, EnumSet.of(Access.LOCAL_WRITE));
        final MemoryRegion targetMr = pdB.regMr(target, BUFFER_BYTES, targetIova,
            EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
        sourceKey = sourceMr.lkey();
        targetKey = targetMr.rkey();
        final long sourcePage = 1L << deviceA.tables().mpt().entry(sourceKey).pageShift();
        final long targetPage = 1L << deviceB.tables().mpt().entry(targetKey).pageShift();
        if (sourcePage != mrPageBytes || targetPage != mrPageBytes)
        {
            throw new IllegalStateException("MR pages of " + sourcePage + " and " + targetPage + " bytes, not "
                + mrPageBytes);
        }
        write = SendWr.write(1, List.of(new Sge(sourceIova, payloadBytes, sourceKey)), targetIova, targetKey);
        sourceMemory = hostA.host().physicalMemory();
        targetMemory = hostB.host().physicalMemory();
        hostRuns = runs(processA, source, processB, target, payloadBytes);
        if (benchmark.equals("baselineHostCopy"))
        {
            baselineHostCopy();
            final byte[] copied = contextB.memory().read(target, payloadBytes);
            if (!Arrays.equals(copied, 0, payloadBytes, pattern, 0, payloadBytes))
            {
                throw new IllegalStateException("the baseline copy between the hosts did not copy");
            }
        }

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

    /**
     * The iova to register a buffer at: the same offset within a 4 KiB page as its address (as
     * {@code ibv_reg_mr_iova} requires); for 4 KiB MR pages, bit 12 unlike its first frame's DMA address (so no larger
     * page can agree), else agreeing with it below {@code mrPageBytes}.
     */
    private long iovaFor(final long address, final long firstFrame)
    {
        if (mrPageBytes == 4096)
        {
            return (address & ~0x1000L) | (~firstFrame & 0x1000L);
        }
        final long above = (mrPageBytes - 1L) & ~0xfffL;
        return (address & ~above) | (firstFrame & above);
    }

    /** The runs of {@code bytes} from the two buffers' starts whose frames lie back to back on both sides. */
    private static long[] runs(final UserProcess a, final long source, final UserProcess b, final long target,
        final int bytes)
    {
        final long[] out = new long[3 * (bytes / 4096 + 2)];
        int n = 0;
        for (long done = 0; done < bytes; done += 4096)
        {
            final long s = a.translate(source + done);
            final long t = b.translate(target + done);
            final long len = Math.min(4096, bytes - done);
            if (n > 0 && out[n - 3] + out[n - 1] == s && out[n - 2] + out[n - 1] == t)
            {
                out[n - 1] += len;
            }
            else
            {
                out[n++] = s;
                out[n++] = t;
                out[n++] = len;
            }
        }
        return Arrays.copyOf(out, n);
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

    /**
     * Baseline: the WRITE's bytes copied from the source buffer's frames to the target buffer's, with
     * {@code PhysicalMemory.copy}, without the NIC model.
     */
    @Benchmark
    public void baselineHostCopy()
    {
        final long[] r = hostRuns;
        for (int i = 0; i < r.length; i += 3)
        {
            PhysicalMemory.copy(sourceMemory, r[i], targetMemory, r[i + 1], (int)r[i + 2]);
        }
    }

    /** Baseline: one {@code MemorySegment.copy} of {@code payloadBytes} between two native segments. */
    @Benchmark
    public void baselineSegmentCopy()
    {
        MemorySegment.copy(baselineSource, 0, baselineTarget, 0, payloadBytes);
    }
}
