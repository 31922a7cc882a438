package dev.rnicsim.verbs;

/**
 * The kinds of asynchronous event {@code ibv_get_async_event} returns, with the numbers of
 * {@code enum ibv_event_type} (rdma-core libibverbs/verbs.h) and the element each is affiliated with
 * (ibv_get_async_event(3): QP, CQ, SRQ, port or the device itself; IBA 11.6.3 affiliated and unaffiliated events).
 *
 * <p>Immutable and thread safe.
 */
public enum AsyncEventType
{
    /** IBV_EVENT_CQ_ERR (0): a completion found its CQ full and was lost (CQ overrun). */
    CQ_ERR(0, Element.CQ),
    /** IBV_EVENT_QP_FATAL (1): local work queue catastrophic error; the QP went to ERR. */
    QP_FATAL(1, Element.QP),
    /** IBV_EVENT_QP_REQ_ERR (2): invalid request local work queue error, an RC responder's class C error that no
     * receive WQE could report (IBA C9-222.1.1). */
    QP_REQ_ERR(2, Element.QP),
    /** IBV_EVENT_QP_ACCESS_ERR (3): local access violation work queue error, an RC responder's R_Key violation that
     * no receive WQE could report (IBA C9-222.1.1). */
    QP_ACCESS_ERR(3, Element.QP),
    /** IBV_EVENT_COMM_EST (4): communication established, the first message arrived at a QP in RTR. */
    COMM_EST(4, Element.QP),
    /** IBV_EVENT_SQ_DRAINED (5): the send queue of a QP in SQD is drained. */
    SQ_DRAINED(5, Element.QP),
    /** IBV_EVENT_PATH_MIG (6). */
    PATH_MIG(6, Element.QP),
    /** IBV_EVENT_PATH_MIG_ERR (7). */
    PATH_MIG_ERR(7, Element.QP),
    /** IBV_EVENT_DEVICE_FATAL (8): the device is unusable. */
    DEVICE_FATAL(8, Element.DEVICE),
    /** IBV_EVENT_PORT_ACTIVE (9). */
    PORT_ACTIVE(9, Element.PORT),
    /** IBV_EVENT_PORT_ERR (10). */
    PORT_ERR(10, Element.PORT),
    /** IBV_EVENT_LID_CHANGE (11). */
    LID_CHANGE(11, Element.PORT),
    /** IBV_EVENT_PKEY_CHANGE (12). */
    PKEY_CHANGE(12, Element.PORT),
    /** IBV_EVENT_SM_CHANGE (13). */
    SM_CHANGE(13, Element.PORT),
    /** IBV_EVENT_SRQ_ERR (14). */
    SRQ_ERR(14, Element.SRQ),
    /** IBV_EVENT_SRQ_LIMIT_REACHED (15): the receives of an SRQ dropped below its armed limit. */
    SRQ_LIMIT_REACHED(15, Element.SRQ),
    /** IBV_EVENT_QP_LAST_WQE_REACHED (16): a QP attached to an SRQ is in ERR and takes no more receives from it. */
    QP_LAST_WQE_REACHED(16, Element.QP),
    /** IBV_EVENT_CLIENT_REREGISTER (17). */
    CLIENT_REREGISTER(17, Element.PORT),
    /** IBV_EVENT_GID_CHANGE (18). */
    GID_CHANGE(18, Element.PORT),
    /** IBV_EVENT_WQ_FATAL (19). */
    WQ_FATAL(19, Element.WQ);

    /** The kind of object an event is affiliated with ({@code union element} of {@code struct ibv_async_event}). */
    public enum Element
    {
        /** {@code element.qp}. */
        QP,
        /** {@code element.cq}. */
        CQ,
        /** {@code element.srq}. */
        SRQ,
        /** {@code element.wq}. */
        WQ,
        /** {@code element.port_num}. */
        PORT,
        /** No element: the device. */
        DEVICE
    }

    private final int code;
    private final Element element;

    AsyncEventType(final int code, final Element element)
    {
        this.code = code;
        this.element = element;
    }

    /**
     * @return the value of {@code enum ibv_event_type}.
     */
    public int code()
    {
        return code;
    }

    /**
     * @return the kind of object the event is affiliated with.
     */
    public Element element()
    {
        return element;
    }

    /**
     * @return the C name, e.g. {@code IBV_EVENT_SRQ_LIMIT_REACHED}.
     */
    public String cName()
    {
        return "IBV_EVENT_" + name();
    }

    /**
     * @param word a name with or without {@code IBV_EVENT_}, e.g. {@code COMM_EST}.
     * @return the type, or null when the word names none.
     */
    public static AsyncEventType parse(final String word)
    {
        final String n = word.startsWith("IBV_EVENT_") ? word.substring(10) : word;
        for (final AsyncEventType t : values())
        {
            if (t.name().equals(n))
            {
                return t;
            }
        }
        return null;
    }
}
