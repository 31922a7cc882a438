package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link AckTimeout}: a request that no acknowledgement answers waits {@code retry_cnt + 1} local ACK timeouts of
 * {@code 4.096 µs × 2^timeout} (IBA 9.7.6.1.3) before IBV_WC_RETRY_EXC_ERR; rxe's timer counts whole jiffies, at
 * least one ({@code rxe_qp_from_attr}); a timeout of 0 never gives up (rxe arms no retransmit timer).
 */
class AckTimeoutTest
{
    /** A's QP to RTS towards b's QP, which stays in RESET: no acknowledgement comes. */
    private static RuleRig towardsAQpInReset(final DeviceProfile profile, final int timeout, final int retryCnt)
    {
        final RuleRig rig = RuleRig.unconnected(profile);
        for (final QpAttr.Builder b : List.of(
            QpAttr.builder().state(QpState.INIT).pkeyIndex(0).port(1).accessFlags(EnumSet.of(Access.REMOTE_WRITE)),
            QpAttr.builder().state(QpState.RTR).av(AhAttr.toGid(rig.qpB.address().gid())).pathMtu(QpAttr.MTU_4096)
                .destQpNum(rig.qpB.qpNum()).rqPsn(0).maxDestRdAtomic(1).minRnrTimer(12),
            QpAttr.builder().state(QpState.RTS).timeout(timeout).retryCnt(retryCnt).rnrRetry(7).sqPsn(0)
                .maxRdAtomic(1)))
        {
            rig.qpA.modify(b.build(), b.mask());
        }
        return rig;
    }

    private static SendWr write(final RuleRig rig, final long wrId)
    {
        final long src = rig.bufferA(4096);
        final MemoryRegion mr = rig.pdA.regMr(src, 4096, RuleRig.LOCAL);
        return SendWr.write(wrId, List.of(new Sge(src, 64, mr.lkey())), 0x10000, 0x1234);
    }

    /** @return the simulated ns from the post of a WRITE to its completion, which must be IBV_WC_RETRY_EXC_ERR. */
    private static long noAckNs(final DeviceProfile profile, final int timeout, final int retryCnt)
    {
        final RuleRig rig = towardsAQpInReset(profile, timeout, retryCnt);
        final SendWr wr = write(rig, 1);
        final long before = rig.fabric.clock().nowNs();
        rig.qpA.postSend(wr);
        final List<WorkCompletion> wcs = rig.pollA();
        assertThat(wcs).extracting(WorkCompletion::status).containsExactly(WcStatus.RETRY_EXC_ERR);
        return rig.fabric.clock().nowNs() - before;
    }

    @Test
    void theDiagnosisOfAPeerInResetNamesItsStateNotAnotherConnection()
    {
        final RuleRig rig = towardsAQpInReset(DeviceProfiles.connectx5(), 1, 1);
        rig.qpA.postSend(write(rig, 1));
        final WorkCompletion wc = rig.pollA().getFirst();

        assertThat(wc.status()).isEqualTo(WcStatus.RETRY_EXC_ERR);
        assertThat(wc.diagnosis().summary()).contains("the peer QP is in RESET, not RTR or RTS")
            .doesNotContain("connected to another QP");
    }

    @Test
    void theDeviceWaitsRetryCntPlusOneTimeoutsOfFourMicrosecondsTimesTwoToTheTimeout()
    {
        final DeviceProfile cx5 = DeviceProfiles.connectx5();
        final long t10 = noAckNs(cx5, 10, 3);
        final long t12 = noAckNs(cx5, 12, 3);
        final long t12Retry6 = noAckNs(cx5, 12, 6);

        assertThat(t12 - t10).as("4 waits of 4096 << 12 against 4096 << 10 ns")
            .isEqualTo(4 * ((4096L << 12) - (4096L << 10)));
        assertThat(t12Retry6 - t12).as("3 more retries, one timeout each").isEqualTo(3 * (4096L << 12));
        assertThat(t10).isGreaterThanOrEqualTo(4 * (4096L << 10));
    }

