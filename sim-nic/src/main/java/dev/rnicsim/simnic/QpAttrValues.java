package dev.rnicsim.simnic;

import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpAttrMask;
import java.util.Set;

/**
 * What {@code ibv_modify_qp} does with the values of its narrow attributes: the fields of {@code struct ibv_qp_attr}
 * are wider than the fields of the QP context they end in, and the drivers differ in what they do with the bits left
 * over. Stateless.
 *
 * <ul>
 * <li>{@code sq_psn} and {@code rq_psn} (u32 in the ABI, 24 bits on the wire): masked to 24 bits, never refused. The
 * core's {@code _ib_modify_qp} (drivers/infiniband/core/verbs.c) masks both on an InfiniBand or RoCE port ("rq_psn
 * overflow, masking to 24 bits"), and rxe masks them again with {@code BTH_PSN_MASK} ({@code rxe_qp_from_attr}).</li>
 * <li>{@code timeout} (u8, a 5-bit code): above 31 is EINVAL where the driver checks it
 * ({@link ProviderRule#QP_TIMEOUT_CHECKED}: rxe {@code rxe_qp_chk_attr}); otherwise its low 5 bits are kept (mlx5
 * {@code __mlx5_ib_modify_qp} writes it with {@code MLX5_SET(ads, path, ack_timeout, ...)}, a 5-bit field the macro
 * masks; mlx4 shifts it into the 8-bit {@code ackto} byte, {@code timeout << 3}).</li>
 * <li>{@code retry_cnt}, {@code rnr_retry} (u8, 3-bit counts) and {@code min_rnr_timer} (u8, a 5-bit code): never
 * refused. mlx5 writes them with {@code MLX5_SET(qpc, qpc, retry_count / rnr_retry / min_rnr_nak, ...)}, which keeps
 * the field's low bits (3, 3 and 5), and {@code ibv_query_qp} reads those back from the QP context. Where the driver
 * keeps them whole ({@link ProviderRule#QP_RETRY_FIELDS_KEPT_WHOLE}: rxe {@code rxe_qp_from_attr} stores the u8 in
 * {@code qp->attr} and in its completer's counters), {@code retry_cnt} 9 means 9 retries, {@code rnr_retry} 9 means 9
 * (only 7 retries forever: {@code rxe_comp.c}), {@code ibv_query_qp} answers the value given, and the RNR NAK carries
 * {@code min_rnr_timer}'s low 5 bits (its AETH syndrome, {@code ~AETH_TYPE_MASK} in {@code rxe_resp.c}).</li>
 * <li>{@code max_rd_atomic} and {@code max_dest_rd_atomic}: kept rounded up to a power of two, as {@code
 * ibv_query_qp} then answers them (rxe {@code rxe_qp_from_attr}: {@code roundup_pow_of_two}; mlx5
 * {@code __mlx5_ib_modify_qp} writes {@code fls(n - 1)} into {@code log_sra_max} / {@code log_rra_max} and its query
 * answers {@code 1 << log}; mlx4 the same in its QP context's {@code params1}).</li>
 * <li>Values outside the C field's range (a negative int, or above 255 for a u8 field) cannot come from a C program;
 * the Java API refuses them with EINVAL.</li>
 * </ul>
 */
final class QpAttrValues
{
    /** The bits of a PSN (IBA 9.2: BTH PSN field). */
    static final int PSN_MASK = 0xffffff;
    /** Largest value of a u8 field of {@code struct ibv_qp_attr}. */
    private static final int U8_MAX = 0xff;

    private QpAttrValues()
    {
    }

    /**
     * @return why the values are refused (EINVAL), or null.
     */
    static String refusal(final DeviceProfile profile, final QpAttr a, final Set<QpAttrMask> mask)
    {
        final String u8 = u8Refusal(a, mask);
        if (u8 != null)
        {
            return u8;
        }
        if (mask.contains(QpAttrMask.TIMEOUT) && a.timeout() > 31 && profile.follows(ProviderRule.QP_TIMEOUT_CHECKED))
        {
            return "timeout=" + a.timeout() + " > 31 (" + profile.driver() + " checks the 5-bit local ACK timeout "
                + "code: rxe_qp_chk_attr); give 0-31 (4.096 us x 2^timeout; 0 waits forever)";
        }
        return null;
    }

