package dev.rnicsim.ibverbs;

/**
 * The messages between the C library and the fabric server: the Java mirror of {@code src/main/c/wire.h}, which
 * draws the header and lists every payload. All fields are little-endian, 4 or 8 bytes, at offsets that are
 * multiples of their size.
 *
 * <pre>
 *   0        4        6        8                 12                16
 *   +--------+--------+--------+-----------------+-----------------+
 *   | len    | op     | flags  | seq             | err             |  then len - 16 bytes of payload
 *   +--------+--------+--------+-----------------+-----------------+
 * </pre>
 *
 * <p>Thread safety: constants only.
 */
final class Wire
{
    static final int VERSION = 1;
    static final int HEADER_BYTES = 16;

    static final int OP_HELLO = 1;
    static final int OP_OPEN = 2;
    static final int OP_CLOSE_CTX = 3;
    static final int OP_QUERY_DEVICE = 4;
    static final int OP_QUERY_PORT = 5;
    static final int OP_QUERY_GID = 6;
    static final int OP_ALLOC_PD = 7;
    static final int OP_DEALLOC_PD = 8;
    static final int OP_REG_MR = 9;
    static final int OP_DEREG_MR = 10;
    static final int OP_CREATE_CQ = 11;
    static final int OP_DESTROY_CQ = 12;
    static final int OP_CREATE_QP = 13;
    static final int OP_MODIFY_QP = 14;
    static final int OP_DESTROY_QP = 15;
    static final int OP_POST_SEND = 16;
    static final int OP_POST_RECV = 17;
    static final int OP_LEAKS = 18;
    static final int OP_QUERY_QP = 19;
    static final int OP_REREG_MR = 20;
    static final int OP_ADVISE_MR = 21;
    static final int OP_ALLOC_MW = 22;
    static final int OP_DEALLOC_MW = 23;
    /** A run of {@link ProgramRunner} that joins a live fabric: answered, so the run knows it counts. */
    static final int OP_ATTACH = 24;
    static final int OP_CREATE_SRQ = 25;
    static final int OP_MODIFY_SRQ = 26;
    static final int OP_QUERY_SRQ = 27;
    static final int OP_DESTROY_SRQ = 28;
    static final int OP_POST_SRQ_RECV = 29;
    static final int OP_CREATE_AH = 30;
    static final int OP_DESTROY_AH = 31;
    /** The library offers shared memory for the server's messages ({@link MessageRing}): fd, pad, data bytes. */
    static final int OP_RING = 32;
    /** Strict mode: the call site of the QP's next POST_SEND, one way (wire_post with count 0, then the text). */
    static final int OP_POST_SITE = 33;
    /** The library offers shared memory for its doorbells and requests ({@link DoorbellRing}): fd, pad, data bytes. */
    static final int OP_DOORBELL_RING = 90;
    /** The errno of a RING the server cannot map: the library keeps the socket. */
    static final int EIO = 5;
    static final int OP_OPEN_XRCD = 60;
    static final int OP_CLOSE_XRCD = 61;
    static final int OP_CREATE_XRC_SRQ = 62;
    /** {@code struct wire_xrc_wr}: after each request of an XRC_SEND QP, the remote SRQ number and a pad. */
    static final int XRC_WR_BYTES = 8;
    /** The extended CQ requests (CqExVerbs): numbered apart from the rest. */
    static final int OP_CQEX_CAPS = 70;
    static final int OP_CREATE_CQ_EX = 71;
    static final int OP_RESIZE_CQ = 72;
    static final int OP_QUERY_RT_VALUES = 73;
    static final int OP_CQ_SYNC = 74;
    /** {@code struct wire_cqex_caps}. */
    static final int CQEX_CAPS_BYTES = 32;
    static final int OP_WC = 100;
    static final int OP_DIAG = 101;
    /** The bytes of a SEND for a receive of the process, before the receive's completion ({@link CarriedBytes}). */
    static final int OP_PLACE = 102;
    /** Strict mode: the model's reason for the errno of the answer that follows ({@code verb '\n' why}). */
    static final int OP_REFUSAL = 110;

