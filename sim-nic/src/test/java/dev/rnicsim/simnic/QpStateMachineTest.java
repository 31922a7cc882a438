package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AhAttr;
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
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The ibv_modify_qp state machine one transition at a time: the kernel's table of transitions and attribute masks
 * (drivers/infiniband/core/verbs.c {@code qp_state_table}, {@code ib_modify_qp_is_ok}), the value checks of the
 * drivers (rxe {@code rxe_qp_chk_attr}, uverbs {@code modify_qp}), ibv_query_qp, and what may be posted in each
 * state (rdma-core providers: post_send below RTS is EINVAL; rxe {@code rxe_post_recv}: receives need INIT). Every
 * refused call is checked to leave the QP as it was.
 */
class QpStateMachineTest
{
    private static VerbsException refused(final Runnable call)
    {
        final VerbsException e = catchThrowableOfType(VerbsException.class, call::run);
        assertThat(e).as("the call fails").isNotNull();
        return e;
    }

    private static QpAttr.Builder init()
    {
        return QpAttr.builder().state(QpState.INIT).pkeyIndex(0).port(1).accessFlags(EnumSet.of(Access.REMOTE_WRITE));
    }

    private static QpAttr.Builder rtr(final QueuePair remote)
    {
        return QpAttr.builder().state(QpState.RTR).av(AhAttr.toGid(remote.address().gid())).pathMtu(QpAttr.MTU_4096)
            .destQpNum(remote.qpNum()).rqPsn(remote.address().psn()).maxDestRdAtomic(4).minRnrTimer(12);
    }

    private static QpAttr.Builder rts()
    {
        return QpAttr.builder().state(QpState.RTS).timeout(14).retryCnt(7).rnrRetry(7).sqPsn(0x123).maxRdAtomic(4);
    }

    private static void modify(final QueuePair qp, final QpAttr.Builder b)
    {
        qp.modify(b.build(), b.mask());
    }

    @Test
    void shouldTakeAnRcQpThroughEveryStateOneStepAtATimeAndReportTheAttributesInQueryQp()
    {
        // ib_modify_qp_is_ok: RESET->INIT needs PKEY_INDEX|PORT|ACCESS_FLAGS for RC, INIT->RTR AV|PATH_MTU|DEST_QPN|
        // RQ_PSN|MAX_DEST_RD_ATOMIC|MIN_RNR_TIMER, RTR->RTS TIMEOUT|RETRY_CNT|RNR_RETRY|SQ_PSN|MAX_QP_RD_ATOMIC.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final QueuePair qp = rig.qpA;
        modify(qp, init());
        assertThat(qp.query().qpState()).isEqualTo(QpState.INIT);
        assertThat(qp.query().qpAccessFlags()).containsExactly(Access.REMOTE_WRITE);
        modify(qp, QpAttr.builder().state(QpState.INIT).accessFlags(EnumSet.of(Access.REMOTE_READ)));
        assertThat(qp.query().qpAccessFlags()).as("INIT->INIT may change the rights").containsExactly(
            Access.REMOTE_READ);
        modify(qp, rtr(rig.qpB));
        modify(qp, rts());
        final QpAttr q = qp.query();
        assertThat(q.qpState()).isEqualTo(QpState.RTS);
        assertThat(q.destQpNum()).isEqualTo(rig.qpB.qpNum());
        assertThat(q.ahAttr().dgid()).isEqualTo(rig.qpB.address().gid());
        assertThat(q.pathMtu()).isEqualTo(QpAttr.MTU_4096);
        assertThat(q.sqPsn()).isEqualTo(0x123);
        assertThat(q.timeout()).isEqualTo(14);
        assertThat(q.maxRdAtomic()).isEqualTo(4);
        assertThat(q.maxDestRdAtomic()).isEqualTo(4);
        assertThat(q.minRnrTimer()).isEqualTo(12);
        modify(qp, QpAttr.builder().state(QpState.SQD));
        assertThat(qp.state()).isEqualTo(QpState.SQD);
        modify(qp, QpAttr.builder().state(QpState.RTS).minRnrTimer(3));
        assertThat(qp.query().minRnrTimer()).as("SQD->RTS takes MIN_RNR_TIMER for RC").isEqualTo(3);
        modify(qp, QpAttr.builder().state(QpState.ERR));
        assertThat(qp.state()).isEqualTo(QpState.ERR);
        modify(qp, QpAttr.builder().state(QpState.RESET));
        final QpAttr reset = qp.query();
        assertThat(reset.qpState()).isEqualTo(QpState.RESET);
        assertThat(reset.destQpNum()).as("RESET clears the attributes").isZero();
        assertThat(reset.qpAccessFlags()).isEmpty();
    }

