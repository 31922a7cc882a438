package dev.rnicsim.dma;

import dev.rnicsim.mtt.AccessFlags;
import dev.rnicsim.mtt.KeyCheck;
import java.util.List;

/**
 * Executes the data movement of RC work requests between two devices: local SGE checks through the lkey, remote
 * checks through the rkey, translation through each device's translation cache and MTT, and the copy between the
 * two hosts' physical memories. It never reads a clock: it counts (operations, bytes moved, translations, failed
 * key checks) and the NIC's cost model prices the counts.
 *
 * <p>Order of checks, as rxe ({@code check_rkey} in rxe_resp.c; rxe_req.c): the requester's local SGEs (key → PD →
 * rights → state → range, failing with LOC_PROT_ERR), the message length (LOC_LEN_ERR), then at the responder the QP's
 * access flags (REM_INV_REQ_ERR), the rkey (key → PD → rights → state → range: REM_ACCESS_ERR), and for atomics the
 * 8-byte alignment (REM_INV_REQ_ERR). A zero-length READ or WRITE checks no rkey (IBA C9-88). Every check runs before
 * any byte moves, so a failed operation leaves both memories unchanged.
 *
 * <p>Not thread safe: one engine per device, driven by the simulator's single thread.
 */
public final class DmaEngine
{
    /** Largest message in bytes: the port attribute {@code max_msg_sz} every known device reports (2^31). */
    public static final long MAX_MESSAGE_BYTES = 1L << 31;

    long operations;
    long bytesMoved;
    long translations;
    long keyCheckFailures;
    long atomics;
    long pageFaults;
    long remotePageFaults;

    /** IBV_ODP_SUPPORT_* bits (libibverbs/verbs.h) naming what faulted. */
    private static final int ODP_SEND = 0x1;

    private static final int ODP_RECV = 0x2;
    private static final int ODP_WRITE = 0x4;
    private static final int ODP_READ = 0x8;
    private static final int ODP_ATOMIC = 0x10;

    /** Told of every memory access, or null. */
    DmaObserver observer;

    /** Key checks and translation (and the DMA address of the last rkey check's first byte). */
    final KeyChecks keys = new KeyChecks(this);
    /** The copies, inline placements, write ordering and the responder's atomics. */
    final Placement placement = new Placement(this);
    /** The page-fault pass of transfers over on-demand-paging MRs. */
    final FaultPass faults = new FaultPass(this);
    /** Messages that move packet by packet. */
    private final PacketPath packets = new PacketPath(this);
    /** The page faults of messages that move packet by packet over on-demand-paging memory. */
    final PacketFaults packetFaults = new PacketFaults(this);

    /**
     * @param dmaObserver told of every memory access this engine makes from now on (null: none).
     */
    public void observer(final DmaObserver dmaObserver)
    {
        this.observer = dmaObserver;
    }

    /**
     * @return the observer told of every memory access, or null.
     */
    public DmaObserver observer()
    {
        return observer;
    }

    void observe(final DmaPort port, final int key, final long iova, final long phys, final long n,
        final boolean write)
    {
        if (observer != null)
        {
            observer.accessed(port, key, iova, phys, n, write);
        }
    }

    /**
     * RDMA WRITE: gathers the local SGL and writes it at {@code (remoteAddr, rkey)}.
     *
     * @param local          the requester.
     * @param localPd        the requester QP's PD.
     * @param sgl            local buffers (lkeys), read without any right beyond the key's.
     * @param remote         the responder.
     * @param remotePd       the responder QP's PD.
     * @param remoteQpAccess the responder QP's access flags ({@link AccessFlags} bits).
     * @param remoteAddr     first remote address (iova).
     * @param rkey           remote key; needs REMOTE_WRITE.
     * @return the outcome: LOC_PROT_ERR, LOC_LEN_ERR, REM_INV_REQ_ERR, REM_ACCESS_ERR or SUCCESS.
     */
    public DmaResult write(final DmaPort local, final int localPd, final List<Segment> sgl, final DmaPort remote,
        final int remotePd, final int remoteQpAccess, final long remoteAddr, final int rkey)
    {
        operations++;
        final DmaResult faulted = !FaultPass.faultsPossible(local, remote) ? null
            : faults.faultIn(new FaultPass.Side(local, localPd, sgl, 0, false, true, ODP_SEND),
            new FaultPass.Side(remote, remotePd, List.of(new Segment(remoteAddr, KeyChecks.total(sgl), rkey)),
                AccessFlags.REMOTE_WRITE,
                true, (remoteQpAccess & AccessFlags.REMOTE_WRITE) != 0, ODP_WRITE));
        if (faulted != null)
        {
            return faulted;
        }
        final long[] localPhys = new long[sgl.size()];
        final DmaResult localFailure = keys.checkSgl(local, localPd, sgl, 0, localPhys);
        if (localFailure != null)
        {
            return localFailure;
        }
        final long length = KeyChecks.total(sgl);
        final DmaResult remoteFailure = keys.checkRemote(remote, remotePd, remoteQpAccess, AccessFlags.REMOTE_WRITE,
            remoteAddr, length, rkey, "RDMA WRITE");
        if (remoteFailure != null)
        {
            return remoteFailure;
        }
        if (length > 0)
        {
            placement.copy(new Walk(this, local, localPd, 0, sgl, localPhys), new Walk(this, remote, remotePd,
                AccessFlags.REMOTE_WRITE,
                List.of(new Segment(remoteAddr, length, rkey)), keys.checkedRemote()), length);
        }
        return DmaResult.success(length, 0);
    }

