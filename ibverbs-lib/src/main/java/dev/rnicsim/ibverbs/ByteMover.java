package dev.rnicsim.ibverbs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Set;

/**
 * The real bytes a work request moves between two programs' buffers, once the model has completed it: the source
 * gathered into the fabric's scratch buffer (inline data or the gather list) and scattered into the target (the
 * receive buffer, the RDMA WRITE's target, the READ's local buffer, the 8 bytes of an atomic). The model decides
 * whether and where the bytes go (keys, MTT, translation); this class only moves them through {@link ProcessMemory},
 * and reports a target the program unmapped after registering it (the pages stay pinned for the NIC, but the
 * program no longer sees them) to a strict session.
 */
final class ByteMover
{
    private static final int IBV_WR_SEND = 2;
    private static final int IBV_WR_SEND_WITH_IMM = 3;
    private static final int IBV_WR_RDMA_READ = 4;
    private static final int IBV_WR_CMP_SWP = 5;
    private static final int IBV_WR_FETCH_ADD = 6;
    /** LOCAL_INV (7), BIND_MW (8), SEND_WITH_INV (9) and later move no bytes of their own to a peer's memory. */
    private static final int IBV_WR_LOCAL_INV = 7;
    private static final int IBV_WR_ATOMIC_WRITE = 15;

    private final FabricServer server;
    /** The sessions with text or completions owed (the completion engine's set, shared). */
    private final Set<Session> dirty;

    ByteMover(final FabricServer server, final Set<Session> dirty)
    {
        this.server = server;
        this.dirty = dirty;
    }

    /** The address in the process of an iova under a key (the same address for an MR registered at its VA). */
    long translate(final int deviceIndex, final int key, final long iova)
    {
        final Session.MrInfo m = server.mrs.get(Verbs.mrKey(deviceIndex, key));
        if (m != null && MrKindVerbs.isNullMr(m))
        {
            return ProcessMemory.DISCARD_BASE + (iova & 0xffff_ffffL); // zeros read, writes dropped
        }
        return m != null ? m.addr() + (iova - m.iova()) : server.windows.translate(server, deviceIndex, key, iova);
    }

    /** The source bytes of a request into the scratch buffer: its inline data, or its gather list. */
    boolean fill(final Completions.PostedSend ps, final long len)
    {
        if (ps.carried() != null)
        {
            MemorySegment.copy(ps.carried(), 0, server.memory.scratch(ps.carried().length), ValueLayout.JAVA_BYTE, 0,
                (int) Math.min(len, ps.carried().length));
            return true;
        }
        final List<ProcessMemory.Range> src = ProcessMemory.clip(ps.local(), len);
        final long got = server.memory.gather(ps.qp().session.pid, src);
        if (got < ProcessMemory.total(src))
        {
            noteDmaFault(ps.qp(), "read the send buffer", src, ps);
            return false;
        }
        return true;
    }

    void scatter(final int pid, final List<ProcessMemory.Range> dst, final String what,
        final Session.QpInfo owner)
    {
        scatter(pid, dst, what, owner, null);
    }

    private void scatter(final int pid, final List<ProcessMemory.Range> dst, final String what,
        final Session.QpInfo owner, final Completions.PostedSend ps)
    {
        final long put = server.memory.scatter(pid, dst);
        if (put < ProcessMemory.total(dst))
        {
            noteDmaFault(owner, "write " + what, dst, ps);
        }
    }

    /**
     * Strict mode's report of DMA into memory no longer mapped: the request (opcode, wr_id, QP, where it was posted),
     * the range, the MR over it with its keys and where it was registered, and the fix.
     *
     * @param q     the QP whose process owns the memory.
     * @param what  what the device could not do, e.g. {@code write the target of an RDMA WRITE}.
     * @param at    the ranges of the process it could not reach.
     * @param ps    the request, or null when the report has no request of its own (a receive's buffer).
     */
    private void noteDmaFault(final Session.QpInfo q, final String what, final List<ProcessMemory.Range> at,
        final Completions.PostedSend ps)
    {
        if (q.session.strict)
        {
            q.session.sendText(DmaFaultReport.text(server, q, what, at, ps, server.memory.lastErrno()) + "\n");
            dirty.add(q.session);
        }
    }

    void oneSided(final Completions.PostedSend ps)
    {
        final Session.QpInfo q = ps.qp();
        final Session.QpInfo peer = server.qps.get(Session.QpInfo.key(q.peerDeviceIndex, q.peerQpNum));
        if (peer != null && ps.opcode() == IBV_WR_ATOMIC_WRITE)
        {
            // The 8 bytes travel in the work request (ibv_wr_atomic_write(3)) and land in one piece.
            server.memory.scratch(8).set(ValueLayout.JAVA_LONG_UNALIGNED, 0, ps.compareAdd());
            scatter(peer.session.pid, List.of(new ProcessMemory.Range(translate(q.peerDeviceIndex, ps.rkey(),
                ps.remoteAddr()), 8)), "the target of an ATOMIC WRITE", peer, ps);
            return;
        }
        if (peer == null || ps.opcode() == IBV_WR_SEND || ps.opcode() == IBV_WR_SEND_WITH_IMM
            || ps.opcode() >= IBV_WR_LOCAL_INV)
        {
            return;
        }
        final long remote = translate(q.peerDeviceIndex, ps.rkey(), ps.remoteAddr());
        final long len = ps.carried() != null ? ps.carried().length : ProcessMemory.total(ps.local());
        if (ps.opcode() == IBV_WR_CMP_SWP || ps.opcode() == IBV_WR_FETCH_ADD)
        {
            atomic(ps, peer, remote);
            return;
        }
        if (len == 0)
        {
            return;
        }
        if (ps.opcode() == IBV_WR_RDMA_READ)
        {
            final List<ProcessMemory.Range> src = List.of(new ProcessMemory.Range(remote, len));
            if (server.memory.gather(peer.session.pid, src) < len)
            {
                noteDmaFault(peer, "read the target of an RDMA READ", src, ps);
                return;
            }
            scatter(q.session.pid, ps.local(), "the READ's local buffer", q, ps);
            return;
        }
        if (fill(ps, len))
        {
            scatter(peer.session.pid, List.of(new ProcessMemory.Range(remote, len)), "the target of an RDMA WRITE",
                peer, ps);
        }
    }

    /** An atomic on the real 8 bytes: the old value to the requester's buffer, the new one to the target. */
    private void atomic(final Completions.PostedSend ps, final Session.QpInfo peer, final long remote)
    {
        final List<ProcessMemory.Range> target = List.of(new ProcessMemory.Range(remote, 8));
        if (server.memory.gather(peer.session.pid, target) < 8)
        {
            noteDmaFault(peer, "read the target of an atomic", target, ps);
            return;
        }
        final MemorySegment sc = server.memory.scratch(8);
        final long old = sc.get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
        final long updated = ps.opcode() == IBV_WR_FETCH_ADD ? old + ps.compareAdd()
            : old == ps.compareAdd() ? ps.swap() : old;
        scatter(ps.qp().session.pid, ProcessMemory.clip(ps.local(), 8), "the atomic's result buffer", ps.qp(), ps);
        sc.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, updated);
        scatter(peer.session.pid, target, "the target of an atomic", peer, ps);
    }
}
