package dev.rnicsim.dma;

import dev.rnicsim.mtt.AccessFlags;
import dev.rnicsim.mtt.KeyCheck;
import dev.rnicsim.mtt.MKey;
import java.util.List;

/**
 * Messages that move packet by packet: the first packet's checks for the whole message (rxe {@code check_rkey} runs
 * on the first packet only; IBA 9.7.4.1.3), then each later packet re-checks its keys' state and is placed.
 *
 * <p>Not thread safe: one per {@link DmaEngine}.
 */
final class PacketPath
{
    private final DmaEngine engine;
    private final KeyChecks keys;
    private final Placement placement;

    PacketPath(final DmaEngine engine)
    {
        this.engine = engine;
        this.keys = engine.keys;
        this.placement = engine.placement;
    }

    /**
     * Opens an RDMA WRITE or READ message that moves packet by packet: the checks the responder makes on the first
     * packet, for the whole message, and the requester's checks of its whole local list, in the order {@link
     * DmaEngine#write} and {@link DmaEngine#read} make them; no byte moves. The packets are then moved with {@link
     * #movePacket}, under this check (rxe {@code check_rkey} runs on the first packet only, with the RETH's DMA length;
     * IBA 9.7.4.1.3): the message keeps its place in both lists between packets, as a QP context keeps its DMA state.
     *
     * @param read           true for an RDMA READ (remote checked first, local needs LOCAL_WRITE), false for WRITE.
     * @param local          the requester.
     * @param localPd        the requester QP's PD.
     * @param sgl            the whole local list.
     * @param remote         the responder.
     * @param remotePd       the responder QP's PD.
     * @param remoteQpAccess the responder QP's access flags.
     * @param remoteAddr     first remote address.
     * @param rkey           remote key.
     * @return the message; its {@link DmaMessage#failure()} is the failure {@link DmaEngine#write} or {@link
     * DmaEngine#read} would report, or null when every check passed.
     */
    DmaMessage openMessage(final boolean read, final DmaPort local, final int localPd, final List<Segment> sgl,
        final DmaPort remote, final int remotePd, final int remoteQpAccess, final long remoteAddr, final int rkey)
    {
        engine.operations++;
        final long length = KeyChecks.total(sgl);
        final long[] localPhys = new long[sgl.size()];
        final List<Segment> remoteSgl = List.of(new Segment(remoteAddr, length, rkey));
        final int remoteAccess = read ? AccessFlags.REMOTE_READ : AccessFlags.REMOTE_WRITE;
        final int localAccess = read ? AccessFlags.LOCAL_WRITE : 0;
        DmaResult failure;
        if (read)
        {
            failure = length > DmaEngine.MAX_MESSAGE_BYTES ? DmaResult.local(DmaStatus.LOC_LEN_ERR, KeyCheck.VALID,
                "message of "
                + length + " bytes > max_msg_sz=" + DmaEngine.MAX_MESSAGE_BYTES) : keys.checkRemote(remote, remotePd,
                    remoteQpAccess,
                remoteAccess, remoteAddr, length, rkey, "RDMA READ");
            final long[] remotePhys = keys.checkedRemote();
            if (failure == null)
            {
                failure = keys.checkSgl(local, localPd, sgl, localAccess, localPhys);
            }
            return opened(new DmaMessage(MessageKind.READ, local, localPd, sgl, remote, remotePd, remoteSgl, failure,
                new Walk(engine, remote, remotePd, remoteAccess, remoteSgl, remotePhys),
                new Walk(engine, local, localPd, localAccess, sgl, localPhys), null));
        }
        failure = keys.checkSgl(local, localPd, sgl, localAccess, localPhys);
        if (failure == null)
        {
            failure = keys.checkRemote(remote, remotePd, remoteQpAccess, remoteAccess, remoteAddr, length, rkey,
                "RDMA WRITE");
        }
        return opened(new DmaMessage(MessageKind.WRITE, local, localPd, sgl, remote, remotePd, remoteSgl, failure,
            new Walk(engine, local, localPd, localAccess, sgl, localPhys),
            new Walk(engine, remote, remotePd, remoteAccess, remoteSgl, keys.checkedRemote()), null));
    }

