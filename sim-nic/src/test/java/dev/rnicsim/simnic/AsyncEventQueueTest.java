package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.AsyncEvent;
import dev.rnicsim.verbs.AsyncEventType;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The asynchronous event queue of a context (ibv_get_async_event(3)): each event the model raises, on the context that
 * owns its element, in order, and where drivers differ as {@link AsyncEventRules} says.
 */
class AsyncEventQueueTest
{
    private static List<AsyncEvent> drain(final SimContext ctx)
    {
        final List<AsyncEvent> out = new ArrayList<>();
        for (Optional<AsyncEvent> e = ctx.getAsyncEvent(); e.isPresent(); e = ctx.getAsyncEvent())
        {
            out.add(e.get());
            ctx.ackAsyncEvent(e.get());
        }
        return out;
    }

    private static List<AsyncEventType> types(final SimContext ctx)
    {
        return drain(ctx).stream().map(AsyncEvent::type).toList();
    }

    /** An RDMA WRITE of 64 bytes from a to b with the given rkey; returns a's completion status. */
    private static WcStatus write(final RuleRig rig, final int rkey, final long remote)
    {
        final long src = rig.bufferA(4096);
        final MemoryRegion s = rig.pdA.regMr(src, 4096, RuleRig.LOCAL);
        rig.qpA.postSend(List.of(SendWr.write(1, List.of(new Sge(src, 64, s.lkey())), remote, rkey)));
        return rig.pollA().get(0).status();
    }

    @Test
    void shouldQueueSrqLimitReachedOnceOnTheSrqsContextWhenReceivesDropBelowTheLimit()
    {
        // rxe get_srq_wqe (rxe_resp.c), ibv_modify_srq(3): below the armed limit, one event, and the limit is disarmed.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final SharedReceiveQueue srq = rig.pdB.createSrq(new SrqAttr(8, 1, 2));
        final QueuePair b = rig.pdB.createQp(new QpInitAttr(rig.cqB, rig.cqB, QpType.RC, new QpCap(8, 8, 1, 1, 0),
            false, srq));
        rig.qpA.connect(b.address(), RuleRig.ALL_REMOTE);
        b.connect(rig.qpA.address(), RuleRig.ALL_REMOTE);
        final long dst = rig.bufferB(4096);
        final MemoryRegion d = rig.pdB.regMr(dst, 4096, RuleRig.LOCAL);
        for (int i = 0; i < 4; i++)
        {
            srq.postRecv(List.of(RecvWr.of(i, new Sge(dst, 4096, d.lkey()))));
        }
        final long src = rig.bufferA(4096);
        final MemoryRegion s = rig.pdA.regMr(src, 4096, RuleRig.LOCAL);
        for (int i = 0; i < 4; i++)
        {
            rig.qpA.postSend(List.of(SendWr.send(i, List.of(new Sge(src, 8, s.lkey())))));
        }
        assertThat(rig.pollB()).hasSize(4);
        assertThat(drain(rig.ctxA)).as("the requester's context").isEmpty();
        final List<AsyncEvent> events = drain(rig.ctxB);
        assertThat(events).as("b was in RTS already: no COMM_EST").extracting(AsyncEvent::type)
            .containsExactly(AsyncEventType.SRQ_LIMIT_REACHED);
        assertThat(events.get(0).srq()).isSameAs(srq);
        assertThat(events.get(0).cause()).contains("holds 1 receive(s), below its armed srq_limit 2");
        assertThat(srq.query().srqLimit()).as("disarmed").isZero();
    }

    @Test
    void shouldQueueCqErrOnceWhenACompletionFindsTheCqFull()
    {
        // rxe_cq_post (rxe_cq.c): a full CQ raises IB_EVENT_CQ_ERR and the completion is lost.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final CompletionQueue small = rig.ctxA.createCq(1);
        final QueuePair a = rig.pdA.createQp(QpInitAttr.rc(small));
        a.connect(rig.qpB.address(), RuleRig.ALL_REMOTE);
        rig.qpB.connect(a.address(), RuleRig.ALL_REMOTE);
        final long src = rig.bufferA(4096);
        final long dst = rig.bufferB(4096);
        final MemoryRegion s = rig.pdA.regMr(src, 4096, RuleRig.LOCAL);
        final MemoryRegion d = rig.pdB.regMr(dst, 4096, RuleRig.REMOTE_ALL);
        final List<SendWr> wrs = new ArrayList<>();
        for (int i = 0; i < 4; i++)
        {
            wrs.add(SendWr.write(i, List.of(new Sge(src, 8, s.lkey())), dst, d.rkey()));
        }
        a.postSend(wrs);
        rig.fabric.engine().runUntil(() -> false);
        final List<AsyncEvent> events = drain(rig.ctxA);
        assertThat(events).extracting(AsyncEvent::type).containsExactly(AsyncEventType.CQ_ERR);
        assertThat(events.get(0).cq()).isSameAs(small);
        assertThat(((SimCq)small).overrun()).isTrue();
    }

