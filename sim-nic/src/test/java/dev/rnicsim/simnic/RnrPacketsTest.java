package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A request refused with an RNR NAK is a packet on the link, and so is the NAK: rxe counts both in {@code sent_pkts}
 * / {@code rcvd_pkts}, and the IBA port counters count the request. And {@link NicEngine#inflight()} lists the
 * message of a QP in the middle of its step.
 */
class RnrPacketsTest
{
    private static final int BYTES = 100;

    private static long hw(final SimDevice d, final String name)
    {
        return HwCounters.value(d, name);
    }

    @Test
    void aSendRefusedUntilRnrRetryRunsOutCountsEachRequestAndEachNakAsAPacket()
    {
        final OdpRig rig = OdpRig.of(DeviceProfiles.rxe(), 3, 12);
        rig.processA().write(rig.scratch, RuleRig.pattern(BYTES, 1));

        final WorkCompletion wc = rig.post(SendWr.send(1, List.of(new Sge(rig.scratch, BYTES,
            rig.scratchMr.lkey()))));

        assertThat(wc.status()).isEqualTo(WcStatus.RNR_RETRY_EXC_ERR);
        // rnr_retry 3: four requests, each refused with an RNR NAK.
        assertThat(hw(rig.deviceB, "send_rnr_err")).isEqualTo(4);
        assertThat(hw(rig.deviceA, "sent_pkts")).isEqualTo(4);
        assertThat(hw(rig.deviceB, "rcvd_pkts")).isEqualTo(4);
        assertThat(hw(rig.deviceB, "sent_pkts")).as("the NAKs").isEqualTo(4);
        assertThat(hw(rig.deviceA, "rcvd_pkts")).as("the NAKs").isEqualTo(4);
        assertThat(rig.counterA(SimCounter.PORT_XMIT_PACKETS)).isEqualTo(4);
        assertThat(rig.counterB(SimCounter.PORT_RCV_PACKETS)).isEqualTo(4);
        assertThat(rig.counterA(SimCounter.PORT_XMIT_DATA)).isEqualTo(4 * BYTES / 4);
    }

    @Test
    void aSendThatLandsAfterTwoRnrNaksCountsThreeRequestsAndThreeAcknowledgements()
    {
        final OdpRig rig = OdpRig.of(DeviceProfiles.rxe(), 3, 12);
        final long landing = rig.bufferB(BYTES);
        final MemoryRegion landingMr = rig.pdB.regMr(landing, BYTES, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.send(1, List.of(new Sge(rig.scratch, BYTES, rig.scratchMr.lkey()))));

        assertThat(rig.fabric.progress(2)).isEqualTo(2);
        assertThat(hw(rig.deviceB, "send_rnr_err")).isEqualTo(2);
        rig.qpB.postRecv(List.of(RecvWr.of(9, new Sge(landing, BYTES, landingMr.lkey()))));

        assertThat(rig.cqA.poll(4)).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(hw(rig.deviceA, "sent_pkts")).as("two refused requests and the SEND").isEqualTo(3);
        assertThat(hw(rig.deviceA, "rcvd_pkts")).as("two RNR NAKs and the ACK").isEqualTo(3);
        assertThat(hw(rig.deviceB, "rcvd_pkts")).isEqualTo(3);
        assertThat(hw(rig.deviceB, "sent_pkts")).isEqualTo(3);
        assertThat(rig.counterA(SimCounter.PORT_XMIT_PACKETS)).isEqualTo(3);
    }

    @Test
    void withRnrRetrySevenTheRetryThatLandsWaitsTheResponderRnrTimerAfterTheNak()
    {
        // min_rnr_timer 0 is 655.36 ms (IBA table 45): the requester sends again only when the timer runs out, so a
        // receive posted right after the NAK still costs a whole timer (ydb-platform/nbs issue 5790).
        final OdpRig rig = OdpRig.of(DeviceProfiles.connectx5(), 7, 0);
        final long landing = rig.bufferB(BYTES);
        final MemoryRegion landingMr = rig.pdB.regMr(landing, BYTES, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.send(1, List.of(new Sge(rig.scratch, BYTES, rig.scratchMr.lkey()))));
        rig.fabric.progress(1);
        assertThat(rig.counterB(SimCounter.OUT_OF_BUFFER)).as("the RNR NAK").isGreaterThanOrEqualTo(1);
        final long nakAtNs = rig.fabric.clock().nowNs();

        rig.qpB.postRecv(List.of(RecvWr.of(9, new Sge(landing, BYTES, landingMr.lkey()))));

        assertThat(rig.cqA.poll(4)).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(rig.fabric.clock().nowNs() - nakAtNs).isGreaterThanOrEqualTo(CostModel.rnrTimerNs(0) - 10_000)
            .isLessThan(CostModel.rnrTimerNs(0) + 1_000_000);
    }

    @Test
    void anOdpFaultsRnrNaksAreCountedAsPacketsToo()
    {
        final OdpRig rig = OdpRig.of(DeviceProfiles.rxe(), 7, 1);
        final long buf = rig.bufferB(OdpRig.PAGE);
        final SimOdpMr mr = rig.odpB(buf, OdpRig.PAGE, OdpRig.ODP_RW);

        assertThat(rig.write(RuleRig.pattern(BYTES, 2), buf, mr.rkey()).status()).isEqualTo(WcStatus.SUCCESS);

        final long naks = rig.counterB(SimCounter.ODP_RNR_NAKS);
        assertThat(naks).isGreaterThanOrEqualTo(1);
        assertThat(hw(rig.deviceA, "sent_pkts")).as("the refused requests and the WRITE").isEqualTo(naks + 1);
        assertThat(hw(rig.deviceA, "rcvd_pkts")).as("the RNR NAKs and the ACK").isEqualTo(naks + 1);
    }

    @Test
    void aWriteThatNoResponderAcknowledgesGoesOutRetryCntPlusOneTimes()
    {
        // IBA 9.7.6.1.3: retry_cnt retransmissions after the first, one ACK timeout each; the timeout after the last
        // ends the request (rxe_comp.c: completer_retry_err per retry, retry_exceeded_err once).
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.rxe());
        rig.qpA.modifyToInit(RuleRig.ALL_REMOTE);
        rig.qpA.modifyToRtr(rig.qpB.address(), 12);
        rig.qpA.modifyToRts(3, 7);
        final long src = rig.bufferA(BYTES);
        final MemoryRegion srcMr = rig.pdA.regMr(src, BYTES, RuleRig.LOCAL);

        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(src, BYTES, srcMr.lkey())), 0x1000, 0x1234));

        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.RETRY_EXC_ERR);
        assertThat(hw(rig.deviceA, "sent_pkts")).as("the request and its 3 retries").isEqualTo(4);
        assertThat(hw(rig.deviceA, "completer_retry_err")).isEqualTo(3);
        assertThat(hw(rig.deviceA, "retry_exceeded_err")).isEqualTo(1);
        assertThat(rig.deviceA.counter(SimCounter.PORT_XMIT_DATA)).isEqualTo(4 * BYTES / 4);
        assertThat(hw(rig.deviceB, "rcvd_pkts")).as("the peer in RESET takes none").isZero();
    }

    @Test
    void theMessageOfAQpInTheMiddleOfItsStepIsInFlight()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final int n = 8 * SimQp.PATH_MTU_BYTES;
        final long src = rig.bufferA(n);
        final MemoryRegion srcMr = rig.pdA.regMr(src, n, RuleRig.LOCAL);
        final long dst = rig.bufferB(n);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, n, RuleRig.REMOTE_ALL);
        final List<Boolean> listed = new ArrayList<>();
        rig.deviceA.addObserver(new DeviceObserver()
        {
            @Override
            public void firstPacketPlaced(final InflightMessage message)
            {
                // Called while the requester QP moves its first packet, out of the turn order.
                listed.add(rig.fabric.engine().inflight().contains(message));
            }
        });
        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(src, n, srcMr.lkey())), dst, dstMr.rkey()));

        assertThat(rig.fabric.progress(1)).isEqualTo(1);

        assertThat(listed).containsExactly(true);
        assertThat(rig.fabric.engine().inflight()).hasSize(1);
    }
}
