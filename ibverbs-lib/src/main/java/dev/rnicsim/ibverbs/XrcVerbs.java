package dev.rnicsim.ibverbs;

import dev.rnicsim.simnic.ProviderRule;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.XrcOpen;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.XrcDomain;
import dev.rnicsim.verbs.XrcdFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * XRC through the library: {@code ibv_open_xrcd} and {@code ibv_close_xrcd}, {@code ibv_create_srq_ex} of type XRC
 * and XRC_RECV QPs ({@code ibv_create_qp_ex} with IBV_QP_INIT_ATTR_XRCD), on the model's XRC domains, SRQs and QPs
 * ({@code XrcRules} of sim-nic checks each one). XRC_SEND QPs are made as RC QPs are; each of their requests names
 * the XRC SRQ at the target ({@code wire_xrc_wr}).
 *
 * <p>A domain opened with a file is the one the file's inode names on the device, shared by every process of the
 * fabric that opens the same file, as the kernel keeps one {@code ib_xrcd} per device and inode
 * ({@code ib_uverbs_open_xrcd}, {@code find_xrcd} in drivers/infiniband/core/uverbs_cmd.c): the model's device-level
 * table ({@code Context.openXrcd(XrcdFile, create, exclusive)}) applies its rules (EAGAIN without O_CREAT for an inode
 * that names no domain, EINVAL with O_EXCL for one that does, the use count, the last close). Each open is a handle
 * of the process; the process's exit closes its handles with its context.
 *
 * <p>Not thread safe: called under the fabric's lock.
 */
final class XrcVerbs
{
    /** {@code OP_OPEN_QP} of wire_mr.h: wire_open_qp; the answer: the handle and the QP's number. */
    static final int OP_OPEN_QP = 63;
    private static final int EINVAL = 22;
    /** {@code O_CREAT}, {@code O_EXCL} of Linux's fcntl.h. */
    private static final int O_CREAT = 0100;
    private static final int O_EXCL = 0200;

    /** What the fabric's processes share: the CQs of the XRC SRQs. */
    static final class Fabric
    {
        /** The handles open on each XRC target QP, in every process: the one that made it and those of ibv_open_qp. */
        private final Map<QueuePair, Integer> targetHandles = new java.util.IdentityHashMap<>();

        /**
         * A handle on {@code qp} is destroyed: the kernel destroys an XRC target QP with the last handle on it, made
         * or opened, in any process ({@code __ib_destroy_shared_qp}, drivers/infiniband/core/verbs.c).
         *
         * @return true when the QP itself goes now (any other QP: always).
         */
        boolean lastHandle(final QueuePair qp)
        {
            final Integer n = targetHandles.get(qp);
            if (n == null || n <= 1)
            {
                targetHandles.remove(qp);
                return true;
            }
            targetHandles.put(qp, n - 1);
            return false;
        }

        /** The CQ each live XRC SRQ completes its receives on (an XRC_RECV QP has none of its own). */
        private final Map<SharedReceiveQueue, Session.CqInfo> srqCqs = new LinkedHashMap<>();

        /** @return the CQs of the live XRC SRQs, for the data path to poll. */
        List<Session.CqInfo> srqCqs()
        {
            final List<Session.CqInfo> out = new ArrayList<>(srqCqs.size());
            for (final Iterator<Map.Entry<SharedReceiveQueue, Session.CqInfo>> it = srqCqs.entrySet().iterator();
                it.hasNext();)
            {
                final Map.Entry<SharedReceiveQueue, Session.CqInfo> e = it.next();
                if (e.getKey().isClosed())
                {
                    it.remove();
                }
                else
                {
                    out.add(e.getValue());
                }
            }
            return out;
        }
    }

    /** One handle of {@code ibv_open_xrcd}: the domain and its device. */
    record XrcdInfo(XrcDomain xrcd, int deviceIndex)
    {
    }

    private final Session s;

    XrcVerbs(final Session session)
    {
        this.s = session;
    }

