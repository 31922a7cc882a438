package dev.rnicsim.dma;

import dev.rnicsim.mtt.KeyCheck;

/**
 * What a transfer did, for both sides.
 *
 * @param requester      status of the requester's send completion.
 * @param responder      status of the responder's receive completion when the operation consumes a receive (SEND,
 *                       WRITE with immediate), and the error that moves the responder QP to the error state when
 *                       {@code responderError} is true.
 * @param responderError true when the responder detected the error (RC class C: its QP goes to the error state).
 * @param byteLen        bytes moved (0 on failure).
 * @param atomicOriginal the remote value before an atomic (0 otherwise).
 * @param keyCheck       the key check that failed, or VALID.
 * @param detail         what failed, with the key, address and length, or empty on success.
 */
public record DmaResult(DmaStatus requester, DmaStatus responder, boolean responderError, long byteLen,
    long atomicOriginal, KeyCheck keyCheck, String detail)
{
    /**
     * @param byteLen        bytes moved.
     * @param atomicOriginal the remote value before an atomic.
     * @return a success on both sides.
     */
    public static DmaResult success(final long byteLen, final long atomicOriginal)
    {
        return new DmaResult(DmaStatus.SUCCESS, DmaStatus.SUCCESS, false, byteLen, atomicOriginal, KeyCheck.VALID, "");
    }

    /**
     * @param status   the requester's status.
     * @param keyCheck the failed check.
     * @param detail   what failed.
     * @return a failure found at the requester (the responder saw nothing).
     */
    public static DmaResult local(final DmaStatus status, final KeyCheck keyCheck, final String detail)
    {
        return new DmaResult(status, DmaStatus.SUCCESS, false, 0, 0, keyCheck, detail);
    }

    /**
     * @param requester status the requester's completion gets from the NAK.
     * @param responder status of the responder's own completion (its QP goes to the error state).
     * @param keyCheck  the failed check.
     * @param detail    what failed.
     * @return a failure found at the responder.
     */
    public static DmaResult remote(final DmaStatus requester, final DmaStatus responder, final KeyCheck keyCheck,
        final String detail)
    {
        return new DmaResult(requester, responder, true, 0, 0, keyCheck, detail);
    }

    /**
     * @param detail the fault being handled.
     * @return an RNR NAK from the responder: nothing moved, the request is to be retried.
     */
    public static DmaResult rnrNak(final String detail)
    {
        return new DmaResult(DmaStatus.RNR_NAK, DmaStatus.SUCCESS, false, 0, 0, KeyCheck.NOT_PRESENT, detail);
    }

    /**
     * @return true when both sides succeeded.
     */
    public boolean ok()
    {
        return requester == DmaStatus.SUCCESS && !responderError;
    }
}
