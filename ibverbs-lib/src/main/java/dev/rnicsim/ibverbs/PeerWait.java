package dev.rnicsim.ibverbs;

import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Requests of a connected QP posted before its peer QP, in another process, is connected back to it. Two programs
 * connect their QPs each on its own time: a server may post a SEND as soon as its QP is in RTS while the client is
 * still moving its QP to RTR (ibv_xsrq_pingpong does). On a real fabric the request finds no responder, gets no ACK,
 * and the requester retries it every {@code 4.096 µs × 2^timeout} up to {@code retry_cnt} times (IBA 9.7.6.1.3,
 * ibv_modify_qp(3) IBV_QP_TIMEOUT and IBV_QP_RETRY_CNT), so a peer that connects within that window answers one of
 * the retries. The model retries in simulated time, at once; so the server holds such requests for the real-time
 * window the requester's timeout and retry count give, and passes them to the model as soon as the peer is connected
 * (its RTR names this QP), or when the window has passed (the model then completes them with
 * IBV_WC_RETRY_EXC_ERR, as the requester would after its last retry). A timeout of 0 (infinite, IBA) holds them until
 * the peer connects. Only a QP whose peer was never yet seen connected waits: once it was, the model's own rules apply.
 *
 * <p>Not thread safe: called under the fabric's lock (the timer takes the lock).
 */
final class PeerWait
{
    /** The IBA's unit of the local ACK timeout: 4.096 µs × 2^timeout. */
    private static final long ACK_TIMEOUT_UNIT_NS = 4096;

    private static final class Parked
    {
        final ArrayDeque<Runnable> posts = new ArrayDeque<>();
        final long deadlineNs;

        Parked(final long deadlineNs)
        {
            this.deadlineNs = deadlineNs;
        }
    }

    private final FabricServer server;
    private final Map<Session.QpInfo, Parked> parked = new LinkedHashMap<>();
    private ScheduledThreadPoolExecutor timer;

    PeerWait(final FabricServer server)
    {
        this.server = server;
    }

    /**
     * @return true when a request of this QP must wait: it has requests waiting already, or it is an RC or XRC_SEND
     *         QP whose peer has not been seen connected to it yet.
     */
    boolean holds(final Session.QpInfo q)
    {
        if (!parked.isEmpty() && parked.containsKey(q))
        {
            return true;
        }
        if ((q.qp.type() != QpType.RC && q.qp.type() != QpType.XRC_SEND) || peerConnected(q))
        {
            q.peerSeenConnected = true;
            return false;
        }
        return true;
    }

    private boolean peerConnected(final Session.QpInfo q)
    {
        final Session.QpInfo peer = server.qps.get(Session.QpInfo.key(q.peerDeviceIndex, q.peerQpNum));
        if (peer == null || peer.qp.isClosed())
        {
            return false;
        }
        final QpState st = peer.qp.state();
        return (st == QpState.RTR || st == QpState.RTS) && peer.peerQpNum == q.qp.qpNum()
            && peer.peerDeviceIndex == q.deviceIndex;
    }

    /** Holds a request (its post to the model) until the peer connects or the retry window has passed. */
    void park(final Session.QpInfo q, final Runnable post)
    {
        Parked p = parked.get(q);
        if (p == null)
        {
            final long window = retryWindowNs(q);
            p = new Parked(window == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + window);
            parked.put(q, p);
            if (window != Long.MAX_VALUE)
            {
                timer().schedule(this::expire, window, TimeUnit.NANOSECONDS);
            }
        }
        p.posts.addLast(post);
    }

    /** timeout × (retry_cnt + 1): how long a requester keeps a request alive that no responder answers. */
    private static long retryWindowNs(final Session.QpInfo q)
    {
        final QpAttr a = q.qp.query();
        if (a.timeout() == 0)
        {
            return Long.MAX_VALUE;
        }
        return (ACK_TIMEOUT_UNIT_NS << Math.min(a.timeout(), 31)) * (a.retryCnt() + 1L);
    }

    /**
     * Passes to the model what may go now: the requests of QPs whose peer connected, whose window passed, or which
     * left RTS (the model flushes or refuses their requests then), each QP's in the order they were posted.
     */
    void release()
    {
        if (parked.isEmpty())
        {
            return;
        }
        final long now = System.nanoTime();
        for (final Iterator<Map.Entry<Session.QpInfo, Parked>> it = parked.entrySet().iterator(); it.hasNext();)
        {
            final Map.Entry<Session.QpInfo, Parked> e = it.next();
            final Session.QpInfo q = e.getKey();
            final boolean connected = !q.qp.isClosed() && peerConnected(q);
            if (connected || q.qp.isClosed() || q.qp.state() != QpState.RTS || now - e.getValue().deadlineNs >= 0)
            {
                it.remove();
                q.peerSeenConnected = connected;
                for (final Runnable post : e.getValue().posts)
                {
                    post.run();
                }
            }
        }
    }

    /** The timer: a window has passed; the model answers what waited (under the fabric's lock). */
    private void expire()
    {
        synchronized (server.lock)
        {
            server.completions.run();
            server.completions.flushAll();
            server.forwardStrictWarnings();
        }
    }

    private ScheduledThreadPoolExecutor timer()
    {
        if (timer == null)
        {
            timer = new ScheduledThreadPoolExecutor(1, r -> Thread.ofPlatform().daemon().name("rnicsim-fabric-retry")
                .unstarted(r));
            timer.setKeepAliveTime(1, TimeUnit.SECONDS);
            timer.allowCoreThreadTimeOut(true);
        }
        return timer;
    }

    /**
     * A post held back to run later (its peer not connected yet, a datagram's turn): it runs with the origin of now
     * (strict mode's C call site of its ibv_post_send), so that the device records its post site and a failure's
     * diagnosis (a retry-exceeded SEND to a peer that has gone, say) names that line of the program.
     *
     * @param fabric the fabric whose origin the post is made at.
     * @param post   the post to hold.
     * @return what to run in its place.
     */
    static Runnable keepingOrigin(final SimFabric fabric, final Runnable post)
    {
        final String origin = fabric.origin();
        if (origin == null)
        {
            return post;
        }
        return () ->
        {
            final String before = fabric.origin();
            fabric.origin(origin);
            try
            {
                post.run();
            }
            finally
            {
                fabric.origin(before);
            }
        };
    }
}