    private static ByteBuffer buf(final int bytes)
    {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** OPEN_XRCD: wire_open_xrcd; the answer: the handle. */
    ByteBuffer open(final ByteBuffer p)
    {
        final Session.CtxInfo c = s.get(p.getInt(0), Session.CtxInfo.class);
        final boolean hasFile = p.getInt(4) != 0;
        final int oflags = p.getInt(8);
        final XrcDomain xrcd = hasFile ? c.context().openXrcd(new XrcdFile(p.getLong(16), p.getLong(24)),
            (oflags & O_CREAT) != 0, (oflags & O_EXCL) != 0) : c.context().openXrcd();
        return handle(s.add(new XrcdInfo(xrcd, c.deviceIndex())));
    }

    /**
     * CLOSE_XRCD: the handle goes (EBUSY while an XRC SRQ or XRC_RECV QP made through it lives); the domain with the
     * last handle on it, in any process.
     */
    ByteBuffer close(final int h)
    {
        final XrcdInfo x = s.get(h, XrcdInfo.class);
        x.xrcd().close();
        s.handles.set(h, null);
        return null;
    }

    /** CREATE_XRC_SRQ: wire_xrc_srq; the answer: wire_xrc_srq_resp. */
    ByteBuffer createSrq(final ByteBuffer p, final SrqVerbs srqs)
    {
        final ProtectionDomain pd = s.get(p.getInt(0), ProtectionDomain.class);
        final XrcdInfo x = s.get(p.getInt(4), XrcdInfo.class);
        final Session.CqInfo cq = s.get(p.getInt(8), Session.CqInfo.class);
        final SharedReceiveQueue srq = pd.createXrcSrq(x.xrcd(), cq.cq(), new SrqAttr(p.getInt(12), p.getInt(16),
            p.getInt(20)));
        final int h = srqs.adopt(srq, x.deviceIndex());
        s.server.xrc.srqCqs.put(srq, cq);
        final SrqAttr a = srq.query();
        return buf(24).putInt(0, h).putInt(4, a.maxWr()).putInt(8, a.maxSge()).putInt(12, a.srqLimit())
            .putInt(16, srq.srqNum());
    }

    /**
     * CREATE_QP of type XRC_RECV: the domain's handle in the PD field; the answer as for every QP (no queues, no
     * provider rules at post: an XRC_RECV QP posts nothing).
     */
    ByteBuffer createRecvQp(final ByteBuffer p)
    {
        final XrcdInfo x = s.get(p.getInt(0), XrcdInfo.class);
        final QueuePair qp = x.xrcd().context().createXrcRecvQp(x.xrcd());
        final int h = s.add(null);
        final Session.QpInfo info = new Session.QpInfo(s, h, qp, x.deviceIndex(), null, null);
        s.handles.set(h, info);
        s.server.qps.put(Session.QpInfo.key(x.deviceIndex(), qp.qpNum()), info);
        s.server.xrc.targetHandles.put(qp, 1);
        final QpCap cap = new QpCap(0, 0, 0, 0, 0);
        final SimDevice device = s.server.devices.get(x.deviceIndex());
        final int inlineErrno = device.profile().follows(ProviderRule.INLINE_OVERFLOW_ENOMEM) ? 12
            : EINVAL;
        return buf(40).putInt(0, h).putInt(4, qp.qpNum()).putInt(8, cap.maxSendWr()).putInt(12, cap.maxRecvWr())
            .putInt(16, cap.maxSendSge()).putInt(20, cap.maxRecvSge()).putInt(24, cap.maxInlineDataBytes())
            .putInt(28, inlineErrno);
    }

    /**
     * OPEN_QP: a handle of this process on an XRC target QP of the domain, made by any process ({@code XrcOpen} of
     * sim-nic decides: EOPNOTSUPP without XRC, EINVAL for a dead domain handle, another type, a number that names no
     * target QP of the domain). The handle modifies and queries the QP; the QP goes with the last handle on it,
     * made or opened ({@link Fabric#lastHandle}).
     */
    ByteBuffer openQp(final ByteBuffer p)
    {
        final Session.CtxInfo c = s.get(p.getInt(0), Session.CtxInfo.class);
        final int xh = p.getInt(4);
        final XrcDomain xrcd = xh > 0 && xh < s.handles.size() && s.handles.get(xh) instanceof XrcdInfo x
            ? x.xrcd() : null;
        final QueuePair qp = XrcOpen.openQp(c.context(), xrcd, p.getInt(8), qpType(p.getInt(12)));
        final int h = s.add(null);
        final Session.QpInfo info = new Session.QpInfo(s, h, qp, c.deviceIndex(), null, null);
        info.opened = true;
        s.handles.set(h, info);
        s.server.xrc.targetHandles.merge(qp, 1, Integer::sum);
        return buf(8).putInt(0, h).putInt(4, qp.qpNum());
    }

    /** @return the QP type of an {@code enum ibv_qp_type} number, or null for one the model has not. */
    private static QpType qpType(final int code)
    {
        for (final QpType t : QpType.values())
        {
            if (t.code() == code)
            {
                return t;
            }
        }
        return null;
    }

    private static ByteBuffer handle(final int h)
    {
        return buf(8).putInt(0, h);
    }
}