    /** {@code struct wire_device}: name[64], node GUID (big-endian), node type, transport. */
    static final int DEVICE_BYTES = 80;
    /** {@code struct wire_send_wr}. */
    static final int SEND_WR_BYTES = 56;
    /** {@code struct wire_recv_wr}. */
    static final int RECV_WR_BYTES = 16;
    /** {@code struct wire_sge}: addr, length, lkey. */
    static final int SGE_BYTES = 16;
    /** {@code WIRE_SEND_CARRIED} in a work request's send_flags: the bytes of its SGEs follow, as inline data does. */
    static final int SEND_CARRIED = 0x8000_0000;
    /** {@code struct wire_place}: the receive's wr_id, the count of ranges, padding. */
    static final int PLACE_BYTES = 16;
    /** {@code struct wire_range}: address, length. */
    static final int RANGE_BYTES = 16;
    /** {@code struct wire_wc}: its last 8 bytes are the completion's time on the device's clock, in ns. */
    static final int WC_BYTES = 64;
    /** {@code WIRE_WC_HIDDEN}: an unsignaled success, which frees a send queue slot and never reaches the CQ. */
    static final int WC_HIDDEN = 1;

    /** Number of values QUERY_DEVICE answers after fw_ver[64] ({@code enum wire_dev_attr}). */
    static final int DEVICE_ATTR_COUNT = 36;
    /** Number of values QUERY_PORT answers ({@code enum wire_port_attr}). */
    static final int PORT_ATTR_COUNT = 11;

    /** {@code WIRE_POST_*}: the device's checks at post time that the library makes (its provider's rules). */
    static final int POST_ATOMIC_ALIGNMENT = 1;
    /** The QP has no atomics (mlx5 {@code create_qp} sets {@code atomics_enabled} from atomic_cap ATOMIC_HCA). */
    static final int POST_ATOMICS_DISABLED = 2;
    /** {@code WIRE_POST_RESET_CLEANS_CQ}: RESET removes the QP's unpolled completions from its CQs (mlx4, mlx5). */
    static final int POST_RESET_CLEANS_CQ = 4;
    /** {@code WIRE_POST_ATOMIC_WRITE}: an RC QP of a device with IBV_DEVICE_ATOMIC_WRITE takes ATOMIC_WRITE. */
    static final int POST_ATOMIC_WRITE = 8;
    /** {@code WIRE_POST_SGE_OVERFLOW_ENOMEM}: more SGEs than max_send_sge are ENOMEM (mlx5), else EINVAL. */
    static final int POST_SGE_OVERFLOW_ENOMEM = 16;
    /** {@code WIRE_POST_RECV_SRQ_ENOMEM}: a receive posted to a QP with an SRQ is ENOMEM (mlx4, mlx5), else EINVAL. */
    static final int POST_RECV_SRQ_ENOMEM = 32;
    /** {@code WIRE_POST_SGE_COUNT_SIGNED}: a negative num_sge is posted with no SGE (mlx5), else EINVAL. */
    static final int POST_SGE_COUNT_SIGNED = 64;
    /** {@code WIRE_POST_QP_FIELDS_WHOLE}: retry_cnt, rnr_retry and min_rnr_timer are kept as given (rxe). */
    static final int POST_QP_FIELDS_WHOLE = 128;
    /** {@code WIRE_POST_DEST_QPN_WHOLE}: dest_qp_num is kept as given (rxe), else its low 24 bits. */
    static final int POST_DEST_QPN_WHOLE = 256;
    /** {@code WIRE_POST_RD_ATOMIC_ZERO_AS_ONE}: a read/atomic depth of 0 is kept as 1 (mlx4, mlx5). */
    static final int POST_RD_ATOMIC_ZERO_AS_ONE = 512;
    /** {@code WIRE_POST_RESET_KEEPS_ATTRS}: ibv_query_qp after RESET shows the attributes given before (rxe), else 0. */
    static final int POST_RESET_KEEPS_ATTRS = 1024;

    /** {@code enum ibv_qp_attr_mask} bits the server reads. */
    static final int QP_STATE = 1;
    static final int QP_ACCESS_FLAGS = 1 << 3;
    static final int QP_AV = 1 << 7;

    /** {@code enum ibv_qp_state}. */
    static final int QPS_RESET = 0;
    static final int QPS_INIT = 1;
    static final int QPS_RTR = 2;
    static final int QPS_RTS = 3;
    static final int QPS_ERR = 6;

    /** {@code enum ibv_wc_flags}. */
    static final int WC_GRH = 1;
    static final int WC_WITH_IMM = 1 << 1;
    static final int WC_WITH_INV = 1 << 3;

    private Wire()
    {
    }
}
