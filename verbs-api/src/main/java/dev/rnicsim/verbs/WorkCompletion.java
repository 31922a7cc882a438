package dev.rnicsim.verbs;

import java.util.Objects;

/**
 * A work completion ({@code struct ibv_wc}). For a failed completion only wrId, status, qpNum and vendorErr are
 * meaningful (ibv_poll_cq(3)).
 *
 * @param wrId            the work request's identifier.
 * @param status          the outcome.
 * @param opcode          the operation (successful completions only).
 * @param qpNum           the local QP number.
 * @param byteLen         bytes transferred (receives: bytes received; READ: bytes read).
 * @param withImm         IBV_WC_WITH_IMM: immData is valid.
 * @param immData         the immediate data (host order).
 * @param withInv         IBV_WC_WITH_INV: a SEND_WITH_INV invalidated invalidatedRkey.
 * @param invalidatedRkey the rkey a received SEND_WITH_INV invalidated (shares storage with immData in C).
 * @param vendorErr       the vendor's error syndrome (0 on success; the simulator gives the mlx5 CQE syndrome on
 *                        mlx4 and mlx5 profiles and 0 where the driver leaves it 0, as rxe does).
 * @param diagnosis       why it failed, from the simulated device (null for a success and on real hardware).
 * @param srcQp           {@code src_qp}: the sending QP's number, for a receive on a UD QP (0 otherwise).
 * @param withGrh         IBV_WC_GRH: the receive buffer's first 40 bytes hold a global route header (UD receives
 *                        of a datagram sent with one; on RoCE every datagram has one).
 * @param slid            {@code slid}: the sender's LID on InfiniBand (0 on RoCE, which has no LIDs).
 * @param sl              {@code sl}: the service level the datagram came on.
 * @param pkeyIndex       {@code pkey_index}: the index of the P_Key the datagram matched (GSI QPs report it; 0 else).
 * @param dlidPathBits    {@code dlid_path_bits}: the low bits of the destination LID (0 on RoCE).
 * @param completionTimeNs when the device wrote the completion into its CQ, in ns of the device's clock: on the
 *                        simulator the fabric's simulated clock (ns since the fabric started), from which
 *                        {@code ibv_wc_read_completion_ts} (in cycles of {@code hca_core_clock}) and
 *                        {@code ibv_wc_read_completion_wallclock_ns} are derived; 0 where nothing stamped it (real
 *                        hardware read through {@code ibv_poll_cq}, which has no timestamp field).
 */
public record WorkCompletion(long wrId, WcStatus status, WcOpcode opcode, int qpNum, long byteLen, boolean withImm,
    int immData, boolean withInv, int invalidatedRkey, int vendorErr, WcDiagnosis diagnosis, int srcQp,
    boolean withGrh, int slid, int sl, int pkeyIndex, int dlidPathBits, long completionTimeNs)
{
    /**
     * A completion not yet stamped with its time (see {@link #completionTimeNs()}).
     *
     * @param wrId            see the record components.
     * @param status          see the record components.
     * @param opcode          see the record components.
     * @param qpNum           see the record components.
     * @param byteLen         see the record components.
     * @param withImm         see the record components.
     * @param immData         see the record components.
     * @param withInv         see the record components.
     * @param invalidatedRkey see the record components.
     * @param vendorErr       see the record components.
     * @param diagnosis       see the record components.
     * @param srcQp           see the record components.
     * @param withGrh         see the record components.
     * @param slid            see the record components.
     * @param sl              see the record components.
     * @param pkeyIndex       see the record components.
     * @param dlidPathBits    see the record components.
     */
    public WorkCompletion(final long wrId, final WcStatus status, final WcOpcode opcode, final int qpNum,
        final long byteLen, final boolean withImm, final int immData, final boolean withInv, final int invalidatedRkey,
        final int vendorErr, final WcDiagnosis diagnosis, final int srcQp, final boolean withGrh, final int slid,
        final int sl, final int pkeyIndex, final int dlidPathBits)
    {
        this(wrId, status, opcode, qpNum, byteLen, withImm, immData, withInv, invalidatedRkey, vendorErr, diagnosis,
            srcQp, withGrh, slid, sl, pkeyIndex, dlidPathBits, 0);
    }

    /**
     * @param timeNs when the device wrote it, in ns of its clock.
     * @return this completion stamped with that time.
     */
    public WorkCompletion withCompletionTime(final long timeNs)
    {
        return new WorkCompletion(wrId, status, opcode, qpNum, byteLen, withImm, immData, withInv, invalidatedRkey,
            vendorErr, diagnosis, srcQp, withGrh, slid, sl, pkeyIndex, dlidPathBits, timeNs);
    }

    /**
     * A completion without the datagram fields ({@code src_qp}, IBV_WC_GRH, slid, sl, pkey_index, dlid_path_bits all
     * 0), as every completion but a UD receive has them.
     */
    public WorkCompletion(final long wrId, final WcStatus status, final WcOpcode opcode, final int qpNum,
        final long byteLen, final boolean withImm, final int immData, final boolean withInv, final int invalidatedRkey,
        final int vendorErr, final WcDiagnosis diagnosis)
    {
        this(wrId, status, opcode, qpNum, byteLen, withImm, immData, withInv, invalidatedRkey, vendorErr, diagnosis, 0,
            false, 0, 0, 0, 0);
    }

    /**
     * @param sourceQp   the sending QP's number.
     * @param grh        IBV_WC_GRH.
     * @param sourceLid  the sender's LID.
     * @param level      the service level.
     * @param pkey       the P_Key index.
     * @param pathBits   the destination LID's path bits.
     * @return this completion with the fields a UD receive's {@code struct ibv_wc} fills (ibv_poll_cq(3)).
     */
    public WorkCompletion withDatagram(final int sourceQp, final boolean grh, final int sourceLid, final int level,
        final int pkey, final int pathBits)
    {
        return new WorkCompletion(wrId, status, opcode, qpNum, byteLen, withImm, immData, withInv, invalidatedRkey,
            vendorErr, diagnosis, sourceQp, grh, sourceLid, level, pkey, pathBits, completionTimeNs);
    }

    /**
     * @return the {@code wc_flags} bits: IBV_WC_GRH (1), IBV_WC_WITH_IMM (2), IBV_WC_WITH_INV (8) (verbs.h
     * {@code enum ibv_wc_flags}).
     */
    public int wcFlags()
    {
        return (withGrh ? 1 : 0) | (withImm ? 2 : 0) | (withInv ? 8 : 0);
    }

    /**
     * A completion without a diagnosis (real hardware, successes).
     */
    public WorkCompletion(final long wrId, final WcStatus status, final WcOpcode opcode, final int qpNum,
        final long byteLen, final boolean withImm, final int immData, final boolean withInv, final int invalidatedRkey,
        final int vendorErr)
    {
        this(wrId, status, opcode, qpNum, byteLen, withImm, immData, withInv, invalidatedRkey, vendorErr, null);
    }

    /**
     * @throws NullPointerException when status or opcode is null.
     */
    public WorkCompletion
    {
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(opcode, "opcode");
    }

    /**
     * @return true when the status is SUCCESS.
     */
    public boolean ok()
    {
        return status == WcStatus.SUCCESS;
    }
}