    @Test
    void shouldQueueQpAccessErrAtTheResponderForAWriteWithABadRkeyOnMlx5AndRxe()
    {
        // IBA C9-222.1.1: an R_Key violation no receive WQE carries is an affiliated asynchronous error at the
        // responder (mlx5 MLX5_EVENT_TYPE_WQ_ACCESS_ERROR; rxe RESPST_ERR_RKEY_VIOLATION_EVENT).
        for (final DeviceProfile p : List.of(DeviceProfiles.connectx5(), DeviceProfiles.rxe()))
        {
            final RuleRig rig = RuleRig.connected(p, RuleRig.ALL_REMOTE);
            final long dst = rig.bufferB(4096);
            final MemoryRegion d = rig.pdB.regMr(dst, 4096, RuleRig.REMOTE_ALL);
            assertThat(write(rig, d.rkey() ^ 0x100, dst)).isEqualTo(WcStatus.REM_ACCESS_ERR);
            final List<AsyncEvent> events = drain(rig.ctxB);
            assertThat(events).as(p.name()).extracting(AsyncEvent::type)
                .containsExactly(AsyncEventType.QP_ACCESS_ERR);
            assertThat(events.get(0).qp()).isSameAs(rig.qpB);
            assertThat(events.get(0).cause()).contains("went to ERR refusing RDMA_WRITE wr_id 1");
        }
    }

    @Test
    void shouldQueueNoQpEventOnAnRxeOfAKernelBefore62()
    {
        // rxe_resp.c before Linux 6.2 raised no QP event; the CQ-less requester side never does.
        final RuleRig rig = RuleRig.connected(DeviceProfiles.rxeLegacy(), RuleRig.ALL_REMOTE);
        final long dst = rig.bufferB(4096);
        final MemoryRegion d = rig.pdB.regMr(dst, 4096, RuleRig.REMOTE_ALL);
        assertThat(write(rig, d.rkey() ^ 0x100, dst)).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(types(rig.ctxB)).isEmpty();
    }

