package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MrAdvice;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Hostile input to ODP, GPU memory and the flag watch: each fails cleanly and changes nothing it should not. */
class OdpGpuHardeningTest
{
    @Test
    void cudaMallocOfNearMaxSizeMustFailNotWrap()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu g = rig.deviceB.host().addGpu("g0", 64L << 20, 1L << 20, GpuTopology.PIX);
        final Throwable t = catchThrowable(() -> g.allocate(Long.MAX_VALUE));
        assertThat(t).isInstanceOf(VerbsException.class);
        assertThat(((VerbsException)t).errnoName()).isEqualTo(dev.rnicsim.verbs.Errno.ENOMEM);
        assertThat(g.vramUsedBytes()).isZero();
        assertThat(g.allocate(64 << 10).sizeBytes()).isEqualTo(64 << 10);
    }

    @Test
    void gpuVirtualAddressesOfTwoGpusMustNotCollide()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu g0 = rig.deviceB.host().addGpu("g0", 16L << 30, 256L << 20, GpuTopology.PIX);
        final SimGpu g1 = rig.deviceB.host().addGpu("g1", 16L << 30, 256L << 20, GpuTopology.PIX);
        final GpuBuffer b1 = g1.allocate(64 << 10);
        for (int i = 0; i < 64; i++)
        {
            g0.free(g0.allocate(16L << 30));
        }
        final GpuBuffer b0 = g0.allocate(64 << 10);
        assertThat(b0.gpuVa()).isNotEqualTo(b1.gpuVa());
    }

    @Test
    void adviseWithANullSgeIsEinvalNotNpe()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(64 << 10);
        final SimOdpMr mr = rig.odpB(buf, 64 << 10, OdpRig.ODP_RW);
        final List<Sge> sgl = new ArrayList<>();
        sgl.add(new Sge(buf, 4096, mr.lkey()));
        sgl.add(null);
        assertThat(catchThrowable(() -> rig.pdB.adviseMr(MrAdvice.PREFETCH, 0, sgl)))
            .isInstanceOf(VerbsException.class);
    }

    @Test
    void implicitPrefetchOfEmptySlotsLeavesNoNotifiersWithoutChildren()
    {
        final OdpRig rig = OdpRig.connectx5();
        final SimOdpMr imr = (SimOdpMr)rig.pdB.regMr(0, -1L, OdpRig.ODP_RW);
        final int before = rig.processB().intervalNotifierCount();
        final List<Sge> sgl = new ArrayList<>();
        for (int i = 0; i < 100; i++)
        {
            sgl.add(new Sge(0x400000000L + ((long)i << 30), 4096, imr.lkey()));
        }
        rig.pdB.adviseMr(MrAdvice.PREFETCH_NO_FAULT, 0, sgl);
        assertThat(imr.implicitChildren()).isZero();
        assertThat(rig.processB().intervalNotifierCount() - before).isEqualTo(imr.implicitChildren());
    }

    @Test
    void aPollingCpuThatLostItsFlagDoesNotFailTheRemotePostSend()
    {
        final RuleRig rig = RuleRig.connected();
        final long src = rig.bufferA(4096);
        final MemoryRegion ms = rig.pdA.regMr(src, 4096, EnumSet.of(Access.LOCAL_WRITE));
        final long dst = rig.bufferB(4096);
        final MemoryRegion md = rig.pdB.regMr(dst, 4096, RuleRig.REMOTE_ALL);
        final long flag = rig.bufferB(4096);
        rig.deviceB.watchFlag(rig.processB(), flag, 1, flag, 8);
        rig.processB().munmap(flag, 4096);
        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(src, 64, ms.lkey())), dst, md.rkey()));
        assertThat(rig.pollA()).extracting(dev.rnicsim.verbs.WorkCompletion::status)
            .containsExactly(dev.rnicsim.verbs.WcStatus.SUCCESS);
    }

    @Test
    void gpuVirtualAddressesStayInsideUserSpaceAndOffTheMmapArea()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu g = rig.deviceB.host().addGpu("g0", 1L << 30, 256L << 20, GpuTopology.PIX);
        final GpuBuffer b = g.allocate(1 << 20);
        final long mapped = rig.bufferB(1 << 20);

        assertThat(b.gpuVa() + b.sizeBytes()).isLessThanOrEqualTo(dev.rnicsim.pagetable.UserProcess.TASK_SIZE);
        assertThat(rig.processB().vmaAt(b.gpuVa())).isNull();
        assertThat(rig.deviceB.host().gpuBufferAt(mapped)).isNull();
    }

    @Test
    void aWatchOfAnotherHostsProcessIsRefused()
    {
        final RuleRig rig = RuleRig.connected();
        assertThat(catchThrowable(() -> rig.deviceB.watchFlag(rig.processA(), 0, 1, 0, 8)))
            .isInstanceOf(IllegalArgumentException.class);
        assertThat(catchThrowable(() -> rig.deviceB.watchFlag(null, 0, 1, 0, 8)))
            .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void reregOfARelaxedMrLetsItsWritesInFlightLandBeforeTheOldPagesGo()
    {
        final RuleRig rig = RuleRig.connected();
        final int n = 64 << 10;
        final long src = rig.bufferA(n);
        rig.ctxA.memory().write(src, RuleRig.pattern(n, 4));
        final MemoryRegion ms = rig.pdA.regMr(src, n, EnumSet.of(Access.LOCAL_WRITE));
        final long dst = rig.bufferB(n);
        final long dst2 = rig.bufferB(n);
        final MemoryRegion md = rig.pdB.regMr(dst, n, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
            Access.RELAXED_ORDERING));
        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(src, n, ms.lkey())), dst, md.rkey())
            .withFlags(EnumSet.noneOf(dev.rnicsim.verbs.SendFlag.class)));
        rig.fabric.progressAll();
        assertThat(rig.deviceB.writeOrdering().inFlight()).isPositive();

        md.rereg(EnumSet.of(dev.rnicsim.verbs.ReregFlag.CHANGE_TRANSLATION), null, dst2, n,
            EnumSet.noneOf(Access.class));

        assertThat(rig.deviceB.writeOrdering().inFlight()).isZero();
        assertThat(rig.ctxB.memory().read(dst, n)).isEqualTo(RuleRig.pattern(n, 4));
    }

    @Test
    void aDmabufMrWhoseIovaRangeCrosses2Pow63MapsEachPageToItsOwnVram()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu g = rig.deviceB.host().addGpu("g0", 64L << 20, 1L << 20, GpuTopology.PIX);
        final GpuBuffer buf = g.allocate(64 << 10);
        final int fd = g.exportDmabuf(buf, 0, 64 << 10);
        final long iova = 0x7fff_ffff_ffff_f000L;
        final MemoryRegion mr = rig.pdB.regDmabufMr(0, 8192, iova, fd, EnumSet.of(Access.LOCAL_WRITE,
            Access.REMOTE_WRITE));
        final long src = rig.bufferA(8192);
        rig.ctxA.memory().write(src, RuleRig.pattern(8192, 6));
        final MemoryRegion ms = rig.pdA.regMr(src, 8192, EnumSet.of(Access.LOCAL_WRITE));

        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(src, 8192, ms.lkey())), iova, mr.rkey()));

        assertThat(rig.pollA()).extracting(dev.rnicsim.verbs.WorkCompletion::status)
            .containsExactly(dev.rnicsim.verbs.WcStatus.SUCCESS);
        assertThat(g.read(buf.gpuVa(), 8192)).isEqualTo(RuleRig.pattern(8192, 6));
    }

    @Test
    void aHugetlbOdpMrThatDoesNotStartOnAHugePageBoundaryIsReachable()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long huge = rig.ctxB.memory().allocate(4L << 20, dev.rnicsim.verbs.Backing.HUGETLB_2M);
        rig.ctxB.memory().write(huge + (2L << 20), new byte[] {1, 2, 3});
        final Set<Access> access = EnumSet.copyOf(OdpRig.ODP_RW);
        access.add(Access.HUGETLB);
        final SimOdpMr mr = rig.odpB(huge + (2L << 20) + 4096, 8192, access);

        assertThat(rig.write(new byte[] {9, 9}, huge + (2L << 20) + 4096, mr.rkey()).status())
            .isEqualTo(dev.rnicsim.verbs.WcStatus.SUCCESS);
        assertThat(rig.processB().read(huge + (2L << 20) + 4096, 2)).isEqualTo(new byte[] {9, 9});
    }

    @Test
    void anOdpRangeThatWrapsIsEoverflowAndChangesNothing()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(4096);
        final int notifiers = rig.processB().intervalNotifierCount();
        final Throwable t = catchThrowable(() -> rig.pdB.regMr(buf, -buf, OdpRig.ODP_RW));

        assertThat(t).isInstanceOf(VerbsException.class);
        assertThat(((VerbsException)t).errnoName()).isEqualTo(dev.rnicsim.verbs.Errno.EOVERFLOW);
        assertThat(rig.processB().intervalNotifierCount()).isEqualTo(notifiers);
        assertThat(rig.counterB(SimCounter.ODP_MR_LIVE)).isZero();
    }
}
