package dev.rnicsim.simnic;

import dev.rnicsim.dma.DmaResult;
import dev.rnicsim.dma.DmaStatus;
import dev.rnicsim.dma.Segment;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AtomicCap;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.AhAttr;
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
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcDiagnosis;
import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.WrOpcode;
import java.util.ArrayDeque;
import java.util.ArrayList;
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
 * <p>Not thread safe.
 */
public final class SimQp implements QueuePair
{
    /** Path MTU in bytes used to count packets (IB MTU 4096; assumed for every profile). */
    public static final int PATH_MTU_BYTES = 4096;
    /** Largest inline payload a QP may ask for, in bytes (assumed, of the order of mlx5's limit). */
    public static final int MAX_INLINE_DATA_BYTES = 1024;

    private enum Outcome
    {
        DONE,
        ERROR,
        BLOCKED,
        /** A packet of a message moved; more follow. */
        MORE,
        /** A READ's or atomic's request went out: its responses come back while later WQEs may start. */
        OUTSTANDING
    }

    /** A WQE on the send queue: the work request, its inline payload, the destination of a UD send (null on
     * connected QPs), its place in posting order. */
    private record Pending(SendWr wr, byte[] inline, UdSendWr ud, long seq)
    {
    }

    /** A READ or atomic whose request went out and whose responses are still coming back. */
    private record Outstanding(Pending p, InflightMessage m)
    {
    }

    private final SimPd pd;
    private final SimDevice device;
    private final QpCap cap;
    private final SimCq sendCq;
    private final SimCq recvCq;
    private final boolean sqSigAll;
    private final Ring ring;
    private final ArrayDeque<Pending> sendQueue = new ArrayDeque<>();
    /** The QP's own receive queue, or the SRQ's when it has one (receives are taken from it in the same way). */
    private final ArrayDeque<RecvWr> recvQueue;
    private final QpType type;
    private final SimSrq srq;
    /** The attributes ibv_modify_qp sets that the engine does not read (kept for ibv_query_qp). */
    private final QpAttributes attrs = new QpAttributes();
    /** READs and atomics whose responses are coming back, oldest first (IBA 9.4.4: max_rd_atomic outstanding). */
    private final ArrayDeque<Outstanding> responses = new ArrayDeque<>();
    private final CompletionOrder order = new CompletionOrder();
    /** The WQE whose end completeSend reports. */
    private long currentSeq;
    /** True when the next turn of a QP with responses and a WQE that may start moves a response packet. */
    private boolean responseTurn;
    /** RNR NAKs the head WQE took so far. */
    private int rnrNaks;
    private final int psn;
    private int num;
    private QpState state = QpState.RESET;
    private int qpAccessBits;
    private QpAddress remote;
    private int minRnrTimer;
    /** True while ibv_bind_mw posts its bind work request for a type 1 window. */
    private boolean bindingType1;
    /** Why the last local operation failed, for the trace. */
    private String localFailure;
    private int retryCount;
    private int rnrRetry;
    /** Most RNR NAKs one work request may take for responder page faults before the model calls it a livelock. */
    private static final int MAX_RNR_ROUNDS = 1 << 20;
    private boolean closed;
    private boolean progressing;
    private boolean flushing;
    private Pending executing;
    /** True while this QP is in the engine's turn order. */
    private boolean scheduled;
    /** The message of the head WQE while its packets move, or null. */
    private InflightMessage inflight;
    /** The remote address {@link #peerFound} was looked up for (the lookup's cache). */
    private QpAddress peerAddress;
    private SimQp peerFound;
    /** The first error that moved this QP to ERR, named in the diagnoses of what it flushes. */
    private String errorCause;

    private SimQp(final SimPd pd, final QpInitAttr attr, final Ring ring)
    {
        this.pd = pd;
        this.device = pd.context().device();
        this.cap = attr.cap();
        this.sendCq = (SimCq)attr.sendCq();
        this.recvCq = (SimCq)attr.recvCq();
        this.sqSigAll = attr.sqSigAll();
        this.ring = ring;
        this.psn = (int)(device.fabric().clock().nowNs() & 0xffffff);
        this.type = attr.type();
        this.srq = (SimSrq)attr.srq();
        this.recvQueue = srq == null ? new ArrayDeque<>() : srq.queue();
    }

