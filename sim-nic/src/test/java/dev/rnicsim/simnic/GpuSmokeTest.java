package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class GpuSmokeTest
{
    @Test
    void dmabufMoveThenFault()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = rig.deviceB.host().addGpu("gpu0", 1L << 30, SimGpu.DEFAULT_BAR1_BYTES, GpuTopology.PIX);
        final GpuBuffer buf = gpu.allocate(1 << 20);
        final int fd = gpu.exportDmabuf(buf, 0, 1 << 20);
        final MemoryRegion mr = rig.pdB.regDmabufMr(0, 1 << 20, 0x10000, fd, EnumSet.of(Access.LOCAL_WRITE,
            Access.REMOTE_WRITE, Access.REMOTE_READ));
        final long src = rig.bufferA(8192);
        rig.ctxA.memory().write(src, RuleRig.pattern(8192, 5));
        final MemoryRegion local = rig.pdA.regMr(src, 8192, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(src, 8192, local.lkey())), 0x10000 + 4096, mr.rkey()));
        List<WorkCompletion> wcs = rig.pollA();
        assertThat(wcs).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(gpu.read(buf.gpuVa() + 4096, 8192)).isEqualTo(RuleRig.pattern(8192, 5));
        gpu.move(buf);
        assertThat(gpu.bar1UsedBytes()).isZero();
        rig.qpA.postSend(SendWr.write(2, List.of(new Sge(src, 8192, local.lkey())), 0x10000, mr.rkey()));
        wcs = rig.pollA();
        System.out.println(wcs + " " + rig.deviceB.counters());
        assertThat(wcs).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(gpu.read(buf.gpuVa(), 8192)).isEqualTo(RuleRig.pattern(8192, 5));
        assertThat(gpu.read(buf.gpuVa() + 4096, 4096)).isEqualTo(RuleRig.pattern(8192, 5 + 4096 % 251 * 0).length == 0
            ? null : java.util.Arrays.copyOfRange(RuleRig.pattern(8192, 5), 4096, 8192));
        assertThat(gpu.bar1UsedBytes()).isEqualTo(1 << 20);
    }

    @Test
    void peerMemoryNeedsClientAndBar1()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = rig.deviceB.host().addGpu("gpu0", 1L << 30, 1 << 20, GpuTopology.SYS);
        final GpuBuffer buf = gpu.allocate(2 << 20);
        assertThatThrownBy(() -> rig.pdB.regMr(buf.gpuVa(), 1 << 20, EnumSet.of(Access.LOCAL_WRITE)))
            .isInstanceOf(VerbsException.class).hasMessageContaining("EFAULT").hasMessageContaining("peer-memory");
        rig.deviceB.host().peerMemoryClient(true);
        final MemoryRegion mr = rig.pdB.regMr(buf.gpuVa(), 1 << 20, EnumSet.of(Access.LOCAL_WRITE));
        assertThat(gpu.bar1UsedBytes()).isEqualTo(1 << 20);
        assertThatThrownBy(() -> rig.pdB.regMr(buf.gpuVa() + (1 << 20), 4096, EnumSet.of(Access.LOCAL_WRITE)))
            .isInstanceOf(VerbsException.class).hasMessageContaining("EFAULT").hasMessageContaining("BAR1");
        mr.close();
        assertThat(gpu.bar1UsedBytes()).isZero();
    }
}