    @Test
    void shouldRefuseATransitionWithoutARequiredAttributeWithEinvalAndChangeNothing()
    {
        // verbs.c qp_state_table: INIT->RTR of an RC QP requires MIN_RNR_TIMER and MAX_DEST_RD_ATOMIC.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        modify(rig.qpA, init());
        final QpAttr before = rig.qpA.query();
        final QpAttr.Builder b = rtr(rig.qpB);
        final Set<QpAttrMask> mask = b.mask();
        mask.remove(QpAttrMask.MIN_RNR_TIMER);
        final VerbsException e = refused(() -> rig.qpA.modify(b.build(), mask));
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.detail()).contains("missing IBV_QP_MIN_RNR_TIMER");
        assertThat(rig.qpA.query()).as("nothing changed").isEqualTo(before);
    }

    @Test
    void shouldRefuseAnAttributeTheTransitionDoesNotTakeWithEinval()
    {
        // verbs.c qp_state_table: RESET->INIT of an RC QP takes no QKEY; of a UD QP no ACCESS_FLAGS.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final VerbsException rc = refused(() -> modify(rig.qpA, init().qkey(7)));
        assertThat(rc.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(rc.detail()).contains("does not take IBV_QP_QKEY");
        final QueuePair ud = rig.pdA.createQp(QpInitAttr.rc(rig.cqA).withType(QpType.UD));
        final VerbsException e = refused(() -> ud.modifyToInit(EnumSet.of(Access.REMOTE_WRITE)));
        assertThat(e.detail()).contains("does not take IBV_QP_ACCESS_FLAGS");
        assertThat(rig.qpA.state()).isEqualTo(QpState.RESET);
        assertThat(ud.state()).isEqualTo(QpState.RESET);
    }

    @Test
    void shouldGoToResetFromAnyStateButNotFromResetToErr()
    {
        // verbs.c qp_state_table: every row has RESET; every row but RESET has ERR.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final VerbsException e = refused(() -> modify(rig.qpA, QpAttr.builder().state(QpState.ERR)));
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.detail()).contains("no transition RESET -> ERR");
        modify(rig.qpA, init());
        modify(rig.qpA, QpAttr.builder().state(QpState.ERR));
        modify(rig.qpA, QpAttr.builder().state(QpState.RESET));
        modify(rig.qpA, QpAttr.builder().state(QpState.RESET));
        assertThat(rig.qpA.state()).isEqualTo(QpState.RESET);
        final VerbsException skip = refused(() -> modify(rig.qpA, rts()));
        assertThat(skip.detail()).contains("no transition RESET -> RTS");
    }

    @Test
    void curStateWithoutStateShouldLeaveTheQpWhereItIs()
    {
        // ibv_modify_qp without IBV_QP_STATE moves no QP: the driver changes the state under IB_QP_STATE alone
        // (rxe_qp_from_attr); IBV_QP_CUR_STATE only names the state the transition table is checked from (on rxe:
        // mlx4 and mlx5 send the device that transition's command, which a QP in RESET refuses: CurQpStateRuleTest).
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.rxe());
        modify(rig.qpA, QpAttr.builder().curState(QpState.RTS));

        assertThat(rig.qpA.state()).as("no RESET -> RTS without any attribute of INIT, RTR or RTS")
            .isEqualTo(QpState.RESET);
    }

    @Test
    void shouldAcceptCurStateOnlyFromRtrRtsSqdOrSqe()
    {
        // ib_modify_qp_is_ok: IB_QP_CUR_STATE with a current state other than RTR, RTS, SQD, SQE fails.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        modify(rig.qpA, init());
        final VerbsException e = refused(() -> modify(rig.qpA, QpAttr.builder().state(QpState.INIT)
            .curState(QpState.INIT)));
        assertThat(e.detail()).contains("CUR_STATE is accepted only from RTR, RTS, SQD or SQE");
        modify(rig.qpA, rtr(rig.qpB));
        modify(rig.qpA, rts().curState(QpState.RTR));
        assertThat(rig.qpA.state()).isEqualTo(QpState.RTS);
    }

    @Test
    void shouldRefuseValuesBeyondThePortAndTheDevice()
    {
        // uverbs modify_qp (rdma_is_port_valid), rxe_qp_chk_attr (pkey_index, path_mtu, max_rd_atomic).
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.rxe());
        assertThat(refused(() -> modify(rig.qpA, init().port(2))).detail()).contains("port_num=2");
        assertThat(refused(() -> modify(rig.qpA, init().pkeyIndex(1 << 16))).detail()).contains("pkey_index");
        modify(rig.qpA, init());
        assertThat(refused(() -> modify(rig.qpA, rtr(rig.qpB).pathMtu(6))).detail()).contains("path_mtu=6");
        modify(rig.qpA, rtr(rig.qpB));
        final int tooDeep = rig.deviceA.profile().attributes().maxQpInitRdAtom() + 1;
        assertThat(refused(() -> modify(rig.qpA, rts().maxRdAtomic(tooDeep))).detail()).contains("max_rd_atomic");
        assertThat(refused(() -> modify(rig.qpA, rts().timeout(32))).detail()).contains("timeout=32");
        assertThat(rig.qpA.state()).as("every refusal left the QP in RTR").isEqualTo(QpState.RTR);
    }

    @Test
    void shouldRefuseSendsBelowRtsAndReceivesInResetWithEinval()
    {
        // rdma-core providers (mlx5, pvrdma, xsc: ibqp->state < IBV_QPS_RTS -> EINVAL; rxe_post_send likewise);
        // rxe_post_recv: a QP below INIT takes no receive.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final long buf = rig.bufferA(4096);
        final MemoryRegion mr = rig.pdA.regMr(buf, 4096, RuleRig.LOCAL);
        final PostException inReset = catchThrowableOfType(PostException.class,
            () -> rig.qpA.postRecv(RecvWr.of(1, new Sge(buf, 64, mr.lkey()))));
        assertThat(inReset.errnoName()).isEqualTo(Errno.EINVAL);
        for (final QpAttr.Builder step : List.of(init(), rtr(rig.qpB)))
        {
            modify(rig.qpA, step);
            final PostException e = catchThrowableOfType(PostException.class,
                () -> rig.qpA.postSend(SendWr.send(2, List.of(new Sge(buf, 64, mr.lkey())))));
            assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
            assertThat(e.detail()).contains("sends need RTS");
        }
        rig.qpA.postRecv(RecvWr.of(3, new Sge(buf, 64, mr.lkey())));
        assertThat(((SimQp)rig.qpA).receivesPosted()).as("receives are taken from INIT on").isEqualTo(1);
    }

    @Test
    void shouldHoldSendsInSqdAndRunThemBackInRts()
    {
        // IBA 10.3.1: in SQD the send queue is drained and takes no new work request until back in RTS.
        final RuleRig rig = RuleRig.connected();
        final long src = rig.bufferA(4096);
        final long dst = rig.bufferB(4096);
        final MemoryRegion s = rig.pdA.regMr(src, 4096, RuleRig.LOCAL);
        final MemoryRegion d = rig.pdB.regMr(dst, 4096, RuleRig.REMOTE_ALL);
        modify(rig.qpA, QpAttr.builder().state(QpState.SQD));
        rig.qpA.postSend(SendWr.write(9, List.of(new Sge(src, 64, s.lkey())), dst, d.rkey()));
        assertThat(rig.pollA()).as("nothing executes in SQD").isEmpty();
        assertThat(rig.qpA.query().sqDraining()).isTrue();
        modify(rig.qpA, QpAttr.builder().state(QpState.RTS));
        final List<WorkCompletion> wcs = rig.pollA();
        assertThat(wcs).hasSize(1);
        assertThat(wcs.get(0).status()).isEqualTo(WcStatus.SUCCESS);
    }

    @Test
    void shouldDropQueuedReceivesWithoutCompletionsOnReset()
    {
        // IBA 10.3.1: RESET empties both queues; no completion is generated for what was queued.
        final RuleRig rig = RuleRig.connected();
        final long buf = rig.bufferB(4096);
        final MemoryRegion mr = rig.pdB.regMr(buf, 4096, RuleRig.LOCAL);
        rig.qpB.postRecv(RecvWr.of(1, new Sge(buf, 64, mr.lkey())));
        modify(rig.qpB, QpAttr.builder().state(QpState.RESET));
        assertThat(((SimQp)rig.qpB).receivesPosted()).isZero();
        assertThat(rig.pollB()).isEmpty();
    }
}
