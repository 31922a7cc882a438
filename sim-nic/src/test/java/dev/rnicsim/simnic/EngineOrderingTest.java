package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RuleRig.sge;
import static dev.rnicsim.simnic.RuleRig.sgl;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Per-QP order on the NIC engine: READs and atomics outstanding while later WQEs go on, IBV_SEND_FENCE, completions
 * in posting order, unsignaled WRs, the flush after a failure, RNR and transport retries.
 */
class EngineOrderingTest
{
    private static final int MTU = SimQp.PATH_MTU_BYTES;
    private static final int N = 16 * MTU;

    /**
     * a reads 64 KiB of b's pattern into {@code local}, then sends the last page of {@code local} (which the READ's
     * last response fills) back to a receive at b.
     */
    private record ReadThenSend(RuleRig rig, long local, long remote, long landing, byte[] remoteData)
    {
        static ReadThenSend of(final boolean fence)
        {
            final RuleRig rig = RuleRig.connected();
            final long remote = rig.bufferB(N);
            final byte[] remoteData = RuleRig.pattern(N, 11);
            rig.ctxB.memory().write(remote, remoteData);
            final MemoryRegion remoteMr = rig.pdB.regMr(remote, N, RuleRig.REMOTE_ALL);
            final long landing = rig.bufferB(N);
            final MemoryRegion landingMr = rig.pdB.regMr(landing, N, RuleRig.LOCAL);
            final long local = rig.bufferA(N);
            final MemoryRegion localMr = rig.pdA.regMr(local, N, RuleRig.LOCAL);
            rig.qpB.postRecv(List.of(RecvWr.of(30, sge(landingMr, landing, MTU))));
            rig.qpA.postSend(SendWr.read(1, sgl(sge(localMr, local, N)), remote, remoteMr.rkey()));
            final SendWr send = SendWr.send(2, sgl(sge(localMr, local + N - MTU, MTU)));
            rig.qpA.postSend(fence ? send.withFlags(EnumSet.of(SendFlag.SIGNALED, SendFlag.FENCE)) : send);
            return new ReadThenSend(rig, local, remote, landing, remoteData);
        }

        byte[] landed()
        {
            return rig.ctxB.memory().read(landing, MTU);
        }
    }

    @Test
    void anUnfencedSendAfterAReadGathersItsBufferBeforeTheReadDataLands()
    {
        final ReadThenSend r = ReadThenSend.of(false);

        final List<WorkCompletion> wcs = r.rig().cqA.poll(2);

        assertThat(wcs).extracting(WorkCompletion::wrId).containsExactly(1L, 2L);
        assertThat(wcs).extracting(WorkCompletion::status).containsOnly(WcStatus.SUCCESS);
        assertThat(Arrays.equals(r.landed(), new byte[MTU])).as("the SEND went out while the READ's responses were "
            + "coming back").isTrue();
        assertThat(r.rig().ctxA.memory().read(r.local(), N)).isEqualTo(r.remoteData());
    }

    @Test
    void aFencedSendWaitsForTheReadAndSendsWhatItRead()
    {
        final ReadThenSend r = ReadThenSend.of(true);

        assertThat(r.rig().cqA.poll(2)).extracting(WorkCompletion::status).containsOnly(WcStatus.SUCCESS);
        assertThat(Arrays.equals(r.landed(), Arrays.copyOfRange(r.remoteData(), N - MTU, N))).isTrue();
    }

    @Test
    void aWriteThatEndsBeforeAnOlderReadIsReportedAfterIt()
    {
        final RuleRig rig = RuleRig.connected();
        final long remote = rig.bufferB(2 * N);
        final MemoryRegion remoteMr = rig.pdB.regMr(remote, 2 * N, RuleRig.REMOTE_ALL);
        final long local = rig.bufferA(N);
        final MemoryRegion localMr = rig.pdA.regMr(local, N, RuleRig.LOCAL);
        final long src = rig.bufferA(MTU);
        rig.ctxA.memory().write(src, RuleRig.pattern(MTU, 3));
        final MemoryRegion srcMr = rig.pdA.regMr(src, MTU, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.read(1, sgl(sge(localMr, local, N)), remote, remoteMr.rkey()));
        rig.qpA.postSend(SendWr.write(2, sgl(sge(srcMr, src, 8)), remote + N, remoteMr.rkey()));

        // The READ's request, its first response, then the WRITE (one packet): it has landed, the READ has one
        // response of 16 back.
        assertThat(rig.fabric.progress(3)).isEqualTo(3);
        assertThat(rig.ctxB.memory().read(remote + N, 8)).isEqualTo(Arrays.copyOf(RuleRig.pattern(MTU, 3), 8));
        assertThat(((SimCq)rig.cqA).depth()).as("held behind the READ").isZero();
        assertThat(((SimQp)rig.qpA).inflight().wr().wrId()).isEqualTo(1L);

        assertThat(rig.pollA()).extracting(WorkCompletion::wrId).containsExactly(1L, 2L);
    }

