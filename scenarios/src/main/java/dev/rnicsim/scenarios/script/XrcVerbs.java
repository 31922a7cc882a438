package dev.rnicsim.scenarios.script;

import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimCq;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.simnic.SimQp;
import dev.rnicsim.simnic.SimXrcd;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.XrcDomain;

/**
 * Script verbs of XRC: {@code xrcd NAME CONTEXT} (ibv_open_xrcd), {@code srq ... xrcd= cq=} (ibv_create_srq_ex of type
 * XRC), {@code qp NAME PD CQ type=xrc_send}, {@code qp NAME XRCD type=xrc_recv} and {@code post ... remote_srqn=}.
 * Stateless.
 */
final class XrcVerbs
{
    private XrcVerbs()
    {
    }

    /** {@code xrcd NAME CONTEXT}: ibv_open_xrcd without a file. */
    static Outcome xrcd(final Session s, final ScriptLine l)
    {
        final XrcDomain x = s.get(l, l.args().get(1), SimContext.class).openXrcd();
        s.names.put(l.args().get(0), x);
        return Outcome.ok("ibv_open_xrcd: an XRC domain");
    }

    static boolean isXrcSrq(final ScriptLine l)
    {
        return l.options().containsKey("xrcd") || l.options().containsKey("cq");
    }

    /** {@code srq NAME PD ... xrcd=XRCD cq=CQ}: both options or neither. */
    static SharedReceiveQueue xrcSrq(final Session s, final ScriptLine l, final SrqAttr attr)
    {
        if (!l.options().containsKey("xrcd") || !l.options().containsKey("cq"))
        {
            throw l.error("an XRC SRQ needs both xrcd=XRCD and cq=CQ (ibv_create_srq_ex with IBV_SRQ_INIT_ATTR_XRCD "
                + "and _CQ); give both, or neither for a basic SRQ");
        }
        return s.get(l, l.args().get(1), SimPd.class).createXrcSrq(s.get(l, l.options().get("xrcd"), SimXrcd.class),
            s.get(l, l.options().get("cq"), SimCq.class), attr);
    }

    static boolean isTargetQp(final ScriptLine l)
    {
        return "xrc_recv".equals(l.options().get("type"));
    }

    /** {@code qp NAME XRCD type=xrc_recv}: ibv_create_qp_ex in the domain (no PD, no CQ). */
    static Outcome targetQp(final Session s, final ScriptLine l)
    {
        if (l.args().size() > 2)
        {
            throw l.error("an XRC_RECV QP has no CQ (create_xrc_qp_user): write qp NAME XRCD type=xrc_recv");
        }
        final SimXrcd x = s.get(l, l.args().get(1), SimXrcd.class);
        final SimQp qp = (SimQp)x.context().createXrcRecvQp(x);
        s.names.put(l.args().get(0), qp);
        return Outcome.ok("XRC_RECV QP 0x" + Integer.toHexString(qp.qpNum()) + " in " + qp.state()
            + ": its messages go to the XRC SRQs of the domain they name");
    }

    /** The CQ argument of {@code qp NAME PD CQ}: required for every type but xrc_recv. */
    static String cqArg(final ScriptLine l)
    {
        if (l.args().size() < 3)
        {
            throw l.error("qp NAME PD CQ: give the CQ (only an xrc_recv QP, qp NAME XRCD type=xrc_recv, has none)");
        }
        return l.args().get(2);
    }

    /** XRC_SEND: the send capacities given, no receive queue (uverbs create_qp sets max_recv_wr 0 for XRC_INI). */
    static QpInitAttr sendAttr(final SimCq cq, final QpCap cap)
    {
        return new QpInitAttr(cq, cq, QpType.XRC_SEND, new QpCap(cap.maxSendWr(), 0, cap.maxSendSge(), 0,
            cap.maxInlineDataBytes()), false);
    }

    /** {@code post ... remote_srqn=N}: {@code wr.qp_type.xrc.remote_srqn}. */
    static SendWr remoteSrqn(final Session s, final ScriptLine l, final SendWr wr)
    {
        return l.options().containsKey("remote_srqn") ? wr.withRemoteSrqn(s.evalInt(l,
            l.options().get("remote_srqn"))) : wr;
    }
}
