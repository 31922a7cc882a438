package dev.rnicsim.verbs;

import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Why a work request completed in error: what a real NIC knows when it writes an error CQE and does not say. A
 * ConnectX writes a syndrome byte into its error CQE ({@code struct mlx5_err_cqe}, {@code MLX5_CQE_SYNDROME_*} in
 * rdma-core providers/mlx5/cq.c and the kernel's include/linux/mlx5/cq.h) from which the provider derives the
 * {@link WcStatus}; the simulator adds which check failed, the key's MPT index and variant, what that index holds now
 * and since when (which MR or window, registered, deregistered or rebound at which script line or verb call), the
 * range asked against the range registered, and the rights asked against the rights granted.
 *
 * <p>Only the simulated device fills it ({@link WorkCompletion#diagnosis()} is null for successes and on real
 * hardware). The check, syndrome, key, index and variant are set when the completion is written; the
 * {@link #details()} may be {@linkplain #deferred deferred}, and the {@link #summary()} too ({@link #lazy}): made from
 * what the device held at the failure (captured then), the first time they are read, since most refused accesses of
 * a program or a test are never explained to anyone. Immutable in what it says (the same lines whenever read) and thread safe; two diagnoses are equal
 * when all their parts are, as a record's.
 */
public final class WcDiagnosis
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
        /**
         * The key's MR is live but its memory's owner revoked its translation: a peer-memory client's invalidation
         * (the GPU buffer under the MR was freed: nvidia-peermem's invalidate callback into MLNX_OFED's peer-memory
         * API, {@code ib_umem} peer invalidation) zapped the MTT entries and kept the MPT entry, so the key still
         * validates and no page is reachable; the summary names the revocation.
         */
        REVOKED,
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

    private final Check check;
    private final int syndrome;
    private final int key;
    private final long mptIndex;
    private final int variant;
    /** Made on first read when {@link #summaryMaking} is set. */
    private String summary;
    /** Makes the summary on first read; null once it is made (or when it was given). */
    private Supplier<String> summaryMaking;
    /** Makes the details on first read; null once they are made. */
    private Supplier<List<String>> making;
    private List<String> details;

    /**
     * @param check    the check that failed.
     * @param syndrome the CQE error syndrome of the status on a device that reports one in {@code vendor_err} (mlx4,
     *                 mlx5: e.g. 0x13 for REMOTE_ACCESS_ERR); 0 on a device that reports none (rxe, siw, irdma).
     * @param key      the lkey or rkey whose check failed, or 0 when no key was at fault.
     * @param mptIndex the key's MPT index (key bits above the variant), or -1 when no key was at fault.
     * @param variant  the key's variant (its low bits), or -1 when no key was at fault.
     * @param summary  one sentence naming the cause.
     * @param details  further lines: the key's index and what it holds now and since when, its history, the range
     *                 and rights asked against those registered, and how to fix it.
     * @throws NullPointerException when check, summary or details is null.
     */
    public WcDiagnosis(final Check check, final int syndrome, final int key, final long mptIndex, final int variant,
        final String summary, final List<String> details)
    {
        this(check, syndrome, key, mptIndex, variant, Objects.requireNonNull(summary, "summary"), null, null,
            List.copyOf(details));
    }

    private WcDiagnosis(final Check check, final int syndrome, final int key, final long mptIndex, final int variant,
        final String summary, final Supplier<String> summaryMaking, final Supplier<List<String>> making,
        final List<String> details)
    {
        this.check = Objects.requireNonNull(check, "check");
        this.summary = summary;
        this.summaryMaking = summaryMaking;
        this.syndrome = syndrome;
        this.key = key;
        this.mptIndex = mptIndex;
        this.variant = variant;
        this.making = making;
        this.details = details;
    }

    /**
     * A diagnosis whose details are made when first read. The supplier must read only what it captured at the
     * failure (values, immutable records, copies), never the device's state then: it runs later, once.
     *
     * @param check    the check that failed.
     * @param syndrome as {@link #WcDiagnosis(Check, int, int, long, int, String, List)}.
     * @param key      the key at fault, or 0.
     * @param mptIndex its MPT index, or -1.
     * @param variant  its variant, or -1.
     * @param summary  one sentence naming the cause.
     * @param details  makes the further lines.
     * @return the diagnosis.
     * @throws NullPointerException when check, summary or details is null.
     */
    public static WcDiagnosis deferred(final Check check, final int syndrome, final int key, final long mptIndex,
        final int variant, final String summary, final Supplier<List<String>> details)
    {
        return new WcDiagnosis(check, syndrome, key, mptIndex, variant, Objects.requireNonNull(summary, "summary"),
            null, Objects.requireNonNull(details, "details"), null);
    }

    /**
     * A diagnosis whose summary and details are both made when first read: most failed completions of a test are
     * never read at all. The suppliers must read only what they captured at the failure (values, immutable records,
     * copies), never the device's state then: each runs later, once.
     *
     * @param check    the check that failed.
     * @param syndrome as {@link #WcDiagnosis(Check, int, int, long, int, String, List)}.
     * @param key      the key at fault, or 0.
     * @param mptIndex its MPT index, or -1.
     * @param variant  its variant, or -1.
     * @param summary  makes the sentence naming the cause (never null).
     * @param details  makes the further lines.
     * @return the diagnosis.
     * @throws NullPointerException when check, summary or details is null.
     */
    public static WcDiagnosis lazy(final Check check, final int syndrome, final int key, final long mptIndex,
        final int variant, final Supplier<String> summary, final Supplier<List<String>> details)
    {
        return new WcDiagnosis(check, syndrome, key, mptIndex, variant, null,
            Objects.requireNonNull(summary, "summary"), Objects.requireNonNull(details, "details"), null);
    }

    /**
     * @param value another syndrome.
     * @return this diagnosis with that syndrome (its details shared, made once for both).
     */
    public synchronized WcDiagnosis withSyndrome(final int value)
    {
        if (value == syndrome)
        {
            return this;
        }
        return summary == null ? new WcDiagnosis(check, value, key, mptIndex, variant, null, this::summary,
            this::details, null) : new WcDiagnosis(check, value, key, mptIndex, variant, summary, null, this::details,
            null);
    }

    /**
     * @return the check that failed.
     */
    public Check check()
    {
        return check;
    }

    /**
     * @return the CQE error syndrome (0 on a device that reports none).
     */
    public int syndrome()
    {
        return syndrome;
    }

    /**
     * @return the lkey or rkey whose check failed, or 0 when no key was at fault.
     */
    public int key()
    {
        return key;
    }

    /**
     * @return the key's MPT index, or -1 when no key was at fault.
     */
    public long mptIndex()
    {
        return mptIndex;
    }

    /**
     * @return the key's variant, or -1 when no key was at fault.
     */
    public int variant()
    {
        return variant;
    }

    /**
     * @return one sentence naming the cause.
     */
    public synchronized String summary()
    {
        if (summary == null)
        {
            summary = Objects.requireNonNull(summaryMaking.get(), "summary");
            summaryMaking = null;
        }
        return summary;
    }

    /**
     * @return further lines: the key's index and what it holds now and since when, its history, the range and rights
     * asked against those registered, and how to fix it.
     */
    public synchronized List<String> details()
    {
        if (details == null)
        {
            details = List.copyOf(making.get());
            making = null;
        }
        return details;
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
        final StringBuilder sb = new StringBuilder(summary()).append('\n');
        if (syndrome != 0)
        {
            sb.append("syndrome ").append(syndromeName()).append(", ");
        }
        sb.append("check ").append(check);
        for (final String d : details())
        {
            sb.append('\n').append(d);
        }
        return sb.toString();
    }

    @Override
    public boolean equals(final Object o)
    {
        return o == this || o instanceof WcDiagnosis d && check == d.check && syndrome == d.syndrome && key == d.key
            && mptIndex == d.mptIndex && variant == d.variant && summary().equals(d.summary())
            && details().equals(d.details());
    }

    @Override
    public int hashCode()
    {
        return Objects.hash(check, syndrome, key, mptIndex, variant, summary(), details());
    }

    @Override
    public String toString()
    {
        return "WcDiagnosis[check=" + check + ", syndrome=" + syndrome + ", key=" + key + ", mptIndex=" + mptIndex
            + ", variant=" + variant + ", summary=" + summary() + ", details=" + details() + "]";
    }
}
