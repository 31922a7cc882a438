package dev.rnicsim.verbs;

import java.util.List;
import java.util.Objects;

/**
 * Why a work request completed in error: what a real NIC knows when it writes an error CQE and does not say. A
 * ConnectX writes a syndrome byte into its error CQE ({@code struct mlx5_err_cqe}, {@code MLX5_CQE_SYNDROME_*} in
 * rdma-core providers/mlx5/cq.c and the kernel's include/linux/mlx5/cq.h) from which the provider derives the
 * {@link WcStatus}; the simulator adds which check failed, the key's MPT index and variant, what that index holds now
 * and since when (which MR or window, registered, deregistered or rebound at which script line or verb call), the
 * range asked against the range registered, and the rights asked against the rights granted.
 *
 * <p>Only the simulated device fills it ({@link WorkCompletion#diagnosis()} is null for successes and on real
 * hardware). Immutable and thread safe.
 *
 * @param check      the check that failed.
 * @param syndrome   the CQE error syndrome of the status on a device that reports one in {@code vendor_err} (mlx4,
 *                   mlx5: e.g. 0x13 for REMOTE_ACCESS_ERR); 0 on a device that reports none (rxe, siw, irdma).
 * @param key        the lkey or rkey whose check failed, or 0 when no key was at fault.
 * @param mptIndex   the key's MPT index (key bits above the variant), or -1 when no key was at fault.
 * @param variant    the key's variant (its low bits), or -1 when no key was at fault.
 * @param summary    one sentence naming the cause.
 * @param details    further lines: the key's index and what it holds now and since when, its history, the range
 *                   and rights asked against those registered, and how to fix it.
 */
public record WcDiagnosis(Check check, int syndrome, int key, long mptIndex, int variant, String summary,
    List<String> details)
{
    /** Which check of the requester or the responder failed. */
    public enum Check
    {
        /** No live MPT entry at the key's index: the MR or window was deregistered (or never existed). */
        KEY_INDEX,
        /** The index is live but holds another variant: a stale key of an earlier registration of that index. */
        KEY_VARIANT,
        /** The key's MR or window belongs to another protection domain than the QP's. */
        PD,
        /** The MR or window lacks an access right the operation needs. */
        RIGHTS,
        /** The MPT entry is not VALID (a fast-registration MR or window invalidated or not yet registered). */
        STATE,
        /** The accessed range lies outside the MR's or window's range. */
        RANGE,
        /** A type 2 memory window bound to another QP (rxe_lookup_mw, IBA 10.6.7.2.4). */
        WINDOW_QP,
        /** The key checks passed but the device had no translation and the page fault could not be resolved. */
        ODP_FAULT,
        /** The message is longer than the port allows or than the receive buffers. */
        LENGTH,
        /** The responder QP's qp_access_flags lack the right, or the request is otherwise invalid. */
        INVALID_REQUEST,
        /** No receive was posted at the responder within rnr_retry attempts. */
        RECEIVER_NOT_READY,
        /** No acknowledgement came: the peer QP is gone, not connected to this QP, or not ready. */
        NO_ACK,
        /** The QP was in the error state: the work request was flushed. */
        FLUSHED,
        /** A memory-window bind, local invalidation or fast registration failed. */
        LOCAL_OPERATION
    }

    /**
     * @throws NullPointerException when check, summary or details is null.
     */
    public WcDiagnosis
    {
        Objects.requireNonNull(check, "check");
        Objects.requireNonNull(summary, "summary");
        details = List.copyOf(details);
    }

    /**
     * @return the mlx5 syndrome's name, e.g. {@code MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR (0x13)}.
     */
    public String syndromeName()
    {
        return syndromeName(syndrome);
    }

    /**
     * @param syndrome an mlx5 CQE error syndrome.
     * @return its name in the provider's enum with its value, or {@code 0x..} when unknown.
     */
    public static String syndromeName(final int syndrome)
    {
        final String name = switch (syndrome)
        {
            case 0x01 -> "LOCAL_LENGTH_ERR";
            case 0x02 -> "LOCAL_QP_OP_ERR";
            case 0x04 -> "LOCAL_PROT_ERR";
            case 0x05 -> "WR_FLUSH_ERR";
            case 0x06 -> "MW_BIND_ERR";
            case 0x10 -> "BAD_RESP_ERR";
            case 0x11 -> "LOCAL_ACCESS_ERR";
            case 0x12 -> "REMOTE_INVAL_REQ_ERR";
            case 0x13 -> "REMOTE_ACCESS_ERR";
            case 0x14 -> "REMOTE_OP_ERR";
            case 0x15 -> "TRANSPORT_RETRY_EXC_ERR";
            case 0x16 -> "RNR_RETRY_EXC_ERR";
            case 0x22 -> "REMOTE_ABORTED_ERR";
            default -> null;
        };
        final String hex = String.format(java.util.Locale.ROOT, "0x%02x", syndrome);
        return name == null ? hex : "MLX5_CQE_SYNDROME_" + name + " (" + hex + ")";
    }

    /**
     * @return the summary, the syndrome (on a device that gives one) and the check, and the details, one per line.
     */
    public String text()
    {
        final StringBuilder sb = new StringBuilder(summary).append('\n');
        if (syndrome != 0)
        {
            sb.append("syndrome ").append(syndromeName()).append(", ");
        }
        sb.append("check ").append(check);
        for (final String d : details)
        {
            sb.append('\n').append(d);
        }
        return sb.toString();
    }
}