    /**
     * RDMA WRITE of an inline payload (IBV_SEND_INLINE: copied at post time, no lkey).
     *
     * @param payload        the bytes.
     * @param remote         the responder.
     * @param remotePd       the responder QP's PD.
     * @param remoteQpAccess the responder QP's access flags.
     * @param remoteAddr     first remote address.
     * @param rkey           remote key; needs REMOTE_WRITE.
     * @return the outcome: REM_INV_REQ_ERR, REM_ACCESS_ERR or SUCCESS.
     */
    public DmaResult writeInline(final byte[] payload, final DmaPort remote, final int remotePd,
        final int remoteQpAccess, final long remoteAddr, final int rkey)
    {
        operations++;
        final DmaResult faulted = !FaultPass.faultsPossible(null, remote) ? null
            : faults.faultIn(null, new FaultPass.Side(remote, remotePd,
            List.of(new Segment(remoteAddr, payload.length, rkey)), AccessFlags.REMOTE_WRITE, true,
            (remoteQpAccess & AccessFlags.REMOTE_WRITE) != 0, ODP_WRITE));
        if (faulted != null)
        {
            return faulted;
        }
        final DmaResult remoteFailure = keys.checkRemote(remote, remotePd, remoteQpAccess, AccessFlags.REMOTE_WRITE,
            remoteAddr, payload.length, rkey, "RDMA WRITE");
        if (remoteFailure != null)
        {
            return remoteFailure;
        }
        placement.scatterBytes(payload, new Walk(this, remote, remotePd, AccessFlags.REMOTE_WRITE,
            List.of(new Segment(remoteAddr, payload.length, rkey)), keys.checkedRemote()));
        return DmaResult.success(payload.length, 0);
    }

    /**
     * RDMA READ: reads {@code (remoteAddr, rkey)} into the local SGL. The responder is checked first (the request
     * goes out before the response lands); the local SGL needs LOCAL_WRITE.
     *
     * @param local          the requester.
     * @param localPd        the requester QP's PD.
     * @param sgl            local buffers receiving the data; need LOCAL_WRITE.
     * @param remote         the responder.
     * @param remotePd       the responder QP's PD.
     * @param remoteQpAccess the responder QP's access flags.
     * @param remoteAddr     first remote address.
     * @param rkey           remote key; needs REMOTE_READ.
     * @return the outcome: LOC_LEN_ERR, REM_INV_REQ_ERR, REM_ACCESS_ERR, LOC_PROT_ERR or SUCCESS.
     */
    public DmaResult read(final DmaPort local, final int localPd, final List<Segment> sgl, final DmaPort remote,
        final int remotePd, final int remoteQpAccess, final long remoteAddr, final int rkey)
    {
        operations++;
        final long length = KeyChecks.total(sgl);
        if (length > MAX_MESSAGE_BYTES)
        {
            return DmaResult.local(DmaStatus.LOC_LEN_ERR, KeyCheck.VALID, "message of " + length
                + " bytes > max_msg_sz=" + MAX_MESSAGE_BYTES);
        }
        final DmaResult faulted = !FaultPass.faultsPossible(local, remote) ? null
            : faults.faultIn(new FaultPass.Side(remote, remotePd, List.of(new Segment(remoteAddr, length, rkey)),
            AccessFlags.REMOTE_READ, true, (remoteQpAccess & AccessFlags.REMOTE_READ) != 0, ODP_READ),
            new FaultPass.Side(local, localPd, sgl, AccessFlags.LOCAL_WRITE, false, true, ODP_READ));
        if (faulted != null)
        {
            return faulted;
        }
        final DmaResult remoteFailure = keys.checkRemote(remote, remotePd, remoteQpAccess, AccessFlags.REMOTE_READ,
            remoteAddr, length, rkey, "RDMA READ");
        if (remoteFailure != null)
        {
            return remoteFailure;
        }
        final long[] remotePhys = keys.checkedRemote();
        final long[] localPhys = new long[sgl.size()];
        final DmaResult localFailure = keys.checkSgl(local, localPd, sgl, AccessFlags.LOCAL_WRITE, localPhys);
        if (localFailure != null)
        {
            return localFailure;
        }
        if (length > 0)
        {
            Placement.drainOrdering(remote);
            placement.copy(new Walk(this, remote, remotePd, AccessFlags.REMOTE_READ, List.of(new Segment(remoteAddr,
                length, rkey)),
                remotePhys), new Walk(this, local, localPd, AccessFlags.LOCAL_WRITE, sgl, localPhys), length);
        }
        return DmaResult.success(length, 0);
    }

