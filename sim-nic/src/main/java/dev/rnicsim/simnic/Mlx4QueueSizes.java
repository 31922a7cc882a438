package dev.rnicsim.simnic;

import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;

/**
 * The capacities libmlx4 and the mlx4 kernel driver give a user QP ({@link ProviderRule#QP_CAPS_FROM_MLX4_WQE_SIZES}),
 * from rdma-core providers/mlx4/qp.c and verbs.c and drivers/infiniband/hw/mlx4/qp.c:
 * <ul>
 * <li>the send WQE ({@code mlx4_calc_sq_wqe_size}): the larger of {@code max_send_sge} data segments of 16 bytes and
 * the inline data with a 4-byte inline header for every 60 bytes of it (an inline segment may not cross a 64-byte
 * boundary, and the first starts 32 bytes in on RC and UC, {@code num_inline_segs}), plus the transport's segments
 * (UD: the 48-byte datagram segment; RC, UC and XRC_SEND: the 16-byte remote address segment, and on RC at least an
 * atomic operation's 48 bytes), at least a 32-byte bind segment, plus the 16-byte control segment, rounded up to a
 * power of two of at least 64 bytes ({@code sq.wqe_shift});</li>
 * <li>the send queue ({@code mlx4_create_qp_ex}): {@code max_send_wr} plus {@code (2048 >> wqe_shift) + 1} spare WQEs
 * the hardware may prefetch, rounded up to a power of two ({@code align_queue_size});</li>
 * <li>what is written back ({@code mlx4_set_sq_sizes}, after the kernel's answer): {@code max_send_wr} the queue less
 * the spares, {@code max_send_sge} the data segments the WQE holds after the control and transport segments,
 * {@code max_inline_data} those bytes less a 4-byte header per 64 bytes;</li>
 * <li>the receive queue (the kernel's {@code set_rq_size}, whose answer libibverbs writes back, after libmlx4 raised 0
 * to 1): {@code roundup_pow_of_two} of {@code max_recv_wr} and of {@code max_recv_sge}; a QP on an SRQ gets none
 * (both 0, {@link ProviderRule#RECV_ON_SRQ_QP_ENOMEM}).</li>
 * </ul>
 * The kernel's {@code set_user_sq_size} refuses (EINVAL) a send WQE larger than the device's largest descriptor
 * ({@code log_sq_stride} above {@code ilog2(roundup_pow_of_two(max_sq_desc_sz))}): ConnectX-3 firmware reports a
 * {@code max_sq_desc_sz} of 1008 bytes (assumed: the figure mlx4_core prints at probe for ConnectX-3, not in a dump),
 * so a WQE of 2048 bytes, as 1024 inline bytes make on RC, is refused. Stateless.
 */
final class Mlx4QueueSizes
{
    /** {@code struct mlx4_wqe_ctrl_seg}. */
    static final int CTRL_SEG_BYTES = 16;
    /** {@code struct mlx4_wqe_datagram_seg}. */
    static final int DATAGRAM_SEG_BYTES = 48;
    /** {@code struct mlx4_wqe_raddr_seg}. */
    static final int RADDR_SEG_BYTES = 16;
    /** {@code struct mlx4_wqe_atomic_seg}. */
    static final int ATOMIC_SEG_BYTES = 16;
    /** {@code struct mlx4_wqe_data_seg}: one SGE. */
    static final int DATA_SEG_BYTES = 16;
    /** {@code struct mlx4_wqe_inline_seg}: the header of an inline segment. */
    static final int INLINE_SEG_BYTES = 4;
    /** {@code struct mlx4_wqe_bind_seg}. */
    static final int BIND_SEG_BYTES = 32;
    /** {@code MLX4_INLINE_ALIGN}: an inline segment does not cross this boundary. */
    static final int INLINE_ALIGN = 64;
    /** The smallest send WQE, {@code 1 << 6} ({@code mlx4_calc_sq_wqe_size} starts the shift at 6). */
    static final int MIN_SEND_WQE_BYTES = 64;
    /** The bytes of headroom libmlx4 leaves for the hardware's prefetch, in spare WQEs ({@code 2048 >> shift}). */
    static final int PREFETCH_HEADROOM_BYTES = 2048;
    /** The largest send WQE: {@code roundup_pow_of_two(max_sq_desc_sz)} of ConnectX-3's 1008 bytes (assumed, see the
     * class comment). */
    static final int MAX_SEND_WQE_BYTES = 1024;

    private Mlx4QueueSizes()
    {
    }

