package dev.rnicsim.benchmarks;

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
import java.util.EnumSet;
import java.util.List;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * One RDMA WRITE of 64 KiB through the simulated stack as the fabric server of {@code rnicsim exec} runs perftest's
 * {@code ib_write_bw}: one host, one {@link DeviceProfiles#connectx5()} device, two processes, both MRs registered
 * with or without IBV_ACCESS_RELAXED_ORDERING. With it, the device places the WRITE as 256 chunks of 256 bytes in a
 * seeded random order (dev.rnicsim.dma.WriteOrdering); without it, as page-sized copies. The strict WRITE is the
 * baseline measured in the same run: the ratio is what relaxed ordering costs the simulator. With {@code
 * bytesElsewhere} the host's memory checks every access and moves no byte, as in the fabric server.
 *
 * <p><b>Unit.</b> Microseconds per WRITE (post, engine, completion, poll) on one thread, average time.
 *
 * <p><b>Running:</b> {@code bin/bench RelaxedWriteBenchmark} (add {@code -prof dev.rnicsim.benchmarks.CpuTimeProfiler}
 * for CPU time per operation on a busy machine).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 1, timeUnit = TimeUnit.SECONDS)
public class RelaxedWriteBenchmark
{
    /** Bytes of one WRITE (perftest's {@code -s 65536}). */
    public static final int MESSAGE_BYTES = 64 << 10;

    /** Whether both MRs ask for IBV_ACCESS_RELAXED_ORDERING. */
    @Param({"true", "false"})
    public boolean relaxedOrdering;

    /**
     * Whether the host's memory keeps the DMA's bytes (false) or only checks the accesses, as the fabric server of
     * {@code rnicsim exec} runs it, where the real bytes move between the real processes (PhysicalMemory
     * bytesElsewhere).
     */
    @Param({"false", "true"})
    public boolean bytesElsewhere;

    private QueuePair writer;
    private CompletionQueue cq;
    private SendWr write;

    /** Builds the host, the two processes' QPs and MRs, and checks one WRITE. */
    @Setup(Level.Trial)
    public void setUp()
    {
        final SimFabric fabric = new SimFabric();
        final SimHost host = fabric.addHost("host", HostConfig.builder().build());
        final SimDevice device = host.addDevice("sim:host/mlx5_0", DeviceProfiles.connectx5());
        final SimContext a = device.open(host.host().spawn("client").capIpcLock(true));
        final SimContext b = device.open(host.host().spawn("server").capIpcLock(true));
        final ProtectionDomain pdA = a.allocPd();
        final ProtectionDomain pdB = b.allocPd();
        cq = a.createCq(1024);
        writer = pdA.createQp(QpInitAttr.rc(cq));
        final QueuePair target = pdB.createQp(QpInitAttr.rc(b.createCq(1024)));
        writer.connect(target.address(), EnumSet.noneOf(Access.class));
        target.connect(writer.address(), EnumSet.of(Access.REMOTE_WRITE));
        final long source = a.memory().allocate(MESSAGE_BYTES, Backing.BASE_PAGES);
        final long dest = b.memory().allocate(MESSAGE_BYTES, Backing.BASE_PAGES);
        a.memory().write(source, new byte[MESSAGE_BYTES]);
        b.memory().write(dest, new byte[MESSAGE_BYTES]);
        final EnumSet<Access> sourceAccess = EnumSet.of(Access.LOCAL_WRITE);
        final EnumSet<Access> targetAccess = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        if (relaxedOrdering)
        {
            sourceAccess.add(Access.RELAXED_ORDERING);
            targetAccess.add(Access.RELAXED_ORDERING);
        }
        host.host().physicalMemory().bytesElsewhere(bytesElsewhere);
        final MemoryRegion sourceMr = pdA.regMr(source, MESSAGE_BYTES, sourceAccess);
        final MemoryRegion targetMr = pdB.regMr(dest, MESSAGE_BYTES, targetAccess);
        write = SendWr.write(1, List.of(new Sge(source, MESSAGE_BYTES, sourceMr.lkey())), dest, targetMr.rkey());
        rdmaWrite();
        final long reordered = device.writeOrdering().chunksReordered();
        if (relaxedOrdering != reordered > 0)
        {
            throw new IllegalStateException("relaxedOrdering=" + relaxedOrdering + " but " + reordered
                + " chunks landed out of order");
        }
    }

    /**
     * One signalled 64 KiB RDMA WRITE and the poll that takes its completion.
     *
     * @return the bytes the completion reports.
     */
    @Benchmark
    public long rdmaWrite()
    {
        writer.postSend(write);
        final List<WorkCompletion> wcs = cq.poll(16);
        if (wcs.size() != 1 || wcs.get(0).status() != WcStatus.SUCCESS)
        {
            throw new IllegalStateException("one write gave " + wcs);
        }
        return wcs.get(0).byteLen();
    }
}
