package dev.rnicsim.simnic;

import dev.rnicsim.dma.DmaResult;
import dev.rnicsim.dma.DmaStatus;
import dev.rnicsim.verbs.AsyncEvent;
import dev.rnicsim.verbs.AsyncEventType;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcDiagnosis;
import dev.rnicsim.verbs.WrOpcode;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The asynchronous event queue of one device context (the async fd of {@code struct ibv_context}): events are
 * queued in the order the device raised them, on the context that owns their element, and
 * {@code ibv_get_async_event} returns them oldest first; each returned event is acknowledged with
 * {@code ibv_ack_async_event} (ibv_get_async_event(3)). The static methods are the model's hooks: each names the
 * rule that raises its event (see {@link AsyncEventRules} for the ones where drivers differ).
 *
 * <p>Not modelled: port and device events (IBV_EVENT_PORT_ACTIVE, _PORT_ERR, _DEVICE_FATAL: the simulated port
 * is always active and the device never fails), IBV_EVENT_SQ_DRAINED (ibv_modify_qp has no en_sqd_async_notify
 * here) and path migration. A destroy with unacknowledged events of its object would block in libibverbs; here it
 * proceeds ({@link #unacknowledged()} counts them).
 *
 * <p>Not thread safe.
 */
public final class AsyncEventQueue
{
    private final SimContext context;
    private final ArrayDeque<Raised> pending = new ArrayDeque<>();
    private final Set<AsyncEvent> unacked = Collections.newSetFromMap(new IdentityHashMap<>());
    /** Events raised per type, by the type's ordinal. */
    private final int[] raised = new int[AsyncEventType.values().length];
    /** The QPs that raised COMM_EST since they last left RESET. */
    private final Set<SimQp> established = Collections.newSetFromMap(new IdentityHashMap<>());
    private long seq;

    AsyncEventQueue(final SimContext context)
    {
        this.context = context;
    }

    /**
     * A raised event as it waits in the queue: its cause is put into words (and the event made) when a program or a
     * view reads it, most events of a test are never read.
     */
    private static final class Raised
    {
        private final AsyncEventType type;
        private final SimQp qp;
        private final SimCq cq;
        private final SimSrq srq;
        private final long seq;
        private final CharSequence cause;
        private AsyncEvent event;

        Raised(final AsyncEventType type, final SimQp qp, final SimCq cq, final SimSrq srq, final long seq,
            final CharSequence cause)
        {
            this.type = type;
            this.qp = qp;
            this.cq = cq;
            this.srq = srq;
            this.seq = seq;
            this.cause = cause;
        }

        /** @return the event, the same one each time. */
        AsyncEvent event()
        {
            if (event == null)
            {
                event = new AsyncEvent(type, qp, cq, srq, 0, seq, cause.toString());
            }
            return event;
        }
    }

    /**
     * {@code ibv_get_async_event}: the oldest event not yet returned.
     *
     * @return it, or empty when none is pending.
     */
    Optional<AsyncEvent> get()
    {
        final Raised r = pending.pollFirst();
        if (r == null)
        {
            return Optional.empty();
        }
        final AsyncEvent e = r.event();
        unacked.add(e);
        return Optional.of(e);
    }

    /**
     * {@code ibv_ack_async_event}.
     *
     * @param event an event {@link #get()} returned.
     * @throws dev.rnicsim.verbs.VerbsException EINVAL when it was not returned by this context or acknowledged
     *                                          already (libibverbs would count it wrongly and a later destroy would
     *                                          wait forever).
     */
    void ack(final AsyncEvent event)
    {
        if (event == null || !unacked.remove(event))
        {
            throw Errors.of("ibv_ack_async_event", Errno.EINVAL, (event == null ? "no event given"
                : event.type().cName() + " #" + event.seq() + " on " + event.element() + " is not an event "
                + "ibv_get_async_event of this context returned, or it was acknowledged already")
                + " (ibv_get_async_event(3): acknowledge each returned event exactly once); acknowledge the event "
                + "this context returned");
        }
    }

    /**
     * @return the events raised and not yet returned, oldest first.
     */
    public List<AsyncEvent> pending()
    {
        final List<AsyncEvent> out = new ArrayList<>(pending.size());
        for (final Raised r : pending)
        {
            out.add(r.event());
        }
        return List.copyOf(out);
    }

    /**
     * @return events returned and not yet acknowledged.
     */
    public int unacknowledged()
    {
        return unacked.size();
    }

    /**
     * @param type an event type.
     * @return how many events of that type this context's device raised for this context.
     */
    public int raised(final AsyncEventType type)
    {
        return raised[type.ordinal()];
    }

    /**
     * @return every event raised so far, returned or not.
     */
    public long total()
    {
        return seq;
    }

    /** Drops what is pending (the context is closing: the async fd goes with it). */
    void clear()
    {
        pending.clear();
        unacked.clear();
        established.clear();
    }

    private void raise(final AsyncEventType type, final SimQp qp, final SimCq cq, final SimSrq srq,
        final CharSequence cause)
    {
        if (context.isClosed())
        {
            return;
        }
        pending.addLast(new Raised(type, qp, cq, srq, ++seq, cause));
        raised[type.ordinal()]++;
    }

    private static AsyncEventRules rules(final SimQp qp)
    {
        return AsyncEventRules.of(qp.pd().context().device().profile());
    }

    // ------------------------------------------------------------------ hooks

    /**
     * IBV_EVENT_SRQ_LIMIT_REACHED: the receives of an armed SRQ dropped below its limit, which is disarmed (rxe
     * {@code get_srq_wqe} in rxe_resp.c; mlx5 {@code mlx5_ib_srq_event}; ibv_modify_srq(3); IBA 10.2.9.5).
     *
     * @param srq        the SRQ.
     * @param receives   receives left on it.
     * @param limitWas   the limit that was armed.
     */
    static void srqLimitReached(final SimSrq srq, final int receives, final int limitWas)
    {
        srq.pd().context().events().raise(AsyncEventType.SRQ_LIMIT_REACHED, null, null, srq, "the SRQ holds "
            + receives + " receive(s), below its armed srq_limit " + limitWas + "; the limit is disarmed (arm it "
            + "again with ibv_modify_srq IBV_SRQ_LIMIT)");
    }

    /**
     * IBV_EVENT_CQ_ERR: a completion found its CQ full and was lost (rxe {@code rxe_cq_post}; mlx5 CQ error event;
     * IBA 11.4.2.1 CQ overrun). Raised once per CQ: the CQ is in error afterwards.
     *
     * @param cq the CQ.
     */
    static void cqOverrun(final SimCq cq)
    {
        cq.context().events().raise(AsyncEventType.CQ_ERR, null, cq, null, "a completion found the CQ full ("
            + cq.cqe() + " entries) and was lost; poll the CQ sooner or create it with more entries");
    }

    /**
     * IBV_EVENT_QP_LAST_WQE_REACHED: a QP attached to an SRQ entered ERR and takes no more receives from it (IBA
     * o11-5.2.5), where the driver raises it ({@link AsyncEventRules#lastWqeReached()}).
     *
     * @param qp the QP that entered ERR.
     */
    static void enteredError(final SimQp qp)
    {
        if (qp.srq() != null && rules(qp).lastWqeReached())
        {
            qp.pd().context().events().raise(AsyncEventType.QP_LAST_WQE_REACHED, qp, null, null, "QP 0x"
                + Integer.toHexString(qp.qpNum()) + " is in ERR and takes no more receives from its SRQ; it may be "
                + "destroyed once its completions are polled");
        }
    }

    /**
     * IBV_EVENT_COMM_EST: the first message reached an RC or UC QP in RTR, where the driver raises it
     * ({@link AsyncEventRules#commEst()}).
     *
     * @param responder the QP the message reached.
     */
    static void messageArrived(final SimQp responder)
    {
        if (responder.state() != QpState.RTR || responder.type() == QpType.UD || !rules(responder).commEst())
        {
            return;
        }
        final AsyncEventQueue q = responder.pd().context().events();
        if (q.established.add(responder))
        {
            q.raise(AsyncEventType.COMM_EST, responder, null, null, "the first message reached QP 0x"
                + Integer.toHexString(responder.qpNum()) + " in RTR (IBA 11.6.3.1)");
        }
    }

    /**
     * Forgets that a QP raised COMM_EST: it went to RESET and raises it again in its next RTR.
     *
     * @param qp the QP.
     */
    static void reset(final SimQp qp)
    {
        qp.pd().context().events().established.remove(qp);
    }

    /**
     * IBV_EVENT_QP_ACCESS_ERR on a requester whose own access check failed on the adapter: cxgb4's
     * {@code c4iw_ev_dispatch} raises it for T4_ERR_ACCESS and the other STag errors ({@link ReadSinkRule}).
     *
     * @param qp    the requester, now in ERR.
     * @param cause why, for the event's text.
     */
    static void requesterAccessError(final SimQp qp, final CharSequence cause)
    {
        qp.pd().context().events().raise(AsyncEventType.QP_ACCESS_ERR, qp, null, null, cause);
    }

    /**
     * The affiliated asynchronous error of an RC (or XRC_RECV) responder's error that no receive WQE carries (IBA C9-222.1.1),
     * where the driver raises it: IBV_EVENT_QP_ACCESS_ERR for an R_Key violation, IBV_EVENT_QP_REQ_ERR for an
     * invalid request, IBV_EVENT_QP_FATAL for a remote operation error ({@link AsyncEventRules}). An error a receive
     * completion reports (a SEND, an RDMA WRITE with immediate data) raises none.
     *
     * @param responder        the QP that refused the request.
     * @param wr               the request.
     * @param r                the transfer's result.
     * @param reportedInReceive true when a receive completion of the responder carries the error.
     * @param why              the diagnosis, or null.
     */
    static void responderRefused(final SimQp responder, final SendWr wr, final DmaResult r,
        final boolean reportedInReceive, final WcDiagnosis why)
    {
        // An XRC_RECV QP is an RC responder too (IBA XRC keeps RC's responder rules; the kernel hands a target's
        // events to every opener through __ib_shared_qp_event_handler).
        final boolean rcResponder = responder.type() == QpType.RC || responder.type() == QpType.XRC_RECV;
        if (reportedInReceive || !rcResponder || wr.opcode() == WrOpcode.RDMA_WRITE_WITH_IMM)
        {
            return;
        }
        final AsyncEventRules rules = rules(responder);
        final AsyncEventType type;
        if (r.requester() == DmaStatus.REM_ACCESS_ERR && rules.responderAccessError())
        {
            type = AsyncEventType.QP_ACCESS_ERR;
        }
        else if (r.requester() == DmaStatus.REM_INV_REQ_ERR && rules.responderInvalidRequest())
        {
            type = AsyncEventType.QP_REQ_ERR;
        }
        else if (r.requester() == DmaStatus.REM_OP_ERR && rules.responderFatal())
        {
            type = AsyncEventType.QP_FATAL;
        }
        else
        {
            return;
        }
        final int qpNum = responder.qpNum();
        final WrOpcode opcode = wr.opcode();
        final long wrId = wr.wrId();
        responder.pd().context().events().raise(type, responder, null, null, new LazyText(() -> "QP 0x"
            + Integer.toHexString(qpNum) + " went to ERR refusing " + (why == null ? opcode
            + " wr_id " + wrId + ": " + r.detail() : why.summary()) + "; no receive carries the error, so it "
            + "is reported here (IBA C9-222.1.1)"));
    }

    /**
     * An XRC_RECV QP that NAKs a request Invalid Request (its remote_srqn names no XRC SRQ of its domain, or the
     * requester is no XRC_SEND QP) goes to ERR with IBV_EVENT_QP_REQ_ERR where the driver raises it for an invalid
     * request no receive carries (IBA C9-222.1.1, the invalid request local work queue error; mlx5
     * MLX5_EVENT_TYPE_WQ_INVAL_REQ_ERROR).
     *
     * @param target the XRC_RECV QP.
     * @param why    why it refused the request.
     */
    static void xrcInvalidRequest(final SimQp target, final String why)
    {
        if (target.type() == QpType.XRC_RECV && rules(target).responderInvalidRequest())
        {
            target.pd().context().events().raise(AsyncEventType.QP_REQ_ERR, target, null, null, "XRC_RECV QP 0x"
                + Integer.toHexString(target.qpNum()) + " went to ERR with a NAK Invalid Request: " + why
                + "; no receive carries the error, so it is reported here (IBA C9-222.1.1)");
        }
    }

    /**
     * A destroyed QP, CQ or SRQ takes its events not yet returned with it: the kernel removes them from the async
     * event file when it frees the object's uobject ({@code ib_uverbs_release_uevent}, {@code ib_uverbs_release_ucq}),
     * so {@code ibv_get_async_event} never returns an event of an object already destroyed.
     *
     * @param context the context whose queue holds the events.
     * @param object  the destroyed QP, CQ or SRQ.
     */
    static void objectDestroyed(final SimContext context, final Object object)
    {
        context.events().pending.removeIf(e -> e.qp == object || e.cq == object || e.srq == object);
    }

    /**
     * @return a copy of the pending events' types, oldest first (for tests and views).
     */
    public List<AsyncEventType> pendingTypes()
    {
        final List<AsyncEventType> out = new ArrayList<>(pending.size());
        for (final Raised e : pending)
        {
            out.add(e.type);
        }
        return out;
    }
}
