package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RuleRig.sge;
import static dev.rnicsim.simnic.RuleRig.sgl;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import org.junit.jupiter.api.Test;

/**
 * rxe's {@code sent_pkts} and {@code rcvd_pkts} count every packet, ACKs and NAKs included: the responder
 * acknowledges the last packet of a message and every 66th before it (rxe_req.c asks for an ACK when
 * {@code noack_pkts} passes RXE_MAX_PKT_PER_ACK, 64).
 */
class AckPacketsTest
{
    /** rxe's QPs take the 1024-byte active MTU of their 1500-byte netdev. */
    private static final int MTU = PacketMtuTest.connectMtuBytes(DeviceProfiles.rxe());

    /** One WRITE of {@code packets} MTUs from a to b on rxe, completed; returns the rig. */
    private static RuleRig write(final int packets)
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.rxe(), RuleRig.ALL_REMOTE);
        final long bytes = (long)packets * MTU;
        final long src = rig.bufferA(bytes);
        final MemoryRegion srcMr = rig.pdA.regMr(src, bytes, RuleRig.LOCAL);
        final long dst = rig.bufferB(bytes);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, bytes, RuleRig.REMOTE_ALL);
        rig.qpA.postSend(SendWr.write(1, sgl(sge(srcMr, src, (int)bytes)), dst, dstMr.rkey()));
        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        return rig;
    }

    @Test
    void aWriteOfOnePacketIsAnsweredByOneAck()
    {
        final RuleRig rig = write(1);

        assertThat(HwCounters.value(rig.deviceA, "sent_pkts")).isEqualTo(1);
        assertThat(HwCounters.value(rig.deviceA, "rcvd_pkts")).as("the ACK").isEqualTo(1);
        assertThat(HwCounters.value(rig.deviceB, "rcvd_pkts")).isEqualTo(1);
        assertThat(HwCounters.value(rig.deviceB, "sent_pkts")).as("the ACK").isEqualTo(1);
    }

    @Test
    void aWriteOfAHundredPacketsAsksForAnAckOnThe66thAndTheLast()
    {
        final RuleRig rig = write(100);

        assertThat(rig.deviceB.counter(SimCounter.ACKS_SENT)).isEqualTo(2);
        assertThat(HwCounters.value(rig.deviceA, "sent_pkts")).isEqualTo(100);
        assertThat(HwCounters.value(rig.deviceA, "rcvd_pkts")).isEqualTo(2);
        assertThat(HwCounters.value(rig.deviceB, "sent_pkts")).isEqualTo(2);
        assertThat(HwCounters.value(rig.deviceB, "rcvd_pkts")).isEqualTo(100);
        assertThat(rig.deviceA.counter(SimCounter.PORT_XMIT_PACKETS)).as("the IBA port counter counts data")
            .isEqualTo(100);
    }

    @Test
    void aWriteOf67PacketsGetsTwoAcksAndOneOf66GetsOne()
    {
        assertThat(write(66).deviceB.counter(SimCounter.ACKS_SENT)).isEqualTo(1);
        assertThat(write(67).deviceB.counter(SimCounter.ACKS_SENT)).isEqualTo(2);
    }

    @Test
    void aReadIsAnsweredByItsResponsesAndNoAck()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.rxe(), RuleRig.ALL_REMOTE);
        final long bytes = 8L * MTU;
        final long local = rig.bufferA(bytes);
        final MemoryRegion localMr = rig.pdA.regMr(local, bytes, RuleRig.LOCAL);
        final long remote = rig.bufferB(bytes);
        final MemoryRegion remoteMr = rig.pdB.regMr(remote, bytes, RuleRig.REMOTE_ALL);
        rig.qpA.postSend(SendWr.read(2, sgl(sge(localMr, local, (int)bytes)), remote, remoteMr.rkey()));
        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);

        assertThat(rig.deviceB.counter(SimCounter.ACKS_SENT)).isZero();
        assertThat(HwCounters.value(rig.deviceB, "sent_pkts")).as("the 8 responses").isEqualTo(8);
    }

    @Test
    void aNakIsOnePacket()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.rxe(), RuleRig.ALL_REMOTE);
        final long src = rig.bufferA(MTU);
        final MemoryRegion srcMr = rig.pdA.regMr(src, MTU, RuleRig.LOCAL);
        final long dst = rig.bufferB(MTU);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, MTU, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.write(3, sgl(sge(srcMr, src, MTU)), dst, dstMr.rkey()));

        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.REM_ACCESS_ERR);
        assertThat(rig.deviceB.counter(SimCounter.ACKS_SENT)).isEqualTo(1);
        assertThat(rig.deviceA.counter(SimCounter.ACKS_RECEIVED)).isEqualTo(1);
    }
}
