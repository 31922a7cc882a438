package dev.rnicsim.simnic;

import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.WrOpcode;
import java.util.Set;

/**
 * What {@code ibv_create_qp} writes back into {@code ibv_qp_init_attr.cap}, and so what the QP holds: the provider
 * sizes its queues from the capacities asked for and reports what it granted, at least as much as was asked
 * (rdma-core tests/test_qp.py {@code verify_qp_attrs} checks every cap field is at least the one asked for). The
 * queues then hold exactly what was reported: a send queue takes {@code max_send_wr} work requests, each of up to
 * {@code max_send_sge} SGEs or {@code max_inline_data} inline bytes. A profile property, by the provider rules:
 * <ul>
 * <li>{@link ProviderRule#QP_CAPS_FROM_MLX5_WQE_SIZES} (libmlx5 {@code create_qp} after {@code mlx5_calc_sq_size} and
 * {@code mlx5_calc_rq_size}, providers/mlx5/verbs.c): the send WQE is the transport's segments ({@link
 * #mlx5SendOverheadBytes}) plus 16 bytes per SGE, or plus the 4-byte inline header and the inline data rounded to 16
 * when larger, rounded up to 64-byte blocks; {@code max_inline_data} is that WQE less the segments and the inline
 * header; the queue is {@code max_send_wr} WQEs rounded up to a power of two bytes, and {@code max_send_wr} the WQEs
 * it holds ({@code sq.max_post}); {@code max_send_sge} stays as asked. A send WQE of the segments alone (0 SGEs, 0
 * inline bytes) leaves {@code max_inline_data} at -4 (libmlx5's int; 4294967292 in {@code attr->cap}). A receive WQE is 16 bytes per SGE rounded up to a
 * power of two, the queue a power of two of them and at least 64 bytes; {@code max_recv_wr} is its WQE count and
 * {@code max_recv_sge} the SGEs a WQE holds. A queue of 0 work requests keeps the fields of that side as asked (the
 * sizing returns early), but a receive queue of 0 reports 0 SGEs.</li>
 * <li>{@link ProviderRule#QP_CAPS_FROM_RXE_QUEUES} (kernel rxe_qp.c {@code rxe_init_sq}, {@code rxe_init_rq}): a send
 * WQE has room for the larger of {@code max_send_sge} SGEs of 16 bytes and {@code max_inline_data} bytes, and both
 * are reported as that room ({@code max_send_sge} = room / 16, {@code max_inline_data} = room); the current rxe
 * also reports the queues' depth, {@code roundup_pow_of_two(n + 1) - 1} ({@code rxe_queue_init} keeps one slot
 * empty), where the kernels before the FLUSH access flags ({@link ProviderRule#KERNEL_WITHOUT_FLUSH_ACCESS},
 * {@code rxe-legacy}) wrote back only the SGEs and the inline bytes ({@code rxe_qp_init_req}) and the model holds the
 * work requests reported.</li>
 * <li>{@link ProviderRule#QP_CAPS_FROM_MLX4_WQE_SIZES} (libmlx4 {@code mlx4_calc_sq_wqe_size},
 * {@code mlx4_set_sq_sizes}; the kernel's {@code set_rq_size}): see {@link Mlx4QueueSizes}; RC 10/20/3/3/32 gives
 * 15/32/6/4/88.</li>
 * <li>{@link ProviderRule#QP_CAPS_FROM_IRDMA_QUANTA} (libirdma {@code irdma_ucreate_qp}): see {@link
 * IrdmaQueueSizes}; RC 10/20/3/3/32 gives 63/31/3/3/32.</li>
 * <li>a QP taking its receives from an SRQ: where the provider gives it no receive queue ({@link
 * ProviderRule#RECV_ON_SRQ_QP_ENOMEM}: libmlx4 {@code mlx4_create_qp_ex} zeroes {@code max_recv_wr} and
 * {@code max_recv_sge}, libmlx5's {@code mlx5_calc_rcv_wqe} sizes no receive WQE) both read 0; elsewhere they are
 * reported as asked (rxe: {@code rxe_qp_init_resp} leaves them).</li>
 * <li>every other driver: as asked (hns, bnxt_re, siw, cxgb4, qedr, erdma, mana, hfi1: their providers' sizing is
 * not modelled; bnxt_re's kernel {@code bnxt_re_init_sq_attr} and {@code bnxt_re_init_rq_attr} size deeper queues
 * but write back only a clamped {@code max_send_sge}).</li>
 * </ul>
 * XRC QPs keep the capacities asked for ({@link XrcRules}). Stateless.
 */