    /**
     * {@code ibv_create_qp}: checks, maps and pins the rings (charged to RLIMIT_MEMLOCK). A type outside the
     * driver's {@link DriverTraits#qpTypes()} is EOPNOTSUPP before anything is allocated (EFA: efa_verbs.c
     * {@code efa_create_qp} / {@code efa_qp_validate_attr} take UD and SRD only).
     */
    static SimQp create(final SimPd pd, final QpInitAttr attr)
    {
        final String verb = "ibv_create_qp";
        final SimDevice device = pd.context().device();
        final DeviceAttributes a = device.profile().attributes();
        final DriverTraits traits = device.profile().traits();
        if (!traits.acceptsQpType(attr.type()))
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, "type " + attr.type() + ": the " + traits.driver()
                + " driver's create_qp accepts " + traits.qpTypes() + " QPs only and refuses any other type ("
                + traits.source() + "); nothing was created. Create a QP of a type in " + traits.qpTypes() + " on "
                + device.name() + ", or use a profile whose driver has " + attr.type()
                + " QPs (mlx5, rxe, irdma, ...)");
        }
        QpAttributes.checkCreate(verb, pd, attr);
        if (!(attr.sendCq() instanceof SimCq s) || !(attr.recvCq() instanceof SimCq r) || s.context() != pd.context()
            || r.context() != pd.context() || s.isClosed() || r.isClosed())
        {
            throw Errors.invalid(verb, "the CQs must be open CQs of the PD's context"
                + "; create the CQs on this context and do not destroy them");
        }
        final QpCap c = attr.cap();
        if (c.maxSendWr() < 1 || c.maxSendWr() > a.maxQpWr() || c.maxRecvWr() < 0 || c.maxRecvWr() > a.maxQpWr())
        {
            throw Errors.invalid(verb, "maxSendWr=" + c.maxSendWr() + " maxRecvWr=" + c.maxRecvWr()
                + " must be 1..max_qp_wr=" + a.maxQpWr()
                + "; ask for fewer work requests");
        }
        if (c.maxSendSge() < 0 || c.maxSendSge() > a.maxSge() || c.maxRecvSge() < 0 || c.maxRecvSge() > a.maxSge())
        {
            throw Errors.invalid(verb, "maxSendSge=" + c.maxSendSge() + " maxRecvSge=" + c.maxRecvSge()
                + " must be 0..max_sge=" + a.maxSge()
                + "; ask for fewer SGEs");
        }
        if (c.maxInlineDataBytes() < 0 || c.maxInlineDataBytes() > MAX_INLINE_DATA_BYTES)
        {
            throw Errors.invalid(verb, "maxInlineDataBytes=" + c.maxInlineDataBytes() + " must be 0.."
                + MAX_INLINE_DATA_BYTES
                + "; ask for less inline data");
        }
        if (device.qpsLive() >= a.maxQp())
        {
            throw Errors.of(verb, Errno.ENOMEM, "QPs live=" + device.qpsLive() + " = max_qp=" + a.maxQp()
                + "; destroy a QP first or use a device with a larger max_qp");
        }
        final Ring ring;
        final ForkSafety fork = device.host().forkSafety(pd.context().process());
        final long workBefore = fork.workNs(device.fabric().costModel());
        try
        {
            ring = Ring.map(fork, ringBytes(c));
        }
        catch (final KernelException e)
        {
            throw Errors.of(verb, e);
        }
        finally
        {
            SimPd.madviseSpan(device, fork, workBefore, "MADV_DONTFORK (QP ring)");
        }
        final SimQp qp = new SimQp(pd, attr, ring);
        qp.num = device.addQp(qp);
        if (qp.srq != null)
        {
            qp.srq.attach(qp);
        }
        qp.sendCq.attach();
        if (qp.recvCq != qp.sendCq)
        {
            qp.recvCq.attach();
        }
        device.count(SimCounter.PINNED_BYTES, ring.lengthBytes());
        device.fabric().span(device, "create_qp", "queue", device.fabric().costModel().queueCreateNs(ring.pages()),
            java.util.Map.of("qp_num", qp.num, "ring_bytes", ring.lengthBytes()));
        return qp;
    }

    /**
     * Ring size, mlx5-like (assumed for every profile): send WQEs of 64-byte basic blocks holding a 48-byte header
     * and 16 bytes per SGE or the inline data, receive WQEs of 16 bytes per SGE, both queues rounded up to powers
     * of two.
     */
    private static long ringBytes(final QpCap c)
    {
        final long sqStride = pow2(Math.max(64, Math.max(48 + 16L * c.maxSendSge(), 48 + c.maxInlineDataBytes())));
        final long rqStride = pow2(16L * Math.max(1, c.maxRecvSge()));
        return pow2(c.maxSendWr()) * sqStride + pow2(Math.max(1, c.maxRecvWr())) * rqStride;
    }

    private static long pow2(final long n)
    {
        return n <= 1 ? 1 : Long.highestOneBit(n - 1) << 1;
    }

    @Override
    public SimPd pd()
    {
        return pd;
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
        return responses.size() + sendQueue.size();
    }

    // ------------------------------------------------------------------ state machine

    /**
     * RESET → INIT with port 1, P_Key index 0 and these rights (and Q_Key 0 on UD, where rights are not taken).
     */
    @Override
    public void modifyToInit(final Set<Access> qpAccessFlags)
    {
        if (qpAccessFlags == null || qpAccessFlags.stream().anyMatch(java.util.Objects::isNull))
        {
            checkOpen("ibv_modify_qp");
            throw Errors.invalid("ibv_modify_qp", "qp_access_flags is null or holds null (use an empty set for none)");
        }
        final QpAttr.Builder b = QpAttr.builder().state(QpState.INIT).pkeyIndex(0).port(1);
        if (type == QpType.UD)
        {
            b.qkey(0);
            if (!qpAccessFlags.isEmpty())
            {
                b.accessFlags(qpAccessFlags);
            }
        }
        else
        {
            b.accessFlags(qpAccessFlags);
        }
        modify(b.build(), b.mask());
    }

    /**
     * INIT → RTR with the attributes the QP type requires: for RC and UC the remote port, QP number and PSN and the
     * fabric's path MTU; for RC also the deepest responder read/atomic queue the device offers and the RNR timer.
     */
    @Override
    public void modifyToRtr(final QpAddress remoteAddress, final int minRnrTimerCode)
    {
        checkOpen("ibv_modify_qp");
        if (remoteAddress == null && type != QpType.UD)
        {
            throw Errors.invalid("ibv_modify_qp", "the remote QP's address is null"
                + "; give the peer QP's address (GID and QP number)");
        }
        final QpAttr.Builder b = QpAttr.builder().state(QpState.RTR);
        if (type != QpType.UD)
        {
            b.av(new AhAttr(remoteAddress.gid(), remoteAddress.lid(), 1, 0))
                .pathMtu(Integer.numberOfTrailingZeros(device.fabric().pathMtuBytes()) - 7)
                .destQpNum(remoteAddress.qpNum()).rqPsn(remoteAddress.psn() & 0xffffff);
        }
        if (type == QpType.RC)
        {
            b.maxDestRdAtomic(Math.min(16, device.profile().attributes().maxQpRdAtom())).minRnrTimer(minRnrTimerCode);
        }
        modify(b.build(), b.mask());
    }

    /**
     * RTR → RTS with this QP's first PSN; RC adds its ACK timeout (14, about 67 ms), the retry counts and the
     * deepest initiator read/atomic queue the device offers.
     */
    @Override
    public void modifyToRts(final int retryCnt, final int rnrRetryCnt)
    {
        final QpAttr.Builder b = QpAttr.builder().state(QpState.RTS).sqPsn(psn);
        if (type == QpType.RC)
        {
            b.timeout(14).retryCnt(retryCnt).rnrRetry(rnrRetryCnt)
                .maxRdAtomic(Math.min(16, device.profile().attributes().maxQpInitRdAtom()));
        }
        modify(b.build(), b.mask());
    }

    @Override
    public void modifyToError()
    {
        modify(QpAttr.builder().state(QpState.ERR).build(), EnumSet.of(QpAttrMask.STATE));
    }

    /**
     * {@code ibv_modify_qp}: the transition must be in the kernel's table with the mask it requires and allows
     * ({@link QpTransitions}, {@code ib_modify_qp_is_ok}), the values must fit ({@link QpAttributes#valueRefusal});
     * a refusal is EINVAL and changes nothing. To RESET: queued work requests and receives are dropped without
     * completions and the attributes are cleared. To ERR: they complete with IBV_WC_WR_FLUSH_ERR. To SQD: the send
     * queue stops taking new work requests once the message in flight is done (IBA 10.3.1); back to RTS it goes on.
     */
    @Override
    public void modify(final QpAttr attr, final Set<QpAttrMask> mask)
    {
        final String verb = "ibv_modify_qp";
        checkOpen(verb);
        if (attr == null || mask == null || mask.stream().anyMatch(java.util.Objects::isNull))
        {
            throw Errors.invalid(verb, "attr and attr_mask must be given, without null elements");
        }
        final QpState cur = mask.contains(QpAttrMask.CUR_STATE) ? attr.curQpState() : state;
        final QpState next = mask.contains(QpAttrMask.STATE) ? attr.qpState() : cur;
        if (cur == null || next == null)
        {
            throw Errors.invalid(verb, "qp_state or cur_qp_state is null; give the state with "
                + "IBV_QP_STATE in attr_mask");
        }
        final String refused = QpTransitions.refusal(type, cur, next, mask);
        if (refused != null)
        {
            throw Errors.invalid(verb, "QP 0x" + Integer.toHexString(num) + " (" + type + ", in " + state + "): "
                + refused + " (ib_modify_qp_is_ok); give exactly the attributes that transition takes; nothing "
                + "changed");
        }
        final String bad = QpAttributes.valueRefusal(device, attr, mask);
        if (bad != null)
        {
            throw Errors.invalid(verb, "QP 0x" + Integer.toHexString(num) + ": " + bad
                + "; fix that attribute (ibv_modify_qp(3)); nothing changed");
        }
        apply(attr, mask);
        if (next == QpState.RESET)
        {
            reset();
        }
        else if (next == QpState.ERR)
        {
            if (state != QpState.ERR)
            {
                final String origin = device.fabric().origin();
                errorCause = "ibv_modify_qp to ERR" + (origin == null ? "" : " (" + origin + ")");
            }
            toError();
        }
        else
        {
            final boolean resumes = next == QpState.RTS && state != QpState.RTS;
            state = next;
            if (resumes && !sendQueue.isEmpty())
            {
                engine().schedule(this);
            }
        }
    }

    private void apply(final QpAttr a, final Set<QpAttrMask> mask)
    {
        if (mask.contains(QpAttrMask.ACCESS_FLAGS))
        {
            qpAccessBits = Access.toBits(a.qpAccessFlags());
        }
        for (final QpAttrMask m : mask)
        {
            switch (m)
            {
                case PKEY_INDEX -> attrs.pkeyIndex = a.pkeyIndex();
                case PORT -> attrs.portNum = a.portNum();
                case QKEY -> attrs.qkey = a.qkey();
                case AV -> attrs.av = a.ahAttr();
                case PATH_MTU -> attrs.pathMtu = a.pathMtu();
                case TIMEOUT -> attrs.timeout = a.timeout();
                case RQ_PSN -> attrs.rqPsn = a.rqPsn();
                case SQ_PSN -> attrs.sqPsn = a.sqPsn();
                case MAX_QP_RD_ATOMIC -> attrs.maxRdAtomic = a.maxRdAtomic();
                case MAX_DEST_RD_ATOMIC -> attrs.maxDestRdAtomic = a.maxDestRdAtomic();
                case DEST_QPN -> attrs.destQpNum = a.destQpNum();
                case MIN_RNR_TIMER -> minRnrTimer = a.minRnrTimer();
                case RETRY_CNT -> retryCount = a.retryCnt();
                case RNR_RETRY -> rnrRetry = a.rnrRetry();
                default ->
                {
                }
            }
        }
        if ((mask.contains(QpAttrMask.AV) || mask.contains(QpAttrMask.DEST_QPN)) && attrs.av != null
            && QpAttributes.connected(type))
        {
            // The connection the engine follows: the remote port's GID and the remote QP number.
            remote = new QpAddress(attrs.av.dlid(), attrs.av.dgid() == null ? "" : attrs.av.dgid(), attrs.destQpNum,
                attrs.rqPsn);
        }
    }

    /** To RESET: what was queued is dropped without completions (the provider cleans its CQ entries too). */
    private void reset()
    {
        dropInflight();
        engine().forget(this);
        sendQueue.clear();
        if (srq == null)
        {
            recvQueue.clear();
        }
        attrs.clear();
        qpAccessBits = 0;
        remote = null;
        minRnrTimer = 0;
        retryCount = 0;
        rnrRetry = 0;
        errorCause = null;
        state = QpState.RESET;
        // A sender waiting (RNR) for a receive here runs again and finds the QP gone from RTR/RTS.
        wakeWaitingPeer();
    }

    /**
     * {@code ibv_query_qp}: the attributes as the last transitions set them.
     */
    @Override
    public QpAttr query()
    {
        checkOpen("ibv_query_qp");
        return new QpAttr(state, state, Access.fromBits(qpAccessBits), attrs.pkeyIndex, attrs.portNum, attrs.qkey,
            attrs.av, attrs.pathMtu, attrs.timeout, retryCount, rnrRetry, attrs.rqPsn, attrs.sqPsn, attrs.maxRdAtomic,
            attrs.maxDestRdAtomic, minRnrTimer, attrs.destQpNum, state == QpState.SQD && !sendQueue.isEmpty());
    }

    private void checkOpen(final String verb)
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
        if (wrs == null)
        {
            throw new PostException("ibv_post_send", Errno.EINVAL.code(), 0, "the work-request list is null"
                + "; pass a list of work requests");
        }
        for (int i = 0; i < wrs.size(); i++)
        {
            final SendWr wr = wrs.get(i);
            if (wr == null)
            {
                throw new PostException("ibv_post_send", Errno.EINVAL.code(), i, "the work request is null"
                    + "; pass a work request at every position");
            }
            if (type == QpType.UD && !closed)
            {
                throw new PostException("ibv_post_send", Errno.EINVAL.code(), i, "a send on a UD QP needs its "
                    + "destination (wr.ud: address handle, remote QPN, Q_Key): post it with postSendUd");
            }
            final byte[] inline = checkSend(wr, i);
            sendQueue.addLast(new Pending(wr, inline, null, order.post()));
            engine().schedule(this);
        }
    }

    /**
     * {@code ibv_post_send} on a UD QP. The address handle must be a live one of this QP's context.
     */
    @Override
    public void postSendUd(final List<UdSendWr> wrs)
    {
        final String verb = "ibv_post_send";
        if (wrs == null)
        {
            throw new PostException(verb, Errno.EINVAL.code(), 0, "the work-request list is null"
                + "; pass a list (an empty one posts nothing)");
        }
        for (int i = 0; i < wrs.size(); i++)
        {
            final UdSendWr ud = wrs.get(i);
            if (ud == null)
            {
                throw new PostException(verb, Errno.EINVAL.code(), i, "the work request is null"
                    + "; pass a work request at every position");
            }
            if (type != QpType.UD)
            {
                throw new PostException(verb, Errno.EINVAL.code(), i, "wr.ud is for UD QPs only; QP 0x"
                    + Integer.toHexString(num) + " is " + type + " and sends to the QP it is connected to; post without "
                    + "ah, remote_qpn and qkey");
            }
            if (!(ud.ah() instanceof SimAh ah) || ah.isClosed() || ah.pd().context() != pd.context())
            {
                throw new PostException(verb, Errno.EINVAL.code(), i, "wr.ud.ah is not a live address handle of "
                    + "this QP's context; create one with ibv_create_ah on a PD of this context");
            }
            final byte[] inline = checkSend(ud.wr(), i);
            sendQueue.addLast(new Pending(ud.wr(), inline, ud, order.post()));
            engine().schedule(this);
        }
    }

    /** The checks ibv_post_send makes before the work request reaches the device; returns the inline payload. */
    private byte[] checkSend(final SendWr wr, final int i)
    {
        final String verb = "ibv_post_send";
        if (closed)
        {
            throw new PostException(verb, Errno.EINVAL.code(), i, "the QP is destroyed"
                + " (ibv_destroy_qp released it); create a new QP");
        }
        if (state == QpState.RESET || state == QpState.INIT || state == QpState.RTR)
        {
            throw new PostException(verb, Errno.EINVAL.code(), i, "QP 0x" + Integer.toHexString(num) + " is in "
                + state + "; sends need RTS"
                + "; modify the QP to RTS (INIT, RTR, RTS) before posting sends");
        }
        final String opcodeRefused = Datagrams.opcodeRefusal(type, wr.opcode());
        if (opcodeRefused != null)
        {
            throw new PostException(verb, Errno.EINVAL.code(), i, opcodeRefused);
        }
        if (wr.sgList().size() > cap.maxSendSge())
        {
            throw new PostException(verb, Errno.EINVAL.code(), i, "num_sge=" + wr.sgList().size()
                + " > max_send_sge=" + cap.maxSendSge()
                + "; use fewer SGEs or create the QP with a larger max_send_sge");
        }
        final DeviceAttributes a = device.profile().attributes();
        switch (wr.opcode())
        {
            case BIND_MW ->
            {
                if (!(wr.localOp() instanceof SendWr.Bind b) || !(b.mw() instanceof SimMw mw)
                    || mw.pd().context().device() != device)
                {
                    throw new PostException(verb, Errno.EINVAL.code(), i, "BIND_MW needs SendWr.bindMw with a "
                        + "window of this device");
                }
                if (mw.type() == MwType.TYPE_1 && !bindingType1)
                {
                    throw new PostException(verb, Errno.EINVAL.code(), i, "type 1 windows are bound with "
                        + "ibv_bind_mw (QueuePair.bindMw), not a posted BIND_MW"
                        + "; call ibv_bind_mw for a type 1 window");
                }
                if (device.profile().follows(ProviderRule.MW_BIND_CHECKED_AT_POST))
                {
                    final dev.rnicsim.verbs.MwBindInfo info = b.info();
                    if (mw.type() == MwType.TYPE_1 && info.access().contains(Access.ZERO_BASED)
                        || info.mr() != null && info.mr().access().contains(Access.ZERO_BASED))
                    {
                        throw new PostException(verb, Errno.EINVAL.code(), i, "zero-based type 1 windows and binds "
                            + "to zero-based MRs are refused at post (mlx5_bind_mw)"
                            + "; bind a window that is not zero-based, to an MR that is not zero-based");
                    }
                    if (info.lengthBytes() > 1L << 31)
                    {
                        throw new PostException(verb, Errno.EOPNOTSUPP.code(), i, "window of "
                            + info.lengthBytes() + " bytes > 2 GiB (mlx5 set_bind_wr: KLM supports only 2 GB)"
                            + "; bind a window of 2 GiB or less");
                    }
                }
            }
            case REG_MR ->
            {
                if (!(wr.localOp() instanceof SendWr.Reg r) || !(r.mr() instanceof SimFastRegMr fr)
                    || fr.pd().context().device() != device)
                {
                    throw new PostException(verb, Errno.EINVAL.code(), i, "REG_MR needs SendWr.regMr with a "
                        + "fast-registration MR of this device");
                }
            }
            case LOCAL_INV, SEND_WITH_INV ->
            {
                if (!a.has(DeviceCap.MEM_MGT_EXTENSIONS))
                {
                    throw new PostException(verb, Errno.EOPNOTSUPP.code(), i, "opcode " + wr.opcode() + ": "
                        + device.profile().name() + " lacks MEM_MGT_EXTENSIONS"
                        + "; use a device with MEM_MGT_EXTENSIONS (mlx5, rxe)");
                }
            }
            case ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD ->
            {
                if (a.atomicCap() == AtomicCap.NONE)
                {
                    throw new PostException(verb, Errno.EOPNOTSUPP.code(), i, "opcode " + wr.opcode()
                        + ": the device reports atomic_cap=ATOMIC_NONE"
                        + "; use a device with atomics (mlx5, rxe)");
                }
                if (wr.sgList().size() != 1 || wr.sgList().get(0).lengthBytes() != Long.BYTES)
                {
                    throw new PostException(verb, Errno.EINVAL.code(), i, "an atomic needs one SGE of 8 bytes, got "
                        + wr.sgList()
                        + "; give one SGE of 8 bytes");
                }
                if (device.profile().follows(ProviderRule.ATOMICS_NEED_QP_ATOMIC_ACCESS)
                    && (qpAccessBits & Access.REMOTE_ATOMIC.bit()) == 0)
                {
                    throw new PostException(verb, Errno.EOPNOTSUPP.code(), i, "opcode " + wr.opcode() + " on a QP "
                        + "whose qp_access_flags lack REMOTE_ATOMIC (" + device.profile().driver()
                        + " enables atomics per QP)"
                        + "; modify the QP with REMOTE_ATOMIC in qp_access_flags");
                }
                if (device.profile().follows(ProviderRule.ATOMIC_ALIGNMENT_AT_POST) && (wr.remoteAddr() & 7) != 0)
                {
                    throw new PostException(verb, Errno.EINVAL.code(), i, "atomic remote address 0x"
                        + Long.toHexString(wr.remoteAddr()) + " is not 8-byte aligned (" + device.profile().driver()
                        + " checks at post time)"
                        + "; give an 8-byte aligned remote address");
                }
            }
            case FLUSH, ATOMIC_WRITE -> PlacementOps.checkPost(device.profile(), type(), wr, i);
            case RDMA_READ ->
            {
                if (wr.sgList().size() > a.maxSgeRd())
                {
                    throw new PostException(verb, Errno.EINVAL.code(), i, "num_sge=" + wr.sgList().size()
                        + " > max_sge_rd=" + a.maxSgeRd()
                        + "; use fewer SGEs");
                }
            }
            default ->
            {
            }
        }
        if (sendsWaiting() >= cap.maxSendWr())
        {
            throw new PostException(verb, Errno.ENOMEM.code(), i, "send queue full: " + sendsWaiting()
                + " work requests waiting = max_send_wr=" + cap.maxSendWr()
                + "; poll completions first or create the QP with a larger max_send_wr");
        }
        if (!wr.flags().contains(SendFlag.INLINE))
        {
            return null;
        }
        if (wr.opcode() != WrOpcode.SEND && wr.opcode() != WrOpcode.SEND_WITH_IMM && wr.opcode() != WrOpcode.RDMA_WRITE
            && wr.opcode() != WrOpcode.RDMA_WRITE_WITH_IMM)
        {
            throw new PostException(verb, Errno.EINVAL.code(), i, "IBV_SEND_INLINE is for SEND and RDMA_WRITE only, "
                + "not " + wr.opcode()
                + "; drop IBV_SEND_INLINE");
        }
        final long total = wr.totalBytes();
        if (total > cap.maxInlineDataBytes())
        {
            final Errno errno = device.profile().follows(ProviderRule.INLINE_OVERFLOW_ENOMEM) ? Errno.ENOMEM
                : Errno.EINVAL;
            throw new PostException(verb, errno.code(), i, "inline payload of " + total
                + " bytes > max_inline_data=" + cap.maxInlineDataBytes()
                + "; send less inline or drop IBV_SEND_INLINE");
        }
        final byte[] payload = new byte[(int)total];
        int at = 0;
        for (final Sge s : wr.sgList())
        {
            try
            {
                final byte[] part = pd.context().process().read(s.addr(), (int)s.lengthBytes());
                System.arraycopy(part, 0, payload, at, part.length);
                at += part.length;
            }
            catch (final KernelException e)
            {
                throw new PostException(verb, e.errno().value(), i, "inline data at 0x" + Long.toHexString(s.addr())
                    + ": " + e.detail());
            }
        }
        return payload;
    }

    @Override
    public int bindMw(final MemoryWindow mw, final long wrId, final Set<SendFlag> flags, final MwBindInfo info)
    {
        final String verb = "ibv_bind_mw";
        checkOpen(verb);
        if (!(mw instanceof SimMw m) || m.isClosed())
        {
            throw Errors.invalid(verb, "mw is not a live window of this simulator: " + mw
                + "; bind a window from ibv_alloc_mw that is not deallocated");
        }
        if (m.type() != MwType.TYPE_1)
        {
            throw Errors.invalid(verb, "ibv_bind_mw binds type 1 windows; bind a type 2 window with a posted "
                + "BIND_MW work request (verbs.h ibv_bind_mw)");
        }
        if (info == null || flags == null || flags.stream().anyMatch(java.util.Objects::isNull))
        {
            throw Errors.invalid(verb, "mw_bind and its send flags must be given, without null elements");
        }
        if (m.pd().context().device() != device)
        {
            throw Errors.invalid(verb, "the window belongs to " + m.pd().context().device().name() + ", not to this"
                + " QP's device " + device.name()
                + "; bind through a QP of the window's device");
        }
        if (info.mr() == null && (info.addr() != 0 || info.lengthBytes() != 0))
        {
            throw Errors.invalid(verb, "no MR but addr=0x" + Long.toHexString(info.addr()) + " lengthBytes="
                + info.lengthBytes() + " (verbs.h ibv_bind_mw)"
                + "; give an MR, or addr 0 and length 0 to unbind");
        }
        if (info.mr() != null && device.profile().follows(ProviderRule.MW_BIND_CHECKED_AT_POST)
            && !MrTypes.isPlain(info.mr()))
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, "the MR is of type " + MrTypes.typeOf(info.mr())
                + ", not a plain MR "
                + "(IBV_MR_TYPE_MR): windows bind only to MRs of ibv_reg_mr (mlx5_bind_mw)");
        }
        if (info.mr() != null && info.mr().pd() != m.pd())
        {
            throw Errors.of(verb, Errno.EPERM, "the MR and the window are in different PDs (verbs.h ibv_bind_mw)"
                + "; bind to an MR of the window's PD");
        }
        final int newRkey = SendWr.incRkey(m.rkey());
        final SendWr wr = new SendWr(wrId, WrOpcode.BIND_MW, List.of(), flags, 0, 0, 0, 0, 0, 0,
            new SendWr.Bind(m, newRkey, info));
        bindingType1 = true;
        try
        {
            checkSend(wr, 0);
        }
        catch (final PostException e)
        {
            throw new VerbsException(verb, e.errno(), e.detail());
        }
        finally
        {
            bindingType1 = false;
        }
        // The provider stores the new rkey at post time (mlx5_bind_mw, rxe_bind_mw), before the completion.
        m.rkey(newRkey);
        sendQueue.addLast(new Pending(wr, null, null, order.post()));
        engine().schedule(this);
        return newRkey;
    }

    @Override
    public void postRecv(final List<RecvWr> wrs)
    {
        final String verb = "ibv_post_recv";
        if (wrs == null)
        {
            throw new PostException(verb, Errno.EINVAL.code(), 0, "the work-request list is null"
                + "; pass a list of work requests");
        }
        try
        {
            postReceives(wrs, verb);
        }
        finally
        {
            // Whatever was posted before a refused work request may let a waiting sender go on.
            wakeWaitingPeer();
        }
    }

    private void postReceives(final List<RecvWr> wrs, final String verb)
    {
        for (int i = 0; i < wrs.size(); i++)
        {
            final RecvWr wr = wrs.get(i);
            if (wr == null)
            {
                throw new PostException(verb, Errno.EINVAL.code(), i, "the work request is null"
                    + "; pass a work request at every position");
            }
            if (closed)
            {
                throw new PostException(verb, Errno.EINVAL.code(), i, "the QP is destroyed"
                    + " (ibv_destroy_qp released it); create a new QP");
            }
            if (state == QpState.RESET)
            {
                throw new PostException(verb, Errno.EINVAL.code(), i, "QP 0x" + Integer.toHexString(num)
                    + " is in RESET; receives need INIT or later"
                    + "; modify the QP to INIT first");
            }
            if (srq != null)
            {
                throw new PostException(verb, Errno.EINVAL.code(), i, "QP 0x" + Integer.toHexString(num) + " takes "
                    + "its receives from an SRQ; post them there (ibv_post_srq_recv; rxe_post_recv refuses a QP "
                    + "with an SRQ)");
            }
            if (wr.sgList().size() > cap.maxRecvSge())
            {
                throw new PostException(verb, Errno.EINVAL.code(), i, "num_sge=" + wr.sgList().size()
                    + " > max_recv_sge=" + cap.maxRecvSge()
                    + "; use fewer SGEs or create the QP with a larger max_recv_sge");
            }
            if (recvQueue.size() >= cap.maxRecvWr())
            {
                throw new PostException(verb, Errno.ENOMEM.code(), i, "receive queue full: " + recvQueue.size()
                    + " = max_recv_wr=" + cap.maxRecvWr()
                    + "; poll receive completions first or create the QP with a larger max_recv_wr");
            }
            if (state == QpState.ERR)
            {
                completeRecv(wr, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0);
                continue;
            }
            recvQueue.addLast(wr);
        }
    }

    // ------------------------------------------------------------------ execution

    private NicEngine engine()
    {
        return device.fabric().engine();
    }

    boolean scheduled()
    {
        return scheduled;
    }

    void scheduled(final boolean inTurnOrder)
    {
        this.scheduled = inTurnOrder;
    }

    /**
     * @return the oldest message in flight: a READ or atomic whose responses are coming back, else the message of
     * the head WQE while its packets move; null when none.
     */
    public InflightMessage inflight()
    {
        return responses.isEmpty() ? inflight : responses.peekFirst().m();
    }

    /**
     * @return every message in flight, oldest first: READs and atomics waiting for responses, then the head's.
     */
    public List<InflightMessage> inflightMessages()
    {
        final List<InflightMessage> out = new ArrayList<>(responses.size() + 1);
        for (final Outstanding o : responses)
        {
            out.add(o.m());
        }
        if (inflight != null)
        {
            out.add(inflight);
        }
        return out;
    }

    /**
     * @return the WQEs on the send queue, the oldest first: READs and atomics waiting for their responses, then the
     * one executing (or waiting for a receive), then those not started.
     */
    public List<SendWr> sendQueueWrs()
    {
        final List<SendWr> out = new ArrayList<>(sendsWaiting());
        for (final Outstanding o : responses)
        {
            out.add(o.p().wr());
        }
        for (final Pending p : sendQueue)
        {
            out.add(p.wr());
        }
        return out;
    }

    boolean hasSendWork()
    {
        return !closed && (!sendQueue.isEmpty() || !responses.isEmpty());
    }

    /**
     * One step of the engine on this QP: one packet moves. The head WQE moves its next packet (a local operation, a
     * one-packet message, an RNR NAK or a flush counts one), or the oldest READ or atomic waiting for responses
     * gets its next response packet; when both can move they take turns. A WQE starts only when the one before it
     * sent all its request packets; a READ or atomic, once its request went out, lets later WQEs start while its
     * responses come back, unless a later WQE carries IBV_SEND_FENCE (it waits until every earlier READ and atomic
     * completed: IBA vol. 1 ch. 10, fence indicator; rxe_req.c {@code wait_fence}) or the QP has
     * {@code max_qp_init_rd_atom} of them outstanding (IBA 9.4.4). Completions are reported in posting order
     * ({@link CompletionOrder}).
     *
     * @return false when the QP can do nothing now (no WQE, waiting for a receive, or re-entered).
     */
    boolean step()
    {
        if (progressing || closed || (sendQueue.isEmpty() && responses.isEmpty()))
        {
            return false;
        }
        progressing = true;
        try
        {
            if (state == QpState.ERR)
            {
                dropInflight();
                flushSends();
                return true;
            }
            if (state == QpState.SQD && inflight == null)
            {
                return false;
            }
            final Pending head = sendQueue.peekFirst();
            if (!responses.isEmpty() && (head == null || responseTurn || !mayStart(head)))
            {
                responseTurn = false;
                return respond();
            }
            responseTurn = true;
            final Outcome outcome;
            executing = head;
            currentSeq = head.seq();
            try
            {
                outcome = inflight != null ? continueMessage(head, inflight) : execute(head);
            }
            catch (final RuntimeException e)
            {
                // A fault of the simulator itself: the work request does not stay queued to run again.
                executing = null;
                dropInflight();
                sendQueue.remove(head);
                settle(head);
                toError();
                throw e;
            }
            finally
            {
                executing = null;
            }
            if (outcome == Outcome.BLOCKED)
            {
                return !responses.isEmpty() && respond();
            }
            if (outcome == Outcome.MORE)
            {
                return true;
            }
            sendQueue.remove(head);
            rnrNaks = 0;
            if (outcome == Outcome.OUTSTANDING)
            {
                responses.addLast(new Outstanding(head, inflight));
                inflight = null;
                return true;
            }
            settle(head);
            if (outcome == Outcome.ERROR)
            {
                // The responder executed the older READs and atomics before it NAKed this WQE: their responses
                // come back first.
                while (!responses.isEmpty() && state != QpState.ERR)
                {
                    respond();
                }
                toError();
            }
            return true;
        }
        finally
        {
            progressing = false;
        }
    }

    /** True when the head WQE may start (or go on) now: no fence or max_qp_init_rd_atom holds it back. */
    private boolean mayStart(final Pending head)
    {
        if (inflight != null || responses.isEmpty())
        {
            return true;
        }
        if (head.wr().flags().contains(SendFlag.FENCE))
        {
            return false;
        }
        return !(head.wr().opcode() == WrOpcode.RDMA_READ || head.wr().opcode().isAtomic())
            || responses.size() < device.profile().attributes().maxQpInitRdAtom();
    }

    /** The next response packet of the oldest READ or atomic waiting for its responses. */
    private boolean respond()
    {
        final Outstanding o = responses.peekFirst();
        executing = o.p();
        currentSeq = o.p().seq();
        final Outcome outcome;
        try
        {
            outcome = continueMessage(o.p(), o.m());
        }
        finally
        {
            executing = null;
        }
        if (outcome == Outcome.MORE)
        {
            return true;
        }
        responses.remove(o);
        settle(o.p());
        if (outcome == Outcome.ERROR)
        {
            toError();
        }
        return true;
    }

    /** A WQE left the send queue: if it ended without a completion (unsignaled), it still takes its turn. */
    private void settle(final Pending p)
    {
        if (!order.ended(p.seq()))
        {
            release(order.end(p.seq(), new CompletionOrder.End(p.wr(), null)));
        }
    }

    /** Reports the completions now due, in posting order. */
    private void release(final List<CompletionOrder.End> due)
    {
        for (final CompletionOrder.End e : due)
        {
            if (e.wc() != null && !sendCq.push(e.wc()))
            {
                toError();
            }
        }
    }

    private void dropInflight()
    {
        if (inflight != null)
        {
            engine().release(inflight);
            inflight = null;
        }
    }

    /** Drops a message in flight: the head's, or an outstanding READ's or atomic's (which stays listed). */
    private void dropMessage(final InflightMessage m)
    {
        if (m == inflight)
        {
            dropInflight();
        }
        else
        {
            engine().release(m);
        }
    }

    /**
     * True when the message moves packet by packet from and to pinned host memory: an RDMA WRITE (also with immediate
     * or inline data), READ or SEND (also with immediate, invalidate or inline data) of more than one path MTU, and
     * every atomic (a request packet, then a response packet: IBA 9.4.5). ODP and GPU memory and relaxed-ordering
     * MRs are still placed in one step (see docs/async.md).
     */
    private boolean packetized(final Pending p, final SimQp peer)
    {
        final SendWr wr = p.wr();
        final boolean multi = p.inline() != null ? p.inline().length > device.fabric().pathMtuBytes()
            : wr.totalBytes() > device.fabric().pathMtuBytes();
        final boolean kind = switch (wr.opcode())
        {
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM, SEND, SEND_WITH_IMM, SEND_WITH_INV -> multi;
            case RDMA_READ -> multi && p.inline() == null;
            case ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD -> true;
            default -> false;
        };
        return kind && !device.tables().hasOnDemand() && !peer.device.tables().hasOnDemand()
            && gpusTouched(wr, peer, needsRecv(wr)).isEmpty() && !relaxedPlacement(wr, peer);
    }

    private static boolean needsRecv(final SendWr wr)
    {
        return wr.opcode() == WrOpcode.SEND || wr.opcode() == WrOpcode.SEND_WITH_IMM
            || wr.opcode() == WrOpcode.SEND_WITH_INV || wr.opcode() == WrOpcode.RDMA_WRITE_WITH_IMM;
    }

    /**
     * The first packet of a packetized message: the responder checks the rkey, range and rights for the whole
     * message (a SEND: the receive buffers it takes; and the requester its whole local list); a failure answers as
     * the one-step path does and moves nothing; else the first packet is placed and the message is in flight. An
     * atomic's first step is its request packet: the responder executes it; the response comes in the next step.
     */
    private Outcome startMessage(final Pending p, final SimQp peer, final long missesBefore)
    {
        final SendWr wr = p.wr();
        final dev.rnicsim.dma.DmaEngine dmaEngine = device.dmaEngine();
        final int peerPd = peer.pd.pdNum();
        final boolean atomic = wr.opcode().isAtomic();
        final boolean send = wr.opcode() == WrOpcode.SEND || wr.opcode() == WrOpcode.SEND_WITH_IMM
            || wr.opcode() == WrOpcode.SEND_WITH_INV;
        final dev.rnicsim.dma.DmaEngine.Message dma;
        if (send)
        {
            dma = dmaEngine.openSend(device.port(), pd.pdNum(), p.inline() == null ? segments(device, wr.sgList())
                : List.of(), p.inline(), peer.device.port(), peerPd, segments(peer.device,
                peer.recvQueue.peekFirst().sgList()));
        }
        else
        {
            final long remoteAddr = peer.device.keyAddress(wr.rkey(), wr.remoteAddr());
            final dev.rnicsim.dma.DmaPort remotePort = peer.device.port().through(peer.num);
            if (atomic)
            {
                dma = dmaEngine.openAtomic(device.port(), pd.pdNum(), segments(device, wr.sgList()).get(0),
                    remotePort, peerPd, peer.qpAccessBits, remoteAddr, wr.rkey(),
                    wr.opcode() == WrOpcode.ATOMIC_CMP_AND_SWP, wr.compareAdd(), wr.swap());
            }
            else if (p.inline() != null)
            {
                dma = dmaEngine.openInlineWrite(p.inline(), remotePort, peerPd, peer.qpAccessBits, remoteAddr,
                    wr.rkey());
            }
            else
            {
                dma = dmaEngine.openMessage(wr.opcode() == WrOpcode.RDMA_READ, device.port(), pd.pdNum(),
                    segments(device, wr.sgList()), remotePort, peerPd, peer.qpAccessBits, remoteAddr, wr.rkey());
            }
        }
        if (dma.failure() != null)
        {
            return finish(wr, peer, dma.failure(), needsRecv(wr), missesBefore, null);
        }
        final long length = atomic ? Long.BYTES : p.inline() != null ? p.inline().length : wr.totalBytes();
        inflight = new InflightMessage(this, wr, dma, peer.device, length, device.fabric().pathMtuBytes(),
            missesBefore, needsRecv(wr), device.fabric().clock().nowNs());
        if (!send)
        {
            // The responder took a reference on the MR of the rkey it checked (rxe check_rkey); a SEND's receive
            // buffers are looked up per packet (rxe copy_data), so a SEND holds no key.
            engine().hold(inflight);
        }
        // A READ's request or an atomic's request is one packet; the responses come back in later steps.
        return atomic || wr.opcode() == WrOpcode.RDMA_READ ? Outcome.OUTSTANDING : continueMessage(p, inflight);
    }

    /**
     * The next packet of the message in flight: placed by the responder under the check of the first packet. A key
     * retired since then (mlx5: the mkey is destroyed) fails the packet with a remote access error; the packets
     * before it stay placed. A responder that is gone answers nothing: the requester's retries run out. Each packet
     * advances the simulated clock by its share of the message's price ({@link CostModel#packetNs}).
     */
    private Outcome continueMessage(final Pending p, final InflightMessage m)
    {
        final SendWr wr = p.wr();
        final SimQp peer = peer();
        if (peer == null || peer.closed || (peer.state != QpState.RTR && peer.state != QpState.RTS)
            || !peer.connectedTo(this))
        {
            dropMessage(m);
            HwCounters.noAck(device, retryCount);
            device.count(SimCounter.TRANSPORT_RETRIES, retryCount);
            device.fabric().span(device, wr.opcode().name(), "dma",
                device.fabric().costModel().opBaseLatencyNs() * (retryCount + 1L),
                java.util.Map.of("qp_num", num, "status", WcStatus.RETRY_EXC_ERR.cName(), "packet",
                    m.packetsPlaced()));
            completeSend(wr, WcStatus.RETRY_EXC_ERR, 0);
            return Outcome.ERROR;
        }
        // The packet moves under the keys' check of the first packet; the message keeps its place in both lists.
        final long packetBytes = m.packetBytes();
        final long startNs = device.fabric().clock().nowNs();
        final DmaResult r = device.dmaEngine().movePacket(m.dma(), packetBytes);
        if (r == null)
        {
            final double linkGbps = Math.min(device.profile().linkGbps(), peer.device.profile().linkGbps());
            final long ns = device.fabric().costModel().packetNs(m.offset(), packetBytes, linkGbps);
            device.fabric().clock().advance(ns);
            m.advanced(ns);
        }
        if (device.fabric().tracing())
        {
            device.fabric().overlap(peer.device, wr.opcode() == WrOpcode.RDMA_READ ? "read_response"
                : wr.opcode().isAtomic() ? "atomic_response" : "packet", "packet", startNs,
                device.fabric().clock().nowNs() - startNs, java.util.Map.of("qp_num", num, "wr_id", wr.wrId(),
                    "packet", m.packetsPlaced() + 1, "of", m.packetCount(), "bytes", packetBytes, "status",
                    r == null ? "placed" : status(r.requester()).cName()));
        }
        if (r != null)
        {
            // A later packet is NAKed: what the packets before it placed stays placed.
            dropMessage(m);
            return finish(wr, peer, r, m.needsRecv(), m.missesBefore(), m);
        }
        final boolean last = m.lastPacket();
        m.advance();
        if (!last)
        {
            return Outcome.MORE;
        }
        dropMessage(m);
        return finish(wr, peer, DmaResult.success(m.lengthBytes(), m.dma().atomicOriginal()), m.needsRecv(),
            m.missesBefore(), m);
    }

    private SimQp peer()
    {
        if (remote == null)
        {
            return null;
        }
        // A live QP keeps its number on its device until it is destroyed, and a fabric keeps its devices: the peer
        // found for this address stays the answer while it is open.
        if (peerAddress == remote && peerFound != null && !peerFound.closed)
        {
            return peerFound;
        }
        final SimDevice d = device.fabric().deviceByGid(remote.gid());
        final SimQp found = d == null ? null : d.qp(remote.qpNum());
        peerAddress = remote;
        peerFound = found;
        return found;
    }

    /** An RC responder answers only the QP its address vector names (rxe drops other packets in check_addr). */
    private boolean connectedTo(final SimQp requester)
    {
        return remote != null && remote.qpNum() == requester.num && remote.gid().equals(requester.device.gid());
    }

    private Outcome execute(final Pending p)
    {
        final SendWr wr = p.wr();
        localFailure = null;
        if (wr.opcode() == WrOpcode.BIND_MW || wr.opcode() == WrOpcode.LOCAL_INV || wr.opcode() == WrOpcode.REG_MR)
        {
            return executeLocal(wr);
        }
        if (p.ud() != null)
        {
            return executeDatagram(p);
        }
        final SimQp peer = peer();
        if (peer == null || peer.closed || (peer.state != QpState.RTR && peer.state != QpState.RTS)
            || !peer.connectedTo(this))
        {
            // No ACK ever comes: the requester retries retry_cnt times, then gives up.
            HwCounters.noAck(device, retryCount);
            device.count(SimCounter.TRANSPORT_RETRIES, retryCount);
            final WcDiagnosis lost = Diagnoser.noAck(this, wr, retryCount, peer == null
                ? "no QP " + (remote == null ? "" : "0x" + Integer.toHexString(remote.qpNum()) + " ") + "at the remote "
                + "address" : peer.closed ? "the peer QP is destroyed" : !peer.connectedTo(this)
                ? "the peer QP is connected to another QP" : "the peer QP is in " + peer.state + ", not RTR or RTS");
            device.fabric().span(device, wr.opcode().name(), "dma",
                device.fabric().costModel().opBaseLatencyNs() * (retryCount + 1L),
                java.util.Map.of("qp_num", num, "status", WcStatus.RETRY_EXC_ERR.cName(), "diagnosis", lost.summary()));
            completeSend(wr, WcStatus.RETRY_EXC_ERR, 0, lost);
            return Outcome.ERROR;
        }
        final boolean needsRecv = wr.opcode() == WrOpcode.SEND || wr.opcode() == WrOpcode.SEND_WITH_IMM
            || wr.opcode() == WrOpcode.SEND_WITH_INV || wr.opcode() == WrOpcode.RDMA_WRITE_WITH_IMM;
        if (needsRecv && peer.recvQueue.isEmpty())
        {
            return receiverNotReady(wr, peer);
        }
        final long missesBefore = device.tables().cache().misses() + peer.device.tables().cache().misses();
        final DmaResult tooLong = PlacementOps.responderLength(device, pd.pdNum(), wr);
        if (tooLong != null)
        {
            return finish(wr, peer, tooLong, false, missesBefore, null);
        }
        if (packetized(p, peer))
        {
            return startMessage(p, peer, missesBefore);
        }
        peer.device.takeRemoteFaultNs();
        DmaResult attempt = run(p, peer);
        int rnrWaits = 0;
        while (attempt.requester() == DmaStatus.RNR_NAK)
        {
            final DmaResult nak = attempt;
            // The responder met a page fault on an ODP MR and answers RNR NAK until it is resolved; each NAK costs
            // the requester one min_rnr_timer wait and one of its rnr_retry attempts (7: unlimited).
            final long timerNs = CostModel.rnrTimerNs(peer.minRnrTimer);
            final long naks = Math.max(1, (peer.device.takeRemoteFaultNs() + timerNs - 1) / timerNs);
            if (rnrRetry != 7 && rnrWaits + naks > rnrRetry)
            {
                final int left = rnrRetry - rnrWaits;
                peer.device.count(SimCounter.ODP_RNR_NAKS, left + 1L);
                HwCounters.rnrExhausted(device, left);
                device.count(SimCounter.RNR_RETRIES, left);
                device.fabric().span(device, wr.opcode().name(), "dma", timerNs * left, java.util.Map.of("qp_num",
                    num, "status", WcStatus.RNR_RETRY_EXC_ERR.cName(), "rnr_retries", rnrRetry, "why", nak.detail()));
                device.observe(o -> o.failed(this, wr, nak));
                completeSend(wr, WcStatus.RNR_RETRY_EXC_ERR, 0, Diagnoser.rnr(this, wr, rnrRetry, "an on-demand-"
                    + "paging page fault at the responder did not settle in time: " + nak.detail()));
                return Outcome.ERROR;
            }
            rnrWaits += (int)Math.min(naks, 1 << 20);
            peer.device.count(SimCounter.ODP_RNR_NAKS, naks);
            device.count(SimCounter.RNR_NAK_RETRY_ERR, naks);
            device.count(SimCounter.RNR_RETRIES, naks);
            device.fabric().span(device, "rnr_wait", "odp", timerNs * naks, java.util.Map.of("qp_num", num,
                "rnr_naks", naks, "why", nak.detail()));
            if (rnrWaits > MAX_RNR_ROUNDS)
            {
                throw new IllegalStateException("a responder page fault never settled after " + rnrWaits
                    + " RNR NAKs: " + nak.detail());
            }
            attempt = run(p, peer);
        }
        return finish(wr, peer, attempt, needsRecv, missesBefore, null);
    }

    /**
     * The end of a message, in one step or at its last (or failed) packet ({@code packets}, whose packets advanced
     * the clock already): prices it, completes it.
     */
    private Outcome finish(final SendWr wr, final SimQp peer, final DmaResult r, final boolean needsRecv,
        final long missesBefore, final InflightMessage packets)
    {
        if (type == QpType.UC && r.responderError())
        {
            return ucDropped(wr, peer, r);
        }
        final WcDiagnosis why = r.ok() ? null : Diagnoser.dma(this, wr, peer, needsRecv ? peer.recvQueue.peekFirst()
            : null, r, requesterStatus(wr, r));
        final long misses = device.tables().cache().misses() + peer.device.tables().cache().misses() - missesBefore;
        // The span's arguments are built only for a trace listener (the clock advances either way).
        final boolean tracing = device.fabric().tracing();
        final java.util.Map<String, Object> args = tracing ? new java.util.LinkedHashMap<>() : null;
        if (tracing)
        {
            args.put("qp_num", num);
            args.put("bytes", r.byteLen());
            args.put("cache_misses", misses);
            args.put("status", r.ok() ? "IBV_WC_SUCCESS" : status(r.requester()).cName());
            if (why != null)
            {
                args.put("diagnosis", why.summary());
            }
        }
        final long startNs = packets == null ? device.fabric().clock().nowNs() : packets.startNs();
        final double linkGbps = Math.min(device.profile().linkGbps(), peer.device.profile().linkGbps());
        long opNs = device.fabric().costModel().operationNs(r.byteLen(), linkGbps, misses);
        // Data read from or placed into GPU memory crosses the GPUs' peer-to-peer paths to their NICs; the slowest path
        // sets the pace of the whole transfer.
        if (r.ok())
        {
            GpuTopology slowest = null;
            for (final SimGpu gpu : gpusTouched(wr, peer, needsRecv))
            {
                if (tracing)
                {
                    args.put("p2p_" + gpu.name(), gpu.topology().name());
                }
                if (slowest == null || gpu.topology().crossesSockets())
                {
                    slowest = gpu.topology();
                }
            }
            if (slowest != null)
            {
                opNs += device.fabric().costModel().peerToPeerNs(r.byteLen(), linkGbps, slowest);
            }
        }
        if (r.ok() && relaxedPlacement(wr, peer))
        {
            opNs -= device.fabric().costModel().relaxedOrderingSavingNs(r.byteLen(), linkGbps);
            if (tracing)
            {
                args.put("relaxed_ordering", true);
            }
        }
        if (packets == null)
        {
            device.fabric().span(device, wr.opcode().name(), "dma", opNs, tracing ? args : java.util.Map.of());
        }
        else
        {
            if (tracing)
            {
                args.put("packets", packets.packetCount());
            }
            device.fabric().spanSince(device, wr.opcode().name(), "dma", startNs, opNs, packets.advancedNs(),
                tracing ? args : java.util.Map.of());
        }
        if (peer.device != device && tracing)
        {
            device.fabric().overlap(peer.device, wr.opcode().name() + " (responder)", "dma", startNs, opNs,
                java.util.Map.of("qp_num", peer.num, "bytes", r.byteLen()));
        }
        if (r.ok() && wr.opcode() == WrOpcode.SEND_WITH_INV && !LocalOps.invalidate(peer, wr.invalidateRkey()))
        {
            // rxe_resp.c: the data is placed, the invalidation fails (RESPST_ERR_INVALIDATE_RKEY): the receive
            // completes with REM_INV_REQ_ERR, the responder QP goes to error, the requester gets a NAK.
            final RecvWr recv = peer.recvQueue.removeFirst();
            final WcDiagnosis invalid = Diagnoser.local(this, wr, WcStatus.REM_INV_REQ_ERR, "the responder could "
                + "not invalidate rkey 0x" + Integer.toHexString(wr.invalidateRkey()) + ": " + peer.lastLocalFailure());
            peer.completeRecv(recv, WcStatus.REM_INV_REQ_ERR, WcOpcode.RECV, 0, false, 0, false, 0, invalid);
            device.count(SimCounter.REQ_REMOTE_INVALID_REQUEST, 1);
            peer.toError();
            completeSend(wr, WcStatus.REM_INV_REQ_ERR, 0, invalid);
            return Outcome.ERROR;
        }
        RecvWr consumed = null;
        if (needsRecv && (r.ok() || r.responderError()))
        {
            final RecvWr recv = peer.recvQueue.removeFirst();
            consumed = recv;
            final boolean imm = wr.opcode() == WrOpcode.SEND_WITH_IMM || wr.opcode() == WrOpcode.RDMA_WRITE_WITH_IMM;
            final boolean inv = wr.opcode() == WrOpcode.SEND_WITH_INV && r.ok();
            final WcOpcode opcode = wr.opcode() == WrOpcode.RDMA_WRITE_WITH_IMM ? WcOpcode.RECV_RDMA_WITH_IMM
                : WcOpcode.RECV;
            peer.completeRecv(recv, r.ok() ? WcStatus.SUCCESS : peer.responderStatus(r), opcode, r.byteLen(), imm,
                wr.immData(), inv, inv ? wr.invalidateRkey() : 0, why);
        }
        account(wr, r, peer);
        final RecvWr received = consumed;
        if (r.ok())
        {
            device.observe(o -> o.transferred(this, wr, peer, received));
        }
        else
        {
            device.observe(o -> o.failed(this, wr, r));
        }
        if (r.responderError())
        {
            if (peer.state != QpState.ERR && why != null)
            {
                peer.errorCause = "it answered " + status(r.requester()).cName() + " to QP 0x"
                    + Integer.toHexString(num) + ": " + why.summary();
            }
            peer.toError();
        }
        if (r.requester() != DmaStatus.SUCCESS)
        {
            completeSend(wr, requesterStatus(wr, r), 0, why);
            return Outcome.ERROR;
        }
        if (sqSigAll || wr.flags().contains(SendFlag.SIGNALED))
        {
            completeSend(wr, WcStatus.SUCCESS, r.byteLen());
        }
        return Outcome.DONE;
    }

    /**
     * A UD send: unreliable, so nothing the responder meets comes back to the requester, whose send completes with
     * success once the packet left (IBA 9.8.3). The datagram is dropped when it exceeds the path MTU (no packet is
     * sent and no error raised: IBA C10-93.1.1, rxe {@code fake_udp_send}), names no UD QP in RTR or later, carries
     * the wrong Q_Key (IBA 10.2.5), or finds no receive posted (no RNR on UD; the out_of_buffer counter rises). A
     * delivered datagram fills the receive buffer's first 40 bytes with the GRH and the payload after it; byte_len
     * counts both. A receive buffer too small completes with IBV_WC_LOC_LEN_ERR at the responder.
     */
    private Outcome executeDatagram(final Pending p)
    {
        final SendWr wr = p.wr();
        final UdSendWr ud = p.ud();
        final long length = p.inline() != null ? p.inline().length : wr.totalBytes();
        final SimDevice pdev = ud.ah().attr().dgid() == null ? null : device.fabric().deviceByGid(ud.ah().attr()
            .dgid());
        final SimQp peer = pdev == null ? null : pdev.qp(ud.remoteQpn());
        final int qkey = ud.remoteQkey() < 0 ? attrs.qkey : ud.remoteQkey();
        final int mtu = device.fabric().pathMtuBytes();
        String dropped = null;
        if (length > mtu)
        {
            dropped = "the datagram of " + length + " bytes exceeds the path MTU of " + mtu + " bytes: no packet is "
                + "sent (IBA C10-93.1.1)";
        }
        else if (peer == null || peer.closed || peer.type != QpType.UD)
        {
            dropped = "no UD QP 0x" + Integer.toHexString(ud.remoteQpn()) + " at " + ud.ah().attr().dgid();
        }
        else if (peer.state != QpState.RTR && peer.state != QpState.RTS && peer.state != QpState.SQD)
        {
            dropped = "QP 0x" + Integer.toHexString(peer.num) + " is in " + peer.state + " and receives nothing";
        }
        else if (peer.attrs.qkey != qkey)
        {
            dropped = "Q_Key 0x" + Integer.toHexString(qkey) + " does not match QP 0x" + Integer.toHexString(peer.num)
                + "'s 0x" + Integer.toHexString(peer.attrs.qkey) + " (IBA 10.2.5: the packet is dropped)";
        }
        else if (peer.recvQueue.isEmpty())
        {
            peer.device.count(SimCounter.OUT_OF_BUFFER, 1);
            dropped = "QP 0x" + Integer.toHexString(peer.num) + " has no receive posted (UD has no RNR)";
        }
        final java.util.Map<String, Object> args = new java.util.LinkedHashMap<>();
        args.put("qp_num", num);
        args.put("bytes", length);
        args.put("ud_dest_qpn", ud.remoteQpn());
        if (dropped != null)
        {
            args.put("dropped", dropped);
            device.fabric().span(device, wr.opcode().name(), "dma", device.fabric().costModel().opBaseLatencyNs(),
                args);
            return datagramSent(wr, length);
        }
        final RecvWr recv = peer.recvQueue.removeFirst();
        final List<Segment> recvSgl = segments(pdev, recv.sgList());
        if (recv.totalBytes() < Datagrams.GRH_BYTES + length)
        {
            peer.completeRecv(recv, WcStatus.LOC_LEN_ERR, WcOpcode.RECV, 0, false, 0, false, 0, null);
            args.put("dropped", "receive wr_id " + recv.wrId() + " holds " + recv.totalBytes() + " bytes < 40 (GRH) + "
                + length);
            device.fabric().span(device, wr.opcode().name(), "dma", device.fabric().costModel().opBaseLatencyNs(),
                args);
            return datagramSent(wr, length);
        }
        final List<List<Segment>> parts = Datagrams.split(recvSgl, Datagrams.GRH_BYTES);
        final DmaResult r = p.inline() != null
            ? device.dmaEngine().sendInline(p.inline(), pdev.port(), peer.pd.pdNum(), parts.get(1))
            : device.dmaEngine().send(device.port(), pd.pdNum(), segments(device, wr.sgList()), pdev.port(),
                peer.pd.pdNum(), parts.get(1));
        if (!r.ok() && !r.responderError())
        {
            // The gather failed at the requester: nothing left, the receive stays posted.
            peer.recvQueue.addFirst(recv);
            completeSend(wr, requesterStatus(wr, r), 0, Diagnoser.local(this, wr, requesterStatus(wr, r),
                r.detail()));
            return Outcome.ERROR;
        }
        final DmaResult g = r.ok() ? device.dmaEngine().sendInline(Datagrams.grh(device.gid(), pdev.gid(), length),
            pdev.port(), peer.pd.pdNum(), parts.get(0)) : r;
        final boolean imm = wr.opcode() == WrOpcode.SEND_WITH_IMM;
        peer.completeRecv(recv, g.ok() ? WcStatus.SUCCESS : peer.responderStatus(g), WcOpcode.RECV,
            g.ok() ? Datagrams.GRH_BYTES + length : 0, imm, wr.immData(), false, 0, null);
        final double linkGbps = Math.min(device.profile().linkGbps(), pdev.profile().linkGbps());
        args.put("status", g.ok() ? "delivered" : peer.responderStatus(g).cName());
        device.fabric().span(device, wr.opcode().name(), "dma", device.fabric().costModel().operationNs(length,
            linkGbps, 0), args);
        if (g.ok())
        {
            account(wr, r, peer);
        }
        return datagramSent(wr, length);
    }

    /**
     * UC has no acknowledgements: a message the responder refuses (a bad rkey, a length or receive-buffer error) is
     * dropped there without a completion and without moving its QP to ERR, and the requester, which never hears of
     * it, completes the work request with success (IBA 9.8.3, 9.9.3.x for UC; rxe {@code rxe_receiver}: UC without an
     * SRQ drops the packet in its error states).
     */
    private Outcome ucDropped(final SendWr wr, final SimQp peer, final DmaResult r)
    {
        device.fabric().span(device, wr.opcode().name(), "dma", device.fabric().costModel().opBaseLatencyNs(),
            java.util.Map.of("qp_num", num, "dropped", "QP 0x" + Integer.toHexString(peer.num) + " refused it ("
                + status(r.responder() == null ? r.requester() : r.responder()).cName() + ": " + r.detail()
                + "); UC sends no NAK"));
        if (sqSigAll || wr.flags().contains(SendFlag.SIGNALED))
        {
            completeSend(wr, WcStatus.SUCCESS, 0);
        }
        return Outcome.DONE;
    }

    private Outcome datagramSent(final SendWr wr, final long length)
    {
        if (sqSigAll || wr.flags().contains(SendFlag.SIGNALED))
        {
            completeSend(wr, WcStatus.SUCCESS, length);
        }
        return Outcome.DONE;
    }

    /** Executes BIND_MW, LOCAL_INV or REG_MR on this QP's device; a failure completes it in error. */
    private Outcome executeLocal(final SendWr wr)
    {
        localFailure = null;
        final WcStatus status = switch (wr.opcode())
        {
            case BIND_MW -> LocalOps.bind(this, (SendWr.Bind)wr.localOp());
            case REG_MR -> LocalOps.fastRegister(this, (SendWr.Reg)wr.localOp());
            default -> LocalOps.invalidate(this, wr.invalidateRkey()) ? WcStatus.SUCCESS : WcStatus.LOC_QP_OP_ERR;
        };
        final java.util.Map<String, Object> args = new java.util.LinkedHashMap<>();
        args.put("qp_num", num);
        args.put("status", status.cName());
        if (localFailure != null)
        {
            args.put("why", localFailure);
        }
        device.fabric().span(device, wr.opcode().name(), "dma", device.fabric().costModel().opBaseLatencyNs(),
            args);
        if (status != WcStatus.SUCCESS)
        {
            completeSend(wr, status, 0, Diagnoser.local(this, wr, status, localFailure));
            return Outcome.ERROR;
        }
        if (sqSigAll || wr.flags().contains(SendFlag.SIGNALED))
        {
            completeSend(wr, WcStatus.SUCCESS, 0);
        }
        return Outcome.DONE;
    }

    /**
     * @param why why a local operation failed (shown in the trace).
     */
    void localFailure(final String why)
    {
        localFailure = why;
    }

    /**
     * @return why the last local operation (BIND_MW, LOCAL_INV, REG_MR) failed, or null.
     */
    public String lastLocalFailure()
    {
        return localFailure;
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
        final SimQp peer = peer();
        return peer == null ? null : peer.device;
    }

    int num()
    {
        return num;
    }

    private DmaResult run(final Pending p, final SimQp peer)
    {
        final SendWr wr = p.wr();
        final SimDevice pdev = peer.device;
        final int peerPd = peer.pd.pdNum();
        final long remoteAddr = pdev.keyAddress(wr.rkey(), wr.remoteAddr());
        return switch (wr.opcode())
        {
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> p.inline() != null
                ? device.dmaEngine().writeInline(p.inline(), pdev.port().through(peer.num), peerPd,
                    peer.qpAccessBits, remoteAddr, wr.rkey())
                : device.dmaEngine().write(device.port(), pd.pdNum(), segments(device, wr.sgList()),
                    pdev.port().through(peer.num), peerPd, peer.qpAccessBits, remoteAddr, wr.rkey());
            case SEND, SEND_WITH_IMM, SEND_WITH_INV -> p.inline() != null
                ? device.dmaEngine().sendInline(p.inline(), pdev.port(), peerPd,
                    segments(pdev, peer.recvQueue.peekFirst().sgList()))
                : device.dmaEngine().send(device.port(), pd.pdNum(), segments(device, wr.sgList()), pdev.port(),
                    peerPd, segments(pdev, peer.recvQueue.peekFirst().sgList()));
            case RDMA_READ -> device.dmaEngine().read(device.port(), pd.pdNum(), segments(device, wr.sgList()),
                pdev.port().through(peer.num), peerPd, peer.qpAccessBits, remoteAddr, wr.rkey());
            case ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD -> device.dmaEngine().atomic(device.port(), pd.pdNum(),
                segments(device, wr.sgList()).get(0), pdev.port().through(peer.num), peerPd, peer.qpAccessBits,
                remoteAddr, wr.rkey(),
                wr.opcode() == WrOpcode.ATOMIC_CMP_AND_SWP, wr.compareAdd(), wr.swap());
            case FLUSH, ATOMIC_WRITE -> PlacementOps.run(wr, pdev.port().through(peer.num), peerPd,
                peer.qpAccessBits, remoteAddr);
            default -> throw new IllegalStateException("opcode " + wr.opcode() + " refused at post time");
        };
    }

    private static List<Segment> segments(final SimDevice owner, final List<Sge> sgl)
    {
        final List<Segment> out = new ArrayList<>(sgl.size());
        for (final Sge s : sgl)
        {
            if (owner.isNullMrKey(s.lkey()))
            {
                SimNullMr.segments(owner, s, out);
                continue;
            }
            out.add(new Segment(owner.keyAddress(s.lkey(), s.addr()), s.lengthBytes(), s.lkey()));
        }
        return out;
    }

    /**
     * True when the device placing the data applies relaxed ordering to it: the responder for WRITE and SEND (the
     * receive buffer's MR), the requester for the data of a READ response; reads of a responder MR count with
     * {@link ProviderRule#RELAXED_ORDERING_READ}.
     */
    private boolean relaxedPlacement(final SendWr wr, final SimQp peer)
    {
        return switch (wr.opcode())
        {
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> peer.device.relaxedWrites(wr.rkey());
            case SEND, SEND_WITH_IMM, SEND_WITH_INV -> peer.recvQueue.peekFirst() != null
                && !peer.recvQueue.peekFirst().sgList().isEmpty()
                && peer.device.relaxedWrites(peer.recvQueue.peekFirst().sgList().get(0).lkey());
            case RDMA_READ -> !wr.sgList().isEmpty() && device.relaxedWrites(wr.sgList().get(0).lkey())
                || peer.device.profile().follows(ProviderRule.RELAXED_ORDERING_READ)
                && peer.device.relaxedWrites(wr.rkey());
            default -> false;
        };
    }

    /**
     * The GPUs whose memory the work request reads or writes: its gather list's MRs, the remote MR of a WRITE, READ
     * or atomic, and the receive buffers a SEND or WRITE with immediate consumes.
     */
    private java.util.List<SimGpu> gpusTouched(final SendWr wr, final SimQp peer, final boolean needsRecv)
    {
        if (!device.hasPeerMemory() && !peer.device.hasPeerMemory())
        {
            return java.util.List.of();
        }
        final java.util.List<SimGpu> gpus = new java.util.ArrayList<>(2);
        for (final Sge s : wr.sgList())
        {
            addGpu(gpus, gpuBehind(device, s.lkey()));
        }
        if (wr.opcode().isRdma() || wr.opcode() == WrOpcode.ATOMIC_CMP_AND_SWP
            || wr.opcode() == WrOpcode.ATOMIC_FETCH_AND_ADD)
        {
            addGpu(gpus, gpuBehind(peer.device, wr.rkey()));
        }
        if (needsRecv && wr.opcode() != WrOpcode.RDMA_WRITE_WITH_IMM && peer.recvQueue.peekFirst() != null)
        {
            for (final Sge s : peer.recvQueue.peekFirst().sgList())
            {
                addGpu(gpus, gpuBehind(peer.device, s.lkey()));
            }
        }
        return gpus;
    }

    private static void addGpu(final java.util.List<SimGpu> gpus, final SimGpu gpu)
    {
        if (gpu != null && !gpus.contains(gpu))
        {
            gpus.add(gpu);
        }
    }

    /** The GPU whose memory an lkey or rkey of {@code owner} reaches, or null for host memory. */
    private static SimGpu gpuBehind(final SimDevice owner, final int key)
    {
        final SimPeerMr mr = owner.peerMemoryRegion(key);
        return mr == null ? null : mr.gpu();
    }

    /**
     * The peer has no receive posted: it answers RNR NAK (IBA vol. 1 ch. 9.7). Each NAK is one engine step: the requester
     * waits the peer's min_rnr_timer and sends again, up to {@code rnr_retry} times (a receive posted in between lets
     * the next try land); the NAK after that fails the WQE with IBV_WC_RNR_RETRY_EXC_ERR. With {@code rnr_retry} 7
     * the requester retries without end: the WQE waits at the head until the peer posts a receive (rxe_comp.c
     * {@code rnr_nak} handling, {@code qp->comp.rnr_retry != 7}).
     */
    private Outcome receiverNotReady(final SendWr wr, final SimQp peer)
    {
        if (rnrRetry == 7)
        {
            // rnr_retry 7 retries for ever: one more dropped request and one more RNR NAK retried per attempt
            peer.device.count(SimCounter.OUT_OF_BUFFER, 1);
            device.count(SimCounter.RNR_NAK_RETRY_ERR, 1);
            return Outcome.BLOCKED;
        }
        peer.device.count(SimCounter.OUT_OF_BUFFER, 1);
        final long timerNs = CostModel.rnrTimerNs(peer.minRnrTimer);
        if (rnrNaks < rnrRetry)
        {
            rnrNaks++;
            // mlx5 counts each RNR NAK answered with a retry in rnr_nak_retry_err (HwCounters)
            device.count(SimCounter.RNR_NAK_RETRY_ERR, 1);
            device.count(SimCounter.RNR_RETRIES, 1);
            device.fabric().span(device, "rnr_wait", "dma", timerNs, java.util.Map.of("qp_num", num, "wr_id",
                wr.wrId(), "rnr_retry", rnrNaks, "of", rnrRetry));
            return Outcome.MORE;
        }
        device.fabric().span(device, wr.opcode().name(), "dma", 0, java.util.Map.of("qp_num", num, "status",
            WcStatus.RNR_RETRY_EXC_ERR.cName(), "rnr_retries", rnrRetry));
        HwCounters.rnrExhausted(device, 0);
        completeSend(wr, WcStatus.RNR_RETRY_EXC_ERR, 0, Diagnoser.rnr(this, wr, rnrRetry, "no receive was posted "
            + "on QP 0x" + Integer.toHexString(peer.num)));
        return Outcome.ERROR;
    }

    private void account(final SendWr wr, final DmaResult r, final SimQp peer)
    {
        final SimDevice pdev = peer.device;
        switch (r.requester())
        {
            case REM_ACCESS_ERR -> device.count(SimCounter.REQ_REMOTE_ACCESS_ERRORS, 1);
            case REM_INV_REQ_ERR -> device.count(SimCounter.REQ_REMOTE_INVALID_REQUEST, 1);
            default ->
            {
            }
        }
        if (r.responderError())
        {
            if (r.responder() == DmaStatus.REM_ACCESS_ERR)
            {
                pdev.count(SimCounter.RESP_REMOTE_ACCESS_ERRORS, 1);
            }
            else if (r.responder() == DmaStatus.LOC_LEN_ERR)
            {
                pdev.count(SimCounter.RESP_LOCAL_LENGTH_ERROR, 1);
            }
        }
        if (!r.ok())
        {
            return;
        }
        final long bytes = r.byteLen();
        final boolean fromPeer = wr.opcode() == WrOpcode.RDMA_READ || wr.opcode().isAtomic();
        final SimDevice sender = fromPeer ? pdev : device;
        final SimDevice receiver = fromPeer ? device : pdev;
        final long packets = InflightMessage.packets(bytes, device.fabric().pathMtuBytes());
        sender.count(SimCounter.PORT_XMIT_DATA, bytes / 4);
        sender.count(SimCounter.PORT_XMIT_PACKETS, packets);
        receiver.count(SimCounter.PORT_RCV_DATA, bytes / 4);
        receiver.count(SimCounter.PORT_RCV_PACKETS, packets);
        switch (wr.opcode())
        {
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> pdev.count(SimCounter.RX_WRITE_REQUESTS, 1);
            case RDMA_READ -> pdev.count(SimCounter.RX_READ_REQUESTS, 1);
            case ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD -> pdev.count(SimCounter.RX_ATOMIC_REQUESTS, 1);
            default ->
            {
            }
        }
    }

    private static WcStatus status(final DmaStatus s)
    {
        return WcStatus.valueOf(s.name());
    }

    /** The requester's status, with the provider's choice for a gather through an unknown or stale lkey. */
    private WcStatus requesterStatus(final SendWr wr, final DmaResult r)
    {
        final boolean gather = wr.opcode() == WrOpcode.SEND || wr.opcode() == WrOpcode.SEND_WITH_IMM
            || wr.opcode() == WrOpcode.SEND_WITH_INV
            || wr.opcode() == WrOpcode.RDMA_WRITE || wr.opcode() == WrOpcode.RDMA_WRITE_WITH_IMM;
        if (r.requester() == DmaStatus.LOC_PROT_ERR && gather
            && PlacementOps.gatherErrorIsQpOpErr(device.profile(), r.keyCheck()))
        {
            return WcStatus.LOC_QP_OP_ERR;
        }
        return status(r.requester());
    }

    /** The responder's receive status, with the provider's choice for a bad receive buffer. */
    private WcStatus responderStatus(final DmaResult r)
    {
        if (r.responder() == DmaStatus.LOC_PROT_ERR
            && device.profile().follows(ProviderRule.LOCAL_KEY_ERRORS_AS_QP_OP_ERR))
        {
            return WcStatus.LOC_QP_OP_ERR;
        }
        return status(r.responder());
    }

    private void completeSend(final SendWr wr, final WcStatus status, final long byteLen)
    {
        completeSend(wr, status, byteLen, status == WcStatus.WR_FLUSH_ERR ? Diagnoser.flushed(this, wr.wrId(),
            errorCause) : null);
    }

    private void completeSend(final SendWr wr, final WcStatus status, final long byteLen, final WcDiagnosis why)
    {
        // A completion means every byte the work request wrote is visible (ibv_reg_mr(3), RELAXED_ORDERING).
        final SimQp target = peer();
        if (target != null)
        {
            target.device.writeOrdering().drain();
        }
        device.writeOrdering().drain();
        if (status == WcStatus.WR_FLUSH_ERR)
        {
            device.count(SimCounter.REQ_CQE_FLUSH_ERROR, 1);
        }
        else if (status != WcStatus.SUCCESS)
        {
            device.count(SimCounter.REQ_CQE_ERROR, 1);
        }
        noteError(status, wr.wrId(), why);
        HwCounters.sendCompleted(device, wr.opcode(), status);
        final WorkCompletion wc = new WorkCompletion(wr.wrId(), status, wr.opcode().completion(), num, byteLen, false,
            0, false, 0, status == WcStatus.SUCCESS ? 0 : Diagnoser.vendorErr(device.profile(), status), why);
        final long seq = currentSeq;
        if (status != WcStatus.SUCCESS && status != WcStatus.WR_FLUSH_ERR)
        {
            // Younger WQEs that ended while this one was outstanding never report success: the QP is in error
            // before their turn comes, so they complete flushed.
            for (final java.util.Map.Entry<Long, CompletionOrder.End> e : order.heldAfter(seq))
            {
                device.count(SimCounter.REQ_CQE_FLUSH_ERROR, 1);
                final SendWr younger = e.getValue().wr();
                order.replace(e.getKey(), new CompletionOrder.End(younger, new WorkCompletion(younger.wrId(),
                    WcStatus.WR_FLUSH_ERR, younger.opcode().completion(), num, 0, false, 0, false, 0,
                    Diagnoser.vendorErr(device.profile(), WcStatus.WR_FLUSH_ERR), Diagnoser.flushed(this,
                    younger.wrId(), errorCause))));
            }
        }
        release(order.end(seq, new CompletionOrder.End(wr, wc)));
    }

    private void completeRecv(final RecvWr wr, final WcStatus status, final WcOpcode opcode, final long byteLen,
        final boolean withImm, final int imm)
    {
        completeRecv(wr, status, opcode, byteLen, withImm, imm, false, 0);
    }

    private void completeRecv(final RecvWr wr, final WcStatus status, final WcOpcode opcode, final long byteLen,
        final boolean withImm, final int imm, final boolean withInv, final int invalidatedRkey)
    {
        completeRecv(wr, status, opcode, byteLen, withImm, imm, withInv, invalidatedRkey,
            status == WcStatus.WR_FLUSH_ERR ? Diagnoser.flushed(this, wr.wrId(), errorCause) : null);
    }

    private void completeRecv(final RecvWr wr, final WcStatus status, final WcOpcode opcode, final long byteLen,
        final boolean withImm, final int imm, final boolean withInv, final int invalidatedRkey, final WcDiagnosis why)
    {
        device.writeOrdering().drain();
        if (status == WcStatus.WR_FLUSH_ERR)
        {
            device.count(SimCounter.RESP_CQE_FLUSH_ERROR, 1);
        }
        else if (status != WcStatus.SUCCESS)
        {
            device.count(SimCounter.RESP_CQE_ERROR, 1);
        }
        noteError(status, wr.wrId(), why);
        if (status == WcStatus.SUCCESS)
        {
            device.count(SimCounter.RECVS_COMPLETED, 1);
        }
        final WorkCompletion wc = new WorkCompletion(wr.wrId(), status, opcode, num, byteLen, withImm, imm, withInv,
            invalidatedRkey, status == WcStatus.SUCCESS ? 0 : Diagnoser.vendorErr(device.profile(), status),
            Diagnoser.withStatus(why, status));
        if (!recvCq.push(wc))
        {
            toError();
        }
    }

    /** Remembers the first error completion while the QP is not yet in ERR, for the diagnoses of what it flushes. */
    private void noteError(final WcStatus status, final long wrId, final WcDiagnosis why)
    {
        if (status != WcStatus.SUCCESS && status != WcStatus.WR_FLUSH_ERR && state != QpState.ERR)
        {
            errorCause = "wr_id " + wrId + " completed with " + status.cName() + (why == null ? ""
                : ": " + why.summary());
        }
    }

    /**
     * Moves the QP to ERR: queued work requests (but the one executing, which completes with its own status) and
     * posted receives complete with WR_FLUSH_ERR, and a peer waiting on this QP for a receive is woken so that
     * its send fails instead of waiting forever.
     */
    private void toError()
    {
        state = QpState.ERR;
        if (flushing)
        {
            return;
        }
        flushing = true;
        try
        {
            flushSends();
            while (srq == null && !recvQueue.isEmpty())
            {
                completeRecv(recvQueue.removeFirst(), WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0);
            }
        }
        finally
        {
            flushing = false;
        }
        wakeWaitingPeer();
    }

    private void flushSends()
    {
        final List<Pending> doomed = new ArrayList<>();
        for (final java.util.Iterator<Outstanding> it = responses.iterator(); it.hasNext();)
        {
            final Outstanding o = it.next();
            if (o.p() != executing)
            {
                engine().release(o.m());
                it.remove();
                doomed.add(o.p());
            }
        }
        sendQueue.removeIf(p -> p != executing && doomed.add(p));
        final long was = currentSeq;
        try
        {
            for (final Pending p : doomed)
            {
                currentSeq = p.seq();
                completeSend(p.wr(), WcStatus.WR_FLUSH_ERR, 0);
            }
        }
        finally
        {
            currentSeq = was;
        }
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
        final SimQp sender = peer();
        return sender != null && !sender.sendQueue.isEmpty() && sender.peer() == this ? sender : null;
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
        if (closed)
        {
            return;
        }
        closed = true;
        dropInflight();
        engine().forget(this);
        responses.clear();
        sendQueue.clear();
        if (srq == null)
        {
            recvQueue.clear();
        }
        else
        {
            srq.detach(this);
        }
        final SimQp sender = waitingSender();
        device.removeQp(num);
        if (sender != null)
        {
            engine().schedule(sender);
        }
        sendCq.detach();
        if (recvCq != sendCq)
        {
            recvCq.detach();
        }
        ring.release();
        device.count(SimCounter.PINNED_BYTES, -ring.lengthBytes());
        pd.qpClosed(this);
    }

    @Override
    public String toString()
    {
        return "QP[0x" + Integer.toHexString(num) + " " + (type == QpType.RC ? "" : type + " ") + state
            + (srq == null ? "" : " srq") + " qp_access=0x" + Integer.toHexString(qpAccessBits)
            + (remote == null ? "" : " remote=" + remote.gid() + "/0x" + Integer.toHexString(remote.qpNum())) + "]";
    }
}
