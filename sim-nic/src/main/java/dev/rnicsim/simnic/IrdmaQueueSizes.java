package dev.rnicsim.simnic;

import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;

/**
 * The queues libirdma makes for a QP on a generation-2 device (E810) and what it writes back
 * ({@link ProviderRule#QP_CAPS_FROM_IRDMA_QUANTA}), from rdma-core providers/irdma/uverbs.c {@code irdma_ucreate_qp}
 * and the shared queue code of drivers/infiniband/hw/irdma/uk.c:
 * <ul>
 * <li>a queue is counted in 32-byte quanta; a WQE takes {@code 2^shift} of them ({@code irdma_get_wqe_shift}): 1 for
 * one SGE and at most 8 inline bytes, 2 for fewer than 4 SGEs and at most 39 inline bytes, 4 for fewer than 8 SGEs and
 * at most 101, else 8. The send side counts one SGE more than asked (room for immediate data,
 * {@code irdma_uk_calc_depth_shift_sq}); the receive side its SGEs alone;</li>
 * <li>the depth ({@code irdma_get_sqdepth}, {@code irdma_get_rqdepth}): the work requests' quanta plus those reserved
 * ({@code IRDMA_SQ_RSVD} 258 on the send side, {@code IRDMA_RQ_RSVD} 1 on the receive side), rounded up to a power of
 * two, at least 8 WQEs ({@code min_hw_wq_size}); a depth above the hardware's 32768 quanta
 * ({@code max_hw_wq_quanta}, {@code max_hw_rq_quanta}) is EINVAL, and so is a count above them before any sizing;</li>
 * <li>{@code irdma_ucreate_qp} writes back {@code (depth - reserved) >> shift} as {@code max_send_wr} and
 * {@code max_recv_wr}; the SGEs and inline bytes stay as asked.</li>
 * </ul>
 * The depth is the limit, not {@code max_qp_wr} (8127 on E810: {@code (32768 - 258) >> 2}, the most a 4-quanta WQE
 * queue holds): a QP of one SGE may ask for more work requests than max_qp_wr. Stateless.
 */
final class IrdmaQueueSizes
{
    /** {@code IRDMA_SQ_RSVD}: quanta of the send queue the provider keeps. */
    static final int SQ_RESERVED_QUANTA = 258;
    /** {@code IRDMA_RQ_RSVD}. */
    static final int RQ_RESERVED_QUANTA = 1;
    /** {@code min_hw_wq_size} ({@code ICRDMA_MIN_WQ_SIZE}): the fewest WQEs of a queue. */
    static final int MIN_WQES = 8;
    /** {@code max_hw_wq_quanta} and {@code max_hw_rq_quanta} of generation 2 (E810). */
    static final int MAX_QUANTA = 32768;

    private IrdmaQueueSizes()
    {
    }

    /** {@code irdma_get_wqe_shift} on generation 2. */
    static int wqeShift(final int sges, final int inlineBytes)
    {
        if (sges <= 1 && inlineBytes <= 8)
        {
            return 0;
        }
        if (sges < 4 && inlineBytes <= 39)
        {
            return 1;
        }
        return sges < 8 && inlineBytes <= 101 ? 2 : 3;
    }

    /** The queue's depth in quanta ({@code irdma_get_sqdepth} / {@code irdma_get_rqdepth}), unchecked. */
    static long depthQuanta(final long wrs, final int shift, final int reserved)
    {
        return Math.max(QpCreation.pow2((wrs << shift) + reserved), (long) MIN_WQES << shift);
    }

    private static int sendShift(final QpCap c)
    {
        return wqeShift(Math.max(0, c.maxSendSge()) + 1, Math.max(0, c.maxInlineDataBytes()));
    }

    private static int recvShift(final QpCap c)
    {
        return wqeShift(Math.max(0, c.maxRecvSge()), 0);
    }