final class QpCaps
{
    /** {@code struct mlx5_wqe_ctrl_seg}. */
    static final int MLX5_CTRL_SEG_BYTES = 16;
    /** {@code struct mlx5_wqe_raddr_seg}, and {@code struct mlx5_wqe_atomic_seg} of the same size. */
    static final int MLX5_RADDR_SEG_BYTES = 16;
    /** A UMR for BIND_MW or LOCAL_INV: {@code mlx5_wqe_umr_ctrl_seg} 48, {@code mlx5_wqe_mkey_context_seg} 64 and
     * at least 64 bytes of KLMs ({@code _sq_overhead}). */
    static final int MLX5_UMR_BYTES = 48 + 64 + 64;
    /** {@code struct mlx5_wqe_datagram_seg}: the 48-byte address vector of a UD send. */
    static final int MLX5_DATAGRAM_SEG_BYTES = 48;
    /** {@code struct mlx5_wqe_data_seg}, one SGE. */
    static final int MLX5_DATA_SEG_BYTES = 16;
    /** {@code struct mlx5_wqe_inl_data_seg}, the inline data's header. */
    static final int MLX5_INLINE_HEADER_BYTES = 4;
    /** {@code MLX5_SEND_WQE_BB}, the send WQE's basic block. */
    static final int MLX5_SEND_WQE_BB = 64;
    /** {@code struct ib_sge} in rxe's WQE. */
    static final int RXE_SGE_BYTES = 16;

    private QpCaps()
    {
    }

    /**
     * @param profile the device's profile.
     * @param attr    the QP's init attributes, checked.
     * @return the capacities the provider reports for them, which the QP then holds.
     */
    static QpCap reported(final DeviceProfile profile, final QpInitAttr attr)
    {
        final QpCap c = attr.cap();
        final QpType type = attr.type();
        if (type == QpType.XRC_SEND || type == QpType.XRC_RECV)
        {
            return c;
        }
        final boolean onSrq = attr.srq() != null;
        final boolean noRq = onSrq && profile.follows(ProviderRule.RECV_ON_SRQ_QP_ENOMEM);
        final int recvWr = noRq ? 0 : c.maxRecvWr();
        final int recvSge = noRq ? 0 : c.maxRecvSge();
        if (profile.follows(ProviderRule.QP_CAPS_FROM_MLX5_WQE_SIZES))
        {
            return mlx5(c, type, attr.sendOps(), recvWr, recvSge);
        }
        if (profile.follows(ProviderRule.QP_CAPS_FROM_MLX4_WQE_SIZES))
        {
            return Mlx4QueueSizes.reported(c, type, noRq);
        }
        if (profile.follows(ProviderRule.QP_CAPS_FROM_IRDMA_QUANTA))
        {
            return IrdmaQueueSizes.reported(c, onSrq);
        }
        if (profile.follows(ProviderRule.QP_CAPS_FROM_RXE_QUEUES))
        {
            final boolean depths = !profile.follows(ProviderRule.KERNEL_WITHOUT_FLUSH_ACCESS);
            final int roomBytes = Math.max(RXE_SGE_BYTES * Math.max(0, c.maxSendSge()), c.maxInlineDataBytes());
            return new QpCap(depths ? pow2MinusOne(c.maxSendWr()) : c.maxSendWr(),
                depths && !onSrq ? pow2MinusOne(recvWr) : recvWr, roomBytes / RXE_SGE_BYTES, recvSge, roomBytes);
        }
        return new QpCap(c.maxSendWr(), recvWr, c.maxSendSge(), recvSge, c.maxInlineDataBytes());
    }