    private static String u8Refusal(final QpAttr a, final Set<QpAttrMask> mask)
    {
        // In this order: the first field that does not fit is named.
        String bad = u8Refusal(mask, QpAttrMask.TIMEOUT, "timeout", a.timeout());
        bad = bad != null ? bad : u8Refusal(mask, QpAttrMask.RETRY_CNT, "retry_cnt", a.retryCnt());
        bad = bad != null ? bad : u8Refusal(mask, QpAttrMask.RNR_RETRY, "rnr_retry", a.rnrRetry());
        bad = bad != null ? bad : u8Refusal(mask, QpAttrMask.MIN_RNR_TIMER, "min_rnr_timer", a.minRnrTimer());
        bad = bad != null ? bad : u8Refusal(mask, QpAttrMask.MAX_QP_RD_ATOMIC, "max_rd_atomic", a.maxRdAtomic());
        return bad != null ? bad : u8Refusal(mask, QpAttrMask.MAX_DEST_RD_ATOMIC, "max_dest_rd_atomic",
            a.maxDestRdAtomic());
    }

    private static String u8Refusal(final Set<QpAttrMask> mask, final QpAttrMask field, final String name,
        final int v)
    {
        return (v < 0 || v > U8_MAX) && mask.contains(field)
            ? name + "=" + v + " does not fit the uint8_t field of struct ibv_qp_attr (0-255)" : null;
    }

    /**
     * @return a read/atomic depth as the QP keeps it: rounded up to a power of two, 0 staying 0, in the u8 field of
     *         the driver's {@code struct ib_qp_attr} (rxe {@code rxe_qp_from_attr} stores the rounded int in
     *         {@code qp->attr}: 129-255, which only rxe takes, are kept as 256 & 0xff = 0, which its query answers and
     *         its responder's {@code check_resource} then reads as no resource).
     */
    static int rdAtomicDepth(final int depth)
    {
        return depth <= 1 ? depth : (Integer.highestOneBit(depth - 1) << 1) & U8_MAX;
    }

    /** @return the PSN as the QP keeps it: its low 24 bits (core {@code _ib_modify_qp}, rxe {@code BTH_PSN_MASK}). */
    static int psn(final int psn)
    {
        return psn & PSN_MASK;
    }

    /** @return the local ACK timeout code as the QP keeps it (after {@link #refusal}): its low 5 bits. */
    static int timeout(final int timeout)
    {
        return timeout & 0x1f;
    }

    /**
     * @return {@code retry_cnt} or {@code rnr_retry} as the QP keeps and counts it: whole on a driver that keeps the
     *         u8 ({@link ProviderRule#QP_RETRY_FIELDS_KEPT_WHOLE}), else its low 3 bits.
     */
    static int retryCount(final DeviceProfile profile, final int count)
    {
        return profile.follows(ProviderRule.QP_RETRY_FIELDS_KEPT_WHOLE) ? count : count & 0x7;
    }

    /**
     * @return {@code min_rnr_timer} as {@code ibv_query_qp} answers it: whole on a driver that keeps the u8
     *         ({@link ProviderRule#QP_RETRY_FIELDS_KEPT_WHOLE}), else its low 5 bits.
     */
    static int minRnrTimerKept(final DeviceProfile profile, final int code)
    {
        return profile.follows(ProviderRule.QP_RETRY_FIELDS_KEPT_WHOLE) ? code : code & 0x1f;
    }

    /** @return the RNR timer code the responder's RNR NAK carries: the low 5 bits (IBA 9.7.5.2.8, table 45). */
    static int minRnrTimerOnTheWire(final int code)
    {
        return code & 0x1f;
    }
}
