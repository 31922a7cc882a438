package dev.rnicsim.scenarios.charts;

import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;

/** Posts signaled RDMA WRITEs on a QP and reaps each completion before the next, for the charts that time them. */
final class RdmaWrites
{
    private final QueuePair qp;
    private final CompletionQueue cq;
    private long wrId;

    private RdmaWrites(final QueuePair qp, final CompletionQueue cq)
    {
        this.qp = qp;
        this.cq = cq;
    }

    /**
     * Connects an RC QP pair of two contexts as docs/java-api.md does: a CQ of 64 entries each, the responder's QP
     * granting REMOTE_WRITE, the requester's nothing.
     *
     * @return the writes of the requester's QP.
     */
    static RdmaWrites connect(final SimContext requester, final ProtectionDomain requesterPd,
        final SimContext responder, final ProtectionDomain responderPd)
    {
        final CompletionQueue cqA = requester.createCq(64);
        final CompletionQueue cqB = responder.createCq(64);
        final QueuePair qpA = requesterPd.createQp(QpInitAttr.rc(cqA));
        final QueuePair qpB = responderPd.createQp(QpInitAttr.rc(cqB));
        qpA.connect(qpB.address(), EnumSet.noneOf(Access.class));
        qpB.connect(qpA.address(), EnumSet.of(Access.REMOTE_WRITE));
        return new RdmaWrites(qpA, cqA);
    }

    /**
     * Writes a list of local buffers to a remote address and waits for its completion.
     *
     * @throws IllegalStateException when the WRITE did not complete with IBV_WC_SUCCESS.
     */
    void write(final List<Sge> from, final long remoteAddr, final int rkey)
    {
        qp.postSend(SendWr.write(++wrId, from, remoteAddr, rkey));
        final List<WorkCompletion> wcs = cq.poll(1);
        if (wcs.size() != 1 || wcs.get(0).status() != WcStatus.SUCCESS)
        {
            throw new IllegalStateException("RDMA WRITE to 0x" + Long.toHexString(remoteAddr) + " completed with "
                + wcs);
        }
    }
}