    private static QpCap mlx5(final QpCap c, final QpType type, final Set<WrOpcode> sendOps, final int recvWr,
        final int recvSge)
    {
        int sendWr = c.maxSendWr();
        int inline = c.maxInlineDataBytes();
        if (sendWr > 0)
        {
            final int overhead = mlx5SendOverheadBytes(type, sendOps);
            final int wqeBytes = mlx5SendWqeBytes(c, type, sendOps);
            // a WQE of the segments alone (no SGE, no inline data, segments a multiple of 64 bytes: RC and UC without
            // send_ops_flags, UD) leaves libmlx5 -4, its int max_inline_data, which attr->cap shows as 4294967292 and
            // which refuses every inline post (PostChecks compares as libmlx5's set_data_inl_seg does, signed)
            inline = wqeBytes - overhead - MLX5_INLINE_HEADER_BYTES;
            sendWr = (int) (QpCreation.pow2((long) sendWr * wqeBytes) / wqeBytes);
        }
        int rWr = 0;
        int rSge = 0;
        if (recvWr > 0)
        {
            final int wqeBytes = (int) QpCreation.pow2((long) MLX5_DATA_SEG_BYTES * Math.max(1, recvSge));
            final long queueBytes = Math.max(QpCreation.pow2(recvWr) * wqeBytes, MLX5_SEND_WQE_BB);
            rWr = (int) (queueBytes / wqeBytes);
            rSge = wqeBytes / MLX5_DATA_SEG_BYTES;
        }
        return new QpCap(sendWr, rWr, c.maxSendSge(), rSge, inline);
    }

    /**
     * libmlx5's {@code sq_overhead}: the control segment and the largest of the operations' segments the QP may post
     * (RDMA: remote address; atomics: remote address and atomic; BIND_MW and LOCAL_INV: a UMR), then the transport's
     * (UD: the datagram segment). Without {@code send_ops_flags} an RC or UC QP may post every operation (192 bytes),
     * a UD QP sends only (64 bytes).
     *
     * @param type    RC, UC or UD.
     * @param sendOps the {@code send_ops_flags} of {@code ibv_create_qp_ex}, or null.
     * @return the bytes of a send WQE before its data.
     */
    /** libmlx5's send WQE for these capacities ({@code mlx5_calc_send_wqe}), in bytes, a multiple of 64. */
    private static int mlx5SendWqeBytes(final QpCap c, final QpType type, final Set<WrOpcode> sendOps)
    {
        final int overhead = mlx5SendOverheadBytes(type, sendOps);
        final int gather = overhead + MLX5_DATA_SEG_BYTES * c.maxSendSge();
        final int inline = c.maxInlineDataBytes();
        final int inlineSize = inline > 0 ? overhead + align(MLX5_INLINE_HEADER_BYTES + inline, 16) : 0;
        return align(Math.max(gather, inlineSize), MLX5_SEND_WQE_BB);
    }

    /**
     * Refuses a send queue libmlx5 cannot size: {@code mlx5_calc_sq_size} rounds {@code max_send_wr} times the send
     * WQE ({@link #mlx5SendWqeBytes}) up to a power of two bytes and answers EINVAL when that is more 64-byte basic
     * blocks than the context's {@code max_send_wqebb}, which the kernel reports as {@code 1 << log_max_qp_sz}, the
     * device's {@code max_qp_wr} (mlx5_ib_alloc_ucontext). So an RC QP without {@code send_ops_flags} and of one SGE (a
     * 256-byte WQE) takes at most 8,192 work requests on a device of max_qp_wr 32,768, where {@code max_send_wr}
     * alone could be four times that.
     * Only under {@link ProviderRule#QP_CAPS_FROM_MLX5_WQE_SIZES}; XRC QPs and receive-only QPs are not sized here.
     *
     * @param verb    the verb, for the message.
     * @param profile the device's profile.
     * @param attr    the QP's init attributes, their counts checked against the device's limits already.
     */
    static void checkMlx5SendQueue(final String verb, final DeviceProfile profile, final QpInitAttr attr)
    {
        final QpCap c = attr.cap();
        final QpType type = attr.type();
        if (!profile.follows(ProviderRule.QP_CAPS_FROM_MLX5_WQE_SIZES) || c.maxSendWr() <= 0
            || type == QpType.XRC_SEND || type == QpType.XRC_RECV)
        {
            return;
        }
        final int wqeBytes = mlx5SendWqeBytes(c, type, attr.sendOps());
        final long blocks = QpCreation.pow2((long)c.maxSendWr() * wqeBytes) / MLX5_SEND_WQE_BB;
        final int maxSendWqebb = profile.attributes().maxQpWr();
        if (blocks > maxSendWqebb)
        {
            throw Errors.invalid(verb, "max_send_wr=" + c.maxSendWr() + " send WQEs of " + wqeBytes + " bytes make "
                + blocks + " basic blocks of 64 bytes (rounded up to a power of two), more than the device's "
                + "max_send_wqebb=" + maxSendWqebb + " (libmlx5 mlx5_calc_sq_size; 1 << log_max_qp_sz, the "
                + "device's max_qp_wr); ask for at most " + maxSendWqebb * (long)MLX5_SEND_WQE_BB / wqeBytes
                + " work requests of this size, or fewer SGEs or inline bytes per work request; nothing was created");
        }
    }

