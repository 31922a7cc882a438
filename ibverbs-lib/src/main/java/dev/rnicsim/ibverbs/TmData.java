package dev.rnicsim.ibverbs;

import dev.rnicsim.simnic.TagArrivals;
import dev.rnicsim.simnic.TagMatchingList;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WorkCompletion;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The data path of tag-matching SRQs: what a SEND that reached a QP of a TM SRQ gets, by its tag-matching header
 * (TMH, tm_types.h: opcode, app_ctx, big-endian tag) and the SRQ's {@link TagMatchingList}.
 *
 * <p>The decision is made as the message arrives, before the responder takes a receive ({@link TagArrivals}, the
 * SRQ's matcher): this class reads the TMH from the sender's bytes and decides, as the device does, so that a matched
 * message needs no ordinary receive posted and only an unmatched one waits (RNR NAK) for one (the completions as
 * mlx5's {@code handle_tag_matching},
 * {@code mlx5_cq_read_wc_opcode}, {@code mlx5_cq_read_wc_flags} and {@code mlx5_cq_read_wc_tm_info} read them,
 * providers/mlx5/cq.c):
 * <ul>
 * <li>IBV_TMH_NO_TAG: the message stays in the ordinary receive, completion IBV_WC_TM_NO_TAG.</li>
 * <li>No tag matched: the same, completion IBV_WC_TM_RECV without IBV_WC_TM_MATCH (with IBV_WC_TM_SYNC_REQ when the
 * device is too far ahead of the program), the whole message, TMH included, in the buffer.</li>
 * <li>IBV_TMH_EAGER matching a tag: the message takes none of the SRQ's ordinary receives (the responder takes the
 * device's discarding one), the payload after the 16-byte TMH goes to the tag's buffer, and one completion IBV_WC_TM_RECV with IBV_WC_TM_MATCH and
 * IBV_WC_TM_DATA_VALID, the tag's recv_wr_id and the TMH's tag (IBV_WC_LOC_LEN_ERR when the payload is longer than
 * the buffer).</li>
 * <li>IBV_TMH_RNDV matching a tag: no ordinary receive either; a first completion IBV_WC_TM_RECV with IBV_WC_TM_MATCH and
 * the tag; the device reads the RVH's range (va, rkey, len after the TMH) from the sender's memory into the tag's
 * buffer, the rkey checked as an RDMA READ's (the MR of that key on the sender's device, REMOTE_READ, the range
 * inside it); a second completion IBV_WC_TM_RECV with IBV_WC_TM_DATA_VALID and the length read (status
 * IBV_WC_TM_RNDV_INCOMPLETE when the read is refused or longer than the buffer: the program must fetch the data
 * itself); and a 16-byte message of TMH opcode IBV_TMH_FIN (app_ctx and tag of the request) into one of the sender's
 * receives ({@link TagMatchingList#rendezvousDone}).</li>
 * </ul>
 * A message shorter than a TMH carries none and is taken as IBV_TMH_NO_TAG (assumed). Completions of list
 * operations and of matched tags take no ordinary receive and go to the SRQ's CQ as TM_WC messages with their tag;
 * the others keep the model's completion, with the TM opcode and flags. A matched request that then fails at the
 * requester (it never reached the responder) lists its tag again and withdraws the discarding receive. {@code ibv_wc_read_tm_info} gives the TMH's tag
 * and app_ctx on the completions that report a match (IBV_WC_TM_MATCH), 0 on the others, as
 * rdma-core's tests/test_tag_matching.py reads them.
 *
 * <p>Not thread safe: called under the fabric's lock.
 */
final class TmData
{
    /** {@code IBV_WC_TM_SYNC_REQ}, {@code IBV_WC_TM_MATCH}, {@code IBV_WC_TM_DATA_VALID} of {@code ibv_wc_flags}. */
    static final int WC_TM_SYNC_REQ = 1 << 4;
    static final int WC_TM_MATCH = 1 << 5;
    static final int WC_TM_DATA_VALID = 1 << 6;
    /** {@code IBV_WC_LOC_LEN_ERR}, {@code IBV_WC_TM_ERR}, {@code IBV_WC_TM_RNDV_INCOMPLETE}. */
    static final int WC_LOC_LEN_ERR = 1;
    static final int WC_TM_ERR = 22;
    static final int WC_TM_RNDV_INCOMPLETE = 23;
    /** {@code sizeof(struct ibv_tmh)}, and with {@code struct ibv_rvh}. */
    private static final int TMH_BYTES = 16;
    private static final int RVH_END = 32;
    private static final int IBV_WR_SEND = 2;

    /** A TM SRQ: its ordinary queue, its list, the CQ its tag-matching completions go to. */
    record TmSrq(SharedReceiveQueue srq, TagMatchingList list, Session.CqInfo cq)
    {
    }

    /** A matched message: what the device's discarding receive (of wr_id the key) stands for. */
    private record Claim(TmSrq t, TagMatchingList.Arrival a, Completions.PostedSend ps, long sendId,
        Session.QpInfo sender, Session.QpInfo rq, byte[] head)
    {
    }

    private final FabricServer server;
    private final Completions completions;
    private final Map<SharedReceiveQueue, TmSrq> srqs = new IdentityHashMap<>();
    /** Matched messages by the wr_id of their discarding receive, and that wr_id by the sender's request. */
    private final Map<Long, Claim> claims = new HashMap<>();
    private final Map<Long, Long> claimOfSend = new HashMap<>();
    /** The model's completion of a receive that stays an ordinary one: its TM opcode and flags. */
    private final Map<Long, int[]> overrides = new HashMap<>();
    /** The discarding receives of matched messages: the model's completion of each is dropped. */
    private final Set<Long> givenBack = new HashSet<>();
    private boolean again;

    TmData(final FabricServer server, final Completions completions)
    {
        this.server = server;
        this.completions = completions;
    }

    /**
     * A TM SRQ was made: its matcher decides each SEND that arrives at its QPs.
     *
     * @throws dev.rnicsim.verbs.VerbsException ENOMEM when the device has no MPT entry for its discarding receive.
     */
    void register(final SharedReceiveQueue srq, final TagMatchingList list, final Session.CqInfo cq)
    {
        final TmSrq t = new TmSrq(srq, list, cq);
        TagArrivals.attach(srq, (sendWrId, lengthBytes, head) -> arrive(t, sendWrId, lengthBytes, head));
        srqs.put(srq, t);
    }

    void forget(final SharedReceiveQueue srq)
    {
        srqs.remove(srq);
        TagArrivals.detach(srq);
    }

    /** @return the TM SRQ of an SRQ, or null for an SRQ of another type. */
    TmSrq of(final SharedReceiveQueue srq)
    {
        return srqs.get(srq);
    }

    /** @return the TM opcode and flags of the completion of receive id, or null. */
    int[] override(final long id)
    {
        return overrides.remove(id);
    }

    /** @return true when receive id is the discarding receive of a matched message: its completion is dropped. */
    boolean givenBack(final long id)
    {
        claims.remove(id);
        return givenBack.remove(id);
    }

    /** @return true once, when the device has more to do (a FIN to deliver). */
    boolean again()
    {
        final boolean a = again;
        again = false;
        return a;
    }

    /**
     * A SEND arrived at a QP of a TM SRQ (the SRQ's {@link TagArrivals.Matcher}): reads its TMH and decides.
     *
     * @return the wr_id of the discarding receive for a matched message; null for an ordinary receive (or an RNR NAK
     *         when {@code head} is null and no tag matched).
     */
    private Long arrive(final TmSrq t, final long sendWrId, final long len, final RecvWr head)
    {
        final Completions.PostedSend ps = completions.posted(sendWrId);
        final byte[] bytes = ps == null ? null : header(ps, Math.min(len, RVH_END));
        if (bytes == null)
        {
            return null;
        }
        final ByteBuffer h = ByteBuffer.wrap(bytes).order(ByteOrder.BIG_ENDIAN);
        final TagMatchingList.Arrival a = len < TMH_BYTES
            ? new TagMatchingList.Arrival(TagMatchingList.Kind.NO_TAG, null, false)
            : t.list().arrive(bytes[0] & 0xff, h.getLong(8), head != null);
        if (a == null)
        {
            return null; // unmatched and no receive: RNR NAK, nothing counted
        }
        switch (a.kind())
        {
            case NO_TAG ->
            {
                if (head != null)
                {
                    overrides.put(head.wrId(), new int[] {TagMatchingList.WC_TM_NO_TAG, 0});
                }
                return null;
            }
            case UNEXPECTED ->
            {
                overrides.put(head.wrId(), new int[] {TagMatchingList.WC_TM_RECV, a.syncReq() ? WC_TM_SYNC_REQ : 0});
                return null;
            }
            default ->
            {
                final Session.QpInfo sender = ps.qp();
                final Session.QpInfo rq = server.qps.get(Session.QpInfo.key(sender.peerDeviceIndex,
                    sender.peerQpNum));
                if (rq == null)
                {
                    t.list().restore(a.entry());
                    return null;
                }
                final long id = completions.newId();
                claims.put(id, new Claim(t, a, ps, sendWrId, sender, rq, bytes));
                claimOfSend.put(sendWrId, id);
                givenBack.add(id);
                return id;
            }
        }
    }

    /**
     * The device's discarding receive of a matched message completed: the message's bytes go to the tag's buffer
     * (eager) or are read from the sender (rendezvous), with the TM completions.
     *
     * @return true when {@code wc} was such a receive.
     */
    boolean placeClaimed(final WorkCompletion wc)
    {
        final Claim c = claims.remove(wc.wrId());
        if (c == null)
        {
            return false;
        }
        claimOfSend.remove(c.sendId());
        c.sender().sendsToPlace.remove(c.ps());
        final long len = wc.byteLen();
        final ByteBuffer h = ByteBuffer.wrap(c.head()).order(ByteOrder.BIG_ENDIAN);
        if (c.a().kind() == TagMatchingList.Kind.EAGER)
        {
            eager(c.t(), wc, c.rq(), c.ps(), c.a().entry(), len, h.getLong(8), h.getInt(4));
        }
        else
        {
            rendezvous(c.t(), wc, c.rq(), c.sender(), c.a().entry(), c.head(), len);
        }
        return true;
    }

    /**
     * The sender's request of wr_id {@code sendId} failed: when it had matched a tag and never reached the responder,
     * the tag is listed again and the discarding receive leaves the SRQ.
     */
    void sendFailed(final long sendId)
    {
        final Long id = claimOfSend.remove(sendId);
        final Claim c = id == null ? null : claims.get(id);
        if (c != null && TagArrivals.withdraw(c.t().srq(), id))
        {
            claims.remove(id);
            givenBack.remove(id);
            c.t().list().restore(c.a().entry());
        }
    }

    /** The first bytes of the message: carried with the request, or read from the sender's buffer. */
    private byte[] header(final Completions.PostedSend ps, final long bytes)
    {
        final byte[] b = new byte[(int) bytes];
        if (ps.carried() != null)
        {
            System.arraycopy(ps.carried(), 0, b, 0, (int) Math.min(bytes, ps.carried().length));
            return b;
        }
        if (!completions.bytes.fill(ps, bytes))
        {
            return null;
        }
        MemorySegment.copy(server.memory.scratch(bytes), ValueLayout.JAVA_BYTE, 0, b, 0, b.length);
        return b;
    }

    private List<ProcessMemory.Range> buffer(final Session.QpInfo rq, final TagMatchingList.Entry e)
    {
        final List<ProcessMemory.Range> dst = new ArrayList<>();
        for (final Sge g : e.sgl())
        {
            dst.add(new ProcessMemory.Range(completions.translateFor(rq.deviceIndex, g.lkey(), g.addr()),
                g.lengthBytes()));
        }
        return dst;
    }

    private void eager(final TmSrq t, final WorkCompletion wc, final Session.QpInfo rq,
        final Completions.PostedSend ps, final TagMatchingList.Entry e, final long len, final long tag,
        final int appCtx)
    {
        final List<ProcessMemory.Range> dst = buffer(rq, e);
        final long payload = len - TMH_BYTES;
        int status = 0;
        if (payload > ProcessMemory.total(dst))
        {
            status = WC_LOC_LEN_ERR;
        }
        else if (payload > 0 && completions.bytes.fill(ps, len))
        {
            final MemorySegment scratch = server.memory.scratch(len);
            MemorySegment.copy(scratch, TMH_BYTES, scratch, 0, payload);
            completions.bytes.scatter(rq.session.pid, ProcessMemory.clip(dst, payload), "the buffer of tag 0x"
                + Long.toHexString(e.tag()) + " (recv_wr_id " + e.recvWrId() + ")", rq);
        }
        complete(t, e.recvWrId(), status, TagMatchingList.WC_TM_RECV, WC_TM_MATCH | WC_TM_DATA_VALID,
            status == 0 ? payload : 0, wc.qpNum(), tag, appCtx);
    }

    private void rendezvous(final TmSrq t, final WorkCompletion wc, final Session.QpInfo rq,
        final Session.QpInfo sender, final TagMatchingList.Entry e, final byte[] head, final long len)
    {
        final ByteBuffer h = ByteBuffer.wrap(head).order(ByteOrder.BIG_ENDIAN);
        final long tag = h.getLong(8);
        complete(t, e.recvWrId(), 0, TagMatchingList.WC_TM_RECV, WC_TM_MATCH, 0, wc.qpNum(), tag, h.getInt(4));
        final List<ProcessMemory.Range> dst = buffer(rq, e);
        boolean read = false;
        long lengthBytes = 0;
        if (len >= RVH_END)
        {
            final long va = h.getLong(16);
            final int rkey = h.getInt(24);
            lengthBytes = h.getInt(28) & 0xffffffffL;
            final Session.MrInfo m = server.mrs.get(Verbs.mrKey(sender.deviceIndex, rkey));
            if (m != null && m.mr().access().contains(Access.REMOTE_READ) && va >= m.iova()
                && va - m.iova() + lengthBytes <= m.lengthBytes() && lengthBytes <= ProcessMemory.total(dst))
            {
                final List<ProcessMemory.Range> src = List.of(new ProcessMemory.Range(m.addr() + (va - m.iova()),
                    lengthBytes));
                read = server.memory.gather(sender.session.pid, src) == lengthBytes;
                if (read)
                {
                    completions.bytes.scatter(rq.session.pid, ProcessMemory.clip(dst, lengthBytes), "the buffer of tag 0x"
                        + Long.toHexString(e.tag()) + " (recv_wr_id " + e.recvWrId() + ")", rq);
                }
            }
        }
        complete(t, e.recvWrId(), read ? 0 : WC_TM_RNDV_INCOMPLETE, TagMatchingList.WC_TM_RECV,
            read ? WC_TM_DATA_VALID : WC_TM_MATCH | WC_TM_DATA_VALID, read ? lengthBytes : 0, wc.qpNum(), 0, 0);
        // the FIN: TMH opcode IBV_TMH_FIN with the request's app_ctx and tag, into a receive of the sender
        final byte[] fin = new byte[TMH_BYTES];
        fin[0] = (byte) TagMatchingList.TMH_FIN;
        System.arraycopy(head, 4, fin, 4, TMH_BYTES - 4);
        if (TagMatchingList.rendezvousDone(sender.qp, TMH_BYTES) != null)
        {
            rq.sendsToPlace.addLast(new Completions.PostedSend(rq, -1, false, IBV_WR_SEND, List.of(), fin, 0, 0, 0,
                0));
            again = true;
        }
    }

    /** Sends a completion that takes no ordinary receive (TM_WC) to the program of the SRQ's CQ, with the tag and
     * app_ctx of the TMH it reports (0 for none). */
    void complete(final TmSrq t, final long wrId, final int status, final int opcode, final int wcFlags,
        final long byteLen, final int qpNum, final long tag, final int appCtx)
    {
        final Session to = t.cq().session();
        final ByteBuffer b = ByteBuffer.allocate(8 + 80).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(0).putInt(1);
        b.putLong(wrId).putInt(t.cq().handle()).putInt(0).putInt(status).putInt(opcode).putInt(0)
            .putInt((int) byteLen).putInt(0).putInt(qpNum).putInt(0).putInt(wcFlags).putInt(0).putInt(0)
            .putLong(server.fabric.clock().nowNs());
        b.putLong(tag).putInt(appCtx).putInt(0);
        b.flip();
        to.send(TmVerbs.OP_TM_WC, 0, 0, b);
        completions.owed(to);
    }
}