    @Test
    void unsignaledWorkRequestsTakeTheirTurnWithoutACompletion()
    {
        final RuleRig rig = RuleRig.connected();
        final long remote = rig.bufferB(N);
        final MemoryRegion remoteMr = rig.pdB.regMr(remote, N, RuleRig.REMOTE_ALL);
        final long local = rig.bufferA(N);
        final MemoryRegion localMr = rig.pdA.regMr(local, N, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.read(1, sgl(sge(localMr, local, N)), remote, remoteMr.rkey()));
        rig.qpA.postSend(SendWr.write(2, sgl(sge(localMr, local, 8)), remote, remoteMr.rkey())
            .withFlags(EnumSet.noneOf(SendFlag.class)));
        rig.qpA.postSend(SendWr.write(3, sgl(sge(localMr, local, 8)), remote, remoteMr.rkey()));

        assertThat(rig.pollA()).extracting(WorkCompletion::wrId).containsExactly(1L, 3L);
        assertThat(((SimQp)rig.qpA).sendsWaiting()).isZero();
    }

    @Test
    void aReadFailingAfterAYoungerWriteEndedFlushesThatWrite()
    {
        final RuleRig rig = RuleRig.connected();
        final long remote = rig.bufferB(2 * N);
        final MemoryRegion readMr = rig.pdB.regMr(remote, N, RuleRig.REMOTE_ALL);
        final MemoryRegion writeMr = rig.pdB.regMr(remote + N, N, RuleRig.REMOTE_ALL);
        final long local = rig.bufferA(N);
        final MemoryRegion localMr = rig.pdA.regMr(local, N, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.read(1, sgl(sge(localMr, local, N)), remote, readMr.rkey()));
        rig.qpA.postSend(SendWr.write(2, sgl(sge(localMr, local, 8)), remote + N, writeMr.rkey()));
        rig.fabric.progress(3);

        // mlx5: the READ's mkey dies; its next response is NAKed.
        readMr.close();

        final List<WorkCompletion> wcs = rig.pollA();
        assertThat(wcs).extracting(WorkCompletion::wrId).containsExactly(1L, 2L);
        assertThat(wcs).extracting(WorkCompletion::status).containsExactly(WcStatus.REM_ACCESS_ERR,
            WcStatus.WR_FLUSH_ERR);
        assertThat(rig.qpA.state()).isEqualTo(QpState.ERR);
    }

    @Test
    void eachRnrNakIsAStepAndAReceivePostedBetweenRetriesLetsTheSendLand()
    {
        final RuleRig rig = rnrRig(3);
        final long src = rig.bufferA(MTU);
        final MemoryRegion srcMr = rig.pdA.regMr(src, MTU, RuleRig.LOCAL);
        final long dst = rig.bufferB(MTU);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, MTU, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.send(1, sgl(sge(srcMr, src, 8))));