    @Test
    void rxeWaitsWholeJiffiesAtLeastOne()
    {
        final DeviceProfile rxe = DeviceProfiles.rxe();
        final long t1 = noAckNs(rxe, 1, 2);
        final long t2 = noAckNs(rxe, 2, 2);
        final long t10 = noAckNs(rxe, 10, 2);
        final long t11 = noAckNs(rxe, 11, 2);

        assertThat(t2).as("8.192 and 16.384 us both wait one jiffy").isEqualTo(t1);
        assertThat(t10 - t1).as("4.19 ms is one jiffy of 4 ms too").isZero();
        assertThat(t11 - t10).as("8.39 ms: two jiffies, 3 waits").isEqualTo(3 * CostModel.DEFAULT_JIFFY_NS);
        assertThat(t1).isGreaterThanOrEqualTo(3 * CostModel.DEFAULT_JIFFY_NS);
    }

    @Test
    void aTimeoutOfZeroNeverGivesUpAndHoldsTheQueueUntilTheQpGoesToError()
    {
        for (final DeviceProfile p : List.of(DeviceProfiles.connectx5(), DeviceProfiles.rxe()))
        {
            final RuleRig rig = towardsAQpInReset(p, 0, 7);
            final SendWr first = write(rig, 1);
            final SendWr second = write(rig, 2);
            final long before = rig.fabric.clock().nowNs();
            rig.qpA.postSend(first);
            rig.qpA.postSend(second);

            assertThat(rig.pollA()).as(p.name() + ": no completion, no retry").isEmpty();
            assertThat(rig.fabric.clock().nowNs() - before).as("no timeout priced")
                .isLessThan(CostModel.localAckTimeoutNs(1, 0));
            assertThat(rig.deviceA.counter(SimCounter.TRANSPORT_RETRIES)).isZero();
            assertThat(((SimQp)rig.qpA).waitsForAckForever()).as("the head waits for an ACK, not for a receive").isTrue();

            rig.qpA.modify(QpAttr.builder().state(QpState.ERR).build(), QpAttr.builder().state(QpState.ERR).mask());
            assertThat(rig.pollA()).extracting(WorkCompletion::wrId, WorkCompletion::status).containsExactly(
                org.assertj.core.groups.Tuple.tuple(1L, WcStatus.WR_FLUSH_ERR),
                org.assertj.core.groups.Tuple.tuple(2L, WcStatus.WR_FLUSH_ERR));
            assertThat(((SimQp)rig.qpA).waitsForAckForever()).isFalse();
        }
    }

    @Test
    void aPeerDestroyedSinceTheLastExchangeIsNamedWithTheTeardownAsTheFix()
    {
        final RuleRig rig = RuleRig.connected();
        final long dst = rig.bufferB(4096);
        final MemoryRegion mrB = rig.pdB.regMr(dst, 4096, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
        final long src = rig.bufferA(4096);
        final MemoryRegion mrA = rig.pdA.regMr(src, 4096, RuleRig.LOCAL);
        final SendWr first = SendWr.write(1, List.of(new Sge(src, 64, mrA.lkey())), dst, mrB.rkey());
        rig.qpA.postSend(first);
        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);

        rig.qpB.close();
        rig.qpA.postSend(SendWr.write(2, List.of(new Sge(src, 64, mrA.lkey())), dst, mrB.rkey()));
        final WorkCompletion wc = rig.pollA().getFirst();

        assertThat(wc.status()).isEqualTo(WcStatus.RETRY_EXC_ERR);
        assertThat(wc.diagnosis().summary()).contains("the peer QP 0x" + Integer.toHexString(rig.qpB.qpNum()))
            .contains("was destroyed while this QP still had work for it").doesNotContain("no QP");
        assertThat(wc.diagnosis().details()).anyMatch(d -> d.contains("disconnect handshake"));
    }

    @Test
    void theCostModelRefusesACodeOutsideOneToThirtyOne()
    {
        assertThat(CostModel.localAckTimeoutNs(14, 0)).as("about 67 ms").isEqualTo(67_108_864L);
        assertThat(CostModel.localAckTimeoutNs(31, 0)).isEqualTo(4096L << 31);
        assertThatThrownBy(() -> CostModel.localAckTimeoutNs(0, 0)).hasMessageContaining("0 waits for ever");
        assertThatThrownBy(() -> CostModel.localAckTimeoutNs(32, 0)).hasMessageContaining("1-31");
    }
}
