package dev.rnicsim.dma;

import dev.rnicsim.mtt.AccessFlags;
import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.mtt.KeyCheck;
import dev.rnicsim.mtt.MKey;
import dev.rnicsim.pagetable.PhysicalMemory;
import java.util.List;

/**
 * Executes the data movement of RC work requests between two devices: local SGE checks through the lkey, remote
 * checks through the rkey, translation through each device's translation cache and MTT, and the copy between the
 * two hosts' physical memories. It never reads a clock: it counts (operations, bytes moved, translations, failed
 * key checks) and the NIC's cost model prices the counts.
 *
 * <p>Order of checks, as rxe ({@code check_rkey} in rxe_resp.c; rxe_req.c): the requester's local SGEs
 * (key → PD → rights → state → range, failing with LOC_PROT_ERR), the message length (LOC_LEN_ERR), then at the
 * responder the QP's access flags (REM_INV_REQ_ERR), the rkey (key → PD → rights → state → range:
 * REM_ACCESS_ERR),
 * and for atomics the 8-byte alignment (REM_INV_REQ_ERR). A zero-length READ or WRITE checks no rkey (IBA C9-88).
 * Every check runs before any byte moves, so a failed operation leaves both memories unchanged.
 *
 * <p>Not thread safe: one engine per device, driven by the simulator's single thread.
 */
public final class DmaEngine
{
    /** Largest message in bytes: the port attribute {@code max_msg_sz} every known device reports (2^31). */
    public static final long MAX_MESSAGE_BYTES = 1L << 31;

    private long operations;
    private long bytesMoved;
    private long translations;
    private long keyCheckFailures;
    private long atomics;
    private long pageFaults;
    private long remotePageFaults;
    /** Most passes over both sides before a transfer's faults are taken as settled (each pass resolves every
     * fault it meets; a later pass is needed only when resolving one side's fault invalidated the other's pages). */
    private static final int MAX_FAULT_PASSES = 8;
    /** IBV_ODP_SUPPORT_* bits (libibverbs/verbs.h) naming what faulted. */
    private static final int ODP_SEND = 0x1;
    private static final int ODP_RECV = 0x2;
    private static final int ODP_WRITE = 0x4;
    private static final int ODP_READ = 0x8;
    private static final int ODP_ATOMIC = 0x10;
    /** The DMA address of the first remote byte found by the last rkey check (-1 when none). */
    private long remoteFirstPhys = -1;
    /** Told of every memory access, or null. */
    private DmaObserver observer;

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

