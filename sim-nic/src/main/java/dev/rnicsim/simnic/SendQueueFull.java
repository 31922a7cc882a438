package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.PostException;

/**
 * {@code ibv_post_send} on a full send queue: ENOMEM (libmlx5 {@code mlx5_wq_overflow}, libmlx4 {@code wq_overflow},
 * librxe's {@code queue_full}), with words that name what holds the slots and how to free them.
 */
final class SendQueueFull
{
    private SendQueueFull()
    {
    }

    /**
     * @param verb the verb.
     * @param i    the index of the work request in the posted list.
     * @param qp   the QP whose send queue is full.
     * @return the failure to throw.
     */
    static PostException refusal(final String verb, final int i, final SimQp qp)
    {
        final int max = qp.cap.maxSendWr();
        if (!qp.device.profile().follows(ProviderRule.SEND_QUEUE_FREED_AT_POLL))
        {
            return new PostException(verb, Errno.ENOMEM.code(), i, "send queue full: " + qp.sendsWaiting()
                + " work requests waiting = max_send_wr=" + max
                + "; poll completions first or create the QP with a larger max_send_wr");
        }
        final CompletionEngine c = qp.completions;
        return new PostException(verb, Errno.ENOMEM.code(), i, "send queue full: " + c.sendSlotsHeld()
            + " work requests hold its slots = max_send_wr=" + max + " (" + qp.sendsWaiting() + " not finished, "
            + c.slots.endedUnpolled(c.order.postedCount()) + " finished whose completion, or a later one's, was not "
            + "polled): the " + qp.device.profile().driver() + " provider frees a slot only when ibv_poll_cq returns "
            + "the completion of its work request or of a later one (the queue's tail moves at poll time), so an "
            + "unsignaled work request holds its slot until a signaled one after it is polled; poll the send CQ, "
            + "signal at least one work request in every max_send_wr, or create the QP with a larger max_send_wr");
    }
}