    @Test
    void shouldQueueNoAccessErrWhenAReceiveCompletionCarriesTheError()
    {
        // IBA C9-222.1.1: an error related to a receive WQE is a completion error, not an async one
        // (RDMA WRITE with immediate data consumes a receive).
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final long dst = rig.bufferB(4096);
        final MemoryRegion d = rig.pdB.regMr(dst, 4096, RuleRig.REMOTE_ALL);
        rig.qpB.postRecv(List.of(RecvWr.of(9, new Sge(dst, 64, d.lkey()))));
        final long src = rig.bufferA(4096);
        final MemoryRegion s = rig.pdA.regMr(src, 4096, RuleRig.LOCAL);
        rig.qpA.postSend(List.of(SendWr.writeWithImm(1, List.of(new Sge(src, 64, s.lkey())), dst, d.rkey() ^ 0x100,
            7)));
        assertThat(rig.pollA().get(0).status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(rig.pollB()).extracting(WorkCompletion::status).contains(WcStatus.REM_ACCESS_ERR);
        assertThat(types(rig.ctxB)).doesNotContain(AsyncEventType.QP_ACCESS_ERR);
    }

    @Test
    void shouldQueueQpReqErrForAMisalignedAtomicOnMlx5()
    {
        // IBA C9-222.1.1 with C9-173 (an atomic's address must be 8-byte aligned): invalid request, no receive WQE;
        // mlx5 MLX5_EVENT_TYPE_WQ_INVAL_REQ_ERROR -> IB_EVENT_QP_REQ_ERR.
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final long dst = rig.bufferB(4096);
        final MemoryRegion d = rig.pdB.regMr(dst, 4096, RuleRig.REMOTE_ALL);
        final long src = rig.bufferA(4096);
        final MemoryRegion s = rig.pdA.regMr(src, 4096, RuleRig.LOCAL);
        rig.qpA.postSend(List.of(SendWr.fetchAndAdd(1, new Sge(src, 8, s.lkey()), dst + 4, d.rkey(), 1)));
        assertThat(rig.pollA().get(0).status()).isEqualTo(WcStatus.REM_INV_REQ_ERR);
        assertThat(types(rig.ctxB)).containsExactly(AsyncEventType.QP_REQ_ERR);
        assertThat(AsyncEventRules.of(DeviceProfiles.rxe()).responderInvalidRequest())
            .as("rxe's length and opcode errors raise nothing").isFalse();
    }

    @Test
    void shouldQueueLastWqeReachedWhenAQpOnAnSrqEntersErr()
    {
        // IBA o11-5.2.5; mlx5 MLX5_EVENT_TYPE_SRQ_LAST_WQE; rxe flush_recv_queue (Linux 6.5 and later).
        for (final DeviceProfile p : List.of(DeviceProfiles.connectx5(), DeviceProfiles.rxe(),
            DeviceProfiles.rxeLegacy()))
        {
            final RuleRig rig = RuleRig.unconnected(p);
            final SharedReceiveQueue srq = rig.pdB.createSrq(new SrqAttr(8, 1, 0));
            final QueuePair b = rig.pdB.createQp(new QpInitAttr(rig.cqB, rig.cqB, QpType.RC,
                new QpCap(8, 8, 1, 1, 0), false, srq));
            b.modifyToInit(RuleRig.ALL_REMOTE);
            rig.qpB.modifyToInit(RuleRig.ALL_REMOTE);
            b.modifyToError();
            b.modifyToError();
            rig.qpB.modifyToError();
            final List<AsyncEvent> events = drain(rig.ctxB);
            if (p.name().equals("rxe-legacy"))
            {
                assertThat(events).as(p.name()).isEmpty();
            }
            else
            {
                assertThat(events).as(p.name() + ": once, for the QP on the SRQ only").extracting(AsyncEvent::type)
                    .containsExactly(AsyncEventType.QP_LAST_WQE_REACHED);
                assertThat(events.get(0).qp()).isSameAs(b);
            }
        }
    }

    @Test
    void shouldQueueCommEstOnceForTheFirstMessageInRtrOnMlx5ButNotOnRxe()
    {
        // IBA 11.6.3.1 communication established; mlx5 MLX5_EVENT_TYPE_COMM_EST; rxe has no such event.
        for (final DeviceProfile p : List.of(DeviceProfiles.connectx5(), DeviceProfiles.rxe()))
        {
            final RuleRig rig = RuleRig.unconnected(p);
            rig.qpA.connect(rig.qpB.address(), RuleRig.ALL_REMOTE);
            rig.qpB.modifyToInit(RuleRig.ALL_REMOTE);
            rig.qpB.modifyToRtr(rig.qpA.address(), 12);
            final long dst = rig.bufferB(4096);
            final MemoryRegion d = rig.pdB.regMr(dst, 4096, RuleRig.REMOTE_ALL);
            assertThat(write(rig, d.rkey(), dst)).isEqualTo(WcStatus.SUCCESS);
            assertThat(write(rig, d.rkey(), dst)).isEqualTo(WcStatus.SUCCESS);
            final List<AsyncEvent> events = drain(rig.ctxB);
            if (p.driver().equals("rxe"))
            {
                assertThat(events).isEmpty();
            }
            else
            {
                assertThat(events).extracting(AsyncEvent::type).containsExactly(AsyncEventType.COMM_EST);
                assertThat(events.get(0).qp()).isSameAs(rig.qpB);
            }
        }
    }

    @Test
    void shouldReturnEventsInOrderAndRefuseASecondAckOrAClosedContext()
    {
        // ibv_get_async_event(3): oldest first; each returned event acknowledged once.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final SharedReceiveQueue srq = rig.pdB.createSrq(new SrqAttr(8, 1, 0));
        final QueuePair b1 = rig.pdB.createQp(new QpInitAttr(rig.cqB, rig.cqB, QpType.RC, new QpCap(8, 8, 1, 1, 0),
            false, srq));
        final QueuePair b2 = rig.pdB.createQp(new QpInitAttr(rig.cqB, rig.cqB, QpType.RC, new QpCap(8, 8, 1, 1, 0),
            false, srq));
        b1.modifyToInit(RuleRig.ALL_REMOTE);
        b2.modifyToInit(RuleRig.ALL_REMOTE);
        b2.modifyToError();
        b1.modifyToError();
        assertThat(rig.ctxB.events().pending()).hasSize(2);
        final AsyncEvent first = rig.ctxB.getAsyncEvent().orElseThrow();
        assertThat(first.qp()).isSameAs(b2);
        assertThat(rig.ctxB.events().unacknowledged()).isOne();
        rig.ctxB.ackAsyncEvent(first);
        final VerbsException twice = catchThrowableOfType(VerbsException.class, () -> rig.ctxB.ackAsyncEvent(first));
        assertThat(twice.errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(twice.getMessage()).contains("acknowledged already");
        assertThat(rig.ctxB.events().pending()).as("a refused ack changes nothing").hasSize(1);
        assertThat(rig.ctxB.getAsyncEvent().orElseThrow().qp()).isSameAs(b1);
        assertThat(rig.ctxB.getAsyncEvent()).isEmpty();
        rig.ctxB.close();
        assertThat(catchThrowableOfType(VerbsException.class, rig.ctxB::getAsyncEvent).errno())
            .isEqualTo(Errno.EINVAL.code());
    }
}