    /**
     * Notes, for an RDMA WRITE or READ whose first packet's checks passed, the key changes of both sides' tables: the
     * checks covered the whole message (the rkey over its whole range, every SGE whole), so while nothing changes in a
     * side's tables a later packet's check there would pass again (see {@link #movePacket}). An empty message's rkey
     * was not checked: its side is not noted.
     */
    private static DmaMessage keysChecked(final DmaMessage m)
    {
        if (m.failure == null && (m.kind == MessageKind.WRITE || m.kind == MessageKind.READ))
        {
            if (m.remoteSgl.get(0).lengthBytes() > 0)
            {
                m.remoteKeysChecked = m.remote.tables().keyChanges();
            }
            if (m.local != null)
            {
                m.localKeysChecked = m.local.tables().keyChanges();
            }
            // Whether a device page fault is possible changes only with the keys: an ODP MR's registration creates
            // an MPT entry and its deregistration frees one.
            m.streams = m.kind == MessageKind.WRITE && m.inline == null && m.remoteKeysChecked >= 0
                && m.localKeysChecked >= 0 && !FaultPass.faultsPossible(m.local, m.remote);
        }
        return m;
    }

    /** Tells the observer of a message whose first packet's rkey check passed. */
    DmaMessage opened(final DmaMessage m)
    {
        keysChecked(m);
        if (engine.observer != null && m.failure == null)
        {
            engine.observer.opened(m, m.remote, m.remoteSgl.get(0).key());
        }
        return m;
    }

    /**
     * Opens an RDMA WRITE of an inline payload (IBV_SEND_INLINE: the bytes were copied into the WQE at post time, so
     * no lkey is checked) that moves packet by packet: the responder's checks of the first packet, for the whole
     * message, as {@link DmaEngine#writeInline} makes them.
     *
     * @param payload        the bytes.
     * @param remote         the responder.
     * @param remotePd       the responder QP's PD.
     * @param remoteQpAccess the responder QP's access flags.
     * @param remoteAddr     first remote address.
     * @param rkey           remote key; needs REMOTE_WRITE.
     * @return the message; {@link DmaMessage#failure()} as {@link DmaEngine#writeInline} would report it.
     */
    DmaMessage openInlineWrite(final byte[] payload, final DmaPort remote, final int remotePd,
        final int remoteQpAccess, final long remoteAddr, final int rkey)
    {
        engine.operations++;
        final List<Segment> remoteSgl = List.of(new Segment(remoteAddr, payload.length, rkey));
        final DmaResult failure = keys.checkRemote(remote, remotePd, remoteQpAccess, AccessFlags.REMOTE_WRITE,
            remoteAddr,
            payload.length, rkey, "RDMA WRITE");
        return opened(new DmaMessage(MessageKind.WRITE, null, 0, List.of(), remote, remotePd, remoteSgl, failure, null,
            new Walk(engine, remote, remotePd, AccessFlags.REMOTE_WRITE, remoteSgl, keys.checkedRemote()), payload));
    }

