package dev.rnicsim.ibverbs;

import dev.rnicsim.simnic.ProviderRule;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.XrcDomain;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
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
 * <p>A domain opened with a file is found by the file's inode, as {@code ib_uverbs_open_xrcd} finds it: within one
 * process a second open of the same file gives the same domain (closed with its last handle); EAGAIN when no process
 * of the fabric has opened the file and O_CREAT is not given; EINVAL with O_EXCL when one has. Two processes that open
 * one file share one domain in the kernel; here each gets a domain of its own context (the model's domains belong to
 * one context), which is what the programs that use one domain per process (ibv_xsrq_pingpong) see either way.
 *
 * <p>Not thread safe: called under the fabric's lock.
 */
final class XrcVerbs
{
    private static final int EINVAL = 22;
    private static final int EAGAIN = 11;
    /** {@code O_CREAT}, {@code O_EXCL} of Linux's fcntl.h. */
    private static final int O_CREAT = 0100;
    private static final int O_EXCL = 0200;

    /** What the fabric's processes share: the files naming XRC domains, and the CQs of the XRC SRQs. */
    static final class Fabric
    {
        /** Handles open on domains named by a file, by device and file ({@link #fileKey}). */
        private final Map<String, Integer> fileOpens = new HashMap<>();
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

    /** One handle of {@code ibv_open_xrcd}: the domain, its device, and the file that names it (null: none). */
    record XrcdInfo(XrcDomain xrcd, int deviceIndex, String file)
    {
    }

    /** The domain a file names in this process and how many handles are open on it. */
    private static final class Named
    {
        final XrcDomain xrcd;
        int handles;

        Named(final XrcDomain xrcd)
        {
            this.xrcd = xrcd;
        }
    }

    private final Session s;
    private final Map<String, Named> named = new HashMap<>();

    XrcVerbs(final Session session)
    {
        this.s = session;
    }

    private static ByteBuffer buf(final int bytes)
    {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static String fileKey(final int deviceIndex, final long stDev, final long stIno)
    {
        return deviceIndex + ":" + Long.toUnsignedString(stDev) + ":" + Long.toUnsignedString(stIno);
    }

    /** OPEN_XRCD: wire_open_xrcd; the answer: the handle. */
    ByteBuffer open(final ByteBuffer p)
    {
        final Session.CtxInfo c = s.get(p.getInt(0), Session.CtxInfo.class);
        final boolean hasFile = p.getInt(4) != 0;
        final int oflags = p.getInt(8);
        if (!hasFile)
        {
            return handle(s.add(new XrcdInfo(c.context().openXrcd(), c.deviceIndex(), null)));
        }
        final String file = fileKey(c.deviceIndex(), p.getLong(16), p.getLong(24));
        final Fabric f = s.server.xrc;
        final int opens = f.fileOpens.getOrDefault(file, 0);
        if (opens == 0 && (oflags & O_CREAT) == 0)
        {
            throw new VerbsException("ibv_open_xrcd", EAGAIN, "no XRC domain of " + s.server.hcaIds.get(
                c.deviceIndex()) + " is named by this file (inode " + Long.toUnsignedString(p.getLong(24)) + ") and "
                + "oflags has no O_CREAT (ib_uverbs_open_xrcd: EAGAIN); pass O_CREAT to create it");
        }
        if (opens > 0 && (oflags & O_EXCL) != 0)
        {
            throw new VerbsException("ibv_open_xrcd", EINVAL, "an XRC domain of " + s.server.hcaIds.get(
                c.deviceIndex()) + " is named by this file already and oflags has O_EXCL (ib_uverbs_open_xrcd: "
                + "EINVAL); drop O_EXCL to open it, or use another file");
        }
        Named n = named.get(file);
        if (n == null || n.xrcd.isClosed())
        {
            n = new Named(c.context().openXrcd());
            named.put(file, n);
        }
        n.handles++;
        f.fileOpens.merge(file, 1, Integer::sum);
        return handle(s.add(new XrcdInfo(n.xrcd, c.deviceIndex(), file)));
    }

    /** CLOSE_XRCD: the last handle on a domain closes it (EBUSY while an XRC SRQ or XRC_RECV QP of it lives). */
    ByteBuffer close(final int h)
    {
        final XrcdInfo x = s.get(h, XrcdInfo.class);
        final Named n = x.file() == null ? null : named.get(x.file());
        if (n == null || n.handles <= 1)
        {
            x.xrcd().close();
            if (n != null)
            {
                named.remove(x.file());
            }
        }
        else
        {
            n.handles--;
        }
        if (x.file() != null)
        {
            forgetFile(x.file());
        }
        s.handles.set(h, null);
        return null;
    }

    private void forgetFile(final String file)
    {
        s.server.xrc.fileOpens.computeIfPresent(file, (k, v) -> v <= 1 ? null : v - 1);
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
        final QpCap cap = new QpCap(0, 0, 0, 0, 0);
        final SimDevice device = s.server.devices.get(x.deviceIndex());
        final int inlineErrno = device.profile().follows(ProviderRule.INLINE_OVERFLOW_ENOMEM) ? 12
            : EINVAL;
        return buf(40).putInt(0, h).putInt(4, qp.qpNum()).putInt(8, cap.maxSendWr()).putInt(12, cap.maxRecvWr())
            .putInt(16, cap.maxSendSge()).putInt(20, cap.maxRecvSge()).putInt(24, cap.maxInlineDataBytes())
            .putInt(28, inlineErrno);
    }

    /** The process has gone: the files its domains were named by count one handle less each. */
    void releaseAll()
    {
        for (final Object o : s.handles)
        {
            if (o instanceof XrcdInfo x && x.file() != null)
            {
                forgetFile(x.file());
            }
        }
        named.clear();
    }

    private static ByteBuffer handle(final int h)
    {
        return buf(8).putInt(0, h);
    }
}
