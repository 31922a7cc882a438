package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The simulated cost of data that crosses a NIC-GPU peer-to-peer path: every figure derived from {@link CostModel}
 * (operationNs, peerToPeerNs, gpuCopyNs) and the cache misses the trace reports; a GPU across sockets (SYS) costs
 * more than one on the NIC's switch (PIX) for the same transfer; PIX peer to peer beats bouncing through host memory
 * (cudaMemcpy, host WRITE, cudaMemcpy), and SYS peer to peer loses to it for large transfers.
 */
class PeerToPeerCostTest
{
    private static final int KIB = 1024;
    private static final int MIB = 1024 * KIB;
    private static final Set<Access> RW = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);

    /** Two connected hosts, each with one GPU on the given path, a trace of every span. */
    private static final class Rig
    {
        final RuleRig rig;
        final SimGpu gpuA;
        final SimGpu gpuB;
        final List<TraceEvent> trace = new ArrayList<>();

        Rig(final DeviceProfile profile, final GpuTopology topologyA, final GpuTopology topologyB)
        {
            rig = RuleRig.connected(profile, RuleRig.ALL_REMOTE);
            rig.processA().capIpcLock(true);
            rig.processB().capIpcLock(true);
            gpuA = rig.deviceA.host().addGpu("gpuA", 256L * MIB, SimGpu.DEFAULT_BAR1_BYTES, topologyA);
            gpuB = rig.deviceB.host().addGpu("gpuB", 256L * MIB, SimGpu.DEFAULT_BAR1_BYTES, topologyB);
            rig.fabric.addTraceListener(trace::add);
        }

        CostModel costs()
        {
            return rig.fabric.costModel();
        }

        double linkGbps()
        {
            return Math.min(rig.deviceA.profile().linkGbps(), rig.deviceB.profile().linkGbps());
        }

        long now()
        {
            return rig.fabric.clock().nowNs();
        }

        /** A dma-buf MR over a whole fresh buffer of {@code gpu}, addressed from iova 0x4000_0000. */
        MemoryRegion gpuMr(final SimGpu gpu, final int bytes)
        {
            final GpuBuffer b = gpu.allocate(bytes);
            final int fd = gpu.exportDmabuf(b, 0, b.sizeBytes());
            final RuleRig r = rig;
            return (gpu == gpuA ? r.pdA : r.pdB).regDmabufMr(0, bytes, 0x4000_0000L, fd, RW);
        }

        MemoryRegion hostMrA(final int bytes)
        {
            return rig.pdA.regMr(rig.bufferA(bytes), bytes, RuleRig.REMOTE_ALL);
        }

        MemoryRegion hostMrB(final int bytes)
        {
            return rig.pdB.regMr(rig.bufferB(bytes), bytes, RuleRig.REMOTE_ALL);
        }

        /** Posts one work request on a's QP, polls it, and returns the span of its execution. */
        TraceEvent run(final SendWr wr)
        {
            final int from = trace.size();
            final long start = now();
            rig.qpA.postSend(wr);
            final List<WorkCompletion> wcs = rig.pollA();
            assertThat(wcs).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
            final TraceEvent span = trace.subList(from, trace.size()).stream()
                .filter(t -> t.category().equals("dma") && t.name().equals(wr.opcode().name()))
                .findFirst().orElseThrow();
            assertThat(now() - start).as("the clock advances by the work request's span")
                .isEqualTo(span.durationNs());
            return span;
        }

        /** What {@link CostModel} charges for a transfer of {@code bytes} with the span's cache misses. */
        long operationNs(final TraceEvent span, final long bytes)
        {
            return costs().operationNs(bytes, linkGbps(), ((Number)span.args().get("cache_misses")).longValue());
        }

        long p2pNs(final long bytes, final GpuTopology topology)
        {
            return costs().peerToPeerNs(bytes, linkGbps(), topology);
        }
    }

    private static SendWr write(final MemoryRegion from, final long fromAddr, final MemoryRegion to,
        final long toAddr, final int bytes)
    {
        return SendWr.write(1, List.of(new Sge(fromAddr, bytes, from.lkey())), toAddr, to.rkey());
    }

    // ------------------------------------------------------------------ pricing from CostModel

    @ParameterizedTest
    @EnumSource(GpuTopology.class)
    void aWriteIntoVramCostsTheOperationPlusThePathsPeerToPeerTime(final GpuTopology topology)
    {
        final Rig r = new Rig(DeviceProfiles.connectx5(), GpuTopology.PIX, topology);
        final int n = MIB;
        final MemoryRegion src = r.hostMrA(n);
        final MemoryRegion dst = r.gpuMr(r.gpuB, n);

        final TraceEvent span = r.run(write(src, src.addr(), dst, dst.iova(), n));

        assertThat(span.durationNs()).isEqualTo(r.operationNs(span, n) + r.p2pNs(n, topology));
        assertThat(span.args()).containsEntry("p2p_gpuB", topology.name());
        assertThat(r.p2pNs(n, topology) > 0).as("only SYS crosses sockets").isEqualTo(topology == GpuTopology.SYS);
    }

    @ParameterizedTest
    @EnumSource(GpuTopology.class)
    void aReadOfVramAndAWriteFromVramPayThePathToo(final GpuTopology topology)
    {
        final Rig r = new Rig(DeviceProfiles.connectx5(), topology, topology);
        final int n = 512 * KIB;
        final MemoryRegion remoteGpu = r.gpuMr(r.gpuB, n);
        final MemoryRegion localHost = r.hostMrA(n);
        final MemoryRegion localGpu = r.gpuMr(r.gpuA, n);
        final MemoryRegion remoteHost = r.hostMrB(n);

        final TraceEvent read = r.run(SendWr.read(1, List.of(new Sge(localHost.addr(), n, localHost.lkey())),
            remoteGpu.iova(), remoteGpu.rkey()));
        final TraceEvent fromGpu = r.run(write(localGpu, localGpu.iova(), remoteHost, remoteHost.addr(), n));

        assertThat(read.durationNs()).isEqualTo(r.operationNs(read, n) + r.p2pNs(n, topology));
        assertThat(fromGpu.durationNs()).isEqualTo(r.operationNs(fromGpu, n) + r.p2pNs(n, topology));
        assertThat(fromGpu.args()).containsEntry("p2p_gpuA", topology.name());
    }

    @Test
    void aHostToHostWriteHasNoPeerToPeerTime()
    {
        final Rig r = new Rig(DeviceProfiles.connectx5(), GpuTopology.SYS, GpuTopology.SYS);
        final int n = MIB;
        final MemoryRegion src = r.hostMrA(n);
        final MemoryRegion dst = r.hostMrB(n);

        final TraceEvent span = r.run(write(src, src.addr(), dst, dst.addr(), n));

        assertThat(span.durationNs()).isEqualTo(r.operationNs(span, n));
        assertThat(span.args().keySet()).noneMatch(k -> k.startsWith("p2p_"));
    }

    @Test
    void aPeerMemoryMrPaysThePathLikeADmabufMr()
    {
        final Rig r = new Rig(DeviceProfiles.connectx5(), GpuTopology.PIX, GpuTopology.SYS);
        r.rig.deviceB.host().peerMemoryClient(true);
        final int n = MIB;
        final GpuBuffer buf = r.gpuB.allocate(n);
        final MemoryRegion dst = r.rig.pdB.regMr(buf.gpuVa(), n, RW);
        final MemoryRegion src = r.hostMrA(n);

        final TraceEvent span = r.run(write(src, src.addr(), dst, buf.gpuVa(), n));

        assertThat(span.durationNs()).isEqualTo(r.operationNs(span, n) + r.p2pNs(n, GpuTopology.SYS));
    }

    @Test
    void aTopologyChangeRepricesTheNextTransfer()
    {
        final Rig r = new Rig(DeviceProfiles.connectx5(), GpuTopology.PIX, GpuTopology.PIX);
        final int n = MIB;
        final MemoryRegion src = r.hostMrA(n);
        final MemoryRegion dst = r.gpuMr(r.gpuB, n);
        final TraceEvent pix = r.run(write(src, src.addr(), dst, dst.iova(), n));

        r.gpuB.topology(GpuTopology.SYS);
        final TraceEvent sys = r.run(write(src, src.addr(), dst, dst.iova(), n));

        assertThat(pix.durationNs()).isEqualTo(r.operationNs(pix, n));
        assertThat(sys.durationNs()).isEqualTo(r.operationNs(sys, n) + r.p2pNs(n, GpuTopology.SYS));
    }

    // ------------------------------------------------------------------ SYS against PIX

    /** Clock time of a GPU-to-GPU WRITE of {@code n} bytes with both GPUs on {@code topology}. */
    private static long gpuToGpu(final DeviceProfile profile, final GpuTopology topology, final int n,
        final Consumer<Long> expectedCheck)
    {
        final Rig r = new Rig(profile, topology, topology);
        final MemoryRegion src = r.gpuMr(r.gpuA, n);
        final MemoryRegion dst = r.gpuMr(r.gpuB, n);
        r.gpuA.write(r.gpuA.buffers().get(0).gpuVa(), RuleRig.pattern(n, 3));
        final long start = r.now();

        final TraceEvent span = r.run(write(src, src.iova(), dst, dst.iova(), n));

        final long took = r.now() - start;
        assertThat(took).isEqualTo(r.operationNs(span, n) + r.p2pNs(n, topology));
        assertThat(Arrays.mismatch(r.gpuB.read(r.gpuB.buffers().get(0).gpuVa(), n), RuleRig.pattern(n, 3)))
            .as("first differing byte").isEqualTo(-1);
        expectedCheck.accept(took);
        return took;
    }

    @Test
    void sysCostsMoreThanPixForTheSameTransferByTheCrossSocketTime()
    {
        final int n = 4 * MIB;
        final CostModel costs = CostModel.defaults();
        final double link = DeviceProfiles.connectx5().linkGbps();

        final long pix = gpuToGpu(DeviceProfiles.connectx5(), GpuTopology.PIX, n, t -> { });
        final long sys = gpuToGpu(DeviceProfiles.connectx5(), GpuTopology.SYS, n, t -> { });

        assertThat(sys).isGreaterThan(pix);
        assertThat(sys - pix).isEqualTo(costs.peerToPeerNs(n, link, GpuTopology.SYS));
        for (final GpuTopology t : List.of(GpuTopology.PXB, GpuTopology.PHB, GpuTopology.NODE))
        {
            assertThat(gpuToGpu(DeviceProfiles.connectx5(), t, n, x -> { })).as(t.name()).isEqualTo(pix);
        }
    }

    @Test
    void theCrossSocketTimeGrowsWithTheTransfer()
    {
        final CostModel costs = CostModel.defaults();
        long previous = 0;
        for (final long bytes : new long[] {4096, 64 * KIB, MIB, 64L * MIB, 1L << 30})
        {
            final long sys = costs.peerToPeerNs(bytes, 100.0, GpuTopology.SYS);
            assertThat(sys).isGreaterThan(previous);
            assertThat(costs.peerToPeerNs(bytes, 100.0, GpuTopology.PIX)).isZero();
            previous = sys;
        }
    }

    // ------------------------------------------------------------------ peer to peer against the bounce path

    /** Clock time of GPU a to GPU b through host memory: cudaMemcpy D2H, host WRITE, cudaMemcpy H2D. */
    private static long bounce(final DeviceProfile profile, final int n)
    {
        final Rig r = new Rig(profile, GpuTopology.PIX, GpuTopology.PIX);
        final GpuBuffer src = r.gpuA.allocate(n);
        final GpuBuffer dst = r.gpuB.allocate(n);
        final MemoryRegion hostA = r.hostMrA(n);
        final MemoryRegion hostB = r.hostMrB(n);
        r.gpuA.write(src.gpuVa(), RuleRig.pattern(n, 3));
        final long start = r.now();

        r.gpuA.copyToHost(src.gpuVa(), r.rig.processA(), hostA.addr(), n);
        final TraceEvent span = r.run(write(hostA, hostA.addr(), hostB, hostB.addr(), n));
        r.gpuB.copyFromHost(r.rig.processB(), hostB.addr(), dst.gpuVa(), n);

        final long took = r.now() - start;
        assertThat(took).isEqualTo(2 * r.costs().gpuCopyNs(n) + r.operationNs(span, n));
        assertThat(Arrays.mismatch(r.gpuB.read(dst.gpuVa(), n), RuleRig.pattern(n, 3))).as("first differing byte")
            .isEqualTo(-1);
        return took;
    }

    @Test
    void pixPeerToPeerIsCheaperThanTheBouncePath()
    {
        for (final int n : new int[] {64 * KIB, MIB, 16 * MIB})
        {
            final long p2p = gpuToGpu(DeviceProfiles.connectx5(), GpuTopology.PIX, n, t -> { });
            assertThat(p2p).as(n + " bytes").isLessThan(bounce(DeviceProfiles.connectx5(), n));
        }
    }

    /** Clock time of a GPU-to-GPU WRITE through peer-memory MRs, both GPUs across sockets (any provider). */
    private static long sysPeerToPeer(final DeviceProfile profile, final int n)
    {
        return peerMemoryGpuToGpu(profile, GpuTopology.SYS, n);
    }

    /** Clock time of a GPU-to-GPU WRITE through peer-memory MRs, both GPUs on {@code topology}. */
    private static long peerMemoryGpuToGpu(final DeviceProfile profile, final GpuTopology topology, final int n)
    {
        final Rig r = new Rig(profile, topology, topology);
        r.rig.deviceA.host().peerMemoryClient(true);
        r.rig.deviceB.host().peerMemoryClient(true);
        final GpuBuffer src = r.gpuA.allocate(n);
        final GpuBuffer dst = r.gpuB.allocate(n);
        final MemoryRegion srcMr = r.rig.pdA.regMr(src.gpuVa(), n, RW);
        final MemoryRegion dstMr = r.rig.pdB.regMr(dst.gpuVa(), n, RW);
        final long start = r.now();

        final TraceEvent span = r.run(write(srcMr, src.gpuVa(), dstMr, dst.gpuVa(), n));

        final long took = r.now() - start;
        assertThat(took).isEqualTo(r.operationNs(span, n) + r.p2pNs(n, topology));
        return took;
    }

    @Test
    void sysPeerToPeerCostsMoreThanTheBouncePathForLargeTransfersOnASlowLink()
    {
        final DeviceProfile rxe = DeviceProfiles.rxe();
        assertThat(rxe.linkGbps()).isEqualTo(10.0);

        assertThat(sysPeerToPeer(rxe, 16 * MIB)).isGreaterThan(bounce(rxe, 16 * MIB));
    }

    /**
     * Clock time of GPU a to GPU b staged through host memory in {@code chunk}-byte pieces, pipelined as NCCL's and
     * UCX's staging protocols do: each stage (cudaMemcpy D2H, host WRITE, cudaMemcpy H2D) of one chunk is run on the
     * simulator and timed, once to warm the staging buffers' translations (they are reused for every chunk) and once
     * measured; then the pipeline takes the three stages of the first chunk plus the slowest stage for every further
     * chunk.
     */
    private static long pipelinedBounce(final DeviceProfile profile, final int n, final int chunk)
    {
        final Rig r = new Rig(profile, GpuTopology.PIX, GpuTopology.PIX);
        final GpuBuffer src = r.gpuA.allocate(n);
        final GpuBuffer dst = r.gpuB.allocate(n);
        final MemoryRegion hostA = r.hostMrA(chunk);
        final MemoryRegion hostB = r.hostMrB(chunk);
        r.run(write(hostA, hostA.addr(), hostB, hostB.addr(), chunk));
        final long t0 = r.now();
        r.gpuA.copyToHost(src.gpuVa(), r.rig.processA(), hostA.addr(), chunk);
        final long t1 = r.now();
        r.run(write(hostA, hostA.addr(), hostB, hostB.addr(), chunk));
        final long t2 = r.now();
        r.gpuB.copyFromHost(r.rig.processB(), hostB.addr(), dst.gpuVa(), chunk);
        final long t3 = r.now();
        final long slowest = Math.max(t1 - t0, Math.max(t2 - t1, t3 - t2));
        return (t3 - t0) + (long)(n / chunk - 1) * slowest;
    }

    @Test
    void sysPeerToPeerCostsMoreThanAPipelinedBounceForLargeTransfersWhilePixCostsLess()
    {
        final DeviceProfile cx5 = DeviceProfiles.connectx5();
        final long bounce = pipelinedBounce(cx5, 16 * MIB, MIB);
        final long sys = sysPeerToPeer(cx5, 16 * MIB);
        final long pix = peerMemoryGpuToGpu(cx5, GpuTopology.PIX, 16 * MIB);
        System.out.println("16 MiB GPU to GPU at 100 Gbit/s: PIX " + pix + " ns, SYS " + sys + " ns, pipelined bounce "
            + bounce + " ns");

        assertThat(sys).isGreaterThan(bounce);
        assertThat(pix).isLessThan(bounce);
    }

    @Test
    void cudaMemcpyAdvancesTheClockByGpuCopyNsAndIsTracedAsGpuWork()
    {
        final Rig r = new Rig(DeviceProfiles.connectx5(), GpuTopology.PIX, GpuTopology.PIX);
        final GpuBuffer buf = r.gpuB.allocate(MIB);
        final long host = r.rig.bufferB(MIB);
        final int from = r.trace.size();

        final long t0 = r.now();
        r.gpuB.copyFromHost(r.rig.processB(), host, buf.gpuVa(), 300_000);
        final long t1 = r.now();
        r.gpuB.copyToHost(buf.gpuVa(), r.rig.processB(), host, 5);
        final long t2 = r.now();

        assertThat(t1 - t0).isEqualTo(r.costs().gpuCopyNs(300_000));
        assertThat(t2 - t1).isEqualTo(r.costs().gpuCopyNs(5));
        assertThat(r.trace.subList(from, r.trace.size())).extracting(TraceEvent::name, TraceEvent::category,
            TraceEvent::device, TraceEvent::durationNs).containsExactly(
                org.assertj.core.groups.Tuple.tuple("cudaMemcpy H2D", "gpu", "gpuB", r.costs().gpuCopyNs(300_000)),
                org.assertj.core.groups.Tuple.tuple("cudaMemcpy D2H", "gpu", "gpuB", r.costs().gpuCopyNs(5)));
    }

    // ------------------------------------------------------------------ data placed into VRAM by other opcodes

    @Test
    void aWriteWithImmIntoVramPaysThePathLikeAWrite()
    {
        final Rig r = new Rig(DeviceProfiles.connectx5(), GpuTopology.PIX, GpuTopology.SYS);
        final int n = 256 * KIB;
        final MemoryRegion src = r.hostMrA(n);
        final MemoryRegion dst = r.gpuMr(r.gpuB, n);
        final MemoryRegion recv = r.hostMrB(4096);
        r.rig.qpB.postRecv(RecvWr.of(7, new Sge(recv.addr(), 4096, recv.lkey())));

        final TraceEvent span = r.run(SendWr.writeWithImm(1, List.of(new Sge(src.addr(), n, src.lkey())), dst.iova(),
            dst.rkey(), 42));

        assertThat(span.durationNs()).isEqualTo(r.operationNs(span, n) + r.p2pNs(n, GpuTopology.SYS));
    }

    @Test
    void aSendIntoAVramReceiveBufferPaysThePath()
    {
        final Rig r = new Rig(DeviceProfiles.connectx5(), GpuTopology.PIX, GpuTopology.SYS);
        final int n = 256 * KIB;
        final MemoryRegion src = r.hostMrA(n);
        final MemoryRegion dst = r.gpuMr(r.gpuB, n);
        r.rig.qpB.postRecv(RecvWr.of(7, new Sge(dst.iova(), n, dst.lkey())));

        final TraceEvent span = r.run(SendWr.send(1, List.of(new Sge(src.addr(), n, src.lkey()))));

        assertThat(span.durationNs()).isEqualTo(r.operationNs(span, n) + r.p2pNs(n, GpuTopology.SYS));
    }

    @Test
    void aGatherListWithAVramSgeAfterAHostSgePaysThePath()
    {
        final int n = 256 * KIB;
        final long[] took = new long[2];
        for (final GpuTopology t : new GpuTopology[] {GpuTopology.PIX, GpuTopology.SYS})
        {
            final Rig r = new Rig(DeviceProfiles.connectx5(), t, GpuTopology.PIX);
            final MemoryRegion host = r.hostMrA(n);
            final MemoryRegion gpu = r.gpuMr(r.gpuA, n);
            final MemoryRegion dst = r.hostMrB(2 * n);
            took[t == GpuTopology.PIX ? 0 : 1] = r.run(SendWr.write(1, List.of(new Sge(host.addr(), n, host.lkey()),
                new Sge(gpu.iova(), n, gpu.lkey())), dst.addr(), dst.rkey())).durationNs();
        }

        assertThat(took[1]).isGreaterThan(took[0]);
    }
}
