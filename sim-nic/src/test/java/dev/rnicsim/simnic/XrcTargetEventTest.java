package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AsyncEvent;
import dev.rnicsim.verbs.AsyncEventType;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.XrcDomain;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * An XRC_RECV QP is an RC responder: an RDMA WRITE it refuses for its rkey raises IBV_EVENT_QP_ACCESS_ERR on it, as on
 * an RC QP (IBA C9-222.1.1; the kernel passes a target's events to its openers, __ib_shared_qp_event_handler); a
 * send without remote_srqn is NAKed and its diagnosis says it carried 0.
 */
class XrcTargetEventTest
{
    private static final Set<Access> REMOTE = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);

    @Test
    void shouldRaiseQpAccessErrOnTheXrcTargetThatRefusesAWriteForItsRkey()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final XrcDomain domain = rig.ctxB.openXrcd();
        final CompletionQueue srqCq = rig.ctxB.createCq(16);
        final SharedReceiveQueue srq = rig.pdB.createXrcSrq(domain, srqCq, new SrqAttr(16, 1, 0));
        final QueuePair ini = rig.pdA.createQp(QpInitAttr.xrcSend(rig.cqA));
        final QueuePair tgt = rig.ctxB.createXrcRecvQp(domain);
        tgt.connect(ini.address(), REMOTE);
        ini.connect(tgt.address(), EnumSet.noneOf(Access.class));
        final long src = rig.bufferA(4096);
        final long dst = rig.bufferB(4096);
        final MemoryRegion srcMr = rig.pdA.regMr(src, 4096, REMOTE);
        rig.pdB.regMr(dst, 4096, REMOTE);

        ini.postSend(SendWr.write(1, List.of(new Sge(src, 8, srcMr.lkey())), dst, 0x1234)
            .withRemoteSrqn(srq.srqNum()));

        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.REM_ACCESS_ERR);
        assertThat(tgt.state()).isEqualTo(QpState.ERR);
        final AsyncEvent event = rig.ctxB.getAsyncEvent().orElseThrow();
        assertThat(event.type()).isEqualTo(AsyncEventType.QP_ACCESS_ERR);
        assertThat(event.qp()).isSameAs(tgt);
        rig.ctxB.ackAsyncEvent(event);
        assertThat(rig.ctxB.getAsyncEvent()).as("one event for one refusal").isEmpty();
        assertThat(rig.ctxA.getAsyncEvent()).as("the requester's context gets none").isEmpty();
    }

    @Test
    void shouldSayAnXrcSendWithoutRemoteSrqnCarriesZeroWhenTheTargetNaksIt()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final XrcDomain domain = rig.ctxB.openXrcd();
        final SharedReceiveQueue srq = rig.pdB.createXrcSrq(domain, rig.ctxB.createCq(16), new SrqAttr(16, 1, 0));
        final QueuePair ini = rig.pdA.createQp(QpInitAttr.xrcSend(rig.cqA));
        final QueuePair tgt = rig.ctxB.createXrcRecvQp(domain);
        tgt.connect(ini.address(), REMOTE);
        ini.connect(tgt.address(), EnumSet.noneOf(Access.class));
        final long src = rig.bufferA(4096);
        final MemoryRegion srcMr = rig.pdA.regMr(src, 4096, REMOTE);

        ini.postSend(SendWr.send(1, List.of(new Sge(src, 8, srcMr.lkey()))));

        final List<WorkCompletion> wcs = rig.pollA();
        assertThat(wcs).extracting(WorkCompletion::status).containsExactly(WcStatus.REM_INV_REQ_ERR);
        assertThat(wcs.get(0).diagnosis().summary())
            .contains("remote_srqn=0x0 (what a work request that sets no remote_srqn carries)");
        assertThat(srq.receivesPosted()).isZero();
        final AsyncEvent event = rig.ctxB.getAsyncEvent().orElseThrow();
        assertThat(event.type()).as("mlx5 raises the invalid-request error on the target").isEqualTo(
            AsyncEventType.QP_REQ_ERR);
        assertThat(event.qp()).isSameAs(tgt);
    }

    @Test
    void shouldDropAnUnreadEventOfAQpDestroyedBeforeTheEventWasRead()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final XrcDomain domain = rig.ctxB.openXrcd();
        final SharedReceiveQueue srq = rig.pdB.createXrcSrq(domain, rig.ctxB.createCq(16), new SrqAttr(16, 1, 0));
        final QueuePair ini = rig.pdA.createQp(QpInitAttr.xrcSend(rig.cqA));
        final QueuePair tgt = rig.ctxB.createXrcRecvQp(domain);
        tgt.connect(ini.address(), REMOTE);
        ini.connect(tgt.address(), EnumSet.noneOf(Access.class));
        final long src = rig.bufferA(4096);
        final MemoryRegion srcMr = rig.pdA.regMr(src, 4096, REMOTE);
        ini.postSend(SendWr.write(1, List.of(new Sge(src, 8, srcMr.lkey())), rig.bufferB(4096), 0x1234)
            .withRemoteSrqn(srq.srqNum()));
        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.REM_ACCESS_ERR);
        assertThat(rig.ctxB.events().pending()).hasSize(1);

        tgt.close();

        assertThat(rig.ctxB.getAsyncEvent()).as("ib_uverbs_release_uevent drops the destroyed QP's unread events")
            .isEmpty();
    }
}
