package dev.rnicsim.simnic;

import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A simulated shared receive queue: one queue of receive work requests that every QP created with it takes its
 * receives from, first posted first taken (IBA 10.2.9). It keeps its PD busy, and each QP attached to it keeps it busy
 * ({@code ib_destroy_srq_user}: EBUSY while its use count is not 0). An armed limit (ibv_modify_srq with
 * IBV_SRQ_LIMIT, or srq_limit at creation) fires IBV_EVENT_SRQ_LIMIT_REACHED once the receives posted drop below it,
 * and is disarmed (set to 0) by doing so (ibv_modify_srq(3), IBA 10.2.9.5); the event is counted and queued on the
 * context's {@link AsyncEventQueue}. Not thread safe.
 */
public final class SimSrq implements SharedReceiveQueue
{
    private final SimPd pd;
    /** The XRC domain and receive CQ of an XRC SRQ; null for a basic SRQ. */
    private final SimXrcd xrcd;
    private final SimCq cq;
    private final int srqNum;
    private int maxWr;
    private final int maxSge;
    private final ArrayDeque<RecvWr> queue = new TakenQueue();
    private final Set<SimQp> users = new LinkedHashSet<>();
    private int srqLimit;
    private int limitEvents;
    /** A tag-matching SRQ's matching of arriving SENDs ({@link TagArrivals}); null for the others. */
    TagArrivals tagArrivals;
    private boolean closed;

    /** The SRQ's receives; taking one checks the armed limit. */
    private final class TakenQueue extends ArrayDeque<RecvWr>
    {
        @Override
        public RecvWr removeFirst()
        {
            final RecvWr wr = super.removeFirst();
            taken();
            return wr;
        }

        @Override
        public RecvWr pollFirst()
        {
            final RecvWr wr = super.pollFirst();
            if (wr != null)
            {
                taken();
            }
            return wr;
        }
    }

    private void taken()
    {
        if (srqLimit > 0 && queue.size() < srqLimit)
        {
            limitEvents++;
            AsyncEventQueue.srqLimitReached(this, queue.size(), srqLimit);
            srqLimit = 0;
        }
    }

    /**
     * @return how many IBV_EVENT_SRQ_LIMIT_REACHED events the SRQ has fired.
     */
    public int limitEvents()
    {
        return limitEvents;
    }

    private SimSrq(final SimPd pd, final SrqAttr attr, final SimXrcd xrcd, final SimCq cq)
    {
        this.pd = pd;
        this.xrcd = xrcd;
        this.cq = cq;
        this.srqNum = pd.context().device().objects().allocSrqNum();
        this.maxWr = depth(pd.context().device().profile(), attr.maxWr());
        this.maxSge = QpCaps.srqSge(pd.context().device().profile(), attr.maxSge());
        this.srqLimit = attr.srqLimit() >= 0 && attr.srqLimit() <= attr.maxWr() ? attr.srqLimit() : 0;
    }

    /**
     * {@code ibv_create_srq}: EOPNOTSUPP on a device reporting max_srq 0 (EFA, E810 report so); EINVAL for max_wr or
     * max_sge of 0 (unless the profile follows {@link ProviderRule#SRQ_OF_ZERO_WR}, mlx5); max_wr above the device's
     * max_srq_wr or max_sge above its max_srq_sge ({@link DeviceAttributes#maxSrqWr()}, {@link
     * DeviceAttributes#maxSrqSge()}: the driver's own figures, not max_qp_wr and max_sge) EINVAL, or E2BIG where the
     * profile follows {@link ProviderRule#SRQ_SIZE_E2BIG} (cxgb4 {@code c4iw_create_srq}); ENOMEM when max_srq SRQs
     * live. The SRQ holds, and reports, max_wr rounded as
     * the driver rounds it ({@link ProviderRule#SRQ_WR_ROUNDED_TO_POW2_MINUS_ONE}), and max_sge as its provider
     * sized the WQE ({@link QpCaps#srqSge}: libmlx5 rounds it up). srq_limit is checked only where the profile follows
     * {@link ProviderRule#SRQ_LIMIT_CHECKED_AT_CREATE} (siw); elsewhere one above max_wr is ignored (ibv_create_srq(3)),
     * not armed.
     */
    static SimSrq create(final SimPd pd, final SrqAttr attr, final int srqsLive)
    {
        check("ibv_create_srq", pd, attr, srqsLive);
        return new SimSrq(pd, attr, null, null);
    }

