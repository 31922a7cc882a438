package dev.rnicsim.simnic;

/**
 * What the driver keeps of {@code dest_qp_num} and of a read/atomic depth of 0 given to {@code ibv_modify_qp}, and
 * what reaches the wire. Stateless.
 *
 * <ul>
 * <li>{@code dest_qp_num} (u32 in {@code struct ibv_qp_attr}, 24 bits in the BTH, IBA 9.2): no layer refuses a number
 * of 2^24 or more (the core's {@code ib_modify_qp_is_ok} and uverbs' {@code modify_qp} copy it as it is). mlx5 writes
 * it with {@code MLX5_SET(qpc, qpc, remote_qpn, ...)}, a 24-bit field the macro masks, and its query answers
 * {@code MLX5_GET(qpc, qpc, remote_qpn)}: the low 24 bits (older kernels wrote the whole u32 into
 * {@code log_pg_sz_remote_qpn} and answered it {@code & 0xffffff}). rxe ({@link ProviderRule#DEST_QPN_KEPT_WHOLE})
 * stores the u32 in {@code qp->attr} ({@code rxe_qp_from_attr}), so {@code ibv_query_qp} answers it whole
 * ({@code rxe_qp_to_attr}), while {@code bth_init} puts {@code qpn & BTH_QPN_MASK} in the packet. On every driver the
 * packets go to the QP the low 24 bits name. The other drivers are modelled as mlx5 (a 24-bit QP context field,
 * assumed).</li>
 * <li>{@code max_rd_atomic} and {@code max_dest_rd_atomic} of 0: mlx5 and mlx4
 * ({@link ProviderRule#RD_ATOMIC_ZERO_KEPT_AS_ONE}) write the depth as a log2 into the QP context only when it is not
 * 0 ({@code __mlx5_ib_modify_qp}: {@code if (attr->max_dest_rd_atomic) MLX5_SET(qpc, qpc, log_rra_max, ...)}, the
 * same for {@code log_sra_max}; mlx4 {@code __mlx4_ib_modify_qp} the same in {@code params1} / {@code params2}), so
 * the field stays log 0: the QP has one resource, the responder answers one RDMA READ or atomic at a time, and the
 * query answers {@code 1 << log_rra_max} = 1. rxe keeps 0 and its responder refuses READs and atomics
 * ({@link ResponderResources}).</li>
 * </ul>
 */
final class QpContextFields
{
    /** The bits of a QP number (IBA 9.2: BTH DestQP). */
    static final int QPN_MASK = 0xffffff;

    private QpContextFields()
    {
    }

    /**
     * @param profile the QP's device profile.
     * @param destQpNum the {@code dest_qp_num} given.
     * @return the number the QP keeps and {@code ibv_query_qp} answers: whole on rxe
     *         ({@link ProviderRule#DEST_QPN_KEPT_WHOLE}), else its low 24 bits.
     */
    static int destQpNumKept(final DeviceProfile profile, final int destQpNum)
    {
        return profile.follows(ProviderRule.DEST_QPN_KEPT_WHOLE) ? destQpNum : destQpNum & QPN_MASK;
    }

    /**
     * @param destQpNum the number the QP keeps.
     * @return the QP number its packets carry (the BTH's 24 bits: rxe {@code bth_init}, the QP context's field).
     */
    static int destQpNumOnTheWire(final int destQpNum)
    {
        return destQpNum & QPN_MASK;
    }

    /**
     * @param profile the QP's device profile.
     * @param depth the {@code max_rd_atomic} or {@code max_dest_rd_atomic} given.
     * @return the depth the QP keeps and {@code ibv_query_qp} answers: rounded up to a power of two
     *         ({@link QpAttrValues#rdAtomicDepth}), and 0 kept as 1 on mlx4 and mlx5
     *         ({@link ProviderRule#RD_ATOMIC_ZERO_KEPT_AS_ONE}).
     */
    static int rdAtomicDepthKept(final DeviceProfile profile, final int depth)
    {
        if (depth == 0 && profile.follows(ProviderRule.RD_ATOMIC_ZERO_KEPT_AS_ONE))
        {
            return 1;
        }
        return QpAttrValues.rdAtomicDepth(depth);
    }
}
