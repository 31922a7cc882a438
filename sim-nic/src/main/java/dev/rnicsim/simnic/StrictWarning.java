package dev.rnicsim.simnic;

import java.util.List;
import java.util.Objects;

/**
 * One hazard {@link StrictChecker} saw: misuse that real hardware hides or reports far from its cause.
 *
 * @param kind         what went wrong.
 * @param message      what happened, with the keys, addresses, process and lines involved.
 * @param lines        where the calls involved came from ({@link SimFabric#origin()}: script lines), oldest first;
 *                     empty when no origin was set.
 * @param registeredAt the stack where the MR involved was registered, when the checker captures stacks, or null.
 * @param releasedAt   the stack where it was deregistered or its memory released, when captured, or null.
 */
public record StrictWarning(Kind kind, String message, List<String> lines, Throwable registeredAt,
    Throwable releasedAt)
{
    /** The hazards strict mode reports. */
    public enum Kind
    {
        /** A work request's SGE used an lkey that was deregistered (or re-registered under a new key). */
        STALE_LKEY,
        /** A remote access used an rkey that was deregistered (or re-registered under a new key). */
        STALE_RKEY,
        /** A key that once named a deregistered MR was issued again and validated against the new MR: a holder of
         * the old key now reaches the new owner's memory (recycled keys, or an 8-bit variant that wrapped). */
        STALE_KEY_REUSED,
        /** A DMA reached frames that no longer back the MR's virtual addresses (after munmap and mmap, a COW break
         * after fork, or a THP split that moved the page): the stale-mapping bug of registration caches. */
        STALE_MAPPING,
        /** MRs still registered when their context closed or their process exited (pinned memory leaks until
         * then). */
        LEAKED_MR,
        /** An MR that no DMA ever reached before it was deregistered, its context closed or the run ended. */
        UNUSED_MR,
        /** Registrations faster than the allowed rate (registration on the hot path). */
        HOT_REGISTRATION,
        /** A CPU polling a flag saw it set before the relaxed-ordering data written before it had all landed. */
        FLAG_BEFORE_DATA,
        /** A key was retired (ibv_dereg_mr, ibv_dealloc_mw, LOCAL_INV, a rebind or unbind) while a message using it
         * was in flight: on mlx5 its next packet is NAKed and the target keeps partial data, on rxe the retirement
         * waits for the message. */
        KEY_RETIRED_IN_FLIGHT
    }

    /**
     * @throws NullPointerException when kind, message or lines is null.
     */
    public StrictWarning
    {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(message, "message");
        lines = List.copyOf(lines);
    }

    /**
     * @return {@code KIND: message}, then the lines involved when there are any.
     */
    public String text()
    {
        return kind + ": " + message + (lines.isEmpty() ? "" : " [lines: " + String.join(", ", lines) + "]");
    }
}