    /**
     * Opens a SEND that moves packet by packet into the receive buffers the responder took for it at the first packet
     * (IBA 9.7.2: a multi-packet SEND consumes one receive WQE, its FIRST packet fetching it; rxe {@code
     * get_srq_wqe}/{@code send_data_in}). The first packet makes the checks {@link DmaEngine#send} makes but the
     * length check: the responder places each packet as it comes, so a message longer than the receive buffers fails
     * at the packet that overflows them ({@link #movePacket}). The later packets re-check the state of the receive
     * buffers' lkeys they fill (and of the gather list's lkeys they read), so a receive buffer deregistered
     * mid-message fails the packet that needs it.
     *
     * @param local    the requester.
     * @param localPd  the requester QP's PD.
     * @param sgl      local buffers to gather; ignored when {@code payload} is given.
     * @param payload  an inline payload (IBV_SEND_INLINE), or null.
     * @param remote   the responder.
     * @param remotePd the responder QP's PD.
     * @param recvSgl  the receive work request's buffers (lkeys of the responder), need LOCAL_WRITE.
     * @return the message; {@link DmaMessage#failure()} as {@link DmaEngine#send} or {@link DmaEngine#sendInline}
     * would report it.
     */
    DmaMessage openSend(final DmaPort local, final int localPd, final List<Segment> sgl, final byte[] payload,
        final DmaPort remote, final int remotePd, final List<Segment> recvSgl)
    {
        engine.operations++;
        final List<Segment> gather = payload == null ? sgl : List.of();
        final long[] localPhys = new long[gather.size()];
        DmaResult failure = payload == null ? keys.checkSgl(local, localPd, gather, 0, localPhys) : null;
        final long[] recvPhys = new long[recvSgl.size()];
        if (failure == null)
        {
            failure = keys.checkRecvKeys(remote, remotePd, recvSgl, recvPhys);
        }
        return new DmaMessage(MessageKind.SEND, local, localPd, gather, remote, remotePd, recvSgl, failure,
            payload == null ? new Walk(engine, local, localPd, 0, gather, localPhys) : null,
            new Walk(engine, remote, remotePd, AccessFlags.LOCAL_WRITE, recvSgl, recvPhys), payload);
    }

    /**
     * The request packet of ATOMIC_CMP_AND_SWP or ATOMIC_FETCH_AND_ADD: the checks {@link DmaEngine#atomic} makes (the
     * local result SGE, then the responder's rkey, rights and alignment), then the responder executes the atomic on its
     * memory and keeps the original value for the response (IBA 9.4.5: one request packet, one ATOMIC ACKNOWLEDGE
     * packet carrying the original value; rxe {@code atomic_reply}). The response is placed into the local result SGE
     * by {@link #movePacket} (8 bytes), which re-checks the result lkey's state as it does for every later packet: a
     * result MR deregistered between request and response fails with LOC_PROT_ERR after the remote memory changed, as
     * on hardware.
     *
     * @param local          the requester.
     * @param localPd        the requester QP's PD.
     * @param result         one 8-byte local SGE; needs LOCAL_WRITE.
     * @param remote         the responder.
     * @param remotePd       the responder QP's PD.
     * @param remoteQpAccess the responder QP's access flags.
     * @param remoteAddr     remote address, 8-byte aligned.
     * @param rkey           remote key; needs REMOTE_ATOMIC.
     * @param compareAndSwap true for compare-and-swap, false for fetch-and-add.
     * @param compareAdd     compare value or addend.
     * @param swap           swap value.
     * @return the message; its {@link DmaMessage#failure()} as {@link DmaEngine#atomic} would report it.
     */
    DmaMessage openAtomic(final DmaPort local, final int localPd, final Segment result, final DmaPort remote,
        final int remotePd, final int remoteQpAccess, final long remoteAddr, final int rkey,
        final boolean compareAndSwap, final long compareAdd, final long swap)
    {
        engine.operations++;
        final List<Segment> resultSgl = List.of(result);
        final List<Segment> remoteSgl = List.of(new Segment(remoteAddr, Long.BYTES, rkey));
        final long[] resultPhys = new long[1];
        DmaResult failure = result.lengthBytes() != Long.BYTES ? DmaResult.local(DmaStatus.LOC_LEN_ERR,
            KeyCheck.VALID, "atomic result SGE of " + result.lengthBytes() + " bytes; an atomic needs exactly 8")
            : keys.checkSgl(local, localPd, resultSgl, AccessFlags.LOCAL_WRITE, resultPhys);
        if (failure == null)
        {
            failure = keys.checkRemote(remote, remotePd, remoteQpAccess, AccessFlags.REMOTE_ATOMIC, remoteAddr,
                Long.BYTES,
                rkey, "atomic");
        }
        if (failure == null && (remoteAddr & 7) != 0)
        {
            failure = DmaResult.remote(DmaStatus.REM_INV_REQ_ERR, DmaStatus.REM_INV_REQ_ERR, KeyCheck.VALID,
                "atomic at 0x" + Long.toHexString(remoteAddr)
                    + " is not 8-byte aligned (RESPST_ERR_MISALIGNED_ATOMIC)");
        }
        final DmaMessage m = new DmaMessage(MessageKind.ATOMIC, local, localPd, resultSgl, remote, remotePd, remoteSgl,
            failure, null, new Walk(engine, local, localPd, AccessFlags.LOCAL_WRITE, resultSgl, resultPhys), null);
        if (failure == null)
        {
            final long original = placement.executeAtomic(remote, rkey, remoteAddr, compareAndSwap, compareAdd, swap);
            m.atomicOriginal = original;
            m.inline = Placement.toBytes(original);
        }
        return m;
    }

