package dev.rnicsim.ibverbs;

import dev.rnicsim.simnic.ProviderRule;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.verbs.AtomicCap;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.QpType;

/**
 * The provider's checks at post time that travel to the library with a new QP ({@code WIRE_POST_*} in wire.h), so
 * that {@code ibv_post_send} returns their errno as the provider does; the model makes the same checks in sim-nic's
 * {@code PostChecks}. Stateless.
 */
final class PostRules
{
    private static final int EINVAL = 22;
    private static final int ENOMEM = 12;

    private PostRules()
    {
    }

    /**
     * @return the {@code WIRE_POST_*} bits of a QP of this type on this device: a misaligned atomic refused at post
     *         (rxe, {@link ProviderRule#ATOMIC_ALIGNMENT_AT_POST}), atomics refused at post on a QP without them; and
     *         the provider's clean of the CQs when the QP goes to RESET ({@link ProviderRule#RESET_CLEANS_CQ}); ATOMIC_WRITE
     *         on an RC QP of a device with IBV_DEVICE_ATOMIC_WRITE (EOPNOTSUPP elsewhere, PlacementOps' rule); the errno
     *         of more SGEs than max_send_sge ({@link ProviderRule#SEND_SGE_OVERFLOW_ENOMEM}) and of a receive posted to
     *         a QP with an SRQ ({@link ProviderRule#RECV_ON_SRQ_QP_ENOMEM}); a negative num_sge posted with no SGE
     *         ({@link ProviderRule#NUM_SGE_COMPARED_SIGNED}); the narrow fields of ibv_modify_qp kept whole
     *         ({@link ProviderRule#QP_RETRY_FIELDS_KEPT_WHOLE}, {@link ProviderRule#DEST_QPN_KEPT_WHOLE}) and read/atomic
     *         depths of 0 kept as 1 ({@link ProviderRule#RD_ATOMIC_ZERO_KEPT_AS_ONE}), and the attributes kept
     *         through RESET ({@link ProviderRule#RESET_KEEPS_QP_ATTRS}), which the library's ibv_query_qp answers.
     */
    static int of(final SimDevice device, final QpType type)
    {
        return (device.profile().follows(ProviderRule.ATOMIC_ALIGNMENT_AT_POST) ? Wire.POST_ATOMIC_ALIGNMENT : 0)
            | (atomicsDisabled(device, type) ? Wire.POST_ATOMICS_DISABLED : 0)
            | (device.profile().follows(ProviderRule.RESET_CLEANS_CQ) ? Wire.POST_RESET_CLEANS_CQ : 0)
            | (type == QpType.RC && device.profile().attributes().has(DeviceCap.ATOMIC_WRITE)
                ? Wire.POST_ATOMIC_WRITE : 0)
            | (device.profile().follows(ProviderRule.SEND_SGE_OVERFLOW_ENOMEM) ? Wire.POST_SGE_OVERFLOW_ENOMEM : 0)
            | (device.profile().follows(ProviderRule.RECV_ON_SRQ_QP_ENOMEM) ? Wire.POST_RECV_SRQ_ENOMEM : 0)
            | (device.profile().follows(ProviderRule.NUM_SGE_COMPARED_SIGNED) ? Wire.POST_SGE_COUNT_SIGNED : 0)
            | (device.profile().follows(ProviderRule.QP_RETRY_FIELDS_KEPT_WHOLE) ? Wire.POST_QP_FIELDS_WHOLE : 0)
            | (device.profile().follows(ProviderRule.DEST_QPN_KEPT_WHOLE) ? Wire.POST_DEST_QPN_WHOLE : 0)
            | (device.profile().follows(ProviderRule.RD_ATOMIC_ZERO_KEPT_AS_ONE) ? Wire.POST_RD_ATOMIC_ZERO_AS_ONE : 0)
            | (device.profile().follows(ProviderRule.RESET_KEEPS_QP_ATTRS) ? Wire.POST_RESET_KEEPS_ATTRS : 0);
    }

    /**
     * @return the errno of inline data past max_inline_data: ENOMEM on mlx5 ({@code set_data_inl_seg}), else EINVAL.
     */
    static int inlineOverflowErrno(final SimDevice device)
    {
        return device.profile().follows(ProviderRule.INLINE_OVERFLOW_ENOMEM) ? ENOMEM : EINVAL;
    }

    /**
     * Whether the provider refuses atomics on this QP at post (EOPNOTSUPP): mlx5 enables them on every QP when it
     * creates it, from the context's atomic_cap being ATOMIC_HCA, whatever the QP's qp_access_flags
     * (providers/mlx5/verbs.c {@code create_qp}, checked in qp.c {@code _mlx5_post_send}).
     */
    private static boolean atomicsDisabled(final SimDevice device, final QpType type)
    {
        return device.profile().follows(ProviderRule.ATOMICS_NEED_QP_ATOMIC_ACCESS) && type != QpType.UD
            && device.profile().attributes().atomicCap() != AtomicCap.HCA;
    }
}