        assertThat(rig.fabric.progress(2)).isEqualTo(2);
        assertThat(rig.deviceA.counter(SimCounter.RNR_RETRIES)).isEqualTo(2);
        assertThat(rig.deviceB.counter(SimCounter.OUT_OF_BUFFER)).isEqualTo(2);
        rig.qpB.postRecv(List.of(RecvWr.of(9, sge(dstMr, dst, MTU))));

        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(rig.deviceA.counter(SimCounter.RNR_RETRIES)).isEqualTo(2);
        // mlx5's rnr_nak_retry_err counts each RNR NAK answered with a retry (HwCounters); none ran out
        assertThat(rig.deviceA.counter(SimCounter.RNR_NAK_RETRY_ERR)).isEqualTo(2);
        assertThat(rig.deviceA.counter(SimCounter.RNR_RETRIES_EXCEEDED)).isZero();
    }

    @Test
    void rnrRetriesRunOutAfterRnrRetryNaksAndTheClockWaitedEachTimer()
    {
        final RuleRig rig = rnrRig(3);
        final long src = rig.bufferA(MTU);
        final MemoryRegion srcMr = rig.pdA.regMr(src, MTU, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.send(1, sgl(sge(srcMr, src, 8))));
        final long t0 = rig.fabric.clock().nowNs();

        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.RNR_RETRY_EXC_ERR);
        assertThat(rig.deviceA.counter(SimCounter.RNR_RETRIES)).isEqualTo(3);
        assertThat(rig.deviceA.counter(SimCounter.RNR_NAK_RETRY_ERR)).isEqualTo(3);
        assertThat(rig.deviceA.counter(SimCounter.RNR_RETRIES_EXCEEDED)).isEqualTo(1);
        assertThat(rig.deviceB.counter(SimCounter.OUT_OF_BUFFER)).as("the first try and three retries").isEqualTo(4);
        assertThat(rig.fabric.clock().nowNs() - t0).isEqualTo(3 * CostModel.rnrTimerNs(12));
    }

    @Test
    void aPeerThatIsGoneCostsRetryCntTransportRetries()
    {
        final RuleRig rig = RuleRig.connected();
        final long src = rig.bufferA(MTU);
        final MemoryRegion srcMr = rig.pdA.regMr(src, MTU, RuleRig.LOCAL);
        rig.qpB.close();
        rig.qpA.postSend(SendWr.send(1, sgl(sge(srcMr, src, 8))));

        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.RETRY_EXC_ERR);
        assertThat(rig.deviceA.counter(SimCounter.TRANSPORT_RETRIES)).as("retry_cnt 7").isEqualTo(7);
        assertThat(rig.deviceA.counter(SimCounter.LOCAL_ACK_TIMEOUT_ERR)).isEqualTo(7);
        assertThat(rig.deviceA.counter(SimCounter.TRANSPORT_RETRIES_EXCEEDED)).isEqualTo(1);
    }

    @Test
    void aPeerDestroyedMidMessageCostsAndExplainsWhatAPeerGoneBeforeThePostDoes()
    {
        final long goneBeforeNs = retryExcErrNs();
        final RuleRig rig = RuleRig.connected();
        final long remote = rig.bufferB(N);
        final MemoryRegion remoteMr = rig.pdB.regMr(remote, N, RuleRig.REMOTE_ALL);
        final long src = rig.bufferA(N);
        final MemoryRegion srcMr = rig.pdA.regMr(src, N, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.write(1, sgl(sge(srcMr, src, N)), remote, remoteMr.rkey()));
        assertThat(rig.fabric.progress(3)).isEqualTo(3);
        rig.qpB.close();
        final long t0 = rig.fabric.clock().nowNs();

        final WorkCompletion wc = rig.pollA().getFirst();
        assertThat(wc.status()).isEqualTo(WcStatus.RETRY_EXC_ERR);
        assertThat(wc.diagnosis().summary()).contains("was destroyed while this QP still had work for it");
        assertThat(rig.fabric.clock().nowNs() - t0).as("retry_cnt + 1 local ACK timeouts")
            .isGreaterThanOrEqualTo(goneBeforeNs);
        assertThat(rig.deviceA.counter(SimCounter.TRANSPORT_RETRIES)).isEqualTo(7);
        assertThat(rig.deviceA.counter(SimCounter.TRANSPORT_RETRIES_EXCEEDED)).isEqualTo(1);
    }

    /** @return the simulated ns from the post of a SEND to a peer destroyed before it until its completion. */
    private static long retryExcErrNs()
    {
        final RuleRig rig = RuleRig.connected();
        final long src = rig.bufferA(MTU);
        final MemoryRegion srcMr = rig.pdA.regMr(src, MTU, RuleRig.LOCAL);
        rig.qpB.close();
        final long t0 = rig.fabric.clock().nowNs();
        rig.qpA.postSend(SendWr.send(1, sgl(sge(srcMr, src, 8))));
        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.RETRY_EXC_ERR);
        return rig.fabric.clock().nowNs() - t0;
    }

    @Test
    void noMoreReadsAreOutstandingThanMaxQpInitRdAtom()
    {
        final RuleRig rig = RuleRig.connected();
        final int limit = rig.deviceA.profile().attributes().maxQpInitRdAtom();
        final long remote = rig.bufferB(N);
        final MemoryRegion remoteMr = rig.pdB.regMr(remote, N, RuleRig.REMOTE_ALL);
        final long local = rig.bufferA(N);
        final MemoryRegion localMr = rig.pdA.regMr(local, N, RuleRig.LOCAL);
        for (int i = 0; i < Math.min(limit + 2, 60); i++)
        {
            rig.qpA.postSend(SendWr.read(i, sgl(sge(localMr, local, N)), remote, remoteMr.rkey()));
        }
        int most = 0;
        while (rig.fabric.progress(1) == 1)
        {
            most = Math.max(most, ((SimQp)rig.qpA).inflightMessages().size());
        }
        assertThat(most).isEqualTo(Math.min(limit, Math.min(limit + 2, 60)));
        assertThat(rig.pollA()).hasSize(Math.min(limit + 2, 60)).extracting(WorkCompletion::status)
            .containsOnly(WcStatus.SUCCESS);
    }

    /** Two connectx5 hosts whose requester a has {@code rnr_retry} N and the responder min_rnr_timer 12. */
    private static RuleRig rnrRig(final int rnrRetry)
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        rig.qpA.modifyToInit(EnumSet.noneOf(Access.class));
        rig.qpA.modifyToRtr(rig.qpB.address(), 12);
        rig.qpA.modifyToRts(7, rnrRetry);
        rig.qpB.connect(rig.qpA.address(), RuleRig.ALL_REMOTE);
        return rig;
    }
}