    /**
     * Moves the next packet of an open message: {@code bytes} from where the last packet ended. The keys are not
     * looked up again, but their state, range and rights are: a key retired since the first packet fails the packet
     * (REM_ACCESS_ERR for the rkey, LOC_PROT_ERR for an lkey) and nothing of it moves; what earlier packets placed
     * stays. Allocates nothing on success. A side whose tables saw no key change since the first packet's checks of
     * a WRITE or READ (its {@code keyChanges()} unchanged) is not checked again: those checks covered the whole
     * message, and the check of a part of it would pass; a WRITE from memory whose sides both saw no key change
     * then goes straight to the copy (no page fault can happen where none could at its first packet).
     *
     * <p>Over on-demand-paging memory the packet's page faults come after these checks ({@link PacketFaults}): a
     * fault at the responder answers {@link DmaStatus#RNR_NAK} and nothing of the packet moves.
     *
     * <p>A SEND packet that does not fit in what is left of the receive buffers fails whole, and the packets before it
     * stay placed: rxe's {@code send_data_in} has {@code copy_data} refuse the packet with -ENOSPC before it copies a
     * byte (state RESPST_ERR_LENGTH: an RC responder NAKs it as an invalid request, class C, and its QP goes to ERR);
     * the receive completes with LOC_LEN_ERR and the requester with REM_INV_REQ_ERR.
     *
     * @param m     an open message whose checks passed.
     * @param bytes the packet's payload.
     * @return null when the packet was placed, else the failure.
     */
    DmaResult movePacket(final DmaMessage m, final long bytes)
    {
        if (m.streams && engine.observer == null && m.remote.tables().keyChanges() == m.remoteKeysChecked
            && m.local.tables().keyChanges() == m.localKeysChecked)
        {
            // A later packet of a WRITE from memory while neither side's keys changed: no check to repeat, no page
            // fault possible (as when the first packet's checks passed), no observer to tell; what place() does.
            placement.copy(m.src, m.dst, bytes, m.relaxedTargetAt == m.remoteKeysChecked ? m.relaxedTarget
                : relaxedTarget(m));
            m.offset += bytes;
            return null;
        }
        final boolean remoteUnchanged = m.remoteKeysChecked >= 0
            && m.remote.tables().keyChanges() == m.remoteKeysChecked;
        if (!remoteUnchanged || m.localKeysChecked < 0 || m.local.tables().keyChanges() != m.localKeysChecked)
        {
            final DmaResult failure = recheck(m, bytes, remoteUnchanged);
            if (failure != null)
            {
                return failure;
            }
        }
        final DmaResult faulted = engine.packetFaults.beforePacket(m, bytes);
        if (faulted != null)
        {
            return faulted;
        }
        if (m.kind == MessageKind.WRITE && remoteUnchanged && m.inline == null && engine.observer == null)
        {
            // What place() does for such a packet: no observer to tell, a walk that stays as it is, no ordering to
            // drain before it, bytes from the requester's memory.
            placement.copy(m.src, m.dst, bytes, relaxedTarget(m));
        }
        else
        {
            place(m, bytes, remoteUnchanged);
        }
        m.offset += bytes;
        return null;
    }

