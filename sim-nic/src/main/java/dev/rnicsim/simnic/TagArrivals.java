package dev.rnicsim.simnic;

import dev.rnicsim.mtt.TableException;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WrOpcode;
import java.util.List;

/**
 * Where a tag-matching SRQ decides what a SEND gets, before the responder takes a receive for it: the device matches
 * the TMH against the tag list as the message arrives, and a matched message goes to its tag's buffer and takes none
 * of the SRQ's ordinary receives (ibv_create_srq_ex(3): "unexpected messages" and messages without a tag are the ones
 * that consume the SRQ's receive WQEs; mlx5's {@code handle_tag_matching}, providers/mlx5/cq.c, completes a matched
 * message against the tag's entry, not a WQE of the SRQ). Only an unmatched message with no ordinary receive posted
 * gets an RNR NAK.
 *
 * <p>The bytes are the backend's (it reads the TMH from the sender's buffer and places the payload into the tag's
 * buffer): the SRQ's {@link Matcher} decides. For a matched message the responder takes a receive of the device's own
 * instead of an ordinary one, whose one SGE discards what is placed into it (an mkey of the SRQ's PD over the device's
 * sink frame, as a null MR's: the SRQ holds one MPT entry for it while it lives), so the engine moves and prices the
 * message as it does every SEND.
 *
 * <p>Not thread safe: called under the fabric's lock.
 */
public final class TagArrivals
{
    /** What the backend of a tag-matching SRQ decides for each SEND that arrives at one of its QPs. */
    @FunctionalInterface
    public interface Matcher
    {
        /**
         * A SEND arrived.
         *
         * @param sendWrId     the wr_id of the sender's request, as the model knows it.
         * @param lengthBytes  the message's length.
         * @param head         the SRQ's first ordinary receive, the one an unmatched message takes; null when none is
         *                     posted (the message then gets an RNR NAK: nothing may be counted for it).
         * @return the wr_id the device's discarding receive gets when a listed tag matched (its completion is the
         *         backend's to drop), or null for an ordinary receive.
         */
        Long arrive(long sendWrId, long lengthBytes, RecvWr head);
    }

    private final SimSrq srq;
    private final Matcher matcher;
    private final int sinkKey;

    private TagArrivals(final SimSrq srq, final Matcher matcher, final int sinkKey)
    {
        this.srq = srq;
        this.matcher = matcher;
        this.sinkKey = sinkKey;
    }

    /**
     * Makes {@code matcher} decide the SENDs that arrive at the QPs of a tag-matching SRQ.
     *
     * @throws dev.rnicsim.verbs.VerbsException ENOMEM when the MPT has no entry left for the discarding receive.
     */
    public static void attach(final SharedReceiveQueue srq, final Matcher matcher)
    {
        final SimSrq s = (SimSrq) srq;
        try
        {
            s.tagArrivals = new TagArrivals(s, matcher, SimNullMr.registerSink(s.pd()));
        }
        catch (final TableException e)
        {
            throw Errors.of("ibv_create_srq_ex", Errno.ENOMEM, "no MPT entry left for the tag-matching SRQ's "
                + "discarding buffer: " + e.getMessage() + "; deregister MRs first");
        }
    }

    /** The SRQ is destroyed (or no longer matches tags): its discarding receive's key goes. */
    public static void detach(final SharedReceiveQueue srq)
    {
        final SimSrq s = (SimSrq) srq;
        if (s.tagArrivals != null)
        {
            SimNullMr.dropSink(s.pd().context().device(), s.tagArrivals.sinkKey);
            s.tagArrivals = null;
        }
    }

    /**
     * A request whose discarding receive the responder did not take (the request failed at the requester): that
     * receive leaves the SRQ.
     *
     * @return true when it was still queued.
     */
    public static boolean withdraw(final SharedReceiveQueue srq, final long recvWrId)
    {
        return ((SimSrq) srq).queue().removeIf(r -> r.wrId() == recvWrId && r.sgList().size() == 1
            && ((SimSrq) srq).tagArrivals != null && r.sgList().get(0).lkey() == ((SimSrq) srq).tagArrivals.sinkKey);
    }

    /**
     * A request that needs a receive reached {@code peer} (Requester, before its receiver-not-ready check): a SEND to
     * a QP of a tag-matching SRQ is offered to the SRQ's matcher, and a matched one finds the discarding receive at
     * the head of the queue.
     */
    static void arrive(final SimQp peer, final SendWqe p)
    {
        final SimSrq s = peer.srq;
        if (s == null || s.tagArrivals == null)
        {
            return;
        }
        final WrOpcode op = p.wr().opcode();
        if (op != WrOpcode.SEND && op != WrOpcode.SEND_WITH_IMM && op != WrOpcode.SEND_WITH_INV)
        {
            return;
        }
        long length = 0;
        if (p.inline() != null)
        {
            length = p.inline().length;
        }
        else
        {
            for (final Sge g : p.wr().sgList())
            {
                length += g.lengthBytes();
            }
        }
        final Long id = s.tagArrivals.matcher.arrive(p.wr().wrId(), length, s.queue().peekFirst());
        if (id != null)
        {
            s.queue().addFirst(new RecvWr(id, List.of(new Sge(0, length, s.tagArrivals.sinkKey))));
        }
    }

    @Override
    public String toString()
    {
        return "tag arrivals of " + srq;
    }
}
