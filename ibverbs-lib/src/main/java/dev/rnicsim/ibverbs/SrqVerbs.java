package dev.rnicsim.ibverbs;

import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Shared receive queues on the simulated device: {@code ibv_create_srq}, {@code ibv_modify_srq} (the limit; a
 * resize as the device's profile answers it, {@link #resize}), {@code ibv_query_srq}, {@code ibv_destroy_srq}
 * and the POST_SRQ_RECV doorbell. A receive of an SRQ completes on whichever QP took it; the data path finds that
 * QP by the completion's qp_num.
 *
 * <p>Not thread safe: called under the fabric's lock.
 */
final class SrqVerbs
{
    /** {@code IBV_SRQ_MAX_WR}, {@code IBV_SRQ_LIMIT} of {@code enum ibv_srq_attr_mask}. */
    private static final int SRQ_MAX_WR = 1;
    private static final int SRQ_LIMIT = 2;
    private final Session s;

    SrqVerbs(final Session session)
    {
        this.s = session;
    }

    /** An SRQ and the device its PD is on. */
    record SrqInfo(SharedReceiveQueue srq, int deviceIndex)
    {
    }

    private static ByteBuffer buf(final int bytes)
    {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * CREATE_SRQ: pd, max_wr, max_sge, srq_limit; the answer: handle, max_wr, max_sge, and the number
     * {@code ibv_get_srq_num} answers, as the device's profile has it ({@link dev.rnicsim.simnic.SimSrq#srqNum()}: mlx5
     * numbers any SRQ; mlx4 only XRC SRQs; a provider without XRC, such as rxe, none): 0 where it answers
     * EOPNOTSUPP.
     */
    ByteBuffer create(final ByteBuffer p, final int deviceIndex)
    {
        final ProtectionDomain pd = s.get(p.getInt(0), ProtectionDomain.class);
        final SharedReceiveQueue srq = pd.createSrq(new SrqAttr(p.getInt(4), p.getInt(8), p.getInt(12)));
        return made(s.add(new SrqInfo(srq, deviceIndex)), srq);
    }

    /**
     * The answer to a create of an SRQ: its handle, what the device granted, and the number {@code ibv_get_srq_num}
     * answers (0 where the provider answers EOPNOTSUPP).
     */
    static ByteBuffer made(final int h, final SharedReceiveQueue srq)
    {
        final SrqAttr a = srq.query();
        int srqNum;
        try
        {
            srqNum = srq.srqNum();
        }
        catch (final VerbsException e)
        {
            srqNum = 0;
        }
        return buf(16).putInt(0, h).putInt(4, a.maxWr()).putInt(8, a.maxSge()).putInt(12, srqNum);
    }

    /** MODIFY_SRQ: handle, attr_mask, max_wr, srq_limit. */
    ByteBuffer modify(final ByteBuffer p)
    {
        final SrqInfo i = s.get(p.getInt(0), SrqInfo.class);
        final int mask = p.getInt(4);
        if ((mask & SRQ_MAX_WR) != 0)
        {
            resize(i, p.getInt(8), (mask & SRQ_LIMIT) != 0 ? p.getInt(12) : i.srq().query().srqLimit());
        }
        if ((mask & SRQ_LIMIT) != 0)
        {
            i.srq().modifyLimit(p.getInt(12));
        }
        return null;
    }

    /**
     * IBV_SRQ_MAX_WR, as the device's driver answers it ({@link SharedReceiveQueue#resize}: EINVAL without
     * IBV_DEVICE_SRQ_RESIZE, as mlx5 and mlx4 answer; rxe resizes). A limit given with it must fit the new size.
     */
    private void resize(final SrqInfo i, final int maxWr, final int limit)
    {
        if (Integer.compareUnsigned(maxWr, limit) < 0)
        {
            throw new VerbsException("ibv_modify_srq", 22, "IBV_SRQ_MAX_WR: max_wr=" + Integer.toUnsignedString(maxWr)
                + " is below srq_limit=" + Integer.toUnsignedString(limit) + " (ibv_modify_srq(3): the limit must fit "
                + "the new size); ask for a larger max_wr or a lower srq_limit; nothing changed");
        }
        i.srq().resize(maxWr);
    }

    ByteBuffer query(final int h)
    {
        final SrqAttr a = s.get(h, SrqInfo.class).srq().query();
        return buf(16).putInt(0, a.maxWr()).putInt(4, a.maxSge()).putInt(8, a.srqLimit());
    }

    ByteBuffer destroy(final int h)
    {
        final SharedReceiveQueue srq = s.get(h, SrqInfo.class).srq();
        srq.close();
        s.server.completions.tm.forget(srq);
        s.handles.set(h, null);
        return null;
    }

    /** @return the handle of an SRQ made elsewhere (an XRC SRQ, {@link XrcVerbs}), which the SRQ verbs then serve. */
    int adopt(final SharedReceiveQueue srq, final int deviceIndex)
    {
        return s.add(new SrqInfo(srq, deviceIndex));
    }

    /** @return the SRQ of a handle, for a QP created with it. */
    SharedReceiveQueue srq(final int h)
    {
        return s.get(h, SrqInfo.class).srq();
    }

    /** POST_SRQ_RECV: wire_post (the SRQ's handle), then per request wire_recv_wr and its SGEs. */
    void post(final ByteBuffer p)
    {
        final SrqInfo i = s.get(p.getInt(0), SrqInfo.class);
        final Completions c = s.server.completions;
        final int count = p.getInt(4);
        int at = 8;
        for (int k = 0; k < count; k++)
        {
            final long wrId = p.getLong(at);
            final int numSge = p.getInt(at + 8);
            at += Wire.RECV_WR_BYTES;
            final List<Sge> sgl = new ArrayList<>(numSge);
            final List<ProcessMemory.Range> local = new ArrayList<>(numSge);
            for (int g = 0; g < numSge; g++)
            {
                final long addr = p.getLong(at);
                final long len = p.getInt(at + 8) & 0xffffffffL;
                final int lkey = p.getInt(at + 12);
                sgl.add(new Sge(addr, len, lkey));
                local.add(new ProcessMemory.Range(c.translateFor(i.deviceIndex(), lkey, addr), len));
                OdpFaultIn.before(s.server, i.deviceIndex(), lkey, addr, len);
                at += Wire.SGE_BYTES;
            }
            final long id = c.postedSrqRecv(wrId, local, i.deviceIndex());
            final RecvWr recv = new RecvWr(id, sgl);
            try
            {
                i.srq().postRecv(List.of(recv));
            }
            catch (final RuntimeException e)
            {
                c.refusedSrqRecv(id);
                s.sendText("rnicsim: ibv_post_srq_recv (wr_id " + wrId + ") refused by the device after the verb "
                    + "returned: " + e.getMessage() + "\n");
            }
        }
    }
}
