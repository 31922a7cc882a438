package dev.rnicsim.simnic;

import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WorkCompletion;

/**
 * The send queue's slots as a provider that frees them at poll time counts them ({@link
 * ProviderRule#SEND_QUEUE_FREED_AT_POLL}). The provider library keeps the send queue in user memory and learns that a
 * WQE is done only from the completion it polls: {@code ibv_poll_cq} moves the queue's tail past the WQE that
 * completion names and every WQE before it (libmlx5 {@code mlx5_parse_cqe} sets {@code wq->tail} from {@code
 * wqe_head}; libmlx4 {@code mlx4_poll_one}; libirdma {@code irdma_uk_cq_poll_cmpl}, {@code IRDMA_RING_SET_TAIL}), and {@code
 * ibv_post_send} is ENOMEM when head minus tail reaches the queue's size ({@code mlx5_wq_overflow}, mlx4 {@code
 * wq_overflow}, {@code IRDMA_RING_FULL_ERR}). So a WQE holds its slot until a completion of it or of a later WQE is
 * polled: work that ended but whose completion waits in the CQ, and unsignaled work requests with no signaled one
 * polled after them, still fill the queue. The soft drivers (rxe, siw) free a slot when the kernel finishes the WQE
 * instead, which is {@link SimQp#sendsWaiting()}.
 *
 * <p>WQEs are counted in posting order: {@link CompletionOrder} numbers them as they are posted and ends them in that
 * order; a completion written to the CQ marks how many WQEs had ended with it, and polling it frees up to the mark.
 *
 * <p>Not thread safe: driven by the fabric's engine.
 */
final class SendSlots
{
    /** WQEs ended, in posting order, since the QP was created (a reset counts the WQEs it drops as ended). */
    private long ended;
    /** WQEs whose slots a polled completion gave back. */
    private long freed;
    /**
     * For each send completion in the CQ not yet polled, oldest first: the WQEs ended up to and including its own (a
     * ring of {@link #markCount} from {@link #markHead}, its length a power of two, grown when full).
     */
    private long[] marks = new long[8];
    private int markHead;
    private int markCount;

    /**
     * A completion left a CQ of the device through {@code ibv_poll_cq}: a send completion frees its QP's slots up to
     * its WQE (a receive completion frees nothing of the send queue).
     *
     * @param device the CQ's device.
     * @param wc     the completion polled.
     * @param last   the QP of the CQ's last send completion polled, or null: most polls find their QP there without the
     *               device's table (a QP destroyed since is looked up again, as its number may have been reused).
     * @return the QP of this completion, or {@code last} when it names none (a receive, or a QP gone).
     */
    static SimQp polled(final SimDevice device, final WorkCompletion wc, final SimQp last)
    {
        if (wc.opcode() == WcOpcode.RECV || wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM)
        {
            return last;
        }
        final SimQp qp = last != null && last.num == wc.qpNum() && !last.closed ? last
            : device.objects().qp(wc.qpNum());
        if (qp == null)
        {
            return last;
        }
        qp.completions.slots.polled();
        return qp;
    }

    /**
     * The next WQE in posting order ended.
     *
     * @param wroteCompletion true when its completion went into the CQ.
     */
    void ended(final boolean wroteCompletion)
    {
        ended++;
        if (wroteCompletion)
        {
            if (markCount == marks.length)
            {
                final long[] grown = new long[marks.length * 2];
                for (int i = 0; i < markCount; i++)
                {
                    grown[i] = marks[(markHead + i) & (marks.length - 1)];
                }
                marks = grown;
                markHead = 0;
            }
            marks[(markHead + markCount) & (marks.length - 1)] = ended;
            markCount++;
        }
    }

    /**
     * The process polled the oldest send completion of the QP still in the CQ: its WQE and those before it free their
     * slots.
     */
    void polled()
    {
        if (markCount > 0)
        {
            freed = Math.max(freed, marks[markHead]);
            markHead = (markHead + 1) & (marks.length - 1);
            markCount--;
        }
    }

    /**
     * The QP went to RESET: the queue is empty again (the provider reinitialises it) and its completions still in
     * the CQ, if any are left, free nothing.
     *
     * @param posted WQEs posted since the QP was created.
     */
    void reset(final long posted)
    {
        ended = posted;
        freed = posted;
        markHead = 0;
        markCount = 0;
    }

    /**
     * @param posted WQEs posted since the QP was created.
     * @return the WQEs holding a slot: posted and not yet given back by a polled completion.
     */
    int held(final long posted)
    {
        return (int)(posted - freed);
    }

    /**
     * @param posted WQEs posted since the QP was created.
     * @return the WQEs that ended but still hold their slots, no completion of theirs or of a later WQE polled yet.
     */
    int endedUnpolled(final long posted)
    {
        return (int)(Math.min(ended, posted) - freed);
    }
}
