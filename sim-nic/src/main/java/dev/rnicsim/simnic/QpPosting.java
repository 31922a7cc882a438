package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.UdSendWr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WrOpcode;
import java.util.List;
import java.util.Set;

/**
 * The posting verbs of a {@link SimQp} ({@code ibv_post_send}, {@code ibv_post_recv}, {@code ibv_bind_mw}): each work
 * request is checked ({@link PostChecks}) and written to the send queue, where the {@link Requester} fetches it later,
 * or to the receive queue; a refused one is an error of the post and queues nothing after it.
 */
final class QpPosting
{
    private QpPosting()
    {
    }

    static void postSend(final SimQp qp, final List<SendWr> wrs)
    {
        final EngineThread held = qp.device.fabric().enter();
        try
        {
            if (wrs == null)
            {
                throw new PostException("ibv_post_send", Errno.EINVAL.code(), 0, "the work-request list is null"
                    + "; pass a list of work requests");
            }
            for (int i = 0; i < wrs.size(); i++)
            {
                final SendWr wr = wrs.get(i);
                if (wr == null)
                {
                    throw new PostException("ibv_post_send", Errno.EINVAL.code(), i, "the work request is null"
                        + "; pass a work request at every position");
                }
                if (qp.type == QpType.UD && !qp.closed)
                {
                    throw new PostException("ibv_post_send", Errno.EINVAL.code(), i, "a send on a UD QP needs its "
                        + "destination (wr.ud: address handle, remote QPN, Q_Key): post it with postSendUd");
                }
                final byte[] inline = PostChecks.checkSend(qp, wr, i);
                qp.requester.sendQueue.addLast(new SendWqe(wr, inline, null, qp.completions.order.post(),
                    qp.device.fabric().origin()));
                qp.engine().schedule(qp);
            }
        }
        finally
        {
            SimFabric.exit(held);
        }
    }

    /**
     * {@code ibv_post_send} on a UD QP. The address handle must be a live one of the QP's context.
     */
    static void postSendUd(final SimQp qp, final List<UdSendWr> wrs)
    {
        final EngineThread held = qp.device.fabric().enter();
        try
        {
            final String verb = "ibv_post_send";
            if (wrs == null)
            {
                throw new PostException(verb, Errno.EINVAL.code(), 0, "the work-request list is null"
                    + "; pass a list (an empty one posts nothing)");
            }
            for (int i = 0; i < wrs.size(); i++)
            {
                final UdSendWr ud = wrs.get(i);
                if (ud == null)
                {
                    throw new PostException(verb, Errno.EINVAL.code(), i, "the work request is null"
                        + "; pass a work request at every position");
                }
                if (qp.type != QpType.UD)
                {
                    throw new PostException(verb, Errno.EINVAL.code(), i, "wr.ud is for UD QPs only; QP 0x"
                        + Integer.toHexString(qp.num) + " is " + qp.type
                            + " and sends to the QP it is connected to; post without "
                        + "ah, remote_qpn and qkey");
                }
                if (!(ud.ah() instanceof SimAh ah) || ah.isClosed() || ah.pd().context() != qp.pd.context())
                {
                    throw new PostException(verb, Errno.EINVAL.code(), i, "wr.ud.ah is not a live address handle of "
                        + "this QP's context; create one with ibv_create_ah on a PD of this context");
                }
                final byte[] inline = PostChecks.checkSend(qp, ud.wr(), i);
                qp.requester.sendQueue.addLast(new SendWqe(ud.wr(), inline, ud, qp.completions.order.post(),
                    qp.device.fabric().origin()));
                qp.engine().schedule(qp);
            }
        }
        finally
        {
            SimFabric.exit(held);
        }
    }

    static int bindMw(final SimQp qp, final MemoryWindow mw, final long wrId, final Set<SendFlag> flags,
        final MwBindInfo info)
    {
        final EngineThread held = qp.device.fabric().enter();
        try
        {
            final String verb = "ibv_bind_mw";
            qp.checkOpen(verb);
            final SimMw m = PostChecks.checkBindMw(qp, mw, flags, info);
            final int newRkey = SendWr.incRkey(m.rkey());
            final SendWr wr = new SendWr(wrId, WrOpcode.BIND_MW, List.of(), flags, 0, 0, 0, 0, 0, 0,
                new SendWr.Bind(m, newRkey, info));
            qp.bindingType1 = true;
            try
            {
                PostChecks.checkSend(qp, wr, 0);
            }
            catch (final PostException e)
            {
                throw new VerbsException(verb, e.errno(), e.detail());
            }
            finally
            {
                qp.bindingType1 = false;
            }
            // The provider stores the new rkey at post time (mlx5_bind_mw, rxe_bind_mw), before the completion.
            m.rkey(newRkey);
            qp.requester.sendQueue.addLast(new SendWqe(wr, null, null, qp.completions.order.post(),
                qp.device.fabric().origin()));
            qp.engine().schedule(qp);
            return newRkey;
        }
        finally
        {
            SimFabric.exit(held);
        }
    }

    static void postRecv(final SimQp qp, final List<RecvWr> wrs)
    {
        final EngineThread held = qp.device.fabric().enter();
        try
        {
            final String verb = "ibv_post_recv";
            if (wrs == null)
            {
                throw new PostException(verb, Errno.EINVAL.code(), 0, "the work-request list is null"
                    + "; pass a list of work requests");
            }
            try
            {
                postReceives(qp, wrs, verb);
            }
            finally
            {
                // Whatever was posted before a refused work request may let a waiting sender go on.
                qp.wakeWaitingPeer();
            }
        }
        finally
        {
            SimFabric.exit(held);
        }
    }

    private static void postReceives(final SimQp qp, final List<RecvWr> wrs, final String verb)
    {
        for (int i = 0; i < wrs.size(); i++)
        {
            final RecvWr wr = wrs.get(i);
            if (wr == null)
            {
                throw new PostException(verb, Errno.EINVAL.code(), i, "the work request is null"
                    + "; pass a work request at every position");
            }
            PostChecks.checkRecv(qp, wr, i);
            if (qp.state == QpState.ERR)
            {
                qp.completions.completeRecv(wr, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0);
                continue;
            }
            qp.recvQueue.addLast(wr);
        }
    }
}
