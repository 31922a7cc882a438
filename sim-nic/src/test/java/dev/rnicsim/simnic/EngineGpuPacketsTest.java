package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * GPU memory registered through a peer-memory client (nvidia-peermem) moves as packets like host memory: a WRITE into VRAM lands packet by packet, a READ of
 * VRAM comes back packet by packet, and the message costs what it cost in one step (the peer-to-peer time is added
 * when it ends).
 */
class EngineGpuPacketsTest
{
    private static final int MTU = SimQp.PATH_MTU_BYTES;
    private static final int N = 16 * MTU;

    private record Gpu(RuleRig rig, SimGpu gpu, GpuBuffer buffer, MemoryRegion mr)
    {
        static Gpu onB()
        {
            final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
            rig.processB().capIpcLock(true);
            final SimGpu gpu = rig.deviceB.host().addGpu("gpuB", 64L << 20, SimGpu.DEFAULT_BAR1_BYTES,
                GpuTopology.PIX);
            final GpuBuffer b = gpu.allocate(N);
            // nvidia-peermem: an ibv_reg_mr of the GPU's virtual addresses (a dma-buf MR is an ODP MR on mlx5, and
            // ODP memory still takes one step).
            rig.deviceB.host().peerMemoryClient(true);
            final MemoryRegion mr = rig.pdB.regMr(b.gpuVa(), N, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                Access.REMOTE_READ));
            return new Gpu(rig, gpu, b, mr);
        }

        byte[] vram()
        {
            return gpu.read(buffer.gpuVa(), N);
        }
    }

    @Test
    void aWriteIntoVramLandsPacketByPacket()
    {
        final Gpu g = Gpu.onB();
        final long src = g.rig().bufferA(N);
        final byte[] data = RuleRig.pattern(N, 11);
        g.rig().ctxA.memory().write(src, data);
        final MemoryRegion srcMr = g.rig().pdA.regMr(src, N, RuleRig.LOCAL);
        g.rig().qpA.postSend(SendWr.write(1, List.of(new Sge(src, N, srcMr.lkey())), g.mr().addr(),
            g.mr().rkey()));

        assertThat(g.rig().fabric.progress(3)).isEqualTo(3);

        assertThat(((SimQp)g.rig().qpA).inflight().packetsPlaced()).isEqualTo(3);
        assertThat(Arrays.copyOf(g.vram(), 3 * MTU)).isEqualTo(Arrays.copyOf(data, 3 * MTU));
        assertThat(Arrays.copyOfRange(g.vram(), 3 * MTU, N)).isEqualTo(new byte[N - 3 * MTU]);
        assertThat(g.rig().pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(g.vram()).isEqualTo(data);
    }

    @Test
    void aReadOfVramComesBackPacketByPacket()
    {
        final Gpu g = Gpu.onB();
        final byte[] data = RuleRig.pattern(N, 12);
        g.gpu().write(g.buffer().gpuVa(), data);
        final long dst = g.rig().bufferA(N);
        final MemoryRegion dstMr = g.rig().pdA.regMr(dst, N, RuleRig.LOCAL);
        g.rig().qpA.postSend(SendWr.read(2, List.of(new Sge(dst, N, dstMr.lkey())), g.mr().addr(), g.mr().rkey()));

        // The request, then four response packets.
        assertThat(g.rig().fabric.progress(5)).isEqualTo(5);

        assertThat(Arrays.copyOf(g.rig().ctxA.memory().read(dst, N), 4 * MTU)).isEqualTo(Arrays.copyOf(data, 4 * MTU));
        assertThat(g.rig().pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(g.rig().ctxA.memory().read(dst, N)).isEqualTo(data);
    }
}