    /**
     * The re-checks of a later packet on a side whose tables saw a key change since the first packet (and on every
     * packet of a SEND or an atomic): the remote side's first, then the local side's.
     */
    private DmaResult recheck(final DmaMessage m, final long bytes, final boolean remoteUnchanged)
    {
        final DmaResult remoteFailure = switch (m.kind)
        {
            case WRITE, READ -> remoteUnchanged ? null : recheckRkey(m, bytes);
            case SEND -> m.offset + bytes > KeyChecks.total(m.remoteSgl) ? overflow(m, bytes)
                : recheckList(m.remote, m.remotePd, m.remoteSgl, AccessFlags.LOCAL_WRITE, m.offset, bytes, true);
            case ATOMIC -> null;
        };
        if (remoteFailure != null)
        {
            return remoteFailure;
        }
        final boolean localUnchanged = m.localKeysChecked >= 0 && m.local.tables().keyChanges() == m.localKeysChecked;
        return !localUnchanged && (m.kind == MessageKind.ATOMIC || m.inline == null)
            ? recheckList(m.local, m.localPd, m.sgl, m.kind == MessageKind.WRITE || m.kind == MessageKind.SEND ? 0
            : AccessFlags.LOCAL_WRITE, m.kind == MessageKind.ATOMIC ? 0 : m.offset, bytes, false) : null;
    }

    /** Places a packet whose checks passed: tells the observer, follows the key's MPT entry, orders, moves. */
    private void place(final DmaMessage m, final long bytes, final boolean remoteUnchanged)
    {
        if (engine.observer != null && m.kind != MessageKind.SEND && m.kind != MessageKind.ATOMIC)
        {
            engine.observer.packet(m, m.remote, m.remoteSgl.get(0).key());
        }
        // The responder's walk follows the key's MPT entry, which stays as the first packet found it while the
        // responder's tables saw no key change.
        if (m.kind == MessageKind.WRITE && !remoteUnchanged)
        {
            m.dst.resync();
        }
        else if (m.kind == MessageKind.READ && !remoteUnchanged)
        {
            m.src.resync();
        }
        if (m.kind == MessageKind.READ)
        {
            Placement.drainOrdering(m.remote);
        }
        if (m.inline != null)
        {
            placement.scatterBytes(m.inline, m.kind == MessageKind.ATOMIC ? 0 : (int)m.offset, (int)bytes, m.dst);
        }
        else
        {
            placement.copy(m.src, m.dst, bytes, relaxedTarget(m));
        }
    }

    /**
     * {@link Placement#relaxedTarget} of the message's destination, taken again only when the destination's tables
     * saw a key change since it was last taken (it reads the access bits of the destination's keys).
     */
    private static boolean relaxedTarget(final DmaMessage m)
    {
        if (m.dst.port.ordering() == null)
        {
            return false;
        }
        final long changes = m.dst.port.tables().keyChanges();
        if (changes != m.relaxedTargetAt)
        {
            m.relaxedTarget = Placement.relaxedTarget(m.dst);
            m.relaxedTargetAt = changes;
        }
        return m.relaxedTarget;
    }

    /** A SEND packet past the end of the receive buffers. */
    private static DmaResult overflow(final DmaMessage m, final long bytes)
    {
        return DmaResult.remote(DmaStatus.REM_INV_REQ_ERR, DmaStatus.LOC_LEN_ERR, KeyCheck.VALID, "SEND packet of "
            + bytes + " bytes at offset " + m.offset + " overflows receive buffers of " + KeyChecks.total(m.remoteSgl)
            + " bytes (the " + m.offset + " bytes before it were placed)");
    }

    /** A later packet of a WRITE or READ: the rkey's state, range and rights for this packet's part. */
    DmaResult recheckRkey(final DmaMessage m, final long bytes)
    {
        final int remoteAccess = m.kind == MessageKind.READ ? AccessFlags.REMOTE_READ : AccessFlags.REMOTE_WRITE;
        final Segment r = m.remoteSgl.get(0);
        final KeyCheck remoteCheck = mapped(m.remote, r.key(), r.addr() + m.offset, bytes, m.remote.tables().check(
            r.key(), m.remotePd, m.remote.qpn(), remoteAccess, r.addr() + m.offset, bytes));
        if (remoteCheck != KeyCheck.VALID)
        {
            engine.keyCheckFailures++;
            return DmaResult.remote(DmaStatus.REM_ACCESS_ERR, DmaStatus.REM_ACCESS_ERR, remoteCheck,
                (m.kind == MessageKind.READ ? "RDMA READ" : "RDMA WRITE") + ": rkey " + MKey.toHex(r.key())
                    + " addr 0x" + Long.toHexString(r.addr() + m.offset) + " length " + bytes + " (a packet at offset "
                    + m.offset + "): " + remoteCheck);
        }
        return null;
    }

