package dev.rnicsim.verbs;

import java.util.EnumSet;
import java.util.Set;

/**
 * The bits of {@code enum ibv_qp_attr_mask} (libibverbs/verbs.h): which fields of an {@link QpAttr} an
 * {@code ibv_modify_qp} call sets. Which ones a transition requires and which it allows depends on the QP type and the
 * two states (the kernel's {@code ib_modify_qp_is_ok}, drivers/infiniband/core/verbs.c).
 *
 * <p>Immutable and thread safe.
 */
public enum QpAttrMask
{
    /** IBV_QP_STATE: the new state. */
    STATE(1),
    /** IBV_QP_CUR_STATE: the state the caller believes the QP is in (only from RTR, RTS, SQD or SQE). */
    CUR_STATE(1 << 1),
    /** IBV_QP_EN_SQD_ASYNC_NOTIFY. */
    EN_SQD_ASYNC_NOTIFY(1 << 2),
    /** IBV_QP_ACCESS_FLAGS: qp_access_flags. */
    ACCESS_FLAGS(1 << 3),
    /** IBV_QP_PKEY_INDEX. */
    PKEY_INDEX(1 << 4),
    /** IBV_QP_PORT: port_num. */
    PORT(1 << 5),
    /** IBV_QP_QKEY (UD). */
    QKEY(1 << 6),
    /** IBV_QP_AV: ah_attr, the primary path to the remote port. */
    AV(1 << 7),
    /** IBV_QP_PATH_MTU. */
    PATH_MTU(1 << 8),
    /** IBV_QP_TIMEOUT: local ACK timeout. */
    TIMEOUT(1 << 9),
    /** IBV_QP_RETRY_CNT. */
    RETRY_CNT(1 << 10),
    /** IBV_QP_RNR_RETRY. */
    RNR_RETRY(1 << 11),
    /** IBV_QP_RQ_PSN. */
    RQ_PSN(1 << 12),
    /** IBV_QP_MAX_QP_RD_ATOMIC: READs and atomics this QP may have outstanding as initiator. */
    MAX_QP_RD_ATOMIC(1 << 13),
    /** IBV_QP_ALT_PATH. */
    ALT_PATH(1 << 14),
    /** IBV_QP_MIN_RNR_TIMER. */
    MIN_RNR_TIMER(1 << 15),
    /** IBV_QP_SQ_PSN. */
    SQ_PSN(1 << 16),
    /** IBV_QP_MAX_DEST_RD_ATOMIC: READs and atomics this QP answers at once as responder. */
    MAX_DEST_RD_ATOMIC(1 << 17),
    /** IBV_QP_PATH_MIG_STATE. */
    PATH_MIG_STATE(1 << 18),
    /** IBV_QP_CAP. */
    CAP(1 << 19),
    /** IBV_QP_DEST_QPN. */
    DEST_QPN(1 << 20);

    private final int bit;

    QpAttrMask(final int bit)
    {
        this.bit = bit;
    }

    /**
     * @return its bit in {@code enum ibv_qp_attr_mask}.
     */
    public int bit()
    {
        return bit;
    }

    /**
     * @param mask attributes.
     * @return their bits.
     */
    public static int toBits(final Set<QpAttrMask> mask)
    {
        int bits = 0;
        for (final QpAttrMask m : mask)
        {
            bits |= m.bit;
        }
        return bits;
    }

    /**
     * @param bits a mask.
     * @return the attributes whose bits are set (bits of no attribute are dropped).
     */
    public static EnumSet<QpAttrMask> fromBits(final int bits)
    {
        final EnumSet<QpAttrMask> out = EnumSet.noneOf(QpAttrMask.class);
        for (final QpAttrMask m : values())
        {
            if ((bits & m.bit) != 0)
            {
                out.add(m);
            }
        }
        return out;
    }
}
