package dev.rnicsim.testkit;

import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.testkit.TestNic.Side;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The work requests of a {@link TestNic}'s helpers: posts on the {@link QpPair} (a new pair first when the QPs left
 * RTS), polls the side's CQ for the request's own completion, and keeps the other completions polled meanwhile for
 * {@link #drain}. Work-request ids count from 1.
 *
 * <p>Not thread safe (nor is the simulator).
 */
final class PostHelpers
{
    /** Most completions of other work requests {@link #post} keeps for {@link #drain} (the oldest go first). */
    private static final int MAX_KEPT_COMPLETIONS = 1024;
    /** Most completions one poll of {@link #post} or {@link #send} takes. */
    private static final int POLL_BATCH = 256;

    private final SimFabric fabric;
    private final QpPair pair;
    private final Map<Side, CompletionQueue> cqs;
    /** Completions {@link #post} polled for other work requests (queued ones), kept for {@link #drain}. */
    private final Map<Side, List<WorkCompletion>> polledMeanwhile = Map.of(Side.A, new ArrayList<>(),
        Side.B, new ArrayList<>());
    private WorkCompletion lastReceive;
    private long nextWrId = 1;

    /**
     * @param fabric the fabric whose devices move the packets.
     * @param pair   the connected QPs.
     * @param cqs    each side's CQ (both queues of its QP).
     */
    PostHelpers(final SimFabric fabric, final QpPair pair, final Map<Side, CompletionQueue> cqs)
    {
        this.fabric = fabric;
        this.pair = pair;
        this.cqs = cqs;
    }

    /**
     * @return a new work-request id.
     */
    long nextWrId()
    {
        return nextWrId++;
    }

    /**
     * @return the receive completion of the last {@link #send}, or null.
     */
    WorkCompletion lastReceive()
    {
        return lastReceive;
    }

    /**
     * Posts a work request on a side's QP and polls for its completion; other completions polled meanwhile are kept.
     *
     * @param side the requester.
     * @param wr   the work request.
     * @return its completion, or null when it has none (unsignaled and successful, or still waiting).
     */
    WorkCompletion post(final Side side, final SendWr wr)
    {
        pair.ensureConnected();
        pair.qp(side).postSend(wr);
        WorkCompletion found = null;
        for (final WorkCompletion c : cqs.get(side).poll(POLL_BATCH))
        {
            if (c.wrId() == wr.wrId() && c.qpNum() == pair.qp(side).qpNum())
            {
                found = c;
            }
            else
            {
                final List<WorkCompletion> kept = polledMeanwhile.get(side);
                if (kept.size() >= MAX_KEPT_COMPLETIONS)
                {
                    kept.remove(0);
                }
                kept.add(c);
            }
        }
        return found;
    }

    /**
     * SEND from side A into a receive posted on side B first; the receive's completion becomes
     * {@link #lastReceive()}.
     *
     * @param local       an MR of side A holding the data.
     * @param localAddr   first byte to send.
     * @param lengthBytes bytes.
     * @param recv        an MR of side B with LOCAL_WRITE.
     * @param recvAddr    where the data goes.
     * @param recvLength  bytes the receive offers.
     * @return the sender's completion.
     */
    WorkCompletion send(final MemoryRegion local, final long localAddr, final long lengthBytes,
        final MemoryRegion recv, final long recvAddr, final long recvLength)
    {
        pair.ensureConnected();
        final long recvId = nextWrId();
        pair.qp(Side.B).postRecv(RecvWr.of(recvId, new Sge(recvAddr, recvLength, recv.lkey())));
        final WorkCompletion wc = post(Side.A, SendWr.send(nextWrId(), List.of(new Sge(localAddr, lengthBytes,
            local.lkey()))));
        lastReceive = null;
        for (final WorkCompletion c : cqs.get(Side.B).poll(POLL_BATCH))
        {
            if (c.wrId() == recvId)
            {
                lastReceive = c;
            }
        }
        return wc;
    }

    /**
     * RDMA WRITE from side A to side B, queued: returns once the WQE is on the send queue.
     *
     * @param local       an MR of side A holding the data.
     * @param localAddr   first byte to send.
     * @param lengthBytes bytes.
     * @param remoteAddr  the target address on side B.
     * @param rkey        the target's rkey.
     * @return the work request's id.
     */
    long queueWrite(final MemoryRegion local, final long localAddr, final long lengthBytes, final long remoteAddr,
        final int rkey)
    {
        pair.ensureConnected();
        final long id = nextWrId();
        pair.qp(Side.A).postSend(SendWr.write(id, List.of(new Sge(localAddr, lengthBytes, local.lkey())), remoteAddr,
            rkey));
        return id;
    }

    /**
     * Lets the devices finish everything in flight and takes a side's completions: those {@link #post} kept first.
     *
     * @param side whose CQ.
     * @return its completions, oldest first.
     */
    List<WorkCompletion> drain(final Side side)
    {
        fabric.progressAll();
        final List<WorkCompletion> out = new ArrayList<>(polledMeanwhile.get(side));
        polledMeanwhile.get(side).clear();
        out.addAll(cqs.get(side).poll(Integer.MAX_VALUE));
        return out;
    }
}