    /**
     * @param c     the capacities asked for, checked.
     * @param onSrq the QP takes its receives from an SRQ (its receive caps are then reported as given).
     * @return what libirdma writes back into {@code attr->cap}.
     */
    static QpCap reported(final QpCap c, final boolean onSrq)
    {
        final int sqShift = sendShift(c);
        final long sq = depthQuanta(Math.max(0, c.maxSendWr()), sqShift, SQ_RESERVED_QUANTA);
        final int rqShift = recvShift(c);
        final long rq = depthQuanta(Math.max(0, c.maxRecvWr()), rqShift, RQ_RESERVED_QUANTA);
        final int recvWr = onSrq ? c.maxRecvWr() : (int) ((rq - RQ_RESERVED_QUANTA) >> rqShift);
        return new QpCap((int) ((sq - SQ_RESERVED_QUANTA) >> sqShift), recvWr, c.maxSendSge(), c.maxRecvSge(),
            c.maxInlineDataBytes());
    }

    /**
     * {@code irdma_ucreate_qp}'s refusals of the work-request counts (EINVAL, nothing created): a count above the
     * hardware's quanta, then a queue of more quanta than that. Only under {@link
     * ProviderRule#QP_CAPS_FROM_IRDMA_QUANTA}, where they take the place of the max_qp_wr check.
     *
     * @param verb  the verb, for the message.
     * @param attr  the QP's init attributes.
     * @param onSrq the QP takes its receives from an SRQ (no receive queue is sized).
     */
    static void check(final String verb, final QpInitAttr attr, final boolean onSrq)
    {
        final QpCap c = attr.cap();
        if (attr.type() == QpType.XRC_RECV)
        {
            return;
        }
        final long sendWr = Integer.toUnsignedLong(c.maxSendWr());
        final long recvWr = onSrq ? 0 : Integer.toUnsignedLong(c.maxRecvWr());
        if (sendWr > MAX_QUANTA || recvWr > MAX_QUANTA)
        {
            throw Errors.invalid(verb, "max_send_wr=" + sendWr + " max_recv_wr=" + recvWr + " must be at most the "
                + "hardware's " + MAX_QUANTA + " quanta (libirdma irdma_ucreate_qp: max_hw_wq_quanta, "
                + "max_hw_rq_quanta); ask for fewer work requests; nothing was created");
        }
        final int sqShift = sendShift(c);
        final long sq = depthQuanta(sendWr, sqShift, SQ_RESERVED_QUANTA);
        if (sq > MAX_QUANTA)
        {
            throw Errors.invalid(verb, "max_send_wr=" + sendWr + " send WQEs of " + (1 << sqShift) + " quanta (for "
                + c.maxSendSge() + " SGEs, one more for immediate data, and " + c.maxInlineDataBytes()
                + " inline bytes) and the " + SQ_RESERVED_QUANTA + " reserved make a queue of " + sq + " quanta, more "
                + "than the hardware's " + MAX_QUANTA + " (irdma_get_sqdepth); ask for at most "
                + ((MAX_QUANTA - SQ_RESERVED_QUANTA) >> sqShift) + " work requests of this size, or fewer SGEs or "
                + "inline bytes per work request; nothing was created");
        }
        final int rqShift = recvShift(c);
        final long rq = depthQuanta(recvWr, rqShift, RQ_RESERVED_QUANTA);
        if (rq > MAX_QUANTA)
        {
            throw Errors.invalid(verb, "max_recv_wr=" + recvWr + " receive WQEs of " + (1 << rqShift) + " quanta (for "
                + c.maxRecvSge() + " SGEs) and the reserved one make a queue of " + rq + " quanta, more than the "
                + "hardware's " + MAX_QUANTA + " (irdma_get_rqdepth); ask for at most "
                + ((MAX_QUANTA - RQ_RESERVED_QUANTA) >> rqShift) + " receive work requests of this size, or fewer "
                + "SGEs; nothing was created");
        }
    }
}
