package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.pagetable.Madvice;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * ODP MRs, dma-buf MRs and relaxed-ordering MRs move as packets like pinned memory: each packet takes the page
 * faults of the pages it touches (a responder fault is an RNR NAK and the packet is sent again; a requester fault
 * stalls the requester), and a dereg, munmap or move in the middle of a message leaves the packets before it placed.
 */
class EngineOdpPacketsTest
{
    private static final int MTU = SimQp.PATH_MTU_BYTES;
    private static final int PACKETS = 8;
    private static final int N = PACKETS * MTU;
    private static final Set<Access> ODP_RW = OdpRig.ODP_RW;

    /** An ODP target of N bytes on b, untouched, and N pattern bytes in a's scratch buffer. */
    private record OdpWrite(OdpRig rig, long buf, SimOdpMr mr, byte[] data)
    {
        static OdpWrite posted()
        {
            final OdpRig rig = OdpRig.connectx5();
            final long buf = rig.bufferB(N);
            final SimOdpMr mr = rig.odpB(buf, N, ODP_RW);
            final byte[] data = RuleRig.pattern(N, 31);
            rig.processA().write(rig.scratch, data);
            rig.qpA.postSend(SendWr.write(1, List.of(new Sge(rig.scratch, N, rig.scratchMr.lkey())), buf,
                mr.rkey()));
            return new OdpWrite(rig, buf, mr, data);
        }

        SimQp requester()
        {
            return (SimQp)rig.qpA;
        }

        byte[] target()
        {
            return rig.processB().read(buf, N);
        }

        WcStatus poll()
        {
            final List<WorkCompletion> wcs = rig.cqA.poll(4);
            assertThat(wcs).hasSize(1);
            return wcs.get(0).status();
        }
    }

    @Test
    void aWriteIntoUntouchedOdpMemoryIsRnrNakedAtItsFirstPacketThenMovesPacketByPacket()
    {
        final OdpWrite w = OdpWrite.posted();

        assertThat(w.rig().fabric.progress(1)).isEqualTo(1);

        // The first packet met the fault: RNR NAK, nothing placed; the fault mapped the whole data segment.
        assertThat(w.rig().counterB(SimCounter.ODP_RNR_NAKS)).isGreaterThanOrEqualTo(1);
        assertThat(w.mr().pageFaults()).isEqualTo(1);
        assertThat(w.requester().inflight().packetsPlaced()).isZero();
        assertThat(w.rig().fabric.progress(3)).isEqualTo(3);
        assertThat(w.requester().inflight().packetsPlaced()).isEqualTo(3);
        assertThat(Arrays.copyOf(w.target(), 3 * MTU)).isEqualTo(Arrays.copyOf(w.data(), 3 * MTU));
        assertThat(Arrays.copyOfRange(w.target(), 3 * MTU, N)).containsOnly(0);
        assertThat(w.poll()).isEqualTo(WcStatus.SUCCESS);
        assertThat(w.target()).isEqualTo(w.data());
        assertThat(w.mr().pageFaults()).as("no later packet faulted").isEqualTo(1);
    }

