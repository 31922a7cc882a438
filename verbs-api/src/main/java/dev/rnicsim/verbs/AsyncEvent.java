package dev.rnicsim.verbs;

import java.util.Objects;

/**
 * One asynchronous event as {@code ibv_get_async_event} returns it ({@code struct ibv_async_event}): its type and
 * the element it is affiliated with. Every event returned must be acknowledged with
 * {@link Context#ackAsyncEvent(AsyncEvent)} (ibv_get_async_event(3): {@code ibv_destroy_qp}, {@code _cq} and
 * {@code _srq} wait until the events of their object are acknowledged).
 *
 * <p>Immutable and thread safe.
 *
 * @param type    the event type.
 * @param qp      the QP of a QP event, else null.
 * @param cq      the CQ of a CQ event, else null.
 * @param srq     the SRQ of an SRQ event, else null.
 * @param portNum the port of a port event, else 0.
 * @param seq     its place in the context's event order, from 1.
 * @param cause   why the model raised it (the rule and the objects involved), for people.
 */
public record AsyncEvent(AsyncEventType type, QueuePair qp, CompletionQueue cq, SharedReceiveQueue srq, int portNum,
                         long seq, String cause)
{
    /**
     * @throws NullPointerException when the type or the cause is null, or the element the type names is missing.
     */
    public AsyncEvent
    {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(cause, "cause");
        switch (type.element())
        {
            case QP -> Objects.requireNonNull(qp, "qp");
            case CQ -> Objects.requireNonNull(cq, "cq");
            case SRQ -> Objects.requireNonNull(srq, "srq");
            default ->
            {
            }
        }
    }

    /**
     * @return the element for people: {@code QP 0x11}, {@code CQ}, {@code SRQ}, {@code port 1} or {@code device}.
     */
    public String element()
    {
        return switch (type.element())
        {
            case QP -> "QP 0x" + Integer.toHexString(qp.qpNum());
            case CQ -> "CQ";
            case SRQ -> "SRQ";
            case WQ -> "WQ";
            case PORT -> "port " + portNum;
            case DEVICE -> "device";
        };
    }
}
