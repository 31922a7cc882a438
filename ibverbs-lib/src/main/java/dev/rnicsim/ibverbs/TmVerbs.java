package dev.rnicsim.ibverbs;

import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.simnic.TagMatchingCaps;
import dev.rnicsim.simnic.TagMatchingList;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Tag matching for C programs, the Java mirror of {@code src/main/c/wire_tm.h}: ibv_query_device_ex's tm_caps
 * ({@link TagMatchingCaps}), {@code ibv_create_srq_ex} of type IBV_SRQT_TM (the checks of sim-nic's
 * {@link TagMatchingList}, then an SRQ of the PD for the ordinary receives) and {@code ibv_post_srq_ops}, whose
 * SIGNALED operations complete on the SRQ's CQ at once. What a tagged message gets is {@link TmData}'s.
 *
 * <p>Messages: TM_CAPS {ctx} answers max_rndv_hdr_size, max_num_tags, flags, max_ops, max_sge; CREATE_TM_SRQ {pd,
 * cq, extended_cq, max_wr, max_sge, srq_limit, max_num_tags, max_ops} answers {srq, max_wr, max_sge, srq_num};
 * POST_SRQ_OPS {srq, count, count wire_ops_wr} answers {errno, done, done handles}, the errno being the refusal of
 * the operation at index {@code done} (0: all done), since the verb keeps what it did before a refused operation.
 *
 * <p>Stateless; called under the fabric's lock.
 */
final class TmVerbs
{
    static final int OP_TM_CAPS = 103;
    static final int OP_CREATE_TM_SRQ = 104;
    static final int OP_POST_SRQ_OPS = 105;
    /** Server to library: completions that take no ordinary receive, each with its tag. */
    static final int OP_TM_WC = 106;
    /** {@code struct wire_ops_wr}. */
    private static final int OPS_WR_BYTES = 72;
    private static final int EINVAL = 22;

    private TmVerbs()
    {
    }

    /**
     * @param op a request's number.
     * @return true for the requests of this class.
     */
    static boolean handles(final int op)
    {
        return op == OP_TM_CAPS || op == OP_CREATE_TM_SRQ || op == OP_POST_SRQ_OPS;
    }

    private static ByteBuffer buf(final int bytes)
    {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * @param s    the program's session.
     * @param srqs its SRQ verbs, which serve the TM SRQ's ordinary receives.
     * @param op   a request of this class.
     * @param p    its payload.
     * @return the answer.
     * @throws VerbsException the model's errno.
     */
    static ByteBuffer call(final Session s, final SrqVerbs srqs, final int op, final ByteBuffer p)
    {
        return switch (op)
        {
            case OP_TM_CAPS ->
            {
                final TagMatchingCaps c = TagMatchingCaps.of(s.get(p.getInt(0), Session.CtxInfo.class).device()
                    .profile());
                yield buf(24).putInt(0, c.maxRndvHdrSizeBytes()).putInt(4, c.maxNumTags()).putInt(8, c.flags())
                    .putInt(12, c.maxOps()).putInt(16, c.maxSge());
            }
            case OP_CREATE_TM_SRQ -> create(s, srqs, p);
            default -> post(s, srqs, p);
        };
    }

    private static ByteBuffer create(final Session s, final SrqVerbs srqs, final ByteBuffer p)
    {
        final ProtectionDomain pd = s.get(p.getInt(0), ProtectionDomain.class);
        final Session.CqInfo cq = s.get(p.getInt(4), Session.CqInfo.class);
        final SimDevice device = ((SimPd) pd).context().device();
        final int deviceIndex = s.server.devices.indexOf(device);
        final TagMatchingList list = TagMatchingList.create(device.profile(), s.server.hcaIds.get(deviceIndex),
            p.getInt(24), p.getInt(28), p.getInt(8) != 0);
        final SharedReceiveQueue srq = pd.createSrq(new SrqAttr(p.getInt(12), p.getInt(16), p.getInt(20)));
        try
        {
            s.server.completions.tm.register(srq, list, cq);
        }
        catch (final RuntimeException e)
        {
            srq.close(); // nothing made stays
            throw e;
        }
        return SrqVerbs.made(srqs.adopt(srq, deviceIndex), srq);
    }

    /**
     * POST_SRQ_OPS. An SRQ of another type has no command queue to take them: EINVAL for the first
     * ({@code mlx5_post_srq_ops}).
     */
    private static ByteBuffer post(final Session s, final SrqVerbs srqs, final ByteBuffer p)
    {
        final SharedReceiveQueue srq = srqs.srq(p.getInt(0));
        final int count = p.getInt(4);
        final TmData.TmSrq t = s.server.completions.tm.of(srq);
        if (t == null)
        {
            if (s.strict)
            {
                s.sendText("rnicsim: ibv_post_srq_ops: the SRQ is not of type IBV_SRQT_TM: it has no tag list to "
                + "change (mlx5_post_srq_ops answers EINVAL); create it with ibv_create_srq_ex of type IBV_SRQT_TM\n");
            }
            return buf(8).putInt(0, EINVAL).putInt(4, 0);
        }
        final List<TagMatchingList.Op> ops = new ArrayList<>(count);
        for (int i = 0; i < count; i++)
        {
            final int at = 8 + i * OPS_WR_BYTES;
            final int numSge = p.getInt(at + 56);
            final List<Sge> sgl = new ArrayList<>();
            for (int g = 0; g < numSge; g++)
            {
                // the library carries the first SGE; more than max_sge (1) is refused before any is read
                sgl.add(new Sge(p.getLong(at + 32), p.getInt(at + 60) & 0xffffffffL, p.getInt(at + 64)));
            }
            ops.add(new TagMatchingList.Op(p.getLong(at), p.getInt(at + 40), p.getInt(at + 44), p.getInt(at + 48),
                p.getInt(at + 52), p.getLong(at + 8), sgl, p.getLong(at + 16), p.getLong(at + 24)));
        }
        final TagMatchingList.Posted done = t.list().post(ops);
        for (final TagMatchingList.Done d : done.completions())
        {
            s.server.completions.tm.complete(t, d.wrId(), d.ok() ? 0 : TmData.WC_TM_ERR, d.opcode(),
                d.syncReq() ? TmData.WC_TM_SYNC_REQ : 0, 0, 0, 0, 0);
        }
        if (done.refused() != null && s.strict)
        {
            s.sendText("rnicsim: " + done.refused().getMessage() + "\n");
        }
        final ByteBuffer b = buf(8 + 4 * done.handles().size());
        b.putInt(0, done.refused() == null ? 0 : done.refused().errno()).putInt(4, done.handles().size());
        for (int i = 0; i < done.handles().size(); i++)
        {
            b.putInt(8 + 4 * i, done.handles().get(i));
        }
        return b;
    }
}
