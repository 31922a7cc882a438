package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;

/**
 * On iWARP the sink of an RDMA READ must grant REMOTE_WRITE (RFC 5040, RDMAP: the Read Response is a tagged DDP
 * message placed into the Data Sink STag the READ names, and the STag is checked as for an RDMA WRITE). cxgb4's adapter
 * refuses a sink without it: the READ completes with IBV_WC_LOC_ACCESS_ERR (T4_ERR_ACCESS, libcxgb4
 * {@code c4iw_poll_cq_one}), the QP goes to ERR and the kernel raises IBV_EVENT_QP_ACCESS_ERR ({@code
 * c4iw_ev_dispatch}); {@link ProviderRule#READ_SINK_NEEDS_REMOTE_WRITE}. The check is made when the READ starts, before
 * its request leaves (the adapter meets it when the response arrives; the responder's memory is only read, so nothing
 * the model shows differs). InfiniBand and RoCE devices ask LOCAL_WRITE of the sink only (the engine's own check).
 *
 * <p>A READ of zero bytes meets no sink: its Read Response places nothing, and iw_cxgb4's {@code build_rdma_read}
 * (drivers/infiniband/hw/cxgb4/qp.c) builds a READ of no SGE or of a zero-length one with the reserved STag 2 as both
 * source and sink and plen 0, so the adapter checks neither the source's nor the sink's STag (rdma-core's libcxgb4
 * takes the reserved STag for num_sge 0 and otherwise sends the SGE's lkey with plen 0, placing nothing). Such a READ
 * is not refused here, whatever its SGE's MR grants.
 */
final class ReadSinkRule
{
    private ReadSinkRule()
    {
    }

    /**
     * Fails the READ when the device asks REMOTE_WRITE of its sink and an SGE's MR lacks it.
     *
     * @param qp the requester.
     * @param wr the RDMA READ at the head of its send queue.
     * @return true when the READ was completed with IBV_WC_LOC_ACCESS_ERR (the caller reports ERROR).
     */
    static boolean refuses(final SimQp qp, final SendWr wr)
    {
        final SimDevice device = qp.simDevice();
        if (!device.profile().follows(ProviderRule.READ_SINK_NEEDS_REMOTE_WRITE) || readBytes(wr) == 0
            || !responderServes(qp, wr))
        {
            return false;
        }
        for (int i = 0; i < wr.sgList().size(); i++)
        {
            final Sge s = wr.sgList().get(i);
            final SimMr mr = device.memoryRegion(s.lkey());
            if (mr == null || mr.access().contains(Access.REMOTE_WRITE))
            {
                continue; // an unknown key is the engine's to refuse, with its own diagnosis
            }
            final String why = "sge[" + i + "] lkey 0x" + Integer.toHexString(s.lkey()) + " is the sink of the RDMA "
                + "READ, and " + device.profile().driver() + " places a READ response as a tagged message into the "
                + "sink's STag, which must grant REMOTE_WRITE (iWARP, RFC 5040): its MR has " + mr.access()
                + " (T4_ERR_ACCESS); fix: register the READ's sink with LOCAL_WRITE and REMOTE_WRITE on an iWARP "
                + "device";
            qp.completions.completeSend(wr, WcStatus.LOC_ACCESS_ERR, 0, Diagnoser.local(qp, wr,
                WcStatus.LOC_ACCESS_ERR, why));
            AsyncEventQueue.requesterAccessError(qp, "QP 0x" + Integer.toHexString(qp.qpNum()) + " went to ERR: "
                + why);
            return true;
        }
        return false;
    }

    /**
     * The sink is met only by a response: a READ the responder refuses (its QP grants no REMOTE_READ, the rkey names
     * no MR of it with REMOTE_READ over the range) is answered by the responder's NAK, and the engine reports that.
     * A window's rkey is left to the engine as well (the sink is then not checked).
     */
    private static boolean responderServes(final SimQp qp, final SendWr wr)
    {
        final SimQp peer = qp.requester.peer();
        if (peer == null || peer.closed || (peer.qpAccessBits & Access.REMOTE_READ.bit()) == 0)
        {
            return false;
        }
        final SimMr target = peer.simDevice().memoryRegion(wr.rkey());
        if (target == null || !target.access().contains(Access.REMOTE_READ))
        {
            return false;
        }
        final long length = readBytes(wr);
        final long offset = wr.remoteAddr() - target.iova();
        return offset >= 0 && offset + length <= target.lengthBytes();
    }

    /** @return the bytes the READ asks for: the sum of its SGEs' lengths. */
    private static long readBytes(final SendWr wr)
    {
        return wr.sgList().stream().mapToLong(Sge::lengthBytes).sum();
    }
}
