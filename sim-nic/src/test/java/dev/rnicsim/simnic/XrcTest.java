package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpAttrMask;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.XrcDomain;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * XRC: domains (ibv_open_xrcd(3), kernel {@code ib_dealloc_xrcd_user}), XRC SRQs ({@code ibv_create_srq_ex},
 * {@code ibv_get_srq_num}), XRC_SEND and XRC_RECV QPs (kernel {@code create_qp}, {@code create_xrc_qp_user} and the
 * XRC rows of {@code qp_state_table}) and the target's choice of receive queue per message. Every refused call is
 * checked to change nothing.
 */
class XrcTest
{
    private static final Set<Access> REMOTE = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
        Access.REMOTE_ATOMIC);

    /** A's XRC_SEND QP connected to B's XRC_RECV QP; B has a domain with two XRC SRQs on their own CQ. */
    private static final class Xrc
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final XrcDomain domain = rig.ctxB.openXrcd();
        final CompletionQueue srqCq = rig.ctxB.createCq(64);
        final SharedReceiveQueue srq1 = rig.pdB.createXrcSrq(domain, srqCq, new SrqAttr(16, 1, 0));
        final SharedReceiveQueue srq2 = rig.pdB.createXrcSrq(domain, srqCq, new SrqAttr(16, 1, 0));
        final QueuePair ini = rig.pdA.createQp(QpInitAttr.xrcSend(rig.cqA));
        final QueuePair tgt = rig.ctxB.createXrcRecvQp(domain);
        final long src = rig.bufferA(4096);
        final long dst = rig.bufferB(8192);
        final MemoryRegion srcMr = rig.pdA.regMr(src, 4096, REMOTE);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, 8192, REMOTE);

        Xrc()
        {
            tgt.connect(ini.address(), REMOTE);
            ini.connect(tgt.address(), EnumSet.noneOf(Access.class));
        }

        SendWr send(final long id, final int lengthBytes, final int srqn)
        {
            return SendWr.send(id, List.of(new Sge(src, lengthBytes, srcMr.lkey()))).withRemoteSrqn(srqn);
        }
    }

    @Test
    void shouldDeliverEachSendToTheXrcSrqItNamesAndCompleteItOnThatSrqsCq()
    {
        final Xrc x = new Xrc();
        x.rig.ctxA.process().write(x.src, "first message".getBytes());
        x.srq1.postRecv(List.of(RecvWr.of(11, new Sge(x.dst, 64, x.dstMr.lkey()))));
        x.srq2.postRecv(List.of(RecvWr.of(22, new Sge(x.dst + 4096, 64, x.dstMr.lkey()))));

        x.ini.postSend(x.send(1, 13, x.srq2.srqNum()));

        assertThat(x.rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        final List<WorkCompletion> recv = x.srqCq.poll(8);
        assertThat(recv).extracting(WorkCompletion::wrId).containsExactly(22L);
        assertThat(recv.get(0).opcode()).isEqualTo(WcOpcode.RECV);
        assertThat(recv.get(0).byteLen()).isEqualTo(13);
        assertThat(x.rig.ctxB.process().read(x.dst + 4096, 13)).isEqualTo("first message".getBytes());
        assertThat(x.srq1.receivesPosted()).as("the other SRQ keeps its receive").isEqualTo(1);
        assertThat(x.rig.pollB()).as("nothing reaches the CQ of the PD's other QPs").isEmpty();
        assertThat(x.srq1.srqNum()).isNotEqualTo(x.srq2.srqNum());
    }

    @Test
    void shouldNakASrqNumberOutsideTheTargetsDomainWithRemInvReqErrAndMoveTheTargetToError()
    {
        final Xrc x = new Xrc();
        final XrcDomain other = x.rig.ctxB.openXrcd();
        final SharedReceiveQueue foreign = x.rig.pdB.createXrcSrq(other, x.srqCq, new SrqAttr(4, 1, 0));
        foreign.postRecv(List.of(RecvWr.of(5, new Sge(x.dst, 64, x.dstMr.lkey()))));

        x.ini.postSend(x.send(1, 8, foreign.srqNum()));

        final List<WorkCompletion> wc = x.rig.pollA();
        assertThat(wc).extracting(WorkCompletion::status).containsExactly(WcStatus.REM_INV_REQ_ERR);
        assertThat(wc.get(0).diagnosis().summary()).contains("remote_srqn").contains("XRC domain");
        assertThat(x.tgt.state()).isEqualTo(QpState.ERR);
        assertThat(foreign.receivesPosted()).as("the SRQ of the other domain is not touched").isEqualTo(1);
        assertThat(x.srqCq.poll(8)).isEmpty();
    }

    @Test
    void shouldCheckRdmaAndAtomicsOnXrcAgainstTheNamedSrqsPd()
    {
        final Xrc x = new Xrc();
        x.rig.ctxA.process().write(x.src, "written".getBytes());
        x.ini.postSend(SendWr.write(1, List.of(new Sge(x.src, 7, x.srcMr.lkey())), x.dst, x.dstMr.rkey())
            .withRemoteSrqn(x.srq1.srqNum()));
        x.ini.postSend(SendWr.fetchAndAdd(2, new Sge(x.src + 64, 8, x.srcMr.lkey()), x.dst + 128, x.dstMr.rkey(), 5)
            .withRemoteSrqn(x.srq1.srqNum()));
        assertThat(x.rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS,
            WcStatus.SUCCESS);
        assertThat(x.rig.ctxB.process().read(x.dst, 7)).isEqualTo("written".getBytes());
        assertThat(x.rig.ctxB.process().read(x.dst + 128, 1)[0]).isEqualTo((byte)5);

        // An SRQ of another PD: the rkey of this PD's MR is refused there.
        final SharedReceiveQueue otherPd = x.rig.ctxB.allocPd().createXrcSrq(x.domain, x.srqCq,
            new SrqAttr(4, 1, 0));
        x.ini.postSend(SendWr.write(3, List.of(new Sge(x.src, 7, x.srcMr.lkey())), x.dst, x.dstMr.rkey())
            .withRemoteSrqn(otherPd.srqNum()));
        assertThat(x.rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.REM_ACCESS_ERR);
    }

    @Test
    void shouldRefuseToCloseADomainWithAnSrqOrTargetQpAndChangeNothing()
    {
        final Xrc x = new Xrc();
        final VerbsException busy = catchThrowableOfType(VerbsException.class, x.domain::close);
        assertThat(busy.errno()).isEqualTo(Errno.EBUSY.code());
        assertThat(busy.getMessage()).contains("ib_dealloc_xrcd_user").contains("2 XRC SRQ(s)").contains("1 XRC_RECV");
        assertThat(x.domain.isClosed()).isFalse();
        // The domain still works: a message still finds its SRQ.
        x.srq1.postRecv(List.of(RecvWr.of(1, new Sge(x.dst, 64, x.dstMr.lkey()))));
        x.ini.postSend(x.send(9, 4, x.srq1.srqNum()));
        assertThat(x.srqCq.poll(4)).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);

        x.tgt.close();
        x.srq1.close();
        x.srq2.close();
        x.domain.close();
        assertThat(x.domain.isClosed()).isTrue();
        final VerbsException gone = catchThrowableOfType(VerbsException.class,
            () -> x.rig.pdB.createXrcSrq(x.domain, x.srqCq, new SrqAttr(4, 1, 0)));
        assertThat(gone.errno()).isEqualTo(Errno.EINVAL.code());
    }

    @Test
    void shouldAnswerEopnotsuppForEveryXrcVerbOnADeviceWithoutXrcAndCreateNothing()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.rxe());
        final int srqsBefore = rig.deviceB.objects().srqsLive();
        final int qpsBefore = rig.deviceB.objects().qpsLive();
        for (final Runnable verb : List.<Runnable>of(rig.ctxB::openXrcd,
            () -> rig.pdB.createXrcSrq(null, rig.cqB, new SrqAttr(4, 1, 0)),
            () -> rig.pdB.createQp(QpInitAttr.xrcSend(rig.cqB)), () -> rig.ctxB.createXrcRecvQp(null)))
        {
            final VerbsException e = catchThrowableOfType(VerbsException.class, verb::run);
            assertThat(e.errno()).isEqualTo(Errno.EOPNOTSUPP.code());
            assertThat(e.getMessage()).contains("IBV_DEVICE_XRC").contains("; use a device with XRC");
        }
        assertThat(rig.deviceB.objects().srqsLive()).isEqualTo(srqsBefore);
        assertThat(rig.deviceB.objects().qpsLive()).isEqualTo(qpsBefore);
        assertThat(rig.ctxB.xrcDomains()).isEmpty();
    }

    @Test
    void shouldRefuseAnXrcSrqWithoutALiveDomainOrCqOfTheContextAndChangeNothing()
    {
        final Xrc x = new Xrc();
        final int before = x.rig.deviceB.objects().srqsLive();
        final VerbsException noCq = catchThrowableOfType(VerbsException.class,
            () -> x.rig.pdB.createXrcSrq(x.domain, x.rig.cqA, new SrqAttr(4, 1, 0)));
        assertThat(noCq.errno()).isEqualTo(Errno.EINVAL.code());
        final VerbsException noDomain = catchThrowableOfType(VerbsException.class,
            () -> x.rig.pdB.createXrcSrq(null, x.srqCq, new SrqAttr(4, 1, 0)));
        assertThat(noDomain.errno()).isEqualTo(Errno.EINVAL.code());
        final VerbsException tooBig = catchThrowableOfType(VerbsException.class,
            () -> x.rig.pdB.createXrcSrq(x.domain, x.srqCq, new SrqAttr(1 << 30, 1, 0)));
        assertThat(tooBig.errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(x.rig.deviceB.objects().srqsLive()).isEqualTo(before);
        assertThat(((SimXrcd)x.domain).srqs()).hasSize(2);
        final VerbsException foreignDomain = catchThrowableOfType(VerbsException.class,
            () -> x.rig.ctxA.createXrcRecvQp(x.domain));
        assertThat(foreignDomain.errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(((SimXrcd)x.domain).targetQps()).hasSize(1);
    }

    @Test
    void shouldGiveNeitherXrcQpAReceiveQueueNorTheTargetASendQueue()
    {
        final Xrc x = new Xrc();
        for (final QueuePair qp : List.of(x.ini, x.tgt))
        {
            final PostException e = catchThrowableOfType(PostException.class,
                () -> qp.postRecv(List.of(RecvWr.of(1, new Sge(x.dst, 8, x.dstMr.lkey())))));
            assertThat(e.errno()).isEqualTo(Errno.ENOMEM.code());
            assertThat(e.getMessage()).contains("no receive queue").contains("ibv_post_srq_recv");
        }
        final PostException send = catchThrowableOfType(PostException.class,
            () -> x.tgt.postSend(SendWr.send(1, List.of())));
        assertThat(send.errno()).isEqualTo(Errno.ENOMEM.code());
        assertThat(((SimQp)x.tgt).sendsWaiting()).as("nothing was queued").isZero();
        assertThat(x.tgt.state()).isEqualTo(QpState.RTS);
        assertThat(x.tgt.pd()).as("an XRC_RECV QP has no PD of its own").isNotIn(x.rig.pdA, x.rig.pdB);
        assertThat(x.srq1.receivesPosted() + x.srq2.receivesPosted()).isZero();
    }

    @Test
    void shouldTakeTheXrcRowsOfTheKernelsTransitionTable()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final XrcDomain d = rig.ctxB.openXrcd();
        final QueuePair tgt = rig.ctxB.createXrcRecvQp(d);
        final QueuePair ini = rig.pdA.createQp(QpInitAttr.xrcSend(rig.cqA));
        for (final QueuePair qp : List.of(tgt, ini))
        {
            final QpAttr.Builder init = QpAttr.builder().state(QpState.INIT).pkeyIndex(0).port(1)
                .accessFlags(EnumSet.noneOf(Access.class));
            qp.modify(init.build(), init.mask());
        }
        final QpAttr.Builder rtr = QpAttr.builder().state(QpState.RTR)
            .av(new dev.rnicsim.verbs.AhAttr(rig.deviceA.gid(), 0, 1, 0)).pathMtu(3).destQpNum(ini.qpNum())
            .rqPsn(0).maxDestRdAtomic(1);
        // XRC_TGT at RTR needs MIN_RNR_TIMER as RC does; XRC_INI takes no MAX_DEST_RD_ATOMIC.
        assertThat(catchThrowableOfType(VerbsException.class, () -> tgt.modify(rtr.build(), rtr.mask())).errno())
            .isEqualTo(Errno.EINVAL.code());
        assertThat(tgt.state()).isEqualTo(QpState.INIT);
        assertThat(catchThrowableOfType(VerbsException.class, () -> ini.modify(rtr.build(), rtr.mask())).getMessage())
            .contains("IBV_QP_MAX_DEST_RD_ATOMIC");
        rtr.minRnrTimer(12);
        tgt.modify(rtr.build(), rtr.mask());
        // XRC_TGT at RTS: TIMEOUT and SQ_PSN only; RETRY_CNT is refused.
        final QpAttr.Builder rts = QpAttr.builder().state(QpState.RTS).timeout(14).sqPsn(0).retryCnt(7);
        final VerbsException retry = catchThrowableOfType(VerbsException.class,
            () -> tgt.modify(rts.build(), rts.mask()));
        assertThat(retry.getMessage()).contains("IBV_QP_RETRY_CNT");
        assertThat(tgt.state()).isEqualTo(QpState.RTR);
        final QpAttr.Builder rtsOk = QpAttr.builder().state(QpState.RTS).timeout(14).sqPsn(0);
        tgt.modify(rtsOk.build(), rtsOk.mask());
        assertThat(tgt.state()).isEqualTo(QpState.RTS);
        assertThat(QpTransitions.required(QpType.XRC_SEND, QpState.RTR, QpState.RTS)).containsExactlyInAnyOrder(
            QpAttrMask.TIMEOUT, QpAttrMask.RETRY_CNT, QpAttrMask.RNR_RETRY, QpAttrMask.SQ_PSN,
            QpAttrMask.MAX_QP_RD_ATOMIC);
    }

    @Test
    void shouldNakASendThatNamesNoSrqAndLeaveEverySrqAsItWas()
    {
        final Xrc x = new Xrc();
        x.srq1.postRecv(List.of(RecvWr.of(1, new Sge(x.dst, 64, x.dstMr.lkey()))));
        x.ini.postSend(SendWr.send(7, List.of(new Sge(x.src, 4, x.srcMr.lkey()))));
        assertThat(x.rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.REM_INV_REQ_ERR);
        assertThat(x.ini.state()).isEqualTo(QpState.ERR);
        assertThat(x.srq1.receivesPosted()).isEqualTo(1);
        assertThat(x.srqCq.poll(4)).as("the SRQ's receives are not flushed with the target QP").isEmpty();
    }

    @Test
    void shouldWaitForAReceiveOnAnEmptyXrcSrqAndGoOnWhenOneIsPosted()
    {
        final Xrc x = new Xrc();
        x.ini.postSend(x.send(1, 4, x.srq1.srqNum()));
        assertThat(x.rig.pollA()).as("RNR: rnr_retry 7 waits").isEmpty();
        x.srq1.postRecv(List.of(RecvWr.of(3, new Sge(x.dst, 64, x.dstMr.lkey()))));
        assertThat(x.rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(x.srqCq.poll(4)).extracting(WorkCompletion::wrId).containsExactly(3L);
    }

    @Test
    void shouldCloseTheContextsXrcObjectsWithIt()
    {
        final Xrc x = new Xrc();
        x.rig.ctxB.close();
        assertThat(x.domain.isClosed()).isTrue();
        assertThat(x.tgt.isClosed()).isTrue();
        assertThat(x.srq1.isClosed()).isTrue();
        assertThat(x.rig.deviceB.objects().qpsLive()).isZero();
        assertThat(x.rig.deviceB.objects().srqsLive()).isZero();
        assertThat(Arrays.asList(x.srq1, x.srq2)).allMatch(SharedReceiveQueue::isClosed);
    }
}
