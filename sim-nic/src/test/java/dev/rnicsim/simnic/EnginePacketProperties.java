package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RuleRig.sge;
import static dev.rnicsim.simnic.RuleRig.sgl;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * SENDs moving packet by packet while their receive buffer is deregistered at any step, on mlx5 and rxe: the
 * packets before the deregistration are placed whole, none after it, nothing outside the receive buffer changes,
 * and the requester sees IBV_WC_REM_OP_ERR unless the SEND had landed whole first.
 */
class EnginePacketProperties
{
    private static final int GUARD = 4096;

    @Property(tries = 60)
    void aSendLandsWholeOrStopsAtThePacketAfterItsReceiveBufferWasDeregistered(@ForAll final boolean rxe,
        @ForAll @IntRange(min = 2, max = 24) final int packets, @ForAll @IntRange(min = 0, max = 30) final int steps,
        @ForAll @IntRange(min = 0, max = 8) final int tailBytes)
    {
        final RuleRig rig = RuleRig.connected(rxe ? DeviceProfiles.rxe() : DeviceProfiles.connectx5(),
            RuleRig.ALL_REMOTE);
        // rxe's QPs take the 1024-byte active mtu of their 1500-byte netdev, connectx5's 4096
        final int mtu = PacketMtu.bytes((SimQp)rig.qpA);
        final int len = packets * mtu - tailBytes;
        final long src = rig.bufferA(len);
        final byte[] data = RuleRig.pattern(len, 7);
        rig.ctxA.memory().write(src, data);
        final MemoryRegion srcMr = rig.pdA.regMr(src, len, RuleRig.LOCAL);
        final long region = rig.bufferB(len + 2L * GUARD);
        final long dst = region + GUARD;
        final MemoryRegion recvMr = rig.pdB.regMr(dst, len, RuleRig.LOCAL);
        rig.qpB.postRecv(List.of(RecvWr.of(1, sge(recvMr, dst, len))));
        rig.qpA.postSend(SendWr.send(2, sgl(sge(srcMr, src, len))));

        final int moved = rig.fabric.progress(steps);
        recvMr.close();
        final List<WorkCompletion> wcs = rig.pollA();

        final byte[] got = rig.ctxB.memory().read(dst, len);
        final boolean whole = moved >= packets;
        assertThat(wcs).extracting(WorkCompletion::status)
            .containsExactly(whole ? WcStatus.SUCCESS : WcStatus.REM_OP_ERR);
        final int placed = whole ? len : moved * mtu;
        assertThat(Arrays.equals(Arrays.copyOf(got, placed), Arrays.copyOf(data, placed)))
            .as("the packets before the dereg are placed").isTrue();
        assertThat(Arrays.equals(Arrays.copyOfRange(got, placed, len), new byte[len - placed]))
            .as("nothing after it").isTrue();
        assertThat(rig.ctxB.memory().read(region, GUARD)).containsOnly(0);
        assertThat(rig.ctxB.memory().read(dst + len, GUARD)).containsOnly(0);
    }
}