    /**
     * SEND: gathers the local SGL into the responder's receive buffers.
     *
     * @param local    the requester.
     * @param localPd  the requester QP's PD.
     * @param sgl      local buffers to gather.
     * @param remote   the responder.
     * @param remotePd the responder QP's PD.
     * @param recvSgl  the receive work request's buffers (lkeys of the responder), need LOCAL_WRITE.
     * @return the outcome. Requester: LOC_PROT_ERR, LOC_LEN_ERR, REM_INV_REQ_ERR (receive too small), REM_OP_ERR
     * (bad receive buffer) or SUCCESS; responder: LOC_LEN_ERR (too small) or LOC_PROT_ERR (bad receive buffer).
     */
    public DmaResult send(final DmaPort local, final int localPd, final List<Segment> sgl, final DmaPort remote,
        final int remotePd, final List<Segment> recvSgl)
    {
        operations++;
        final DmaResult faulted = !FaultPass.faultsPossible(local, remote) ? null
            : faults.faultIn(new FaultPass.Side(local, localPd, sgl, 0, false, true, ODP_SEND),
            new FaultPass.Side(remote, remotePd, recvSgl, AccessFlags.LOCAL_WRITE, true, true, ODP_RECV));
        if (faulted != null)
        {
            return faulted;
        }
        final long[] localPhys = new long[sgl.size()];
        final DmaResult localFailure = keys.checkSgl(local, localPd, sgl, 0, localPhys);
        if (localFailure != null)
        {
            return localFailure;
        }
        final long length = KeyChecks.total(sgl);
        final long[] recvPhys = new long[recvSgl.size()];
        final DmaResult recvFailure = keys.checkRecv(remote, remotePd, recvSgl, length, recvPhys);
        if (recvFailure != null)
        {
            return recvFailure;
        }
        if (length > 0)
        {
            placement.copy(new Walk(this, local, localPd, 0, sgl, localPhys), new Walk(this, remote, remotePd,
                AccessFlags.LOCAL_WRITE,
                recvSgl, recvPhys), length);
        }
        return DmaResult.success(length, 0);
    }

    /**
     * SEND of an inline payload.
     *
     * @param payload  the bytes.
     * @param remote   the responder.
     * @param remotePd the responder QP's PD.
     * @param recvSgl  the receive work request's buffers.
     * @return as {@link #send}.
     */
    public DmaResult sendInline(final byte[] payload, final DmaPort remote, final int remotePd,
        final List<Segment> recvSgl)
    {
        operations++;
        final DmaResult faulted = !FaultPass.faultsPossible(null, remote) ? null
            : faults.faultIn(null, new FaultPass.Side(remote, remotePd, recvSgl, AccessFlags.LOCAL_WRITE, true,
            true, ODP_RECV));
        if (faulted != null)
        {
            return faulted;
        }
        final long[] recvPhys = new long[recvSgl.size()];
        final DmaResult recvFailure = keys.checkRecv(remote, remotePd, recvSgl, payload.length, recvPhys);
        if (recvFailure != null)
        {
            return recvFailure;
        }
        placement.scatterBytes(payload, new Walk(this, remote, remotePd, AccessFlags.LOCAL_WRITE, recvSgl, recvPhys));
        return DmaResult.success(payload.length, 0);
    }