    /**
     * {@code ibv_create_srq_ex} of type XRC ({@link XrcRules#checkXrcSrq}), then the checks of a basic SRQ. It keeps
     * the domain and the CQ busy ({@code ib_create_srq_user} takes a reference on both).
     */
    static SimSrq createXrc(final SimPd pd, final dev.rnicsim.verbs.XrcDomain xrcd,
        final dev.rnicsim.verbs.CompletionQueue cq, final SrqAttr attr, final int srqsLive)
    {
        final String verb = "ibv_create_srq_ex";
        XrcRules.checkXrcSrq(verb, pd, xrcd, cq);
        check(verb, pd, attr, srqsLive);
        final SimSrq srq = new SimSrq(pd, attr, (SimXrcd)xrcd, (SimCq)cq);
        srq.xrcd.srqCreated(srq);
        srq.cq.attach();
        return srq;
    }

    private static void check(final String verb, final SimPd pd, final SrqAttr attr, final int srqsLive)
    {
        final SimDevice device = pd.context().device();
        final DeviceAttributes a = device.profile().attributes();
        if (attr == null)
        {
            throw Errors.invalid(verb, "srq_init_attr is null; give max_wr, max_sge and srq_limit");
        }
        if (a.maxSrq() == 0)
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, device.name() + " reports max_srq=0: its driver has no shared "
                + "receive queues; give each QP its own receive queue");
        }
        final int least = device.profile().follows(ProviderRule.SRQ_OF_ZERO_WR) ? 0 : 1;
        final String driver = device.profile().driver();
        final DriverVerbTraits verbs = device.profile().traits().verbs();
        // the fields are u32 in struct ibv_srq_attr: a negative int is a count above any max_srq_wr
        if (Integer.compareUnsigned(attr.maxWr(), a.maxSrqWr()) > 0
            || Integer.compareUnsigned(attr.maxSge(), a.maxSrqSge()) > 0)
        {
            final boolean e2big = device.profile().follows(ProviderRule.SRQ_SIZE_E2BIG);
            throw Errors.of(verb, e2big ? Errno.E2BIG : Errno.EINVAL, "max_wr=" + Integer.toUnsignedString(
                attr.maxWr()) + " max_sge=" + Integer.toUnsignedString(attr.maxSge()) + " must be at most "
                + device.name() + "'s max_srq_wr=" + a.maxSrqWr() + " and max_srq_sge=" + a.maxSrqSge() + " ("
                + driver + ": " + verbs.srqCreateFunction() + " answers " + (e2big ? "E2BIG" : "EINVAL")
                + "); ask for at most the device's max_srq_wr and max_srq_sge (ibv_query_device); nothing created");
        }
        if (attr.maxWr() < least || attr.maxSge() < least)
        {
            throw Errors.invalid(verb, "max_wr=" + attr.maxWr() + " max_sge=" + attr.maxSge() + " must be at least "
                + least + " (" + driver + ": " + verbs.srqZeroRefusal() + "); ask for at least 1 of each; nothing "
                + "created");
        }
        if (device.profile().follows(ProviderRule.SRQ_LIMIT_CHECKED_AT_CREATE)
            && Integer.compareUnsigned(attr.srqLimit(), attr.maxWr()) > 0)
        {
            throw Errors.invalid(verb, "srq_limit=" + Integer.toUnsignedString(attr.srqLimit()) + " must be 0..max_wr="
                + attr.maxWr() + " (" + device.profile().driver() + ": siw_create_srq checks the limit at creation, "
                + "other drivers ignore it); ask for a limit no larger than max_wr, or 0 and arm it later with "
                + "ibv_modify_srq; nothing created");
        }
        if (srqsLive >= a.maxSrq())
        {
            throw Errors.of(verb, Errno.ENOMEM, "SRQs live=" + srqsLive + " = max_srq=" + a.maxSrq()
                + "; destroy an SRQ first or use a device with a larger max_srq");
        }
    }

    /**
     * @param profile   the device's profile.
     * @param requested max_wr asked for.
     * @return the receives the SRQ holds: {@code roundup_pow_of_two(requested + 1) - 1} where the profile follows
     * {@link ProviderRule#SRQ_WR_ROUNDED_TO_POW2_MINUS_ONE} (mlx4, mlx5, rxe), else the max_wr asked for.
     */
    static int depth(final DeviceProfile profile, final int requested)
    {
        if (!profile.follows(ProviderRule.SRQ_WR_ROUNDED_TO_POW2_MINUS_ONE))
        {
            return requested;
        }
        final long slots = Long.highestOneBit(Math.max(1L, (long) requested + 1) * 2 - 1);
        return (int) Math.min(Integer.MAX_VALUE, slots - 1);
    }

    /**
     * {@code ibv_get_srq_num}: the SRQ's number on its device, which senders of an XRC_SEND QP name. Every SRQ has one
     * where the provider follows {@link ProviderRule#SRQ_NUM_OF_ANY_SRQ} (mlx5 {@code mlx5_get_srq_num}); elsewhere
     * only an XRC SRQ (mlx4 {@code mlx4_get_srq_num}: EOPNOTSUPP for a basic SRQ), and on a device without XRC none:
     * its provider has no {@code get_srq_num} (rxe), and libibverbs' stand-in answers EOPNOTSUPP (dummy_ops.c).
     */
    @Override
    public int srqNum()
    {
        final SimDevice device = pd.context().device();
        final boolean xrc = device.profile().attributes().has(dev.rnicsim.verbs.DeviceCap.XRC);
        if (!xrc || xrcd == null && !device.profile().follows(ProviderRule.SRQ_NUM_OF_ANY_SRQ))
        {
            throw Errors.of("ibv_get_srq_num", Errno.EOPNOTSUPP, device.name() + " (" + device.profile().name()
                + (xrc ? ", driver " + device.profile().driver() + ") numbers only XRC SRQs, and this one is basic "
                + "(mlx4_get_srq_num)" : ") has no XRC, and its provider no get_srq_num: libibverbs' stand-in "
                + "answers EOPNOTSUPP (dummy_ops.c)") + "; nothing changed; an SRQ number is what an XRC_SEND QP "
                + "names: create the SRQ with ibv_create_srq_ex of type XRC on a device with XRC");
        }
        return srqNum;
    }

    @Override
    public SimXrcd xrcd()
    {
        return xrcd;
    }

    /**
     * @return the CQ an XRC SRQ completes its receives on; null for a basic SRQ (its QPs' receive CQs take them).
     */
    SimCq cq()
    {
        return cq;
    }

    @Override
    public SimPd pd()
    {
        return pd;
    }

    ArrayDeque<RecvWr> queue()
    {
        return queue;
    }

    void attach(final SimQp qp)
    {
        users.add(qp);
    }

    void detach(final SimQp qp)
    {
        users.remove(qp);
    }

    /**
     * @return the live QPs taking their receives from this SRQ.
     */
    public List<SimQp> queuePairs()
    {
        return new ArrayList<>(users);
    }

    @Override
    public void postRecv(final List<RecvWr> wrs)
    {
        final EngineThread held = pd.context().device().fabric().enter();
        try
        {
            final String verb = "ibv_post_srq_recv";
            if (wrs == null)
            {
                throw new PostException(verb, Errno.EINVAL.code(), 0, "the work-request list is null"
                    + "; pass a list (an empty one posts nothing)");
            }
            try
            {
                for (int i = 0; i < wrs.size(); i++)
                {
                    final RecvWr wr = wrs.get(i);
                    if (wr == null || closed)
                    {
                        throw new PostException(verb, Errno.EINVAL.code(), i, wr == null
                            ? "the work request is null; pass a work request at every position"
                            : "the SRQ is destroyed; post to a live SRQ");
                    }
                    if (wr.sgList().size() > maxSge)
                    {
                        throw new PostException(verb, Errno.EINVAL.code(), i, "num_sge=" + wr.sgList().size()
                            + " > max_sge=" + maxSge + " of the SRQ; give at most " + maxSge + " SGEs or create "
                            + "the SRQ with a larger max_sge");
                    }
                    if (queue.size() >= maxWr)
                    {
                        throw new PostException(verb, Errno.ENOMEM.code(), i, "SRQ full: " + queue.size()
                            + " = max_wr=" + maxWr + "; poll the CQ until a QP consumes receives, or create the SRQ "
                            + "with a larger max_wr");
                    }
                    queue.addLast(wr);
                }
            }
            finally
            {
                // Senders waiting (RNR) on any QP of this SRQ (an XRC SRQ: on any XRC_RECV QP of its domain) may go on.
                for (final SimQp qp : xrcd == null ? List.copyOf(users) : xrcd.domainTargetQps())
                {
                    qp.wakeWaitingPeer();
                }
            }
        }
        finally
        {
            SimFabric.exit(held);
        }
    }

    @Override
    public void modifyLimit(final int limit)
    {
        final String verb = "ibv_modify_srq";
        checkOpen(verb);
        if (limit < 0 || limit > maxWr)
        {
            final DeviceProfile profile = pd.context().device().profile();
            throw Errors.invalid(verb, "srq_limit=" + Integer.toUnsignedString(limit) + " must be 0..max_wr=" + maxWr
                + " (" + profile.driver() + ": " + modifySource(profile) + "); ask for a limit no larger "
                + "than the SRQ's max_wr (ibv_query_srq); nothing changed");
        }
        srqLimit = limit;
    }

    /**
     * {@code ibv_modify_srq} with IBV_SRQ_MAX_WR. A device without IBV_DEVICE_SRQ_RESIZE refuses it with EINVAL
     * ({@code mlx5_ib_modify_srq} and {@code mlx4_ib_modify_srq} answer -EINVAL for IB_SRQ_MAX_WR). One with it (rxe)
     * checks the size ({@code rxe_srq_chk_attr}: EINVAL for 0, above max_srq_wr or below an armed limit) and resizes
     * the ring keeping its receives ({@code rxe_queue_resize}: EINVAL when they do not fit); the new max_wr is
     * rounded as at creation. Nothing changes on a refusal.
     */
    @Override
    public void resize(final int newMaxWr)
    {
        final String verb = "ibv_modify_srq";
        checkOpen(verb);
        final SimDevice device = pd.context().device();
        final DeviceAttributes a = device.profile().attributes();
        if (!a.has(dev.rnicsim.verbs.DeviceCap.SRQ_RESIZE))
        {
            throw Errors.invalid(verb, "IBV_SRQ_MAX_WR: " + device.name() + " (" + device.profile().name()
                + ") cannot resize an SRQ (no IBV_DEVICE_SRQ_RESIZE in device_cap_flags; its driver refuses "
                + "IB_SRQ_MAX_WR with -EINVAL" + modifyCited(device.profile()) + "); create a larger SRQ "
                + "instead; nothing changed");
        }
        final int held = depth(device.profile(), newMaxWr);
        if (newMaxWr <= 0 || newMaxWr > a.maxSrqWr() || newMaxWr < srqLimit || held < queue.size())
        {
            throw Errors.invalid(verb, "IBV_SRQ_MAX_WR: max_wr=" + Integer.toUnsignedString(newMaxWr)
                + " must be 1..max_srq_wr=" + a.maxSrqWr() + ", not below srq_limit=" + srqLimit + " ("
                + device.profile().driver() + ": " + modifySource(device.profile())
                + ") and room for the " + queue.size() + " receive(s) posted (rxe_queue_resize); nothing changed");
        }
        maxWr = held;
    }

    /** The function of the driver that checks ibv_modify_srq ({@link DriverVerbTraits#srqModifyFunction()}). */
    private static String modifySource(final DeviceProfile profile)
    {
        return profile.traits().verbs().srqModifyFunction();
    }

    /** ", as mlx5_ib_modify_srq does" where the driver's refusal of IB_SRQ_MAX_WR was read, else nothing. */
    private static String modifyCited(final DeviceProfile profile)
    {
        return profile.traits().verbs().srqResizeRefusalRead() ? ", as " + modifySource(profile) + " does" : "";
    }

    @Override
    public SrqAttr query()
    {
        checkOpen("ibv_query_srq");
        return new SrqAttr(maxWr, maxSge, srqLimit);
    }

    @Override
    public int receivesPosted()
    {
        return queue.size();
    }

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
        if (!users.isEmpty())
        {
            throw Errors.of("ibv_destroy_srq", Errno.EBUSY, users.size() + " QP(s) still take their receives from "
                + "this SRQ (ib_destroy_srq_user checks its use count); destroy them first; nothing changed");
        }
        closed = true;
        queue.clear();
        TagArrivals.detach(this);
        AsyncEventQueue.objectDestroyed(pd.context(), this);
        if (xrcd != null)
        {
            xrcd.srqClosed(this);
            cq.detach();
        }
        pd.srqClosed(this);
    }

    private void checkOpen(final String verb)
    {
        if (closed)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "the SRQ is destroyed; use a live SRQ");
        }
    }

    @Override
    public String toString()
    {
        return "SRQ[" + (xrcd == null ? "" : "xrc ") + "srqn=0x" + Integer.toHexString(srqNum) + " max_wr=" + maxWr + " posted=" + queue.size() + " qps=" + users.size() + "]";
    }
}