    @Test
    void eachRnrNakOfAPacketIsOneEngineStep()
    {
        // min_rnr_timer 1 (10 us): resolving the fault of eight untouched pages outlasts several timers.
        final OdpRig rig = OdpRig.connectx5(7, 1);
        final long buf = rig.bufferB(N);
        final SimOdpMr mr = rig.odpB(buf, N, ODP_RW);
        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(rig.scratch, N, rig.scratchMr.lkey())), buf, mr.rkey()));
        final SimQp requester = (SimQp)rig.qpA;

        int steps = 0;
        while (requester.inflight() == null || requester.inflight().packetsPlaced() == 0)
        {
            assertThat(rig.fabric.progress(1)).isEqualTo(1);
            steps++;
            if (requester.inflight().packetsPlaced() == 0)
            {
                assertThat(rig.counterB(SimCounter.ODP_RNR_NAKS)).as("RNR NAKs after %d steps", steps)
                    .isEqualTo(steps);
            }
        }

        final long naks = rig.counterB(SimCounter.ODP_RNR_NAKS);
        assertThat(naks).as("NAKs before the first packet landed").isGreaterThan(1).isEqualTo(steps - 1);
        assertThat(rig.counterA(SimCounter.RNR_RETRIES)).isEqualTo(naks);
        assertThat(mr.pageFaults()).isEqualTo(1);
        assertThat(rig.cqA.poll(4)).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
    }

    @Test
    void aPageInvalidatedBetweenTwoPacketsFaultsAgainAtTheNextPacketThatNeedsItAndTheMessageGoesOn()
    {
        final OdpWrite w = OdpWrite.posted();
        w.rig().fabric.progress(3);
        assertThat(w.requester().inflight().packetsPlaced()).isEqualTo(2);
        final long naksBefore = w.rig().counterB(SimCounter.ODP_RNR_NAKS);

        // The host drops page 5 (not written yet): the notifier zaps the device's entry.
        w.rig().processB().madvise(w.buf() + 5 * MTU, MTU, Madvice.DONTNEED);
        assertThat(w.mr().deviceMapped(w.buf() + 5 * MTU)).isFalse();

        assertThat(w.poll()).isEqualTo(WcStatus.SUCCESS);
        assertThat(w.target()).isEqualTo(w.data());
        assertThat(w.mr().pageFaults()).isEqualTo(2);
        assertThat(w.rig().counterB(SimCounter.ODP_RNR_NAKS)).isGreaterThan(naksBefore);
    }

    @Test
    void munmapUnderAWriteFailsThePacketThatNeedsThePageAndKeepsThePacketsBeforeIt()
    {
        final OdpWrite w = OdpWrite.posted();
        w.rig().fabric.progress(3);

        w.rig().processB().munmap(w.buf() + 5 * MTU, MTU);

        assertThat(w.poll()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        // Packets 1-5 (pages 0-4) landed; packet 6 needed the unmapped page and its fault failed.
        assertThat(w.rig().processB().read(w.buf(), 5 * MTU)).isEqualTo(Arrays.copyOf(w.data(), 5 * MTU));
        assertThat(w.rig().processB().read(w.buf() + 6 * MTU, 2 * MTU)).containsOnly(0);
        assertThat(w.rig().counterB(SimCounter.ODP_PAGE_FAULT_FAILURES)).isEqualTo(1);
    }

    @Test
    void deregOfAnOdpTargetMidWriteKeepsThePacketsPlacedAsForPinnedMemory()
    {
        final OdpWrite w = OdpWrite.posted();
        w.rig().fabric.progress(4);
        assertThat(w.requester().inflight().packetsPlaced()).isEqualTo(3);

        w.mr().close();

        assertThat(w.poll()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(Arrays.copyOf(w.target(), 3 * MTU)).isEqualTo(Arrays.copyOf(w.data(), 3 * MTU));
        assertThat(Arrays.copyOfRange(w.target(), 3 * MTU, N)).containsOnly(0);
    }

    @Test
    void aRequesterOdpPageInvalidatedMidMessageIsFaultedAgainWithoutAnRnrNak()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long src = rig.processA().mmapAnonymous(N);
        final SimOdpMr local = (SimOdpMr)rig.pdA.regMr(src, N, ODP_RW);
        final byte[] data = RuleRig.pattern(N, 32);
        rig.processA().write(src, data);
        final long dst = rig.bufferB(N);
        final MemoryRegion pinned = rig.pdB.regMr(dst, N, RuleRig.REMOTE_ALL);
        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(src, N, local.lkey())), dst, pinned.rkey()));
        rig.fabric.progress(2);
        assertThat(local.pageFaults()).isEqualTo(1);

        // Page 6 of the source is dropped and written again by the CPU: a new frame with new bytes.
        rig.processA().madvise(src + 6 * MTU, MTU, Madvice.DONTNEED);
        final byte[] again = RuleRig.pattern(MTU, 33);
        rig.processA().write(src + 6 * MTU, again);
        System.arraycopy(again, 0, data, 6 * MTU, MTU);

        final List<WorkCompletion> wcs = rig.cqA.poll(4);
        assertThat(wcs).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(rig.processB().read(dst, N)).as("packet 7 gathered the page's new frame").isEqualTo(data);
        assertThat(local.pageFaults()).isEqualTo(2);
        assertThat(rig.counterB(SimCounter.ODP_RNR_NAKS)).as("a requester fault stalls, it is not NAKed").isZero();
    }

    @Test
    void aDmabufMrMovesAsPacketsAndAMoveMidMessageIsFaultedAgain()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final SimGpu gpu = rig.deviceB.host().addGpu("gpuB", 64L << 20, SimGpu.DEFAULT_BAR1_BYTES, GpuTopology.PIX);
        final GpuBuffer buf = gpu.allocate(N);
        final int fd = gpu.exportDmabuf(buf, 0, buf.sizeBytes());
        final MemoryRegion mr = rig.pdB.regDmabufMr(0, N, 0x4000_0000L, fd, EnumSet.of(Access.LOCAL_WRITE,
            Access.REMOTE_WRITE));
        final long src = rig.bufferA(N);
        final byte[] data = RuleRig.pattern(N, 34);
        rig.ctxA.memory().write(src, data);
        final MemoryRegion srcMr = rig.pdA.regMr(src, N, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(src, N, srcMr.lkey())), 0x4000_0000L, mr.rkey()));

        assertThat(rig.fabric.progress(3)).isEqualTo(3);
        assertThat(((SimQp)rig.qpA).inflight().packetsPlaced()).isEqualTo(3);
        assertThat(Arrays.copyOfRange(gpu.read(buf.gpuVa(), N), 3 * MTU, N)).containsOnly(0);

        // The exporter moves the buffer: move_notify zaps the MR; the next packet faults and re-maps it.
        gpu.move(buf);

        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(gpu.read(buf.gpuVa(), N)).isEqualTo(data);
        assertThat(rig.deviceB.counter(SimCounter.ODP_PAGE_FAULTS)).isEqualTo(1);
    }

    @Test
    void aDeregOfADmabufMrMidMessageLeavesPartialData()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final SimGpu gpu = rig.deviceB.host().addGpu("gpuB", 64L << 20, SimGpu.DEFAULT_BAR1_BYTES, GpuTopology.PIX);
        final GpuBuffer buf = gpu.allocate(N);
        final int fd = gpu.exportDmabuf(buf, 0, buf.sizeBytes());
        final MemoryRegion mr = rig.pdB.regDmabufMr(0, N, 0x4000_0000L, fd, EnumSet.of(Access.LOCAL_WRITE,
            Access.REMOTE_WRITE));
        final long src = rig.bufferA(N);
        final byte[] data = RuleRig.pattern(N, 35);
        rig.ctxA.memory().write(src, data);
        final MemoryRegion srcMr = rig.pdA.regMr(src, N, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(src, N, srcMr.lkey())), 0x4000_0000L, mr.rkey()));
        rig.fabric.progress(2);

        mr.close();

        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.REM_ACCESS_ERR);
        final byte[] vram = gpu.read(buf.gpuVa(), N);
        assertThat(Arrays.copyOf(vram, 2 * MTU)).isEqualTo(Arrays.copyOf(data, 2 * MTU));
        assertThat(Arrays.copyOfRange(vram, 2 * MTU, N)).containsOnly(0);
    }

    @Test
    void aRelaxedOrderingTargetMovesAsPacketsAndADeregMidMessageLeavesPartialData()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final long dst = rig.bufferB(N);
        final MemoryRegion mr = rig.pdB.regMr(dst, N, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
            Access.RELAXED_ORDERING));
        assertThat(rig.deviceB.relaxedWrites(mr.rkey())).isTrue();
        final long src = rig.bufferA(N);
        final byte[] data = RuleRig.pattern(N, 36);
        rig.ctxA.memory().write(src, data);
        final MemoryRegion srcMr = rig.pdA.regMr(src, N, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(src, N, srcMr.lkey())), dst, mr.rkey()));

        assertThat(rig.fabric.progress(3)).isEqualTo(3);
        assertThat(((SimQp)rig.qpA).inflight().packetsPlaced()).isEqualTo(3);

        // The dereg lets the writes in flight land first, then destroys the key: packet 4 is NAKed.
        mr.close();

        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.REM_ACCESS_ERR);
        final byte[] landed = rig.ctxB.memory().read(dst, N);
        assertThat(Arrays.copyOf(landed, 3 * MTU)).isEqualTo(Arrays.copyOf(data, 3 * MTU));
        assertThat(Arrays.copyOfRange(landed, 3 * MTU, N)).containsOnly(0);
    }

    @Test
    void aRelaxedOrderingWriteInPacketsCostsWhatItCostInOneStep()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final long dst = rig.bufferB(N);
        final MemoryRegion mr = rig.pdB.regMr(dst, N, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
            Access.RELAXED_ORDERING));
        final long src = rig.bufferA(N);
        final MemoryRegion srcMr = rig.pdA.regMr(src, N, RuleRig.LOCAL);
        final CostModel cost = rig.fabric.costModel();
        final double link = DeviceProfiles.connectx5().linkGbps();
        long sum = 0;
        for (int p = 0; p < PACKETS; p++)
        {
            sum += cost.packetNs((long)p * MTU, MTU, link) - cost.relaxedOrderingPacketSavingNs((long)p * MTU, MTU,
                link);
        }
        assertThat(sum).isEqualTo(cost.operationNs(N, link, 0) - cost.relaxedOrderingSavingNs(N, link));
        final long before = rig.fabric.clock().nowNs();
        final long missesBefore = rig.deviceA.tables().cache().misses() + rig.deviceB.tables().cache().misses();

        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(src, N, srcMr.lkey())), dst, mr.rkey()));
        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);

        final long misses = rig.deviceA.tables().cache().misses() + rig.deviceB.tables().cache().misses()
            - missesBefore;
        assertThat(rig.fabric.clock().nowNs() - before).isEqualTo(cost.operationNs(N, link, misses)
            - cost.relaxedOrderingSavingNs(N, link));
    }
}
