package dev.rnicsim.dma;

import dev.rnicsim.mtt.AccessFlags;
import dev.rnicsim.mtt.KeyCheck;
import dev.rnicsim.mtt.MKey;
import java.util.List;

/**
 * Key checks and translation: the requester's SGEs through their lkeys, the responder's range through the rkey,
 * the receive buffers of a SEND, each through the device's translation cache and MTT, in the order rxe makes them
 * ({@code check_rkey} in rxe_resp.c; rxe_req.c).
 *
 * <p>Not thread safe: one per {@link DmaEngine}.
 */
final class KeyChecks
{
    private final DmaEngine engine;

    KeyChecks(final DmaEngine engine)
    {
        this.engine = engine;
    }

    /** The DMA address of the first remote byte found by the last rkey check (-1 when none). */
    long remoteFirstPhys = -1;

    /**
     * Set while a message that moves packet by packet opens over memory that may fault ({@link PacketFaults}): the
     * first page of an ODP segment is then translated when a packet reaches it, after that packet's faults, so a
     * page not present yet is no failure of the first packet's checks (the key, PD, rights, state and range are).
     */
    boolean faultsLater;

    /** True when a segment's translation {@code r} waits for its packet ({@link #faultsLater}). */
    private boolean deferred(final DmaPort port, final int key, final long r)
    {
        if (!faultsLater || !(r >= 0 || r == KeyCheck.NOT_PRESENT.code()) || !port.tables().isOnDemand(key))
        {
            return false;
        }
        if (r < 0)
        {
            engine.keyCheckFailures--;
        }
        return true;
    }

    // ------------------------------------------------------------------ checks

    /**
     * Translates every non-empty segment with the rights asked for; the DMA address of each one's first byte goes
     * to {@code phys} (-1 for empty ones) for the copy to start at.
     *
     * @return the index of the first segment whose check failed (its code is in {@code phys}), or -1.
     */
    int translateAll(final DmaPort port, final int pd, final List<Segment> segments, final int access,
        final long[] phys)
    {
        for (int i = 0; i < segments.size(); i++)
        {
            final Segment s = segments.get(i);
            phys[i] = s.lengthBytes() == 0 ? -1 : translate(port, s.key(), pd, access, s.addr(),
                s.lengthBytes());
            if (s.lengthBytes() != 0 && deferred(port, s.key(), phys[i]))
            {
                phys[i] = -1;
            }
            else if (s.lengthBytes() != 0 && phys[i] < 0)
            {
                return i;
            }
        }
        return -1;
    }

    /** Checks every SGE of the requester, then the message length. */
    DmaResult checkSgl(final DmaPort port, final int pd, final List<Segment> sgl, final int access,
        final long[] phys)
    {
        final int bad = translateAll(port, pd, sgl, access, phys);
        if (bad >= 0)
        {
            final Segment s = sgl.get(bad);
            final KeyCheck check = KeyCheck.ofTranslation(phys[bad]);
            return DmaResult.local(DmaStatus.LOC_PROT_ERR, check, "sge[" + bad + "] lkey " + MKey.toHex(s.key())
                + " addr 0x" + Long.toHexString(s.addr()) + " length " + s.lengthBytes() + ": " + check);
        }
        final long length = total(sgl);
        if (length > DmaEngine.MAX_MESSAGE_BYTES)
        {
            return DmaResult.local(DmaStatus.LOC_LEN_ERR, KeyCheck.VALID, "message of " + length
                + " bytes > max_msg_sz=" + DmaEngine.MAX_MESSAGE_BYTES);
        }
        return null;
    }

    DmaResult checkRemote(final DmaPort remote, final int pd, final int qpAccess, final int access,
        final long addr, final long length, final int rkey, final String what)
    {
        if ((qpAccess & access) == 0)
        {
            return DmaResult.remote(DmaStatus.REM_INV_REQ_ERR, DmaStatus.REM_INV_REQ_ERR, KeyCheck.VALID,
                what + ": the responder QP's access flags lack " + rightName(access) + " (qp_access_flags)");
        }
        remoteFirstPhys = -1;
        if (length == 0)
        {
            return null;
        }
        final long r = translate(remote, rkey, pd, access, addr, length);
        if (deferred(remote, rkey, r))
        {
            return null;
        }
        remoteFirstPhys = r;
        if (r < 0)
        {
            final KeyCheck check = KeyCheck.ofTranslation(r);
            return DmaResult.remote(DmaStatus.REM_ACCESS_ERR, DmaStatus.REM_ACCESS_ERR, check, what + ": rkey "
                + MKey.toHex(rkey) + " addr 0x" + Long.toHexString(addr) + " length " + length + ": " + check);
        }
        return null;
    }

    /** Checks the responder's receive buffers (LOCAL_WRITE), then that the message fits them. */
    DmaResult checkRecv(final DmaPort remote, final int pd, final List<Segment> recvSgl, final long length,
        final long[] phys)
    {
        final DmaResult bad = checkRecvKeys(remote, pd, recvSgl, phys);
        if (bad != null)
        {
            return bad;
        }
        final long capacity = total(recvSgl);
        if (capacity < length)
        {
            return DmaResult.remote(DmaStatus.REM_INV_REQ_ERR, DmaStatus.LOC_LEN_ERR, KeyCheck.VALID, "message of "
                + length + " bytes > receive buffers of " + capacity + " bytes");
        }
        return null;
    }

    /** Checks the responder's receive buffers (LOCAL_WRITE) only: how much they hold is checked per packet. */
    DmaResult checkRecvKeys(final DmaPort remote, final int pd, final List<Segment> recvSgl, final long[] phys)
    {
        final int bad = translateAll(remote, pd, recvSgl, AccessFlags.LOCAL_WRITE, phys);
        if (bad >= 0)
        {
            final Segment s = recvSgl.get(bad);
            final KeyCheck check = KeyCheck.ofTranslation(phys[bad]);
            return DmaResult.remote(DmaStatus.REM_OP_ERR, DmaStatus.LOC_PROT_ERR, check, "receive sge[" + bad
                + "] lkey " + MKey.toHex(s.key()) + " addr 0x" + Long.toHexString(s.addr()) + ": " + check);
        }
        return null;
    }

    long[] checkedRemote()
    {
        return new long[] {remoteFirstPhys};
    }

    long translate(final DmaPort port, final int key, final int pd, final int access,
        final long addr, final long length)
    {
        engine.translations++;
        final long r = port.tables().translate(key, pd, port.qpn(), access, addr, length);
        if (r < 0)
        {
            engine.keyCheckFailures++;
        }
        return r;
    }

    static String rightName(final int access)
    {
        return switch (access)
        {
            case AccessFlags.REMOTE_WRITE -> "REMOTE_WRITE";
            case AccessFlags.REMOTE_READ -> "REMOTE_READ";
            default -> "REMOTE_ATOMIC";
        };
    }

    static long total(final List<Segment> sgl)
    {
        long total = 0;
        for (int i = 0; i < sgl.size(); i++)
        {
            total += sgl.get(i).lengthBytes();
        }
        return total;
    }
}