    /** libmlx4's send WQE for these capacities, in bytes: a power of two of at least 64 ({@code 1 << sq.wqe_shift}). */
    static int sendWqeBytes(final QpCap c, final QpType type)
    {
        final int inline = Math.max(0, c.maxInlineDataBytes());
        final int inlineSegs = inlineSegments(inline, type);
        final int sges = Math.max((inline + inlineSegs * INLINE_SEG_BYTES + DATA_SEG_BYTES - 1) / DATA_SEG_BYTES,
            Math.max(0, c.maxSendSge()));
        int size = sges * DATA_SEG_BYTES;
        if (type == QpType.UD)
        {
            size += DATAGRAM_SEG_BYTES;
        }
        else if (type == QpType.UC)
        {
            size += RADDR_SEG_BYTES;
        }
        else if (type == QpType.RC || type == QpType.XRC_SEND)
        {
            size = Math.max(size + RADDR_SEG_BYTES, ATOMIC_SEG_BYTES + RADDR_SEG_BYTES + DATA_SEG_BYTES);
        }
        size = Math.max(size, BIND_SEG_BYTES) + CTRL_SEG_BYTES;
        return (int) Math.max(MIN_SEND_WQE_BYTES, QpCreation.pow2(size));
    }

    /** {@code num_inline_segs}: the inline headers the data needs, none crossing a 64-byte boundary. */
    private static int inlineSegments(final int dataBytes, final QpType type)
    {
        final int start = type == QpType.UD ? (CTRL_SEG_BYTES + DATAGRAM_SEG_BYTES) % INLINE_ALIGN
            : (CTRL_SEG_BYTES + RADDR_SEG_BYTES) % INLINE_ALIGN;
        return (dataBytes + start + INLINE_ALIGN - INLINE_SEG_BYTES - 1) / (INLINE_ALIGN - INLINE_SEG_BYTES);
    }

    /**
     * @param c      the capacities asked for, checked.
     * @param type   RC, UC or UD.
     * @param onSrq  the QP takes its receives from an SRQ.
     * @return what libmlx4 writes back into {@code attr->cap}.
     */
    static QpCap reported(final QpCap c, final QpType type, final boolean onSrq)
    {
        final int wqeBytes = sendWqeBytes(c, type);
        final int spare = PREFETCH_HEADROOM_BYTES / wqeBytes + 1;
        final long wqes = QpCreation.pow2((long) Math.max(0, c.maxSendWr()) + spare);
        int room = wqeBytes - CTRL_SEG_BYTES;
        if (type == QpType.UD)
        {
            room -= DATAGRAM_SEG_BYTES;
        }
        else if (type == QpType.RC || type == QpType.UC || type == QpType.XRC_SEND)
        {
            room -= RADDR_SEG_BYTES;
        }
        final int inline = room - INLINE_SEG_BYTES * ((room + INLINE_ALIGN - 1) / INLINE_ALIGN);
        final int recvWr = onSrq ? 0 : (int) QpCreation.pow2(Math.max(1, c.maxRecvWr()));
        final int recvSge = onSrq ? 0 : (int) QpCreation.pow2(Math.max(1, c.maxRecvSge()));
        return new QpCap((int) (wqes - spare), recvWr, room / DATA_SEG_BYTES, recvSge, inline);
    }

    /**
     * Refuses a send WQE larger than the device's largest descriptor, as the kernel's {@code set_user_sq_size}
     * does with the {@code log_sq_stride} libmlx4 sent. Only under {@link ProviderRule#QP_CAPS_FROM_MLX4_WQE_SIZES};
     * an XRC receive QP has no send queue.
     *
     * @param verb    the verb, for the message.
     * @param profile the device's profile.
     * @param attr    the QP's init attributes, their counts checked against the device's limits already.
     */
    static void check(final String verb, final DeviceProfile profile, final QpInitAttr attr)
    {
        if (!profile.follows(ProviderRule.QP_CAPS_FROM_MLX4_WQE_SIZES) || attr.type() == QpType.XRC_RECV)
        {
            return;
        }
        final QpCap c = attr.cap();
        final int wqeBytes = sendWqeBytes(c, attr.type());
        if (wqeBytes > MAX_SEND_WQE_BYTES)
        {
            throw Errors.invalid(verb, "max_send_sge=" + c.maxSendSge() + " max_inline_data="
                + c.maxInlineDataBytes() + " make a send WQE of " + wqeBytes + " bytes (libmlx4 "
                + "mlx4_calc_sq_wqe_size), larger than the device's largest send descriptor of " + MAX_SEND_WQE_BYTES
                + " bytes (mlx4 set_user_sq_size: log_sq_stride above ilog2(roundup_pow_of_two(max_sq_desc_sz))); "
                + "ask for at most " + maxInlineOfLargestWqe(attr.type()) + " inline bytes (what a " + attr.type()
                + " QP's largest send WQE holds) or fewer SGEs per work request; nothing was created");
        }
    }

    /** The inline bytes a send WQE of {@link #MAX_SEND_WQE_BYTES} holds for this type. */
    private static int maxInlineOfLargestWqe(final QpType type)
    {
        final int room = MAX_SEND_WQE_BYTES - CTRL_SEG_BYTES - (type == QpType.UD ? DATAGRAM_SEG_BYTES : RADDR_SEG_BYTES);
        return room - INLINE_SEG_BYTES * ((room + INLINE_ALIGN - 1) / INLINE_ALIGN);
    }
}