    /**
     * ATOMIC_CMP_AND_SWP or ATOMIC_FETCH_AND_ADD on the 8 bytes at {@code (remoteAddr, rkey)} (little-endian, as
     * the host stores them); the original value is written to the local result SGE.
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
     * @param swap           swap value (compare-and-swap).
     * @return the outcome: LOC_PROT_ERR, LOC_LEN_ERR, REM_INV_REQ_ERR (QP rights or misaligned), REM_ACCESS_ERR or
     * SUCCESS with the original value.
     */
    public DmaResult atomic(final DmaPort local, final int localPd, final Segment result, final DmaPort remote,
        final int remotePd, final int remoteQpAccess, final long remoteAddr, final int rkey,
        final boolean compareAndSwap, final long compareAdd, final long swap)
    {
        operations++;
        if (result.lengthBytes() != Long.BYTES)
        {
            return DmaResult.local(DmaStatus.LOC_LEN_ERR, KeyCheck.VALID, "atomic result SGE of "
                + result.lengthBytes() + " bytes; an atomic needs exactly 8");
        }
        final List<Segment> resultSgl = List.of(result);
        final DmaResult faulted = !FaultPass.faultsPossible(local, remote) ? null
            : faults.faultIn(new FaultPass.Side(local, localPd, resultSgl, AccessFlags.LOCAL_WRITE, false, true,
                ODP_ATOMIC),
            new FaultPass.Side(remote, remotePd, List.of(new Segment(remoteAddr, Long.BYTES, rkey)),
                AccessFlags.REMOTE_ATOMIC,
                true, (remoteQpAccess & AccessFlags.REMOTE_ATOMIC) != 0 && (remoteAddr & 7) == 0, ODP_ATOMIC));
        if (faulted != null)
        {
            return faulted;
        }
        final long[] resultPhys = new long[1];
        final DmaResult localFailure = keys.checkSgl(local, localPd, resultSgl, AccessFlags.LOCAL_WRITE, resultPhys);
        if (localFailure != null)
        {
            return localFailure;
        }
        final DmaResult remoteFailure = keys.checkRemote(remote, remotePd, remoteQpAccess, AccessFlags.REMOTE_ATOMIC,
            remoteAddr, Long.BYTES, rkey, "atomic");
        if (remoteFailure != null)
        {
            return remoteFailure;
        }
        if ((remoteAddr & 7) != 0)
        {
            return DmaResult.remote(DmaStatus.REM_INV_REQ_ERR, DmaStatus.REM_INV_REQ_ERR, KeyCheck.VALID,
                "atomic at 0x" + Long.toHexString(remoteAddr)
                    + " is not 8-byte aligned (RESPST_ERR_MISALIGNED_ATOMIC)");
        }
        final long original = placement.executeAtomic(remote, rkey, remoteAddr, compareAndSwap, compareAdd, swap);
        placement.scatterBytes(Placement.toBytes(original), new Walk(this, local, localPd, AccessFlags.LOCAL_WRITE,
            resultSgl, resultPhys));
        return DmaResult.success(Long.BYTES, original);
    }

    /**
     * Opens an RDMA WRITE or READ message that moves packet by packet: the first packet's checks for the whole
     * message, in the order {@link #write} and {@link #read} make them; no byte moves ({@link PacketPath#openMessage}).
     *
     * @param read           true for an RDMA READ, false for WRITE.
     * @param local          the requester.
     * @param localPd        the requester QP's PD.
     * @param sgl            the whole local list.
     * @param remote         the responder.
     * @param remotePd       the responder QP's PD.
     * @param remoteQpAccess the responder QP's access flags.
     * @param remoteAddr     first remote address.
     * @param rkey           remote key.
     * @return the message; its {@link DmaMessage#failure()} is the failure {@link #write} or {@link #read} would
     * report, or null when every check passed.
     */
    public DmaMessage openMessage(final boolean read, final DmaPort local, final int localPd, final List<Segment> sgl,
        final DmaPort remote, final int remotePd, final int remoteQpAccess, final long remoteAddr, final int rkey)
    {
        keys.faultsLater = FaultPass.faultsPossible(local, remote);
        try
        {
            return packets.openMessage(read, local, localPd, sgl, remote, remotePd, remoteQpAccess, remoteAddr, rkey);
        }
        finally
        {
            keys.faultsLater = false;
        }
    }

    /**
     * Opens an RDMA WRITE of an inline payload that moves packet by packet ({@link PacketPath#openInlineWrite}).
     *
     * @param payload        the bytes.
     * @param remote         the responder.
     * @param remotePd       the responder QP's PD.
     * @param remoteQpAccess the responder QP's access flags.
     * @param remoteAddr     first remote address.
     * @param rkey           remote key; needs REMOTE_WRITE.
     * @return the message; {@link DmaMessage#failure()} as {@link #writeInline} would report it.
     */
    public DmaMessage openInlineWrite(final byte[] payload, final DmaPort remote, final int remotePd,
        final int remoteQpAccess, final long remoteAddr, final int rkey)
    {
        keys.faultsLater = FaultPass.faultsPossible(null, remote);
        try
        {
            return packets.openInlineWrite(payload, remote, remotePd, remoteQpAccess, remoteAddr, rkey);
        }
        finally
        {
            keys.faultsLater = false;
        }
    }

