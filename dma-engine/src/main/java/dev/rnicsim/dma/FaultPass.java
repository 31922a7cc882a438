package dev.rnicsim.dma;

import dev.rnicsim.mtt.AccessFlags;
import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.mtt.KeyCheck;
import dev.rnicsim.mtt.MKey;
import java.util.List;

/**
 * The device's page-fault pass over a transfer with on-demand-paging MRs: each missing translation is one page fault
 * the side's {@link PageFaultHandler} resolves; a fault at the responder is answered with an RNR NAK.
 *
 * <p>Not thread safe: one per {@link DmaEngine}.
 */
final class FaultPass
{
    private final DmaEngine engine;

    FaultPass(final DmaEngine engine)
    {
        this.engine = engine;
    }

    /** Most passes over both sides before a transfer's faults are taken as settled (each pass resolves every
     * fault it meets; a later pass is needed only when resolving one side's fault invalidated the other's pages). */
    static final int MAX_FAULT_PASSES = 8;

    // ------------------------------------------------------------------ page faults

    /**
     * One side of a transfer as the fault pass sees it.
     *
     * @param allowed      false when the transfer will fail before touching this side's memory (the responder QP's
     *                     access flags), so no fault is taken on it.
     * @param odpOperation the ODP capability bit of what this side does ({@link PageFaultHandler#resolve}).
     */
    record Side(DmaPort port, int pd, List<Segment> segments, int access, boolean remote, boolean allowed,
        int odpOperation)
    {
    }

    /**
     * The device meeting missing translations of on-demand-paging MRs while it works through the transfer: each
     * data segment of an ODP MR with a block that is not mapped (or is read-only for a write) raises one page fault,
     * which the side's {@link PageFaultHandler} resolves for the whole segment. A fault on the responder's side is
     * answered with an RNR NAK ({@link DmaStatus#RNR_NAK}): nothing moves and the requester retries. Faults are
     * taken only when every key of the transfer passes its checks; otherwise the checks report the error. Passes
     * repeat while resolving one fault invalidated pages of another segment.
     *
     * @return null when every ODP segment is mapped; else the outcome to return (a failed fault or an RNR NAK).
     */
    DmaResult faultIn(final Side first, final Side second)
    {
        if (!hasOnDemand(first) && !hasOnDemand(second))
        {
            return null;
        }
        if (!keysPass(first) || !keysPass(second))
        {
            return null;
        }
        for (int pass = 0; pass < MAX_FAULT_PASSES; pass++)
        {
            boolean faulted = false;
            String remoteFault = null;
            for (final Side side : new Side[] {first, second})
            {
                if (side == null || side.port().faults() == null)
                {
                    continue;
                }
                final boolean write = (side.access() & (AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE
                    | AccessFlags.REMOTE_ATOMIC)) != 0;
                final AdapterTables tables = side.port().tables();
                for (int i = 0; i < side.segments().size(); i++)
                {
                    final Segment s = side.segments().get(i);
                    if (s.lengthBytes() == 0 || !tables.isOnDemand(s.key()))
                    {
                        continue;
                    }
                    final long missing = tables.firstUnmapped(s.key(), s.addr(), s.lengthBytes(), write);
                    if (missing < 0)
                    {
                        continue;
                    }
                    faulted = true;
                    final long left = s.addr() + s.lengthBytes() - missing;
                    if (side.remote())
                    {
                        engine.remotePageFaults++;
                    }
                    else
                    {
                        engine.pageFaults++;
                    }
                    final String why = side.port().faults().resolve(s.key(), missing, left, write, side.remote(),
                        side.odpOperation());
                    final String what = (side.remote() ? "responder" : "requester") + " page fault on ODP key "
                        + MKey.toHex(s.key()) + " at 0x" + Long.toHexString(missing) + "+" + left;
                    if (why != null)
                    {
                        return failedFault(side, i, what + " failed: " + why);
                    }
                    if (side.remote() && remoteFault == null)
                    {
                        remoteFault = what + " (" + (write ? "write" : "read") + "): RNR NAK while it is handled";
                    }
                }
            }
            if (remoteFault != null)
            {
                return DmaResult.rnrNak(remoteFault);
            }
            if (!faulted)
            {
                return null;
            }
        }
        return null;
    }

    /** False when neither side has an ODP MR live (the common case: no fault pass at all). */
    static boolean faultsPossible(final DmaPort local, final DmaPort remote)
    {
        return local != null && local.faults() != null && local.tables().hasOnDemand()
            || remote != null && remote.faults() != null && remote.tables().hasOnDemand();
    }

    static boolean hasOnDemand(final Side side)
    {
        return side != null && side.allowed() && side.port().faults() != null
            && side.port().tables().hasOnDemand();
    }

    /** True when every non-empty segment of the side passes its key checks (a missing page aside). */
    static boolean keysPass(final Side side)
    {
        if (side == null)
        {
            return true;
        }
        if (!side.allowed())
        {
            return false;
        }
        for (final Segment s : side.segments())
        {
            if (s.lengthBytes() == 0)
            {
                continue;
            }
            final KeyCheck check = side.port().tables().check(s.key(), side.pd(), side.port().qpn(), side.access(),
                s.addr(), s.lengthBytes());
            if (check != KeyCheck.VALID && check != KeyCheck.NOT_PRESENT)
            {
                return false;
            }
        }
        return true;
    }

    /** A fault the driver could not resolve: the requester's WQE or the responder's request completes in error. */
    static DmaResult failedFault(final Side side, final int segment, final String detail)
    {
        if (!side.remote())
        {
            return DmaResult.local(DmaStatus.LOC_PROT_ERR, KeyCheck.NOT_PRESENT, "sge[" + segment + "] " + detail);
        }
        if (side.access() == AccessFlags.LOCAL_WRITE)
        {
            return DmaResult.remote(DmaStatus.REM_OP_ERR, DmaStatus.LOC_PROT_ERR, KeyCheck.NOT_PRESENT,
                "receive sge[" + segment + "] " + detail);
        }
        return DmaResult.remote(DmaStatus.REM_ACCESS_ERR, DmaStatus.REM_ACCESS_ERR, KeyCheck.NOT_PRESENT, detail);
    }
}
