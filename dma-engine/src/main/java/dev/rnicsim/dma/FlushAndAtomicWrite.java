package dev.rnicsim.dma;

import dev.rnicsim.mtt.AccessFlags;
import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.mtt.KeyCheck;
import dev.rnicsim.mtt.MKey;
import dev.rnicsim.mtt.MptEntry;

/**
 * The responder's side of the two operations of IBTA 1.6 annex A19 (memory placement extensions): FLUSH and ATOMIC
 * WRITE. Neither reads the requester's memory: a FLUSH carries no payload (oA19-2) and an ATOMIC WRITE carries its 8
 * bytes in the packet, taken from the work request at post time. Both are answered with a zero-length RDMA READ
 * response (rxe_comp.c {@code check_ack} accepts a read response for a FLUSH), so each costs a round trip.
 *
 * <p>The checks run in the order of rxe's responder (drivers/infiniband/sw/rxe/rxe_resp.c): the responder QP's
 * {@code qp_access_flags} ({@code check_qp_attr_access}: ATOMIC WRITE needs REMOTE_WRITE; FLUSH the right of its
 * placement type, FLUSH_GLOBAL or FLUSH_PERSISTENT; otherwise RESPST_ERR_UNSUPPORTED_OPCODE, a NAK "invalid request",
 * IBV_WC_REM_INV_REQ_ERR), the RETH DMA length ({@code rxe_resp_check_length}: above 2^31, RESPST_ERR_LENGTH, also
 * IBV_WC_REM_INV_REQ_ERR), the rkey ({@code check_rkey}: key, PD, rights, state, then {@code mr_check_range}, which a
 * FLUSH of selectivity MR skips; RESPST_ERR_RKEY_VIOLATION, IBV_WC_REM_ACCESS_ERR), and for ATOMIC WRITE the 8-byte
 * alignment ({@code rxe_mr_do_atomic_write}, IBA A19.4.2: RESPST_ERR_MISALIGNED_ATOMIC, IBV_WC_REM_INV_REQ_ERR). A
 * refused request moves nothing. Every failure is a responder error: its QP goes to the error state (class C).
 *
 * <p>Stateless and thread safe.
 */
public final class FlushAndAtomicWrite
{
    /** The largest RETH DMA length a responder takes (IBA C9-94; rxe_resp.c {@code rxe_resp_check_length}). */
    public static final long MAX_DMA_LENGTH_BYTES = 1L << 31;
    /** IBV_ODP_SUPPORT_ATOMIC_WRITE (libibverbs/verbs.h). */
    private static final int ODP_ATOMIC_WRITE = 0x80;

    private FlushAndAtomicWrite()
    {
    }

    /**
     * FLUSH at the responder: checks, then every write placed before it is made visible (the device's write ordering
     * drains). Persistence needs persistent memory behind the MR, which a driver checks when the MR is registered with
     * FLUSH_PERSISTENT (rxe {@code rxe_mr_fill_pages_from_sgt}), so a checked FLUSH of either type succeeds here.
     *
     * @param remote         the responder.
     * @param remotePd       the responder QP's PD.
     * @param remoteQpAccess the responder QP's access flags ({@link AccessFlags} bits).
     * @param remoteAddr     first address of the range (the key's address space: iova, or offset for zero-based).
     * @param rkey           the remote key.
     * @param lengthBytes    the range's length (the RETH DMA length).
     * @param placementRight {@link AccessFlags#FLUSH_GLOBAL} or {@link AccessFlags#FLUSH_PERSISTENT}.
     * @param wholeMr        true for selectivity MR: the range is not checked.
     * @return SUCCESS (0 bytes), REM_INV_REQ_ERR or REM_ACCESS_ERR.
     */
    public static DmaResult flush(final DmaPort remote, final int remotePd, final int remoteQpAccess,
        final long remoteAddr, final int rkey, final long lengthBytes, final int placementRight, final boolean wholeMr)
    {
        final String what = "FLUSH (" + (placementRight == AccessFlags.FLUSH_PERSISTENT ? "persistent" : "global")
            + ", " + (wholeMr ? "MR" : "range") + ")";
        final DmaResult refused = checkRequest(remoteQpAccess, placementRight, lengthBytes, what);
        if (refused != null)
        {
            return refused;
        }
        final AdapterTables tables = remote.tables();
        long addr = remoteAddr;
        long length = lengthBytes;
        if (wholeMr)
        {
            // The whole MR (or window) the key names: its own range passes the range check by construction.
            final MptEntry entry = tables.mpt().entry(rkey);
            addr = entry == null ? remoteAddr : entry.iova();
            length = entry == null ? 0 : entry.lengthBytes();
        }
        final KeyCheck check = tables.check(rkey, remotePd, remote.qpn(), placementRight, addr, length);
        if (check != KeyCheck.VALID && check != KeyCheck.NOT_PRESENT)
        {
            return rkeyViolation(what, rkey, addr, length, check, placementRight);
        }
        if (remote.ordering() != null)
        {
            remote.ordering().drain();
        }
        return DmaResult.success(0, 0);
    }