    /**
     * Opens a SEND that moves packet by packet into the receive buffers taken at its first packet
     * ({@link PacketPath#openSend}).
     *
     * @param local    the requester.
     * @param localPd  the requester QP's PD.
     * @param sgl      local buffers to gather; ignored when {@code payload} is given.
     * @param payload  an inline payload (IBV_SEND_INLINE), or null.
     * @param remote   the responder.
     * @param remotePd the responder QP's PD.
     * @param recvSgl  the receive work request's buffers (lkeys of the responder), need LOCAL_WRITE.
     * @return the message; {@link DmaMessage#failure()} as {@link #send} or {@link #sendInline} would report it.
     */
    public DmaMessage openSend(final DmaPort local, final int localPd, final List<Segment> sgl, final byte[] payload,
        final DmaPort remote, final int remotePd, final List<Segment> recvSgl)
    {
        keys.faultsLater = FaultPass.faultsPossible(payload == null ? local : null, remote);
        try
        {
            return packets.openSend(local, localPd, sgl, payload, remote, remotePd, recvSgl);
        }
        finally
        {
            keys.faultsLater = false;
        }
    }

    /**
     * The request packet of an atomic: the checks {@link #atomic} makes, then the responder executes it and keeps
     * the original value for the response ({@link PacketPath#openAtomic}).
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
     * @return the message; its {@link DmaMessage#failure()} as {@link #atomic} would report it.
     */
    public DmaMessage openAtomic(final DmaPort local, final int localPd, final Segment result, final DmaPort remote,
        final int remotePd, final int remoteQpAccess, final long remoteAddr, final int rkey,
        final boolean compareAndSwap, final long compareAdd, final long swap)
    {
        // The responder executes the atomic with its request packet: its faults (and the result buffer's) are
        // resolved first, as for an atomic in one step; a responder fault is an RNR NAK and nothing executes.
        final DmaResult faulted = !FaultPass.faultsPossible(local, remote) || result.lengthBytes() != Long.BYTES
            ? null : faults.faultIn(new FaultPass.Side(local, localPd, List.of(result), AccessFlags.LOCAL_WRITE,
                false, true, ODP_ATOMIC),
            new FaultPass.Side(remote, remotePd, List.of(new Segment(remoteAddr, Long.BYTES, rkey)),
                AccessFlags.REMOTE_ATOMIC, true,
                (remoteQpAccess & AccessFlags.REMOTE_ATOMIC) != 0 && (remoteAddr & 7) == 0, ODP_ATOMIC));
        if (faulted != null)
        {
            return new DmaMessage(PacketPath.MessageKind.ATOMIC, local, localPd, List.of(result), remote, remotePd,
                List.of(), faulted, null, null, null);
        }
        return packets.openAtomic(local, localPd, result, remote, remotePd, remoteQpAccess, remoteAddr, rkey,
            compareAndSwap, compareAdd, swap);
    }

    /**
     * Moves the next packet of an open message under the first packet's check; the keys' state, range and rights
     * are re-checked ({@link PacketPath#movePacket}).
     *
     * @param m     an open message whose checks passed.
     * @param bytes the packet's payload.
     * @return null when the packet was placed, else the failure.
     */
    public DmaResult movePacket(final DmaMessage m, final long bytes)
    {
        return packets.movePacket(m, bytes);
    }

    /**
     * @return operations executed (successful or not).
     */
    public long operations()
    {
        return operations;
    }

    /**
     * @return bytes moved between memories (payload of successful operations; atomics count 8).
     */
    public long bytesMoved()
    {
        return bytesMoved;
    }

    /**
     * @return key translations performed (key checks and one per MR page crossed while copying).
     */
    public long translations()
    {
        return translations;
    }

    /**
     * @return key checks that failed (local and remote).
     */
    public long keyCheckFailures()
    {
        return keyCheckFailures;
    }

    /**
     * @return atomics executed.
     */
    public long atomics()
    {
        return atomics;
    }

    /**
     * @return device page faults on the requester's own ODP MRs (each resolved before the transfer went on).
     */
    public long pageFaults()
    {
        return pageFaults;
    }

    /**
     * @return device page faults the responder met on its ODP MRs (each answered with an RNR NAK).
     */
    public long remotePageFaults()
    {
        return remotePageFaults;
    }
}
