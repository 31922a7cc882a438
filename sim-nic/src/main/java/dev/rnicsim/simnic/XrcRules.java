package dev.rnicsim.simnic;

import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcDiagnosis;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.XrcDomain;

/**
 * The rules of XRC (IBA vol. 1 rel. 1.2.1, extended reliable connected transport) as the Linux stack applies them:
 * who may create XRC objects, what an XRC QP may post, and how the target of a message picks its receive queue. A
 * device without IBV_DEVICE_XRC in its {@code device_cap_flags} has a provider without {@code open_xrcd},
 * {@code create_srq_ex} of type XRC or XRC QPs (rxe, siw, efa, irdma, ...): libibverbs' stand-in op answers
 * EOPNOTSUPP ({@code libibverbs/dummy_ops.c}), and so does the kernel without {@code alloc_xrcd}
 * ({@code ib_uverbs_open_xrcd}). Which devices have it is the profile's {@code device_cap_flags}, read from each
 * driver's {@code ibv_devinfo} dump. Stateless.
 */
final class XrcRules
{
    private XrcRules()
    {
    }

    /** EOPNOTSUPP unless the device reports IBV_DEVICE_XRC. */
    static void checkXrc(final String verb, final SimDevice device)
    {
        if (!device.profile().attributes().has(DeviceCap.XRC))
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, device.name() + " (" + device.profile().name() + ") has no XRC: "
                + "IBV_DEVICE_XRC is not in its device_cap_flags and its provider has no XRC verbs, so libibverbs' "
                + "stand-in answers EOPNOTSUPP (dummy_ops.c); nothing was created; use a device with XRC (the mlx4 "
                + "and mlx5 profiles), or RC QPs with an SRQ");
        }
    }

    /**
     * The XRC checks of {@code ibv_create_qp}: XRC on the device for either XRC type; an XRC_RECV QP is created in an
     * XRC domain ({@link #createTarget}), never in a PD (uverbs {@code create_qp} looks an XRC_TGT's handle up as an
     * XRC domain: EINVAL for anything else).
     */
    static void checkCreate(final String verb, final SimPd pd, final QpInitAttr attr)
    {
        if (attr.type() != QpType.XRC_SEND && attr.type() != QpType.XRC_RECV)
        {
            return;
        }
        checkXrc(verb, pd.context().device());
        if (attr.type() == QpType.XRC_RECV
            && pd.context().xrcDomains().stream().noneMatch(x -> x.placeholderPd() == pd))
        {
            throw Errors.invalid(verb, "an XRC_RECV QP has no PD: it is created in an XRC domain (ibv_create_qp_ex "
                + "with IBV_QP_INIT_ATTR_XRCD; create_xrc_qp_user); create it with createXrcRecvQp on an XRC domain");
        }
    }

    /** {@code ibv_open_xrcd} with fd -1: a new domain (kernel {@code ib_uverbs_open_xrcd} without an inode). */
    static SimXrcd open(final SimContext context)
    {
        context.checkOpen("ibv_open_xrcd");
        checkXrc("ibv_open_xrcd", context.device());
        return new SimXrcd(context, XrcdTable.unnamed());
    }

    /**
     * Why an object handed to an XRC verb is not a live one of the caller's context, in the user's terms (never the
     * object's class or identity hash).
     */
    static String whyNotLive(final Object object, final boolean closed, final SimContext owner,
        final SimContext context)
    {
        if (object == null)
        {
            return "none was given (null)";
        }
        if (closed)
        {
            return "it is closed";
        }
        if (owner == null)
        {
            return "it is not one the simulated device made";
        }
        return owner == context ? "it was released" : "it belongs to another context (device "
            + owner.device().name() + "), not to the one of this call (device " + context.device().name() + ")";
    }

    static SimXrcd liveDomain(final String verb, final SimContext context, final XrcDomain xrcd)
    {
        if (!(xrcd instanceof SimXrcd x) || x.isClosed() || x.context() != context)
        {
            throw Errors.invalid(verb, "the XRC domain is not a live XRC domain of this context: "
                + whyNotLive(xrcd, xrcd instanceof SimXrcd d && d.isClosed(), xrcd instanceof SimXrcd d ? d.context()
                    : null, context) + " (the kernel looks the xrcd handle up among the caller's objects and refuses "
                + "a handle it does not find: uverbs create_qp, __uverbs_create_xsrq); open one with ibv_open_xrcd on "
                + "the same context");
        }
        return x;
    }

    /**
     * The XRC checks of {@code ibv_create_srq_ex} with srq_type IBV_SRQT_XRC: XRC on the device, then a live domain
     * and a live CQ of the PD's context (mlx5 {@code mlx5_create_srq_ex} needs IBV_SRQ_INIT_ATTR_XRCD and _CQ; the
     * kernel's {@code __uverbs_create_xsrq} looks both handles up: EINVAL otherwise).
     */
    static void checkXrcSrq(final String verb, final SimPd pd, final XrcDomain xrcd, final CompletionQueue cq)
    {
        checkXrc(verb, pd.context().device());
        liveDomain(verb, pd.context(), xrcd);
        if (!(cq instanceof SimCq c) || c.isClosed() || c.context() != pd.context())
        {
            throw Errors.invalid(verb, "the CQ is not a live CQ of this context: " + whyNotLive(cq,
                cq instanceof SimCq c && c.isClosed(), cq instanceof SimCq c ? c.context() : null, pd.context())
                + ": an XRC SRQ completes its "
                + "receives on a CQ of its own (IBV_SRQ_INIT_ATTR_CQ; __uverbs_create_xsrq looks it up); create one "
                + "with ibv_create_cq on the same context");
        }
    }

    /**
     * {@code ibv_create_qp_ex} of type XRC_RECV in a domain: no PD, no CQ, no queues (kernel {@code create_xrc_qp_user}
     * sets pd, send_cq, recv_cq and srq to NULL and takes a reference on the domain).
     */
    static SimQp createTarget(final SimContext context, final XrcDomain xrcd)
    {
        final String verb = "ibv_create_qp_ex";
        context.checkOpen(verb);
        checkXrc(verb, context.device());
        final SimXrcd x = liveDomain(verb, context, xrcd);
        final SimQp qp = SimQp.create(x.placeholderPd(), new QpInitAttr(null, null, QpType.XRC_RECV,
            new QpCap(0, 0, 0, 0, 0), false));
        qp.xrcd = x;
        x.targetCreated(qp);
        return qp;
    }

    /**
     * What an XRC QP may not post: an XRC_RECV QP has no send queue (the kernel creates XRC_TGT QPs without one; mlx5's
     * post_send finds a send queue of 0 entries full: ENOMEM).
     *
     * @return the refusal, or null.
     */
    static PostException sendRefusal(final SimQp qp, final int index)
    {
        if (qp.type() != QpType.XRC_RECV)
        {
            return null;
        }
        return new PostException("ibv_post_send", Errno.ENOMEM.code(), index, "QP 0x" + Integer.toHexString(qp.qpNum())
            + " is an XRC_RECV QP: it has no send queue (create_xrc_qp_user creates XRC targets without one, and the "
            + "provider's post_send finds its 0 entries full); post sends on the XRC_SEND QP at the other end");
    }

    /**
     * Neither XRC QP has a receive queue: XRC_SEND's max_recv_wr is forced to 0 ({@code create_qp} in uverbs_cmd.c for
     * IB_QPT_XRC_INI), XRC_RECV has none; the provider's post_recv finds 0 entries: ENOMEM (mlx5
     * {@code mlx5_post_recv}, {@code mlx5_wq_overflow}).
     *
     * @return the refusal, or null.
     */
    static PostException recvRefusal(final SimQp qp, final int index)
    {
        if (qp.type() != QpType.XRC_SEND && qp.type() != QpType.XRC_RECV)
        {
            return null;
        }
        return new PostException("ibv_post_recv", Errno.ENOMEM.code(), index, "QP 0x" + Integer.toHexString(qp.qpNum())
            + " is an " + qp.type() + " QP: it has no receive queue (uverbs create_qp sets max_recv_wr 0 for "
            + "XRC_INI; XRC targets have none); post the receives to an XRC SRQ of the target's XRC domain "
            + "(ibv_post_srq_recv)");
    }

    /**
     * The target of a request picks its receive queue: an XRC_RECV QP takes every request of its XRC_SEND peer
     * (SEND, RDMA and atomics alike carry the XRCETH) to the XRC SRQ the request names, which must be a live SRQ of the
     * target's own domain; that SRQ's PD checks the keys, its queue gives the receive and its CQ takes the completion
     * (the XRC target QP has no PD, queue or CQ of its own). A number outside the domain, or a request whose transport
     * does not match the QP it reaches (an XRC_SEND request at an RC QP, an RC request at an XRC target), is answered
     * with a NAK Invalid Request: IBV_WC_REM_INV_REQ_ERR at the requester, the target QP to error (IBA vol. 1: a
     * request the responder cannot accept is NAKed Invalid Request; the XRC domain is the scope of the SRQ numbers an XRC
     * target accepts).
     *
     * @return why the target refuses the request, or null once it is bound to its SRQ (or neither side is XRC).
     */
    static String route(final SimQp requester, final SimQp target, final SendWr wr)
    {
        if (target.type() != QpType.XRC_RECV)
        {
            return requester.type() == QpType.XRC_SEND ? "QP 0x" + Integer.toHexString(target.qpNum()) + " is a "
                + target.type() + " QP and takes no XRC requests (XRCETH): connect an XRC_SEND QP to an XRC_RECV QP"
                : null;
        }
        if (requester.type() != QpType.XRC_SEND)
        {
            return "XRC_RECV QP 0x" + Integer.toHexString(target.qpNum()) + " takes XRC requests only, and QP 0x"
                + Integer.toHexString(requester.qpNum()) + " is " + requester.type() + ": connect an XRC_SEND QP to it";
        }
        final SimXrcd domain = target.xrcd;
        final SimSrq srq = domain == null ? null : domain.srq(wr.remoteSrqn());
        if (srq == null)
        {
            return "remote_srqn=0x" + Integer.toHexString(wr.remoteSrqn()) + (wr.remoteSrqn() == 0 ? " (what a work "
                + "request that sets no remote_srqn carries)" : "") + " names no XRC SRQ of the XRC domain of "
                + "target QP 0x" + Integer.toHexString(target.qpNum()) + " (its SRQs: " + (domain == null ? "none"
                : numbers(domain)) + "); set remote_srqn to ibv_get_srq_num of an XRC SRQ created in that domain";
        }
        // The target takes this message to the SRQ: its PD checks the keys, its queue and CQ take the receive.
        target.pd = srq.pd();
        target.recvQueue = srq.queue();
        target.recvCq = srq.cq();
        return null;
    }

    /**
     * The responder NAKs the request Invalid Request ({@link #route}): the requester's WQE completes with
     * IBV_WC_REM_INV_REQ_ERR, the responder QP goes to ERR.
     */
    static WqeOutcome invalidRequest(final SimQp qp, final SendWr wr, final SimQp peer, final String why)
    {
        final SimDevice device = qp.device;
        final WcDiagnosis d = Diagnoser.local(qp, wr, WcStatus.REM_INV_REQ_ERR, why);
        device.count(SimCounter.REQ_REMOTE_INVALID_REQUEST, 1);
        device.fabric().span(device, wr.opcode().name(), "dma", device.fabric().costModel().opBaseLatencyNs(),
            java.util.Map.of("qp_num", qp.qpNum(), "status", WcStatus.REM_INV_REQ_ERR.cName(), "diagnosis",
                d.summary()));
        if (peer.state() != QpState.ERR)
        {
            peer.completions.errorCause = "it answered IBV_WC_REM_INV_REQ_ERR to QP 0x"
                + Integer.toHexString(qp.qpNum()) + ": " + why;
        }
        if (peer.state() != QpState.ERR)
        {
            AsyncEventQueue.xrcInvalidRequest(peer, why);
        }
        peer.completions.toError();
        qp.completions.completeSend(wr, WcStatus.REM_INV_REQ_ERR, 0, d);
        return WqeOutcome.ERROR;
    }

    private static String numbers(final SimXrcd domain)
    {
        final StringBuilder b = new StringBuilder();
        for (final SimSrq s : domain.domainSrqs())
        {
            b.append(b.isEmpty() ? "" : ", ").append("0x").append(Integer.toHexString(s.srqNum()));
        }
        return b.isEmpty() ? "none" : b.toString();
    }
}