    static int mlx5SendOverheadBytes(final QpType type, final Set<WrOpcode> sendOps)
    {
        final boolean ud = type == QpType.UD;
        final Set<WrOpcode> ops = sendOps != null ? sendOps : ud ? Set.of(WrOpcode.SEND)
            : Set.of(WrOpcode.RDMA_WRITE, WrOpcode.ATOMIC_CMP_AND_SWP, WrOpcode.BIND_MW);
        int size = MLX5_CTRL_SEG_BYTES;
        if (ops.contains(WrOpcode.RDMA_WRITE) || ops.contains(WrOpcode.RDMA_WRITE_WITH_IMM)
            || ops.contains(WrOpcode.RDMA_READ))
        {
            size = Math.max(size, MLX5_CTRL_SEG_BYTES + MLX5_RADDR_SEG_BYTES);
        }
        if (ops.contains(WrOpcode.ATOMIC_CMP_AND_SWP) || ops.contains(WrOpcode.ATOMIC_FETCH_AND_ADD))
        {
            size = Math.max(size, MLX5_CTRL_SEG_BYTES + 2 * MLX5_RADDR_SEG_BYTES);
        }
        if (ops.contains(WrOpcode.BIND_MW) || ops.contains(WrOpcode.LOCAL_INV))
        {
            size = Math.max(size, MLX5_CTRL_SEG_BYTES + MLX5_UMR_BYTES);
        }
        return ud ? size + MLX5_DATAGRAM_SEG_BYTES : size;
    }

    /**
     * The SGEs an SRQ's receive reports and takes: where the provider follows {@link
     * ProviderRule#QP_CAPS_FROM_MLX5_WQE_SIZES}, libmlx5's {@code mlx5_alloc_srq_buf} sizes the WQE as the 16-byte
     * next segment and 16 bytes an SGE, at least 32 bytes, rounded up to a power of two, and {@code mlx5_create_srq}
     * writes back {@code max_gs}, the SGEs that WQE holds (1 gives 1, 2 gives 3, 4 gives 7); elsewhere as asked.
     *
     * @param profile the device's profile.
     * @param maxSge  the max_sge asked for, checked.
     * @return the max_sge the SRQ reports and holds.
     */
    static int srqSge(final DeviceProfile profile, final int maxSge)
    {
        if (!profile.follows(ProviderRule.QP_CAPS_FROM_MLX5_WQE_SIZES) || maxSge < 0)
        {
            return maxSge;
        }
        final long wqeBytes = QpCreation.pow2(Math.max(32L, MLX5_DATA_SEG_BYTES + (long) MLX5_DATA_SEG_BYTES * maxSge));
        return (int) ((wqeBytes - MLX5_DATA_SEG_BYTES) / MLX5_DATA_SEG_BYTES);
    }

    /** @return {@code roundup_pow_of_two(n + 1) - 1}, the slots of an rxe queue of n elements. */
    static int pow2MinusOne(final int n)
    {
        if (n < 0)
        {
            return n;
        }
        return (int) Math.min(Integer.MAX_VALUE, QpCreation.pow2((long) n + 1) - 1);
    }

    private static int align(final int n, final int to)
    {
        return (n + to - 1) / to * to;
    }
}