    /**
     * ATOMIC WRITE at the responder: checks, then the 8 bytes are stored in one piece after every earlier write of
     * the device has been placed ({@code smp_store_release} in rxe).
     *
     * @param remote         the responder.
     * @param remotePd       the responder QP's PD.
     * @param remoteQpAccess the responder QP's access flags.
     * @param remoteAddr     the target address (the key's address space).
     * @param rkey           the remote key; needs REMOTE_WRITE.
     * @param value          the 8 bytes, little-endian.
     * @return SUCCESS (8 bytes), REM_INV_REQ_ERR, REM_ACCESS_ERR, or an RNR NAK while an ODP fault is handled.
     */
    public static DmaResult atomicWrite(final DmaPort remote, final int remotePd, final int remoteQpAccess,
        final long remoteAddr, final int rkey, final long value)
    {
        final String what = "ATOMIC WRITE";
        final DmaResult refused = checkRequest(remoteQpAccess, AccessFlags.REMOTE_WRITE, Long.BYTES, what);
        if (refused != null)
        {
            return refused;
        }
        final AdapterTables tables = remote.tables();
        final KeyCheck check = tables.check(rkey, remotePd, remote.qpn(), AccessFlags.REMOTE_WRITE, remoteAddr,
            Long.BYTES);
        if (check != KeyCheck.VALID && check != KeyCheck.NOT_PRESENT)
        {
            return rkeyViolation(what, rkey, remoteAddr, Long.BYTES, check, AccessFlags.REMOTE_WRITE);
        }
        if ((remoteAddr & 7) != 0)
        {
            return DmaResult.remote(DmaStatus.REM_INV_REQ_ERR, DmaStatus.REM_INV_REQ_ERR, KeyCheck.VALID, what
                + " at 0x" + Long.toHexString(remoteAddr) + " is not 8-byte aligned (RESPST_ERR_MISALIGNED_ATOMIC, "
                + "rxe_mr_do_atomic_write; IBA A19.4.2)");
        }
        if (remote.faults() != null && tables.isOnDemand(rkey)
            && tables.firstUnmapped(rkey, remoteAddr, Long.BYTES, true) >= 0)
        {
            final String why = remote.faults().resolve(rkey, remoteAddr, Long.BYTES, true, true, ODP_ATOMIC_WRITE);
            final String fault = "responder page fault on ODP key " + MKey.toHex(rkey) + " at 0x"
                + Long.toHexString(remoteAddr) + "+8";
            if (why != null)
            {
                return DmaResult.remote(DmaStatus.REM_ACCESS_ERR, DmaStatus.REM_ACCESS_ERR, KeyCheck.NOT_PRESENT,
                    fault + " failed: " + why);
            }
            return DmaResult.rnrNak(fault + " (write): RNR NAK while it is handled");
        }
        final long phys = tables.translate(rkey, remotePd, remote.qpn(), AccessFlags.REMOTE_WRITE, remoteAddr,
            Long.BYTES);
        if (phys < 0)
        {
            return rkeyViolation(what, rkey, remoteAddr, Long.BYTES, KeyCheck.ofTranslation(phys),
                AccessFlags.REMOTE_WRITE);
        }
        if (remote.ordering() != null)
        {
            remote.ordering().drain();
        }
        final byte[] bytes = new byte[Long.BYTES];
        for (int i = 0; i < Long.BYTES; i++)
        {
            bytes[i] = (byte)(value >>> (8 * i));
        }
        remote.memory().write(phys, bytes, 0, Long.BYTES);
        return DmaResult.success(Long.BYTES, 0);
    }

    /**
     * The responder's length check of an RDMA WRITE or READ request (rxe_resp.c {@code rxe_resp_check_length}, IBA
     * C9-94): a RETH DMA length above 2^31 is RESPST_ERR_LENGTH, NAKed as an invalid request.
     *
     * @param lengthBytes the message's length.
     * @param what        the operation, for the detail.
     * @return the refusal, or null when the length passes.
     */
    public static DmaResult checkDmaLength(final long lengthBytes, final String what)
    {
        if (lengthBytes > MAX_DMA_LENGTH_BYTES)
        {
            return DmaResult.remote(DmaStatus.REM_INV_REQ_ERR, DmaStatus.REM_INV_REQ_ERR, KeyCheck.VALID, what
                + ": RETH DMA length " + lengthBytes + " > 2^31 (RESPST_ERR_LENGTH: rxe_resp_check_length, IBA "
                + "C9-94); split the message");
        }
        return null;
    }

    private static DmaResult checkRequest(final int qpAccess, final int right, final long lengthBytes,
        final String what)
    {
        if ((qpAccess & right) == 0)
        {
            return DmaResult.remote(DmaStatus.REM_INV_REQ_ERR, DmaStatus.REM_INV_REQ_ERR, KeyCheck.VALID, what
                + ": the responder QP's access flags lack " + rightName(right) + " (qp_access_flags; rxe "
                + "check_qp_attr_access: RESPST_ERR_UNSUPPORTED_OPCODE)");
        }
        return checkDmaLength(lengthBytes, what);
    }

    private static DmaResult rkeyViolation(final String what, final int rkey, final long addr, final long length,
        final KeyCheck check, final int right)
    {
        return DmaResult.remote(DmaStatus.REM_ACCESS_ERR, DmaStatus.REM_ACCESS_ERR, check, what + ": rkey "
            + MKey.toHex(rkey) + " addr 0x" + Long.toHexString(addr) + " length " + length + ": " + check
            + (check == KeyCheck.RIGHTS_MISSING ? " (needs " + rightName(right) + ")" : ""));
    }

    private static String rightName(final int right)
    {
        return switch (right)
        {
            case AccessFlags.FLUSH_GLOBAL -> "FLUSH_GLOBAL";
            case AccessFlags.FLUSH_PERSISTENT -> "FLUSH_PERSISTENT";
            default -> "REMOTE_WRITE";
        };
    }
}
