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
 */
public record WorkCompletion(long wrId, WcStatus status, WcOpcode opcode, int qpNum, long byteLen, boolean withImm,
    int immData, boolean withInv, int invalidatedRkey, int vendorErr, WcDiagnosis diagnosis)
{
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