    private void observe(final DmaPort port, final int key, final long iova, final long phys, final long n,
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
        final DmaResult faulted = !faultsPossible(local, remote) ? null
            : faultIn(new Side(local, localPd, sgl, 0, false, true, ODP_SEND),
            new Side(remote, remotePd, List.of(new Segment(remoteAddr, total(sgl), rkey)), AccessFlags.REMOTE_WRITE,
                true, (remoteQpAccess & AccessFlags.REMOTE_WRITE) != 0, ODP_WRITE));
        if (faulted != null)
        {
            return faulted;
        }
        final long[] localPhys = new long[sgl.size()];
        final DmaResult localFailure = checkSgl(local, localPd, sgl, 0, localPhys);
        if (localFailure != null)
        {
            return localFailure;
        }
        final long length = total(sgl);
        final DmaResult remoteFailure = checkRemote(remote, remotePd, remoteQpAccess, AccessFlags.REMOTE_WRITE,
            remoteAddr, length, rkey, "RDMA WRITE");
        if (remoteFailure != null)
        {
            return remoteFailure;
        }
        if (length > 0)
        {
            copy(new Walk(local, localPd, 0, sgl, localPhys), new Walk(remote, remotePd, AccessFlags.REMOTE_WRITE,
                List.of(new Segment(remoteAddr, length, rkey)), checkedRemote()), length);
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
        final DmaResult faulted = !faultsPossible(null, remote) ? null
            : faultIn(null, new Side(remote, remotePd,
            List.of(new Segment(remoteAddr, payload.length, rkey)), AccessFlags.REMOTE_WRITE, true,
            (remoteQpAccess & AccessFlags.REMOTE_WRITE) != 0, ODP_WRITE));
        if (faulted != null)
        {
            return faulted;
        }
        final DmaResult remoteFailure = checkRemote(remote, remotePd, remoteQpAccess, AccessFlags.REMOTE_WRITE,
            remoteAddr, payload.length, rkey, "RDMA WRITE");
        if (remoteFailure != null)
        {
            return remoteFailure;
        }
        scatterBytes(payload, new Walk(remote, remotePd, AccessFlags.REMOTE_WRITE,
            List.of(new Segment(remoteAddr, payload.length, rkey)), checkedRemote()));
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
        final long length = total(sgl);
        if (length > MAX_MESSAGE_BYTES)
        {
            return DmaResult.local(DmaStatus.LOC_LEN_ERR, KeyCheck.VALID, "message of " + length
                + " bytes > max_msg_sz=" + MAX_MESSAGE_BYTES);
        }
        final DmaResult faulted = !faultsPossible(local, remote) ? null
            : faultIn(new Side(remote, remotePd, List.of(new Segment(remoteAddr, length, rkey)),
            AccessFlags.REMOTE_READ, true, (remoteQpAccess & AccessFlags.REMOTE_READ) != 0, ODP_READ),
            new Side(local, localPd, sgl, AccessFlags.LOCAL_WRITE, false, true, ODP_READ));
        if (faulted != null)
        {
            return faulted;
        }
        final DmaResult remoteFailure = checkRemote(remote, remotePd, remoteQpAccess, AccessFlags.REMOTE_READ,
            remoteAddr, length, rkey, "RDMA READ");
        if (remoteFailure != null)
        {
            return remoteFailure;
        }
        final long[] remotePhys = checkedRemote();
        final long[] localPhys = new long[sgl.size()];
        final DmaResult localFailure = checkSgl(local, localPd, sgl, AccessFlags.LOCAL_WRITE, localPhys);
        if (localFailure != null)
        {
            return localFailure;
        }
        if (length > 0)
        {
            drainOrdering(remote);
            copy(new Walk(remote, remotePd, AccessFlags.REMOTE_READ, List.of(new Segment(remoteAddr, length, rkey)),
                remotePhys), new Walk(local, localPd, AccessFlags.LOCAL_WRITE, sgl, localPhys), length);
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
        final DmaResult faulted = !faultsPossible(local, remote) ? null
            : faultIn(new Side(local, localPd, sgl, 0, false, true, ODP_SEND),
            new Side(remote, remotePd, recvSgl, AccessFlags.LOCAL_WRITE, true, true, ODP_RECV));
        if (faulted != null)
        {
            return faulted;
        }
        final long[] localPhys = new long[sgl.size()];
        final DmaResult localFailure = checkSgl(local, localPd, sgl, 0, localPhys);
        if (localFailure != null)
        {
            return localFailure;
        }
        final long length = total(sgl);
        final long[] recvPhys = new long[recvSgl.size()];
        final DmaResult recvFailure = checkRecv(remote, remotePd, recvSgl, length, recvPhys);
        if (recvFailure != null)
        {
            return recvFailure;
        }
        if (length > 0)
        {
            copy(new Walk(local, localPd, 0, sgl, localPhys), new Walk(remote, remotePd, AccessFlags.LOCAL_WRITE,
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
        final DmaResult faulted = !faultsPossible(null, remote) ? null
            : faultIn(null, new Side(remote, remotePd, recvSgl, AccessFlags.LOCAL_WRITE, true,
            true, ODP_RECV));
        if (faulted != null)
        {
            return faulted;
        }
        final long[] recvPhys = new long[recvSgl.size()];
        final DmaResult recvFailure = checkRecv(remote, remotePd, recvSgl, payload.length, recvPhys);
        if (recvFailure != null)
        {
            return recvFailure;
        }
        scatterBytes(payload, new Walk(remote, remotePd, AccessFlags.LOCAL_WRITE, recvSgl, recvPhys));
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
        final DmaResult faulted = !faultsPossible(local, remote) ? null
            : faultIn(new Side(local, localPd, resultSgl, AccessFlags.LOCAL_WRITE, false, true, ODP_ATOMIC),
            new Side(remote, remotePd, List.of(new Segment(remoteAddr, Long.BYTES, rkey)), AccessFlags.REMOTE_ATOMIC,
                true, (remoteQpAccess & AccessFlags.REMOTE_ATOMIC) != 0 && (remoteAddr & 7) == 0, ODP_ATOMIC));
        if (faulted != null)
        {
            return faulted;
        }
        final long[] resultPhys = new long[1];
        final DmaResult localFailure = checkSgl(local, localPd, resultSgl, AccessFlags.LOCAL_WRITE, resultPhys);
        if (localFailure != null)
        {
            return localFailure;
        }
        final DmaResult remoteFailure = checkRemote(remote, remotePd, remoteQpAccess, AccessFlags.REMOTE_ATOMIC,
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
        final long original = executeAtomic(remote, rkey, remoteAddr, compareAndSwap, compareAdd, swap);
        scatterBytes(toBytes(original), new Walk(local, localPd, AccessFlags.LOCAL_WRITE, resultSgl, resultPhys));
        return DmaResult.success(Long.BYTES, original);
    }

    /**
     * Opens an RDMA WRITE or READ message that moves packet by packet: the checks the responder makes on the first
     * packet, for the whole message, and the requester's checks of its whole local list, in the order {@link #write}
     * and {@link #read} make them; no byte moves. The packets are then moved with {@link #movePacket}, under this
     * check (rxe {@code check_rkey} runs on the first packet only, with the RETH's DMA length; IBA 9.7.4.1.3): the
     * message keeps its place in both lists between packets, as a QP context keeps its DMA state.
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
     * @return the message; its {@link Message#failure()} is the failure {@link #write} or {@link #read} would
     * report, or null when every check passed.
     */
    public Message openMessage(final boolean read, final DmaPort local, final int localPd, final List<Segment> sgl,
        final DmaPort remote, final int remotePd, final int remoteQpAccess, final long remoteAddr, final int rkey)
    {
        operations++;
        final long length = total(sgl);
        final long[] localPhys = new long[sgl.size()];
        final List<Segment> remoteSgl = List.of(new Segment(remoteAddr, length, rkey));
        final int remoteAccess = read ? AccessFlags.REMOTE_READ : AccessFlags.REMOTE_WRITE;
        final int localAccess = read ? AccessFlags.LOCAL_WRITE : 0;
        DmaResult failure;
        if (read)
        {
            failure = length > MAX_MESSAGE_BYTES ? DmaResult.local(DmaStatus.LOC_LEN_ERR, KeyCheck.VALID, "message of "
                + length + " bytes > max_msg_sz=" + MAX_MESSAGE_BYTES) : checkRemote(remote, remotePd, remoteQpAccess,
                remoteAccess, remoteAddr, length, rkey, "RDMA READ");
            final long[] remotePhys = checkedRemote();
            if (failure == null)
            {
                failure = checkSgl(local, localPd, sgl, localAccess, localPhys);
            }
            return opened(new Message(MessageKind.READ, local, localPd, sgl, remote, remotePd, remoteSgl, failure,
                new Walk(remote, remotePd, remoteAccess, remoteSgl, remotePhys),
                new Walk(local, localPd, localAccess, sgl, localPhys), null));
        }
        failure = checkSgl(local, localPd, sgl, localAccess, localPhys);
        if (failure == null)
        {
            failure = checkRemote(remote, remotePd, remoteQpAccess, remoteAccess, remoteAddr, length, rkey,
                "RDMA WRITE");
        }
        return opened(new Message(MessageKind.WRITE, local, localPd, sgl, remote, remotePd, remoteSgl, failure,
            new Walk(local, localPd, localAccess, sgl, localPhys),
            new Walk(remote, remotePd, remoteAccess, remoteSgl, checkedRemote()), null));
    }

    /** Tells the observer of a message whose first packet's rkey check passed. */
    private Message opened(final Message m)
    {
        if (observer != null && m.failure == null)
        {
            observer.opened(m, m.remote, m.remoteSgl.get(0).key());
        }
        return m;
    }

    /**
     * Opens an RDMA WRITE of an inline payload (IBV_SEND_INLINE: the bytes were copied into the WQE at post time, so
     * no lkey is checked) that moves packet by packet: the responder's checks of the first packet, for the whole
     * message, as {@link #writeInline} makes them.
     *
     * @param payload        the bytes.
     * @param remote         the responder.
     * @param remotePd       the responder QP's PD.
     * @param remoteQpAccess the responder QP's access flags.
     * @param remoteAddr     first remote address.
     * @param rkey           remote key; needs REMOTE_WRITE.
     * @return the message; {@link Message#failure()} as {@link #writeInline} would report it.
     */
    public Message openInlineWrite(final byte[] payload, final DmaPort remote, final int remotePd,
        final int remoteQpAccess, final long remoteAddr, final int rkey)
    {
        operations++;
        final List<Segment> remoteSgl = List.of(new Segment(remoteAddr, payload.length, rkey));
        final DmaResult failure = checkRemote(remote, remotePd, remoteQpAccess, AccessFlags.REMOTE_WRITE, remoteAddr,
            payload.length, rkey, "RDMA WRITE");
        return opened(new Message(MessageKind.WRITE, null, 0, List.of(), remote, remotePd, remoteSgl, failure, null,
            new Walk(remote, remotePd, AccessFlags.REMOTE_WRITE, remoteSgl, checkedRemote()), payload));
    }

    /**
     * Opens a SEND that moves packet by packet into the receive buffers the responder took for it at the first
     * packet (IBA 9.7.2: a multi-packet SEND consumes one receive WQE, its FIRST packet fetching it; rxe
     * {@code get_srq_wqe}/{@code send_data_in}). The first packet makes the checks {@link #send} makes; the later
     * packets re-check the state of the receive buffers' lkeys they fill (and of the gather list's lkeys they
     * read), so a receive buffer deregistered mid-message fails the packet that needs it.
     *
     * @param local    the requester.
     * @param localPd  the requester QP's PD.
     * @param sgl      local buffers to gather; ignored when {@code payload} is given.
     * @param payload  an inline payload (IBV_SEND_INLINE), or null.
     * @param remote   the responder.
     * @param remotePd the responder QP's PD.
     * @param recvSgl  the receive work request's buffers (lkeys of the responder), need LOCAL_WRITE.
     * @return the message; {@link Message#failure()} as {@link #send} or {@link #sendInline} would report it.
     */
    public Message openSend(final DmaPort local, final int localPd, final List<Segment> sgl, final byte[] payload,
        final DmaPort remote, final int remotePd, final List<Segment> recvSgl)
    {
        operations++;
        final List<Segment> gather = payload == null ? sgl : List.of();
        final long[] localPhys = new long[gather.size()];
        DmaResult failure = payload == null ? checkSgl(local, localPd, gather, 0, localPhys) : null;
        final long length = payload == null ? total(gather) : payload.length;
        final long[] recvPhys = new long[recvSgl.size()];
        if (failure == null)
        {
            failure = checkRecv(remote, remotePd, recvSgl, length, recvPhys);
        }
        return new Message(MessageKind.SEND, local, localPd, gather, remote, remotePd, recvSgl, failure,
            payload == null ? new Walk(local, localPd, 0, gather, localPhys) : null,
            new Walk(remote, remotePd, AccessFlags.LOCAL_WRITE, recvSgl, recvPhys), payload);
    }

    /**
     * The request packet of ATOMIC_CMP_AND_SWP or ATOMIC_FETCH_AND_ADD: the checks {@link #atomic} makes (the local
     * result SGE, then the responder's rkey, rights and alignment), then the responder executes the atomic on its
     * memory and keeps the original value for the response (IBA 9.4.5: one request packet, one ATOMIC ACKNOWLEDGE
     * packet carrying the original value; rxe {@code atomic_reply}). The response is placed into the local result
     * SGE by {@link #movePacket} (8 bytes), which re-checks the result lkey's state as it does for every later
     * packet: a result MR deregistered between request and response fails with LOC_PROT_ERR after the remote memory
     * changed, as on hardware.
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
     * @return the message; its {@link Message#failure()} as {@link #atomic} would report it.
     */
    public Message openAtomic(final DmaPort local, final int localPd, final Segment result, final DmaPort remote,
        final int remotePd, final int remoteQpAccess, final long remoteAddr, final int rkey,
        final boolean compareAndSwap, final long compareAdd, final long swap)
    {
        operations++;
        final List<Segment> resultSgl = List.of(result);
        final List<Segment> remoteSgl = List.of(new Segment(remoteAddr, Long.BYTES, rkey));
        final long[] resultPhys = new long[1];
        DmaResult failure = result.lengthBytes() != Long.BYTES ? DmaResult.local(DmaStatus.LOC_LEN_ERR,
            KeyCheck.VALID, "atomic result SGE of " + result.lengthBytes() + " bytes; an atomic needs exactly 8")
            : checkSgl(local, localPd, resultSgl, AccessFlags.LOCAL_WRITE, resultPhys);
        if (failure == null)
        {
            failure = checkRemote(remote, remotePd, remoteQpAccess, AccessFlags.REMOTE_ATOMIC, remoteAddr, Long.BYTES,
                rkey, "atomic");
        }
        if (failure == null && (remoteAddr & 7) != 0)
        {
            failure = DmaResult.remote(DmaStatus.REM_INV_REQ_ERR, DmaStatus.REM_INV_REQ_ERR, KeyCheck.VALID,
                "atomic at 0x" + Long.toHexString(remoteAddr) + " is not 8-byte aligned (RESPST_ERR_MISALIGNED_ATOMIC)");
        }
        final Message m = new Message(MessageKind.ATOMIC, local, localPd, resultSgl, remote, remotePd, remoteSgl,
            failure, null, new Walk(local, localPd, AccessFlags.LOCAL_WRITE, resultSgl, resultPhys), null);
        if (failure == null)
        {
            final long original = executeAtomic(remote, rkey, remoteAddr, compareAndSwap, compareAdd, swap);
            m.atomicOriginal = original;
            m.inline = toBytes(original);
        }
        return m;
    }

    /**
     * Moves the next packet of an open message: {@code bytes} from where the last packet ended. The keys are not
     * looked up again, but their state, range and rights are: a key retired since the first packet fails the packet
     * (REM_ACCESS_ERR for the rkey, LOC_PROT_ERR for an lkey) and nothing of it moves; what earlier packets placed
     * stays. Allocates nothing on success.
     *
     * @param m     an open message whose checks passed.
     * @param bytes the packet's payload.
     * @return null when the packet was placed, else the failure.
     */
    public DmaResult movePacket(final Message m, final long bytes)
    {
        final DmaResult remoteFailure = switch (m.kind)
        {
            case WRITE, READ -> recheckRkey(m, bytes);
            case SEND -> recheckList(m.remote, m.remotePd, m.remoteSgl, AccessFlags.LOCAL_WRITE, m.offset, bytes,
                true);
            case ATOMIC -> null;
        };
        if (remoteFailure != null)
        {
            return remoteFailure;
        }
        final DmaResult localFailure = m.kind == MessageKind.ATOMIC || m.inline == null
            ? recheckList(m.local, m.localPd, m.sgl, m.kind == MessageKind.WRITE || m.kind == MessageKind.SEND ? 0
            : AccessFlags.LOCAL_WRITE, m.kind == MessageKind.ATOMIC ? 0 : m.offset, bytes, false) : null;
        if (localFailure != null)
        {
            return localFailure;
        }
        if (observer != null && m.kind != MessageKind.SEND && m.kind != MessageKind.ATOMIC)
        {
            observer.packet(m, m.remote, m.remoteSgl.get(0).key());
        }
        if (m.kind == MessageKind.WRITE)
        {
            m.dst.resync();
        }
        else if (m.kind == MessageKind.READ)
        {
            m.src.resync();
        }
        if (m.kind == MessageKind.READ)
        {
            drainOrdering(m.remote);
        }
        if (m.inline != null)
        {
            scatterBytes(m.inline, m.kind == MessageKind.ATOMIC ? 0 : (int)m.offset, (int)bytes, m.dst);
        }
        else
        {
            copy(m.src, m.dst, bytes);
        }
        m.offset += bytes;
        return null;
    }

    /** A later packet of a WRITE or READ: the rkey's state, range and rights for this packet's part. */
    private DmaResult recheckRkey(final Message m, final long bytes)
    {
        final int remoteAccess = m.kind == MessageKind.READ ? AccessFlags.REMOTE_READ : AccessFlags.REMOTE_WRITE;
        final Segment r = m.remoteSgl.get(0);
        final KeyCheck remoteCheck = m.remote.tables().check(r.key(), m.remotePd, m.remote.qpn(), remoteAccess,
            r.addr() + m.offset, bytes);
        if (remoteCheck != KeyCheck.VALID && remoteCheck != KeyCheck.NOT_PRESENT)
        {
            keyCheckFailures++;
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
     * a receive buffer's with REM_OP_ERR at the requester and LOC_PROT_ERR at the responder, as {@link #send}.
     */
    private DmaResult recheckList(final DmaPort port, final int pd, final List<Segment> list, final int access,
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
                final KeyCheck c = port.tables().check(s.key(), pd, port.qpn(), access, s.addr() + (from - at),
                    to - from);
                if (c != KeyCheck.VALID && c != KeyCheck.NOT_PRESENT)
                {
                    keyCheckFailures++;
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

    /** What a message moves; decides which keys its later packets re-check. */
    private enum MessageKind
    {
        WRITE,
        READ,
        SEND,
        ATOMIC
    }

    /**
     * An RDMA WRITE or READ message opened by {@link #openMessage}: its checks' outcome and where its next packet
     * starts in both lists. Not thread safe.
     */
    public final class Message
    {
        private final MessageKind kind;
        private final DmaPort local;
        private final int localPd;
        private final List<Segment> sgl;
        private final DmaPort remote;
        private final int remotePd;
        private final List<Segment> remoteSgl;
        private final DmaResult failure;
        private final Walk src;
        private final Walk dst;
        /** An inline payload, or the original value an atomic response carries; null when the source is a walk. */
        private byte[] inline;
        private long atomicOriginal;
        private long offset;

        private Message(final MessageKind kind, final DmaPort local, final int localPd, final List<Segment> sgl,
            final DmaPort remote, final int remotePd, final List<Segment> remoteSgl, final DmaResult failure,
            final Walk src, final Walk dst, final byte[] inline)
        {
            this.kind = kind;
            this.inline = inline;
            this.local = local;
            this.localPd = localPd;
            this.sgl = sgl;
            this.remote = remote;
            this.remotePd = remotePd;
            this.remoteSgl = remoteSgl;
            this.failure = failure;
            this.src = src;
            this.dst = dst;
        }

        /**
         * @return the failure of the first packet's checks, or null when they passed.
         */
        public DmaResult failure()
        {
            return failure;
        }

        /**
         * @return bytes moved so far.
         */
        public long offset()
        {
            return offset;
        }

        /**
         * @return for an atomic whose request was executed, the original value at the responder (what the response
         * carries); else 0.
         */
        public long atomicOriginal()
        {
            return atomicOriginal;
        }
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

    // ------------------------------------------------------------------ page faults

    /**
     * One side of a transfer as the fault pass sees it.
     *
     * @param allowed      false when the transfer will fail before touching this side's memory (the responder QP's
     *                     access flags), so no fault is taken on it.
     * @param odpOperation the ODP capability bit of what this side does ({@link PageFaultHandler#resolve}).
     */
    private record Side(DmaPort port, int pd, List<Segment> segments, int access, boolean remote, boolean allowed,
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
    private DmaResult faultIn(final Side first, final Side second)
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
                        remotePageFaults++;
                    }
                    else
                    {
                        pageFaults++;
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
    private static boolean faultsPossible(final DmaPort local, final DmaPort remote)
    {
        return local != null && local.faults() != null && local.tables().hasOnDemand()
            || remote != null && remote.faults() != null && remote.tables().hasOnDemand();
    }

    private static boolean hasOnDemand(final Side side)
    {
        return side != null && side.allowed() && side.port().faults() != null
            && side.port().tables().hasOnDemand();
    }

    /** True when every non-empty segment of the side passes its key checks (a missing page aside). */
    private static boolean keysPass(final Side side)
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
    private static DmaResult failedFault(final Side side, final int segment, final String detail)
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

    // ------------------------------------------------------------------ checks

    /**
     * Translates every non-empty segment with the rights asked for; the DMA address of each one's first byte goes
     * to {@code phys} (-1 for empty ones) for the copy to start at.
     *
     * @return the index of the first segment whose check failed (its code is in {@code phys}), or -1.
     */
    private int translateAll(final DmaPort port, final int pd, final List<Segment> segments, final int access,
        final long[] phys)
    {
        for (int i = 0; i < segments.size(); i++)
        {
            final Segment s = segments.get(i);
            phys[i] = s.lengthBytes() == 0 ? -1 : translate(port, s.key(), pd, access, s.addr(),
                s.lengthBytes());
            if (s.lengthBytes() != 0 && phys[i] < 0)
            {
                return i;
            }
        }
        return -1;
    }

    /** Checks every SGE of the requester, then the message length. */
    private DmaResult checkSgl(final DmaPort port, final int pd, final List<Segment> sgl, final int access,
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
        if (length > MAX_MESSAGE_BYTES)
        {
            return DmaResult.local(DmaStatus.LOC_LEN_ERR, KeyCheck.VALID, "message of " + length
                + " bytes > max_msg_sz=" + MAX_MESSAGE_BYTES);
        }
        return null;
    }

    private DmaResult checkRemote(final DmaPort remote, final int pd, final int qpAccess, final int access,
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
    private DmaResult checkRecv(final DmaPort remote, final int pd, final List<Segment> recvSgl, final long length,
        final long[] phys)
    {
        final int bad = translateAll(remote, pd, recvSgl, AccessFlags.LOCAL_WRITE, phys);
        if (bad >= 0)
        {
            final Segment s = recvSgl.get(bad);
            final KeyCheck check = KeyCheck.ofTranslation(phys[bad]);
            return DmaResult.remote(DmaStatus.REM_OP_ERR, DmaStatus.LOC_PROT_ERR, check, "receive sge[" + bad
                + "] lkey " + MKey.toHex(s.key()) + " addr 0x" + Long.toHexString(s.addr()) + ": " + check);
        }
        final long capacity = total(recvSgl);
        if (capacity < length)
        {
            return DmaResult.remote(DmaStatus.REM_INV_REQ_ERR, DmaStatus.LOC_LEN_ERR, KeyCheck.VALID, "message of "
                + length + " bytes > receive buffers of " + capacity + " bytes");
        }
        return null;
    }

    private long[] checkedRemote()
    {
        return new long[] {remoteFirstPhys};
    }

    private long translate(final DmaPort port, final int key, final int pd, final int access,
        final long addr, final long length)
    {
        translations++;
        final long r = port.tables().translate(key, pd, port.qpn(), access, addr, length);
        if (r < 0)
        {
            keyCheckFailures++;
        }
        return r;
    }

    private static String rightName(final int access)
    {
        return switch (access)
        {
            case AccessFlags.REMOTE_WRITE -> "REMOTE_WRITE";
            case AccessFlags.REMOTE_READ -> "REMOTE_READ";
            default -> "REMOTE_ATOMIC";
        };
    }

    private static long total(final List<Segment> sgl)
    {
        long total = 0;
        for (int i = 0; i < sgl.size(); i++)
        {
            total += sgl.get(i).lengthBytes();
        }
        return total;
    }

    // ------------------------------------------------------------------ movement

    private void copy(final Walk src, final Walk dst, final long length)
    {
        final WriteOrdering ordering = dst.port.ordering();
        final boolean relaxed = ordering != null && relaxedTarget(dst);
        if (ordering != null && ordering.engaged(relaxed))
        {
            placeInChunks(src, null, dst, length, ordering, relaxed);
            return;
        }
        long remaining = length;
        while (remaining > 0)
        {
            final int n = (int)Math.min(Math.min(src.run(), dst.run()), Math.min(remaining, Integer.MAX_VALUE));
            PhysicalMemory.copy(src.port.memory(), src.phys(), dst.port.memory(), dst.phys(), n);
            if (observer != null)
            {
                observer.accessed(src.port, src.key(), src.addr, src.phys(), n, false);
                observer.accessed(dst.port, dst.key(), dst.addr, dst.phys(), n, true);
            }
            src.advance(n);
            dst.advance(n);
            remaining -= n;
        }
        bytesMoved += length;
    }

    /** Places {@code length} bytes of {@code data} from {@code from} at the destination walk's position. */
    private void scatterBytes(final byte[] data, final int from, final int length, final Walk dst)
    {
        if (from == 0 && length == data.length)
        {
            scatterBytes(data, dst);
            return;
        }
        scatterBytes(java.util.Arrays.copyOfRange(data, from, from + length), dst);
    }

    private void scatterBytes(final byte[] data, final Walk dst)
    {
        final WriteOrdering ordering = dst.port.ordering();
        final boolean relaxed = ordering != null && relaxedTarget(dst);
        if (ordering != null && ordering.engaged(relaxed))
        {
            placeInChunks(null, data, dst, data.length, ordering, relaxed);
            return;
        }
        int done = 0;
        while (done < data.length)
        {
            final int n = (int)Math.min(dst.run(), data.length - done);
            dst.port.memory().write(dst.phys(), data, done, n);
            observe(dst.port, dst.key(), dst.addr, dst.phys(), n, true);
            dst.advance(n);
            done += n;
        }
        bytesMoved += data.length;
    }

    /**
     * Reads the source (a walk or bytes) in chunks of at most {@link WriteOrdering#CHUNK_BYTES} that never cross an
     * MR page or segment of the destination, and hands them to the destination's ordering to place. The source is
     * read once, page run by page run, into one array the chunks are views of.
     */
    private void placeInChunks(final Walk src, final byte[] data, final Walk dst, final long length,
        final WriteOrdering ordering, final boolean relaxed)
    {
        final byte[] bytes;
        int[] srcRunEnds = null;
        if (src != null)
        {
            bytes = new byte[(int)length];
            srcRunEnds = new int[8];
            int runs = 0;
            int read = 0;
            while (read < length)
            {
                final int n = (int)Math.min(src.run(), length - read);
                src.port.memory().read(src.phys(), bytes, read, n);
                observe(src.port, src.key(), src.addr, src.phys(), n, false);
                src.advance(n);
                read += n;
                if (runs == srcRunEnds.length)
                {
                    srcRunEnds = java.util.Arrays.copyOf(srcRunEnds, runs * 2);
                }
                srcRunEnds[runs++] = read;
            }
        }
        else
        {
            bytes = java.util.Arrays.copyOf(data, (int)length); // chunks may stay in flight after the caller returns
        }
        final List<WriteOrdering.Chunk> chunks = new java.util.ArrayList<>((int)(length / WriteOrdering.CHUNK_BYTES)
            + 1);
        int done = 0;
        int srcRun = 0;
        while (done < length)
        {
            final int dstRun = (int)Math.min(dst.run(), length - done);
            observe(dst.port, dst.key(), dst.addr, dst.phys(), dstRun, true);
            final long phys = dst.phys();
            for (int at = 0; at < dstRun;)
            {
                int n = Math.min(dstRun - at, WriteOrdering.CHUNK_BYTES);
                if (srcRunEnds != null)
                {
                    while (srcRunEnds[srcRun] <= done + at)
                    {
                        srcRun++;
                    }
                    n = Math.min(n, srcRunEnds[srcRun] - done - at);
                }
                chunks.add(ordering.chunk(dst.port.memory(), phys + at, bytes, done + at, n));
                at += n;
            }
            dst.advance(dstRun);
            done += dstRun;
        }
        ordering.place(chunks, relaxed);
        bytesMoved += length;
    }

    /**
     * True when the destination device applies relaxed ordering and every MR the destination walk writes asks for it
     * (IBV_ACCESS_RELAXED_ORDERING).
     */
    private static boolean relaxedTarget(final Walk dst)
    {
        if (!dst.port.ordering().relaxedApplied())
        {
            return false;
        }
        boolean any = false;
        for (final Segment s : dst.segments)
        {
            if (s.lengthBytes() == 0)
            {
                continue;
            }
            final int access = dst.port.tables().mpt().accessBits(s.key());
            if (access == -1 || (access & AccessFlags.RELAXED_ORDERING) == 0)
            {
                return false;
            }
            any = true;
        }
        return any;
    }

    /** Reads and atomics order behind every write still in flight to that memory. */
    private static void drainOrdering(final DmaPort port)
    {
        if (port.ordering() != null)
        {
            port.ordering().drain();
        }
    }

    /**
     * Runs an atomic at the responder after its checks passed (IBA 9.4.5): waits for earlier relaxed-ordering writes
     * to the region, reads the 8 bytes, writes the new value when it differs and reports both accesses.
     *
     * @return the original value, which the response carries back.
     */
    private long executeAtomic(final DmaPort remote, final int rkey, final long remoteAddr, final boolean compareAndSwap,
        final long compareAdd, final long swap)
    {
        atomics++;
        drainOrdering(remote);
        final long remotePhys = checkedRemote()[0];
        final byte[] bytes = new byte[Long.BYTES];
        remote.memory().read(remotePhys, bytes, 0, Long.BYTES);
        observe(remote, rkey, remoteAddr, remotePhys, Long.BYTES, false);
        final long original = toLong(bytes);
        final long updated = compareAndSwap ? (original == compareAdd ? swap : original) : original + compareAdd;
        if (updated != original)
        {
            remote.memory().write(remotePhys, toBytes(updated), 0, Long.BYTES);
            observe(remote, rkey, remoteAddr, remotePhys, Long.BYTES, true);
        }
        return original;
    }

    private static long toLong(final byte[] b)
    {
        long v = 0;
        for (int i = Long.BYTES - 1; i >= 0; i--)
        {
            v = (v << 8) | (b[i] & 0xff);
        }
        return v;
    }

    private static byte[] toBytes(final long v)
    {
        final byte[] b = new byte[Long.BYTES];
        for (int i = 0; i < Long.BYTES; i++)
        {
            b[i] = (byte)(v >>> (8 * i));
        }
        return b;
    }

    /**
     * A position in a list of checked segments: the physical address of the current byte and the bytes up to the
     * end of the current MR page or segment (the page-size choice makes each MR page physically contiguous). The
     * next page or segment is translated only when a byte of it is about to move, so a receive larger than the
     * message costs no translation for the part left unwritten.
     */
    private final class Walk
    {
        private final DmaPort port;
        private final int pd;
        private final int access;
        private final List<Segment> segments;
        private final long[] firstPhys;
        private int index = -1;
        private long addr;
        private long segmentLeft;
        private long pageBytes;
        private int pageShift;
        private long mttIndex;
        private long phys;
        /** The current segment's MR is an implicit ODP MR: its pages are not consecutive MTT entries. */
        private boolean indirect;
        /** 0: phys is current; 1: translate addr first; 2: move to the next segment first. */
        private int pending = 2;

        /** {@code firstPhys}: each segment's first DMA address, found when it was checked (-1: translate it). */
        Walk(final DmaPort port, final int pd, final int access, final List<Segment> segments, final long[] firstPhys)
        {
            this.port = port;
            this.pd = pd;
            this.access = access;
            this.segments = segments;
            this.firstPhys = firstPhys;
        }

        /**
         * Before a later packet of a message: the device resolves it through the key's current context (its MPT
         * entry and MTT entries now; the packet carries no key of its own, IBA 9.7.4.1.3). When the key's MPT entry
         * no longer maps the block this walk stands in — the key was retired and came back under another
         * registration (a variant that wrapped) — the walk is translated again from the key, so the packet lands
         * where the key translates now and never in the pages of the registration that is gone (or of another MR
         * that took its MTT entries).
         */
        void resync()
        {
            if (index < 0 || pending == 2 || indirect)
            {
                return;
            }
            final int key = segments.get(index).key();
            final long expected = port.tables().blockIndex(key, addr);
            final long standing = pending == 1 ? mttIndex + 1 : mttIndex;
            if (expected < 0 || expected == standing && port.tables().pageShift(key) == pageShift)
            {
                return;
            }
            pageShift = port.tables().pageShift(key);
            pageBytes = 1L << pageShift;
            // Only the current page: the packet's re-check covered its bytes, not the rest of the old segment.
            final long r = translate(port, key, pd, access, addr, Math.min(segmentLeft,
                pageBytes - (addr & (pageBytes - 1))));
            if (r < 0)
            {
                throw new IllegalStateException("a re-checked packet's first page does not translate: "
                    + KeyCheck.ofTranslation(r));
            }
            phys = r;
            mttIndex = expected;
            pending = 0;
        }

        /** @return the key of the current segment (after {@link #phys()} or {@link #run()} resolved it). */
        int key()
        {
            return segments.get(index).key();
        }

        /** @return the physical address of the current byte. */
        long phys()
        {
            resolve();
            return phys;
        }

        long run()
        {
            resolve();
            final long toPageEnd = pageBytes - (addr & (pageBytes - 1));
            return Math.min(toPageEnd, segmentLeft);
        }

        void advance(final long n)
        {
            final long toPageEnd = pageBytes - (addr & (pageBytes - 1));
            addr += n;
            segmentLeft -= n;
            if (segmentLeft == 0)
            {
                pending = 2;
            }
            else if (n == toPageEnd)
            {
                pending = 1;
            }
            else
            {
                phys += n;
            }
        }

        private void resolve()
        {
            if (pending == 2)
            {
                nextSegment();
            }
            else if (pending == 1)
            {
                nextPage();
            }
            pending = 0;
        }

        private void nextSegment()
        {
            do
            {
                index++;
                if (index >= segments.size())
                {
                    throw new IllegalStateException("walked past the last checked segment");
                }
            }
            while (segments.get(index).lengthBytes() == 0);
            final Segment s = segments.get(index);
            addr = s.addr();
            segmentLeft = s.lengthBytes();
            pageShift = port.tables().pageShift(s.key());
            pageBytes = 1L << pageShift;
            indirect = port.tables().isImplicit(s.key());
            if (firstPhys[index] >= 0)
            {
                phys = firstPhys[index];
            }
            else
            {
                locate();
            }
            mttIndex = port.tables().blockIndex(s.key(), addr);
        }

        /** Into the next MR page of a checked segment: only the next MTT entry is fetched. */
        private void nextPage()
        {
            if (indirect)
            {
                locate();
                return;
            }
            translations++;
            mttIndex++;
            final long r = port.tables().blockDmaAddress(mttIndex, pageShift);
            if (r < 0)
            {
                throw new IllegalStateException("MTT entry " + mttIndex + " of a checked segment is not present");
            }
            phys = r;
        }

        private void locate()
        {
            final long r = translate(port, segments.get(index).key(), pd, access, addr, segmentLeft);
            if (r < 0)
            {
                // Every segment was checked before the first byte moved; nothing can revoke it in between.
                throw new IllegalStateException("translation of a checked segment failed: "
                    + KeyCheck.ofTranslation(r));
            }
            phys = r;
        }
    }
}