    /**
     * A later packet: the state, range and rights of the keys of a list (the requester's own list, or the
     * responder's receive buffers) for the part of it this packet covers. A requester's key fails with LOC_PROT_ERR;
     * a receive buffer's with REM_OP_ERR at the requester and LOC_PROT_ERR at the responder, as {@link DmaEngine#send}.
     */
    DmaResult recheckList(final DmaPort port, final int pd, final List<Segment> list, final int access,
        final long offset, final long bytes, final boolean receive)
    {
        long at = 0;
        for (int i = 0; i < list.size(); i++)
        {
            final Segment s = list.get(i);
            final long from = Math.max(offset, at);
            final long to = Math.min(offset + bytes, at + s.lengthBytes());
            if (from < to)
            {
                final KeyCheck c = mapped(port, s.key(), s.addr() + (from - at), to - from, port.tables().check(
                    s.key(), pd, port.qpn(), access, s.addr() + (from - at), to - from));
                if (c != KeyCheck.VALID)
                {
                    engine.keyCheckFailures++;
                    final String where = (receive ? "receive sge[" : "sge[") + i + "] lkey " + MKey.toHex(s.key())
                        + " addr 0x" + Long.toHexString(s.addr() + (from - at)) + " length " + (to - from)
                        + " (a packet at offset " + offset + "): " + c;
                    return receive ? DmaResult.remote(DmaStatus.REM_OP_ERR, DmaStatus.LOC_PROT_ERR, c, where)
                        : DmaResult.local(DmaStatus.LOC_PROT_ERR, c, where);
                }
            }
            at += s.lengthBytes();
            if (at >= offset + bytes)
            {
                break;
            }
        }
        return null;
    }

    /**
     * A later packet's key check, completed with the translation of the pages the packet touches. A key's checks (PD,
     * rights, state, range) can pass while its translation is gone: a pinned MR whose MTT entries were zapped under
     * the message (a peer-memory client's invalidation of freed GPU memory, {@code AdapterTables.revoke}). The
     * device fails such a packet as it fails an access through a revoked mkey (mlx5 revokes by UMR, {@code
     * mlx5r_umr_revoke_mr}, putting the mkey in the free state): {@link KeyCheck#NOT_PRESENT}, REM_ACCESS_ERR for
     * the rkey and LOC_PROT_ERR for an lkey, as the first packet's checks fail a revoked key. Only an ODP MR's missing
     * page is no failure here: it is a page fault, resolved before the packet ({@link PacketFaults}).
     *
     * @return VALID when the packet may go on, else the failed check.
     */
    private static KeyCheck mapped(final DmaPort port, final int key, final long addr, final long bytes,
        final KeyCheck check)
    {
        if (check == KeyCheck.NOT_PRESENT)
        {
            return port.tables().isOnDemand(key) ? KeyCheck.VALID : check;
        }
        if (check != KeyCheck.VALID || bytes <= 0 || port.tables().isOnDemand(key))
        {
            return check;
        }
        final long first = port.tables().blockIndex(key, addr);
        final long last = port.tables().blockIndex(key, addr + bytes - 1);
        if (first < 0 || last < 0)
        {
            return check;
        }
        for (long b = first; b <= last; b++)
        {
            if (port.tables().mtt().entry(b) >= 0)
            {
                return KeyCheck.NOT_PRESENT;
            }
        }
        return check;
    }

    /** What a message moves; decides which keys its later packets re-check. */
    enum MessageKind
    {
        WRITE,
        READ,
        SEND,
        ATOMIC
    }
}
