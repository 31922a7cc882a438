package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The matching list of a tag-matching SRQ (IBV_SRQT_TM, ibv_create_srq_ex(3)) and its phase counters: the tagged
 * buffers the program posts with {@code ibv_post_srq_ops} (ibv_post_srq_ops(3)), and what the device does with each
 * tagged message that arrives. The SRQ's ordinary receives (ibv_post_srq_recv) take the messages that match no tag.
 * Not thread safe.
 *
 * <p>The rules, each with its source:
 * <ul>
 * <li>Creation (mlx5 {@code mlx5_create_srq_ex}, providers/mlx5/verbs.c; kernel {@code mlx5_ib_create_srq}): a
 * driver other than mlx5 has no TM SRQs (EOPNOTSUPP, as rxe's {@code rxe_create_srq} answers a type other than
 * basic); the CQ must be an extended one (EINVAL: "an extended CQ is required to read TM information from");
 * a list whose {@code ilog2(max_num_tags) + 1} exceeds the device's {@code log_tag_matching_list_sz} is EINVAL ("TM
 * SRQ max_num_tags exceeding limit": a device without tag matching has 0), and so is max_num_tags 0 (MLNX_OFED's
 * mlx5_ib_create_srq refuses it; the upstream one computes {@code ilog2(0)} and leaves it to the firmware);
 * max_ops is the send queue of the provider's command QP, so above max_qp_wr it is EINVAL.</li>
 * <li>Operations ({@code mlx5_post_srq_ops}, providers/mlx5/qp.c), in the order given, the first refused one ending
 * the post (its index is {@code bad_op}; those before it are done): more than max_ops in one post is ENOMEM (the
 * command QP's send queue overflows; the model completes operations at once, so only one post can overflow it);
 * IBV_WR_TAG_ADD on a full list is ENOMEM, with more SGEs than max_sge (1) EINVAL; an opcode other than ADD, DEL and
 * SYNC is EINVAL. A handle is an index of the provider's tag array, handed out from a free list in order and given
 * back at its end ({@code mlx5_tm_release_tag}); DEL of a handle past the array is EINVAL (the provider would index
 * past it). DEL of a tag no longer listed (consumed meanwhile) completes with IBV_WC_TM_ERR (ibv_post_srq_ops(3):
 * "may fail due to concurrent tag consumption"). A SIGNALED operation completes on the SRQ's CQ with IBV_WC_TM_ADD,
 * IBV_WC_TM_DEL or IBV_WC_TM_SYNC and its {@code wr_id}.</li>
 * <li>Phase synchronization (ibv_post_srq_ops(3); mlx5 {@code handle_tag_matching} in providers/mlx5/cq.c): the device
 * counts the unexpected messages it delivers; the program reports how many it has handled in {@code unexpected_cnt}
 * with IBV_OPS_TM_SYNC (on ADD, the provider keeps the count, {@code unexp_out}, as the tag's phase). A tag added
 * with a phase behind the device's count gets IBV_WC_TM_SYNC_REQ on its completion and is not matched until the
 * counts agree again (rdma-core tests/test_tag_matching.py: "tag matching must be disabled for new tags until SW and
 * HW synchronize"): a SYNC or ADD whose count equals the device's makes the list coherent. An unexpected message's
 * completion carries IBV_WC_TM_SYNC_REQ once the device is more than {@code MLX5_TM_MAX_SYNC_DIFF} (0x3fff) ahead.</li>
 * <li>Arrival (ibv_create_srq_ex(3); the TMH of tm_types.h: opcode, app_ctx, big-endian tag): a message whose TMH
 * opcode is IBV_TMH_EAGER or IBV_TMH_RNDV is matched against the list's tags in the order they were added, an entry
 * matching when {@code TMH.tag & entry.mask == entry.tag} (ibv_post_srq_ops(3)); a matched tag leaves the list. A
 * message that matches none is unexpected and takes an ordinary receive; IBV_TMH_NO_TAG (and IBV_TMH_FIN, which
 * UCX's mlx5 transport reads from a NO_TAG completion) takes an ordinary receive without matching.</li>
 * </ul>
 */
public final class TagMatchingList
{
    /** {@code IBV_WR_TAG_ADD}, {@code IBV_WR_TAG_DEL}, {@code IBV_WR_TAG_SYNC} of {@code enum ibv_ops_wr_opcode}. */
    public static final int OP_ADD = 0;
    public static final int OP_DEL = 1;
    public static final int OP_SYNC = 2;
    /** {@code IBV_OPS_SIGNALED}, {@code IBV_OPS_TM_SYNC}. */
    public static final int FLAG_SIGNALED = 1;
    public static final int FLAG_TM_SYNC = 2;
    /** {@code enum ibv_tmh_op}. */
    public static final int TMH_NO_TAG = 0;
    public static final int TMH_RNDV = 1;
    public static final int TMH_FIN = 2;
    public static final int TMH_EAGER = 3;
    /** {@code IBV_WC_TM_ADD} .. {@code IBV_WC_TM_NO_TAG} of {@code enum ibv_wc_opcode}. */
    public static final int WC_TM_ADD = 130;
    public static final int WC_TM_DEL = 131;
    public static final int WC_TM_SYNC = 132;
    public static final int WC_TM_RECV = 133;
    public static final int WC_TM_NO_TAG = 134;
    /** {@code MLX5_TM_MAX_SYNC_DIFF}. */
    static final int MAX_SYNC_DIFF = 0x3fff;

    private static final String POST = "ibv_post_srq_ops";

    /** What a tagged message got. */
    public enum Kind
    {
        /** IBV_TMH_NO_TAG (or FIN): an ordinary receive, completion IBV_WC_TM_NO_TAG. */
        NO_TAG,
        /** Matched no tag: an ordinary receive, completion IBV_WC_TM_RECV without TM_MATCH. */
        UNEXPECTED,
        /** Matched a tag: the payload after the TMH goes to the tag's buffer, one completion. */
        EAGER,
        /** Matched a tag with a rendezvous request: the device reads the sender's buffer, two completions. */
        RNDV
    }

    /**
     * A tagged buffer of the list.
     *
     * @param handle   its handle ({@code wr->tm.handle}).
     * @param recvWrId the wr_id of the receive completion it gives.
     * @param sgl      its buffer (at most max_sge SGEs; none for an empty message).
     * @param tag      the tag.
     * @param mask     the mask.
     */
    public record Entry(int handle, long recvWrId, List<Sge> sgl, long tag, long mask)
    {
    }

    /**
     * One operation of {@code struct ibv_ops_wr}.
     *
     * @param wrId          its wr_id.
     * @param opcode        OP_ADD, OP_DEL or OP_SYNC.
     * @param flags         FLAG_SIGNALED, FLAG_TM_SYNC.
     * @param unexpectedCnt the unexpected messages the program has handled.
     * @param handle        the tag DEL removes.
     * @param recvWrId      ADD: the receive's wr_id.
     * @param sgl           ADD: the buffer.
     * @param tag           ADD: the tag.
     * @param mask          ADD: the mask.
     */
    public record Op(long wrId, int opcode, int flags, int unexpectedCnt, int handle, long recvWrId, List<Sge> sgl,
        long tag, long mask)
    {
    }

    /**
     * The completion of a SIGNALED operation.
     *
     * @param wrId    the operation's wr_id.
     * @param opcode  WC_TM_ADD, WC_TM_DEL or WC_TM_SYNC.
     * @param ok      false: IBV_WC_TM_ERR (a DEL of a tag no longer listed).
     * @param syncReq IBV_WC_TM_SYNC_REQ is set.
     */
    public record Done(long wrId, int opcode, boolean ok, boolean syncReq)
    {
    }

    /**
     * What a post did.
     *
     * @param handles     the handle of each operation done, in order (ADD: its tag's; others -1).
     * @param completions the completions of the SIGNALED ones, in order.
     * @param refused     the refusal of the operation at index {@code handles.size()}, or null when all were done.
     */
    public record Posted(List<Integer> handles, List<Done> completions, PostException refused)
    {
    }

    /**
     * What an arriving message got.
     *
     * @param kind    see {@link Kind}.
     * @param entry   the tag it matched (EAGER, RNDV), else null.
     * @param syncReq an unexpected message's completion carries IBV_WC_TM_SYNC_REQ.
     */
    public record Arrival(Kind kind, Entry entry, boolean syncReq)
    {
    }

    private final TagMatchingCaps caps;
    private final int maxNumTags;
    private final int maxOps;
    private final ArrayDeque<Integer> free = new ArrayDeque<>();
    /** The listed tags by handle, in the order they were added. */
    private final Map<Integer, Entry> listed = new LinkedHashMap<>();
    /** Tags added with a phase behind the device's count: not matched until the counts agree. */
    private final Map<Integer, Boolean> held = new LinkedHashMap<>();
    private long unexpectedDelivered;
    private long unexpectedHandled;

    private TagMatchingList(final TagMatchingCaps caps, final int maxNumTags, final int maxOps)
    {
        this.caps = caps;
        this.maxNumTags = maxNumTags;
        this.maxOps = maxOps;
        for (int h = 0; h < maxNumTags; h++)
        {
            free.addLast(h);
        }
    }

    /**
     * {@code ibv_create_srq_ex} of type IBV_SRQT_TM: the checks of the provider and the kernel (see the class
     * comment), before the SRQ's ordinary queue is made.
     *
     * @param profile    the device's profile.
     * @param deviceName its name, for the messages.
     * @param maxNumTags {@code tm_cap.max_num_tags}.
     * @param maxOps     {@code tm_cap.max_ops}.
     * @param extendedCq the CQ given is one of {@code ibv_create_cq_ex}.
     * @return the SRQ's empty list.
     * @throws VerbsException EOPNOTSUPP, EINVAL as the class comment says.
     */
    public static TagMatchingList create(final DeviceProfile profile, final String deviceName, final int maxNumTags,
        final int maxOps, final boolean extendedCq)
    {
        final String verb = "ibv_create_srq_ex";
        if (!profile.traits().verbs().tagMatchingSrqs())
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, deviceName + " (driver " + profile.driver() + ") has no "
                + "tag-matching SRQs: its driver creates basic and XRC SRQs only (rxe_create_srq answers EOPNOTSUPP for "
                + "another type); match tags in software over a basic SRQ instead");
        }
        if (!extendedCq)
        {
            throw Errors.invalid(verb, "IBV_SRQT_TM needs an extended CQ to read the tag-matching fields from "
                + "(mlx5_create_srq_ex); give a CQ of ibv_create_cq_ex with IBV_WC_EX_WITH_TM_INFO in "
                + "IBV_SRQ_INIT_ATTR_CQ");
        }
        final TagMatchingCaps caps = TagMatchingCaps.of(profile);
        if (maxNumTags <= 0 || 32 - Integer.numberOfLeadingZeros(maxNumTags) > caps.logTagMatchingListSz())
        {
            throw Errors.invalid(verb, "tm_cap.max_num_tags=" + Integer.toUnsignedString(maxNumTags) + " must be "
                + "1..tm_caps.max_num_tags=" + caps.maxNumTags() + " of " + deviceName + " (mlx5_ib_create_srq: "
                + "ilog2(max_num_tags) + 1 may not exceed log_tag_matching_list_sz=" + caps.logTagMatchingListSz()
                + (caps.supported() ? "" : ": the device has no tag matching") + ")"
                + "; ask ibv_query_device_ex for tm_caps");
        }
        if (maxOps < 0 || maxOps > profile.attributes().maxQpWr())
        {
            throw Errors.invalid(verb, "tm_cap.max_ops=" + Integer.toUnsignedString(maxOps) + " sizes the SRQ's "
                + "command QP (mlx5 create_cmd_qp) and must be 0..max_qp_wr=" + profile.attributes().maxQpWr()
                + "; give at most tm_caps.max_ops");
        }
        return new TagMatchingList(caps, maxNumTags, maxOps);
    }

    /**
     * {@code ibv_post_srq_ops}: the operations in order, up to the first refused one.
     *
     * @param ops the operations.
     * @return the handles, the completions of the SIGNALED ones, and the refusal, if any.
     */
    public Posted post(final List<Op> ops)
    {
        final List<Integer> handles = new ArrayList<>();
        final List<Done> done = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++)
        {
            final Op op = ops.get(i);
            final PostException refused = refusal(op, i);
            if (refused != null)
            {
                return new Posted(handles, done, refused);
            }
            final boolean signaled = (op.flags() & FLAG_SIGNALED) != 0;
            if ((op.flags() & FLAG_TM_SYNC) != 0)
            {
                unexpectedHandled = Integer.toUnsignedLong(op.unexpectedCnt());
            }
            switch (op.opcode())
            {
                case OP_ADD ->
                {
                    final int h = free.removeFirst();
                    listed.put(h, new Entry(h, op.recvWrId(), List.copyOf(op.sgl()), op.tag(), op.mask()));
                    final boolean behind = unexpectedHandled != unexpectedDelivered;
                    if (behind)
                    {
                        held.put(h, Boolean.TRUE);
                    }
                    else
                    {
                        held.clear(); // the counts agree: the list is coherent again
                    }
                    handles.add(h);
                    if (signaled)
                    {
                        done.add(new Done(op.wrId(), WC_TM_ADD, true, behind));
                    }
                }
                case OP_DEL ->
                {
                    final boolean was = listed.remove(op.handle()) != null;
                    if (was)
                    {
                        held.remove(op.handle());
                        free.addLast(op.handle());
                    }
                    handles.add(-1);
                    if (signaled)
                    {
                        done.add(new Done(op.wrId(), WC_TM_DEL, was, false));
                    }
                }
                default ->
                {
                    if (unexpectedHandled == unexpectedDelivered)
                    {
                        held.clear();
                    }
                    handles.add(-1);
                    if (signaled)
                    {
                        done.add(new Done(op.wrId(), WC_TM_SYNC, true, false));
                    }
                }
            }
        }
        return new Posted(handles, done, null);
    }

    private PostException refusal(final Op op, final int index)
    {
        if (index >= maxOps)
        {
            return new PostException(POST, Errno.ENOMEM.code(), index, "more than max_ops=" + maxOps + " list "
                + "operations in one post: the SRQ's command queue is full (mlx5_post_srq_ops: work queue overflow); "
                + "post at most max_ops at a time, or create the SRQ with a larger tm_cap.max_ops");
        }
        return switch (op.opcode())
        {
            case OP_ADD -> free.isEmpty()
                ? new PostException(POST, Errno.ENOMEM.code(), index, "the tag list is full: " + listed.size()
                    + " tags = max_num_tags=" + maxNumTags + " (mlx5_post_srq_ops); delete a tag (IBV_WR_TAG_DEL) or "
                    + "wait for one to be consumed, or create the SRQ with a larger tm_cap.max_num_tags")
                : op.sgl().size() > caps.maxSge()
                    ? new PostException(POST, Errno.EINVAL.code(), index, "num_sge=" + op.sgl().size() + " > "
                        + "tm_caps.max_sge=" + caps.maxSge() + " of a tagged buffer (ibv_post_srq_ops(3); "
                        + "mlx5_post_srq_ops); give the tag one SGE")
                    : null;
            case OP_DEL -> op.handle() < 0 || op.handle() > maxNumTags
                ? new PostException(POST, Errno.EINVAL.code(), index, "handle=" + Integer.toUnsignedString(op.handle())
                    + " is past the list of " + maxNumTags + " tags (mlx5_post_srq_ops indexes its tag array by it); "
                    + "give the handle IBV_WR_TAG_ADD returned")
                : null;
            case OP_SYNC -> null;
            default -> new PostException(POST, Errno.EINVAL.code(), index, "opcode=" + op.opcode() + " is not "
                + "a list operation (mlx5_post_srq_ops: bad opcode); use IBV_WR_TAG_ADD (0), IBV_WR_TAG_DEL (1) or "
                + "IBV_WR_TAG_SYNC (2)");
        };
    }

    /**
     * A SEND arrived at a QP of the SRQ: its TMH decides what it gets (see the class comment).
     *
     * @param tmhOpcode the TMH's opcode (the message's first byte).
     * @param tag       the TMH's tag.
     * @return the outcome; a matched tag has left the list.
     */
    public Arrival arrive(final int tmhOpcode, final long tag)
    {
        return arrive(tmhOpcode, tag, true);
    }

    /**
     * A SEND arrived at a QP of the SRQ, decided before a receive is taken ({@link TagArrivals}): a matched tag needs
     * no ordinary receive; an unexpected message does, and while none is posted it gets an RNR NAK and counts nothing
     * (its retry arrives again and is matched again, against the list as it is then).
     *
     * @param tmhOpcode     the TMH's opcode (the message's first byte).
     * @param tag           the TMH's tag.
     * @param receivePosted the SRQ has an ordinary receive for an unexpected or untagged message.
     * @return the outcome (a matched tag has left the list); null for an unmatched message with no receive posted.
     */
    public Arrival arrive(final int tmhOpcode, final long tag, final boolean receivePosted)
    {
        if (tmhOpcode == TMH_EAGER || tmhOpcode == TMH_RNDV)
        {
            for (final Entry e : listed.values())
            {
                if (!held.containsKey(e.handle()) && (tag & e.mask()) == e.tag())
                {
                    listed.remove(e.handle());
                    free.addLast(e.handle());
                    return new Arrival(tmhOpcode == TMH_EAGER ? Kind.EAGER : Kind.RNDV, e, false);
                }
            }
            if (!receivePosted)
            {
                return null;
            }
            unexpectedDelivered++;
            return new Arrival(Kind.UNEXPECTED, null, unexpectedDelivered - unexpectedHandled > MAX_SYNC_DIFF);
        }
        return new Arrival(Kind.NO_TAG, null, false);
    }

    /**
     * A matched message never reached the responder (its request failed at the requester, after the match): its tag
     * is listed again, under its handle, last in the matching order.
     *
     * @param e the entry {@link #arrive} matched.
     */
    public void restore(final Entry e)
    {
        if (!listed.containsKey(e.handle()) && free.remove(e.handle()))
        {
            listed.put(e.handle(), e);
        }
    }

    /**
     * The end of a rendezvous: once the device has read the sender's buffer it tells the sender with a message that
     * takes one of the sender QP's receives (rdma-core tests/test_tag_matching.py posts a receive on the requester
     * "because the server sends rdma-read request to client"; UCX's mlx5 transport reads the TMH of opcode
     * IBV_TMH_FIN from it), which completes with IBV_WC_RECV.
     *
     * @param requester  the QP that sent the rendezvous request.
     * @param lengthBytes the message's length.
     * @return the receive it took, or null when none was posted (the message is dropped).
     */
    public static dev.rnicsim.verbs.RecvWr rendezvousDone(final dev.rnicsim.verbs.QueuePair requester,
        final long lengthBytes)
    {
        final SimQp qp = (SimQp) requester;
        final dev.rnicsim.verbs.RecvWr recv = qp.recvQueue.pollFirst();
        if (recv != null)
        {
            qp.completions.completeRecv(recv, dev.rnicsim.verbs.WcStatus.SUCCESS, dev.rnicsim.verbs.WcOpcode.RECV,
                lengthBytes, false, 0);
        }
        return recv;
    }

    /**
     * @return the tags listed now.
     */
    public int tagsListed()
    {
        return listed.size();
    }

    /**
     * @return the unexpected messages the device has delivered.
     */
    public long unexpectedDelivered()
    {
        return unexpectedDelivered;
    }

    /**
     * @return the device's tm_caps.
     */
    public TagMatchingCaps caps()
    {
        return caps;
    }

    @Override
    public String toString()
    {
        return "TagMatchingList[tags=" + listed.size() + "/" + maxNumTags + " held=" + held.size() + " unexpected="
            + unexpectedDelivered + " handled=" + unexpectedHandled + "]";
    }
}
