package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.QpAddress;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpAttrMask;
import dev.rnicsim.verbs.UdSendWr;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WrOpcode;
import java.util.ArrayDeque;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * A simulated RC queue pair. Posting writes WQEs to the send queue; the fabric's {@link NicEngine} executes them
 * later, in order, on the simulator's single thread (RDMA WRITE and READ of more than one path MTU packet by
 * packet): the DMA engine checks keys and moves bytes between the two hosts, the cost model prices the operation,
 * and the completions land in the CQs. A SEND (or WRITE with immediate) that finds no receive posted at the peer is
 * answered with RNR NAKs: with {@code rnr_retry} 7 it waits at the head of the send queue until the peer posts a
 * receive; otherwise it fails with IBV_WC_RNR_RETRY_EXC_ERR after {@code rnr_retry} waits of the peer's
 * {@code min_rnr_timer}. An error completion moves the QP (and, for errors the responder detected, the peer QP) to
 * ERR, flushing what is queued with IBV_WC_WR_FLUSH_ERR (RC error classes of IBA 9.9.3; rxe_comp.c, rxe_resp.c).
 *
 * <p>This class is the verbs object (create, modify, query, post and their checks; {@link QpPosting} writes the
 * work requests, {@link QpTransitionAttrs} builds the one-call transitions' attributes); the NIC's engines for the
 * QP are classes of their own: the {@link Requester} (WQE fetch, packets, fences, RNR and retries, outstanding READs
 * and atomics), the {@link Responder} (first-packet key check, placement, receive consumption, NAKs), the
 * {@link DatagramSender} (UD) and the {@link CompletionEngine} (completion order, errors, flush).
 *
 * <p>Not thread safe.
 */
public final class SimQp implements QueuePair
{
    /** The fabric's path MTU in bytes unless set (IB MTU 4096); a QP's packets take its path_mtu ({@link PacketMtu}). */
    public static final int PATH_MTU_BYTES = 4096;

    /** The QP's PD; an XRC_RECV QP takes the PD of the XRC SRQ its current message names ({@link XrcRules#route}). */
    SimPd pd;
    final SimDevice device;
    final QpCap cap;
    final SimCq sendCq;
    /** The receive CQ: null on XRC QPs but while an XRC_RECV QP serves a message, the CQ of that XRC SRQ. */
    SimCq recvCq;
    final boolean sqSigAll;
    final Ring ring;

    /** The QP's own receive queue, or the SRQ's when it has one (receives are taken from it in the same way). */
    ArrayDeque<RecvWr> recvQueue;

    final QpType type;
    final SimSrq srq;
    /** The XRC domain of an XRC_RECV QP, else null ({@link XrcRules#createTarget}). */
    SimXrcd xrcd;

    /** The attributes ibv_modify_qp sets that the engine does not read (kept for ibv_query_qp). */
    final QpAttributes attrs = new QpAttributes();

    final int psn;
    int num;
    QpState state = QpState.RESET;
    int qpAccessBits;
    QpAddress remote;
    int minRnrTimer;

    /** True while ibv_bind_mw posts its bind work request for a type 1 window. */
    boolean bindingType1;

    /** Why the last local operation failed, for the trace (a {@link LazyText} when made only if read). */
    CharSequence localFailure;

    int retryCount;
    int rnrRetry;
    boolean closed;

    /** The requester engine: the send queue's WQEs, packets, retries and outstanding READs and atomics. */
    final Requester requester;
    /** The responder's side of this QP's messages: first-packet checks, placement, receives, NAKs. */
    final Responder responder;
    /** The UD send path. */
    final DatagramSender datagrams;
    /** Completions in posting order, the first error, the flush on ERR. */
    final CompletionEngine completions;

    SimQp(final SimPd pd, final QpInitAttr attr, final QpCap granted, final Ring ring)
    {
        this.pd = pd;
        this.device = pd.context().device();
        this.cap = granted;
        this.sendCq = (SimCq)attr.sendCq();
        this.recvCq = attr.type() == QpType.XRC_SEND ? null : (SimCq)attr.recvCq();
        this.sqSigAll = attr.sqSigAll();
        this.ring = ring;
        this.psn = (int)(device.fabric().clock().nowNs() & 0xffffff);
        this.type = attr.type();
        this.srq = (SimSrq)attr.srq();
        this.recvQueue = srq == null ? new ArrayDeque<>() : srq.queue();
        this.requester = new Requester(this);
        this.responder = new Responder(this);
        this.datagrams = new DatagramSender(this);
        this.completions = new CompletionEngine(this);
    }

    /**
     * {@code ibv_create_qp} ({@link QpCreation#create}).
     */
    static SimQp create(final SimPd pd, final QpInitAttr attr)
    {
        return QpCreation.create(pd, attr);
    }

    @Override
    public SimPd pd()
    {
        return pd;
    }

    /** The capacities the provider granted ({@link QpCaps}), which the queues hold. */
    @Override
    public QpCap cap()
    {
        return cap;
    }

    @Override
    public int qpNum()
    {
        return num;
    }

    @Override
    public QpType type()
    {
        return type;
    }

    @Override
    public SimSrq srq()
    {
        return srq;
    }

    @Override
    public QpState state()
    {
        return state;
    }

    /** As the device's provider answers it: {@link ProviderRule#QP_DATA_IN_ORDER} and the QP in RTS. */
    @Override
    public boolean dataInOrder(final dev.rnicsim.verbs.WrOpcode opcode)
    {
        return device.profile().follows(ProviderRule.QP_DATA_IN_ORDER) && state == QpState.RTS;
    }

    @Override
    public QpAddress address()
    {
        return new QpAddress(0, device.gid(), num, psn);
    }

    /**
     * @return the number of the QP this one is connected to (its address vector's dest_qp_num), or -1 before RTR.
     */
    public int remoteQpNum()
    {
        return remote == null ? -1 : remote.qpNum();
    }

    /**
     * @return receive work requests posted and not yet consumed.
     */
    public int receivesPosted()
    {
        return recvQueue.size();
    }

    /**
     * @return WQEs on the send queue: not yet executed, in flight, or waiting for a receive at the peer (RNR).
     */
    public int sendsWaiting()
    {
        return requester.responses.size() + requester.sendQueue.size();
    }

    /**
     * @return true when the head of the send queue went out with {@code timeout} 0 and no acknowledgement will come:
     *         it waits for ever, holding the send queue, until the QP goes to the error state ({@link AckTimeout}).
     */
    public boolean waitsForAckForever()
    {
        return requester.waitsForAckForever();
    }

    // ------------------------------------------------------------------ state machine

    /**
     * RESET → INIT with port 1, P_Key index 0 and these rights (and Q_Key 0 on UD, where rights are not taken).
     */
    @Override
    public void modifyToInit(final Set<Access> qpAccessFlags)
    {
        final QpTransitionAttrs.Transition t = QpTransitionAttrs.init(this, qpAccessFlags);
        modify(t.attr(), t.mask());
    }

    /**
     * INIT → RTR with the attributes the QP type requires: for RC and UC the remote port, QP number and PSN and the
     * fabric's path MTU; for RC also the deepest responder read/atomic queue the device offers and the RNR timer.
     */
    @Override
    public void modifyToRtr(final QpAddress remoteAddress, final int minRnrTimerCode)
    {
        final QpTransitionAttrs.Transition t = QpTransitionAttrs.rtr(this, remoteAddress, minRnrTimerCode);
        modify(t.attr(), t.mask());
    }

    /**
     * RTR → RTS with this QP's first PSN; RC adds its ACK timeout (14, about 67 ms), the retry counts and the
     * deepest initiator read/atomic queue the device offers.
     */
    @Override
    public void modifyToRts(final int retryCnt, final int rnrRetryCnt)
    {
        final QpTransitionAttrs.Transition t = QpTransitionAttrs.rts(this, retryCnt, rnrRetryCnt);
        modify(t.attr(), t.mask());
    }

    @Override
    public void modifyToError()
    {
        modify(QpAttr.builder().state(QpState.ERR).build(), EnumSet.of(QpAttrMask.STATE));
    }

    /**
     * {@code ibv_modify_qp} ({@link QpModify#modify}): a refusal is EINVAL and changes nothing.
     */
    @Override
    public void modify(final QpAttr attr, final Set<QpAttrMask> mask)
    {
        final EngineThread held = device.fabric().enter();
        try
        {
            QpModify.modify(this, attr, mask);
        }
        finally
        {
            SimFabric.exit(held);
        }
    }

    /**
     * {@code ibv_query_qp}: the attributes as the last transitions set them.
     */
    @Override
    public QpAttr query()
    {
        return QpTransitionAttrs.query(this);
    }

    void checkOpen(final String verb)
    {
        if (closed)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "QP 0x" + Integer.toHexString(num) + " is destroyed"
                + " (ibv_destroy_qp released it); create a new QP");
        }
    }

    // ------------------------------------------------------------------ posting

    @Override
    public void postSend(final List<SendWr> wrs)
    {
        QpPosting.postSend(this, wrs);
    }

    /**
     * {@code ibv_post_send} on a UD QP. The address handle must be a live one of this QP's context.
     */
    @Override
    public void postSendUd(final List<UdSendWr> wrs)
    {
        QpPosting.postSendUd(this, wrs);
    }

    @Override
    public int bindMw(final MemoryWindow mw, final long wrId, final Set<SendFlag> flags, final MwBindInfo info)
    {
        return QpPosting.bindMw(this, mw, wrId, flags, info);
    }

    @Override
    public void postRecv(final List<RecvWr> wrs)
    {
        QpPosting.postRecv(this, wrs);
    }

    // ------------------------------------------------------------------ execution

    NicEngine engine()
    {
        return device.fabric().engine();
    }

    boolean scheduled()
    {
        return requester.scheduled();
    }

    void scheduled(final boolean inTurnOrder)
    {
        requester.scheduled(inTurnOrder);
    }

    /**
     * @return the oldest message in flight: a READ or atomic whose responses are coming back, else the message of
     * the head WQE while its packets move; null when none.
     */
    public InflightMessage inflight()
    {
        return requester.inflight();
    }

    /**
     * @return every message in flight, oldest first: READs and atomics waiting for responses, then the head's.
     */
    public List<InflightMessage> inflightMessages()
    {
        return requester.inflightMessages();
    }

    /**
     * @return the WQEs on the send queue, the oldest first: READs and atomics waiting for their responses, then the
     * one executing (or waiting for a receive), then those not started.
     */
    public List<SendWr> sendQueueWrs()
    {
        return requester.sendQueueWrs();
    }

    boolean hasSendWork()
    {
        return requester.hasSendWork();
    }

    /** One step of the engine on this QP ({@link Requester#step}). */
    boolean step()
    {
        return requester.step();
    }

    /**
     * @param why why a local operation failed (shown in the trace).
     */
    void localFailure(final CharSequence why)
    {
        localFailure = why;
    }

    /**
     * @return why the last local operation (BIND_MW, LOCAL_INV, REG_MR) failed, or null.
     */
    public String lastLocalFailure()
    {
        return localFailure == null ? null : localFailure.toString();
    }

    SimPd simPd()
    {
        return pd;
    }

    /**
     * @return the device this QP belongs to.
     */
    public SimDevice simDevice()
    {
        return device;
    }

    /**
     * @return the device of the QP this one is connected to, or null when not connected (or that device is gone).
     */
    public SimDevice remoteDevice()
    {
        final SimQp peer = requester.peer();
        return peer == null ? null : peer.device;
    }

    int num()
    {
        return num;
    }

    /** A requester whose SEND waits (rnr_retry 7) for a receive on this QP runs again and sees its new state. */
    void wakeWaitingPeer()
    {
        final SimQp sender = waitingSender();
        if (sender != null)
        {
            engine().schedule(sender);
        }
    }

    private SimQp waitingSender()
    {
        final SimQp sender = requester.peer();
        return sender != null && !sender.requester.sendQueue.isEmpty() && sender.requester.peer() == this ? sender
            : null;
    }

    /** False when the receive queue is an SRQ's (an SRQ of its own, or on an XRC_RECV QP the XRC SRQ it serves). */
    boolean ownsRecvQueue()
    {
        return srq == null && type != QpType.XRC_RECV;
    }

    // ------------------------------------------------------------------ lifecycle

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    @Override
    public void close()
    {
        final EngineThread held = device.fabric().enter();
        try
        {
            if (closed)
            {
                return;
            }
            closed = true;
            requester.dropInflight();
            engine().forget(this);
            requester.responses.clear();
            requester.sendQueue.clear();
            if (ownsRecvQueue())
            {
                recvQueue.clear();
            }
            else if (srq != null)
            {
                srq.detach(this);
            }
            final SimQp sender = waitingSender();
            device.removeQp(num);
            AsyncEventQueue.objectDestroyed(pd().context(), this);
            if (sender != null)
            {
                engine().schedule(sender);
            }
            if (sendCq != null)
            {
                sendCq.detach();
            }
            if (recvCq != null && recvCq != sendCq && type != QpType.XRC_RECV)
            {
                recvCq.detach();
            }
            ring.release();
            device.count(SimCounter.PINNED_BYTES, -ring.lengthBytes());
            if (xrcd != null)
            {
                xrcd.targetClosed(this);
            }
            pd.qpClosed(this);
        }
        finally
        {
            SimFabric.exit(held);
        }
    }

    @Override
    public String toString()
    {
        return "QP[0x" + Integer.toHexString(num) + " " + (type == QpType.RC ? "" : type + " ") + state
            + (srq == null ? "" : " srq") + " qp_access=0x" + Integer.toHexString(qpAccessBits)
            + (remote == null ? "" : " remote=" + remote.gid() + "/0x" + Integer.toHexString(remote.qpNum())) + "]";
    }
}
