package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RuleRig.sge;
import static dev.rnicsim.simnic.RuleRig.sgl;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A SEND longer than the receive buffers fails at the packet that overflows them: the responder places each packet
 * as it comes (rxe {@code send_data_in}: {@code copy_data} answers -ENOSPC for the packet that no longer fits, state
 * RESPST_ERR_LENGTH), so the packets before it stay placed; the requester gets the NAK (invalid request:
 * IBV_WC_REM_INV_REQ_ERR) and both QPs go to ERR. The receive's status is the driver's ({@link SendOverflow}):
 * IBV_WC_LOC_LEN_ERR on mlx5, IBV_WC_REM_INV_REQ_ERR on rxe ({@code do_class_ac_error}).
 */
class SendOverflowTest
{
    private static final int MTU = SimQp.PATH_MTU_BYTES;

    /** A SEND of {@code sendBytes} into one receive buffer of {@code recvBytes}, posted, not yet moved. */
    private record Overflow(RuleRig rig, long dst, byte[] data, int recvBytes)
    {
        static Overflow of(final DeviceProfile profile, final int sendBytes, final int recvBytes)
        {
            final RuleRig rig = RuleRig.connected(profile, RuleRig.ALL_REMOTE);
            final long src = rig.bufferA(sendBytes);
            final byte[] data = RuleRig.pattern(sendBytes, 9);
            rig.ctxA.memory().write(src, data);
            final MemoryRegion srcMr = rig.pdA.regMr(src, sendBytes, RuleRig.LOCAL);
            // The receive buffer sits at the start of a larger region: the bytes after it must never change.
            final long dst = rig.bufferB(sendBytes + MTU);
            final MemoryRegion recvMr = rig.pdB.regMr(dst, sendBytes + MTU, RuleRig.LOCAL);
            rig.qpB.postRecv(List.of(RecvWr.of(70, sge(recvMr, dst, recvBytes))));
            rig.qpA.postSend(SendWr.send(7, sgl(sge(srcMr, src, sendBytes))));
            return new Overflow(rig, dst, data, recvBytes);
        }

        byte[] target()
        {
            return rig.ctxB.memory().read(dst, data.length + MTU);
        }
    }

    @Test
    void theOverflowingPacketFailsWithThePacketsBeforeItPlaced()
    {
        for (final DeviceProfile p : List.of(DeviceProfiles.connectx5(), DeviceProfiles.rxe()))
        {
            final int mtu = PacketMtuTest.connectMtuBytes(p);
            // 16 packets into 5.5 packets of buffer: packets 1 to 5 fit, packet 6 overflows.
            final Overflow o = Overflow.of(p, 16 * mtu, 5 * mtu + mtu / 2);

            assertThat(o.rig().fabric.progress(5)).as(p.name()).isEqualTo(5);
            assertThat(((SimQp)o.rig().qpA).inflight()).as(p.name() + ": packet 6 not yet sent").isNotNull();

            o.rig().fabric.progressAll();

            final List<WorkCompletion> send = o.rig().pollA();
            assertThat(send).as(p.name()).extracting(WorkCompletion::status)
                .containsExactly(WcStatus.REM_INV_REQ_ERR);
            final List<WorkCompletion> recv = o.rig().pollB();
            assertThat(recv).as(p.name()).extracting(WorkCompletion::status).containsExactly(
                p.name().equals("rxe") ? WcStatus.REM_INV_REQ_ERR : WcStatus.LOC_LEN_ERR);
            assertThat(recv.get(0).wrId()).isEqualTo(70);
            final byte[] target = o.target();
            assertThat(Arrays.copyOf(target, 5 * mtu)).as(p.name() + ": packets 1 to 5 placed")
                .isEqualTo(Arrays.copyOf(o.data(), 5 * mtu));
            assertThat(Arrays.copyOfRange(target, 5 * mtu, target.length))
                .as(p.name() + ": nothing of packet 6 or later, in the buffer or after it")
                .isEqualTo(new byte[target.length - 5 * mtu]);
            assertThat(o.rig().qpA.state()).as(p.name()).isEqualTo(QpState.ERR);
            assertThat(o.rig().qpB.state()).as(p.name()).isEqualTo(QpState.ERR);
        }
    }

    @Test
    void aFirstPacketThatDoesNotFitPlacesNothing()
    {
        final Overflow o = Overflow.of(DeviceProfiles.connectx5(), 4 * MTU, MTU / 2);

        o.rig().fabric.progressAll();

        assertThat(o.rig().pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.REM_INV_REQ_ERR);
        assertThat(o.rig().pollB()).extracting(WorkCompletion::status).containsExactly(WcStatus.LOC_LEN_ERR);
        assertThat(o.target()).isEqualTo(new byte[4 * MTU + MTU]);
    }

    @Test
    void theStatusesOfAnOverflowAreTheDriversOnEveryProfile()
    {
        // One packet into half a packet of buffer (one step), and 4 packets into 1.5 (packet by packet).
        for (final DeviceProfile p : List.of(DeviceProfiles.connectx5(), DeviceProfiles.connectx7(),
            DeviceProfiles.rxe(), DeviceProfiles.rxeLegacy(), DeviceProfiles.e810()))
        {
            final WcStatus receive = p.follows(ProviderRule.RECEIVE_OVERFLOW_AS_INVALID_REQUEST)
                ? WcStatus.REM_INV_REQ_ERR : WcStatus.LOC_LEN_ERR;
            assertThat(receive).as(p.name()).isEqualTo(p.driver().equals("rxe") ? WcStatus.REM_INV_REQ_ERR
                : WcStatus.LOC_LEN_ERR);
            for (final int[] sizes : new int[][] {{MTU, MTU / 2}, {4 * MTU, MTU + MTU / 2}})
            {
                final Overflow o = Overflow.of(p, sizes[0], sizes[1]);

                o.rig().fabric.progressAll();

                assertThat(o.rig().pollA()).as(p.name()).extracting(WorkCompletion::status)
                    .containsExactly(WcStatus.REM_INV_REQ_ERR);
                assertThat(o.rig().pollB()).as(p.name()).extracting(WorkCompletion::status)
                    .containsExactly(receive);
            }
        }
    }

    @Test
    void aSendThatFillsTheBufferExactlySucceeds()
    {
        final Overflow o = Overflow.of(DeviceProfiles.connectx5(), 6 * MTU, 6 * MTU);

        o.rig().fabric.progressAll();

        assertThat(o.rig().pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(o.rig().pollB()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(Arrays.copyOf(o.target(), 6 * MTU)).isEqualTo(o.data());
    }
}
