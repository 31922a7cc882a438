package dev.rnicsim.ibverbs;

import dev.rnicsim.simnic.Datagrams;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.UdSendWr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.WrOpcode;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The data path: work requests go to the simulated QPs, the simulated device decides each one's outcome (keys,
 * rights, ranges, QP state, receive queue: the model's rules), and for each that succeeds the real bytes move
 * between the real processes, before any completion reaches a program.
 *
 * <p>How the outcome of each request is known: every request is posted to the model SIGNALED, with a number of
 * the server's as its wr_id; the program's own wr_id and whether it asked for a completion are kept here. An
 * unsignaled success still goes to the library, flagged hidden, so that it frees its send-queue slot. A SEND's
 * data is placed when the receive it consumed completes: RC delivers in order, so the k-th SEND that succeeds on a
 * QP is the one the k-th successful receive of its peer took.
 *
 * <p>Not thread safe: called under the fabric's lock.
 */
final class Completions
{
    /** A posted send-queue request, as the program gave it (addresses translated to the process's own); carried:
     * its bytes as the doorbell brought them (inline data, or a small request's gather list read at post by the
     * library, see {@link CarriedBytes}), null when the server reads them from the process. */
    record PostedSend(Session.QpInfo qp, long wrId, boolean signaled, int opcode, List<ProcessMemory.Range> local,
        byte[] carried, long remoteAddr, int rkey, long compareAdd, long swap, String postSite)
    {
        /** A request the program did not post itself (a rendezvous's FIN): no post site. */
        PostedSend(final Session.QpInfo qp, final long wrId, final boolean signaled, final int opcode,
            final List<ProcessMemory.Range> local, final byte[] carried, final long remoteAddr, final int rkey,
            final long compareAdd, final long swap)
        {
            this(qp, wrId, signaled, opcode, local, carried, remoteAddr, rkey, compareAdd, swap, null);
        }
    }

    /** A posted receive. */
    record PostedRecv(Session.QpInfo qp, long wrId, List<ProcessMemory.Range> local, int srqDeviceIndex)
    {
        /** A receive of the QP's own queue. */
        PostedRecv(final Session.QpInfo qp, final long wrId, final List<ProcessMemory.Range> local)
        {
            this(qp, wrId, local, -1);
        }
    }

    /** The QP a receive completed on: its own, or (for a receive of an SRQ) the QP the completion names. */
    private Session.QpInfo qpOf(final PostedRecv pr, final WorkCompletion wc)
    {
        return pr.qp() != null ? pr.qp() : server.qps.get(Session.QpInfo.key(pr.srqDeviceIndex(), wc.qpNum()));
    }

    /** Registers a receive posted to an SRQ, under the number the model knows it by. */
    long postedSrqRecv(final long wrId, final List<ProcessMemory.Range> local, final int deviceIndex)
    {
        final long id = nextId++;
        recvs.put(id, new PostedRecv(null, wrId, local, deviceIndex));
        return id;
    }

    /** Forgets a receive the SRQ refused. */
    void refusedSrqRecv(final long id)
    {
        recvs.remove(id);
    }

    /** The address in the process of an iova under a key, for the SRQ's receive buffers. */
    long translateFor(final int deviceIndex, final int key, final long iova)
    {
        return bytes.translate(deviceIndex, key, iova);
    }

    private static final WrOpcode[] OPCODES = new WrOpcode[16];

    static
    {
        for (final WrOpcode o : WrOpcode.values())
        {
            if (o.code() < OPCODES.length)
            {
                OPCODES[o.code()] = o;
            }
        }
    }

    private final FabricServer server;
    private final Map<Long, PostedSend> sends = new HashMap<>();
    private final Map<Long, PostedRecv> recvs = new HashMap<>();
    private final Set<Session> dirty = new LinkedHashSet<>();
    private long nextId = 1;
    private final PeerWait peerWait;
    private final DatagramSteps datagrams = new DatagramSteps();
    /** What SENDs to a tag-matching SRQ get. */
    final TmData tm;
    /** The bytes each completed request moves between the programs' buffers. */
    final ByteMover bytes;

    Completions(final FabricServer server)
    {
        this.server = server;
        this.peerWait = new PeerWait(server);
        this.bytes = new ByteMover(server, dirty);
        this.tm = new TmData(server, this);
    }

    /** @return the request the model knows by {@code id}, or null. */
    PostedSend posted(final long id)
    {
        return sends.get(id);
    }

    /** @return a number the model knows no request by yet. */
    long newId()
    {
        return nextId++;
    }

    /** The wire opcodes that name a remote buffer under an rkey: RDMA WRITE (with immediate), READ, the atomics,
     * FLUSH and ATOMIC_WRITE ({@code enum ibv_wr_opcode}). */
    private static final Set<Integer> REMOTE_OPS = Set.of(0, 1, 4, 5, 6, 14, 15);

    /** POST_SEND: wire_post, then per request wire_send_wr, its SGEs, its inline bytes rounded up to 8. */
    void postSend(final Session s, final ByteBuffer p)
    {
        server.warmUp.stop();
        final Session.QpInfo q = s.get(p.getInt(0), Session.QpInfo.class);
        final int count = p.getInt(4);
        int at = 8;
        for (int i = 0; i < count; i++)
        {
            final long wrId = p.getLong(at);
            final long remote = p.getLong(at + 8);
            final long compareAdd = p.getLong(at + 16);
            final long swap = p.getLong(at + 24);
            final int opcode = p.getInt(at + 32);
            final int flags = p.getInt(at + 36);
            final int rkey = p.getInt(at + 40);
            final int imm = p.getInt(at + 44);
            final int numSge = p.getInt(at + 48);
            final int inlineLen = p.getInt(at + 52);
            at += Wire.SEND_WR_BYTES;
            final List<Sge> sgl = new ArrayList<>(numSge);
            final List<ProcessMemory.Range> local = new ArrayList<>(numSge);
            for (int k = 0; k < numSge; k++)
            {
                final long addr = p.getLong(at);
                final long len = p.getInt(at + 8) & 0xffffffffL;
                final int lkey = p.getInt(at + 12);
                sgl.add(new Sge(addr, len, lkey));
                local.add(new ProcessMemory.Range(bytes.translate(q.deviceIndex, lkey, addr), len));
                OdpFaultIn.before(server, q.deviceIndex, lkey, addr, len);
                at += Wire.SGE_BYTES;
            }
            if (REMOTE_OPS.contains(opcode) && q.peerDeviceIndex >= 0)
            {
                OdpFaultIn.before(server, q.peerDeviceIndex, rkey, remote, Math.max(8, sglBytes(sgl)));
            }
            byte[] inline = null;
            if (inlineLen > 0)
            {
                inline = new byte[inlineLen];
                p.get(at, inline);
                at += (inlineLen + 7) & ~7;
                if ((flags & Wire.SEND_CARRIED) != 0)
                {
                    inline = CarriedBytes.usable(sgl, local, inline) ? inline : null;
                }
                else
                {
                    // the model copies inline data at post from its twin of the process: give it a page it has
                    sgl.clear();
                    sgl.add(new Sge(s.inlineScratch(inlineLen), inlineLen, 0));
                }
            }
            final boolean xrc = q.qp.type() == QpType.XRC_SEND;
            final int remoteSrqn = xrc ? p.getInt(at) : 0;
            at += xrc ? Wire.XRC_WR_BYTES : 0;
            final long id = nextId++;
            final PostedSend ps = new PostedSend(q, wrId, (flags & SendFlag.SIGNALED.bit()) != 0, opcode, local, inline,
                remote, rkey, compareAdd, swap, q.postSite);
            sends.put(id, ps);
            final EnumSet<SendFlag> set = EnumSet.of(SendFlag.SIGNALED);
            for (final SendFlag f : SendFlag.values())
            {
                if ((flags & f.bit()) != 0)
                {
                    set.add(f);
                }
            }
            final WrOpcode op = opcode >= 0 && opcode < OPCODES.length ? OPCODES[opcode] : null;
            final Runnable post = () ->
            {
                try
                {
                    if (op == null)
                    {
                        throw new VerbsException("ibv_post_send", 22, "opcode " + opcode + " is not simulated");
                    }
                    if (q.qp.type() == QpType.UD)
                    {
                        // wr.ud: the AH's handle in remote_addr, the remote QPN in compare_add, the Q_Key in rkey
                        q.qp.postSendUd(List.of(new UdSendWr(new SendWr(id, op, sgl, set, 0, 0, imm, 0, 0, 0, null),
                            s.get((int) remote, UdVerbs.AhInfo.class).ah(), (int) compareAdd, rkey)));
                    }
                    else
                    {
                        final SendWr wr = new SendWr(id, op, sgl, set, remote, rkey, imm, compareAdd, swap, 0, null);
                        MemoryVerbs.post(s, q.qp, xrc ? wr.withRemoteSrqn(remoteSrqn) : wr);
                    }
                    if (op == WrOpcode.SEND || op == WrOpcode.SEND_WITH_IMM || op == WrOpcode.SEND_WITH_INV)
                    {
                        q.sendsToPlace.addLast(ps);
                    }
                }
                catch (final RuntimeException e)
                {
                    if (DEBUG)
                    {
                        server.report("fabric: post_send refused: " + e);
                    }
                    sends.remove(id);
                    PostRefusal.complete(this, s, q, wrId, opcode, e);
                }
            };
            if (q.qp.type() == QpType.UD)
            {
                datagrams.hold(q, id, PeerWait.keepingOrigin(server.fabric, post));
            }
            else if (q.peerSeenConnected || !peerWait.holds(q))
            {
                post.run();
            }
            else
            {
                peerWait.park(q, PeerWait.keepingOrigin(server.fabric, post)); // the peer, in another process, is not connected back yet
            }
        }
    }

    /** Marks a session as owed a flush (its completions wait in its buffer). */
    void owed(final Session s)
    {
        dirty.add(s);
    }

    private static long sglBytes(final List<Sge> sgl)
    {
        long n = 0;
        for (final Sge g : sgl)
        {
            n += g.lengthBytes();
        }
        return n;
    }

    /** POST_RECV: wire_post, then per request wire_recv_wr and its SGEs. */
    void postRecv(final Session s, final ByteBuffer p)
    {
        final Session.QpInfo q = s.get(p.getInt(0), Session.QpInfo.class);
        final int count = p.getInt(4);
        int at = 8;
        for (int i = 0; i < count; i++)
        {
            final long wrId = p.getLong(at);
            final int numSge = p.getInt(at + 8);
            at += Wire.RECV_WR_BYTES;
            final List<Sge> sgl = new ArrayList<>(numSge);
            final List<ProcessMemory.Range> local = new ArrayList<>(numSge);
            for (int k = 0; k < numSge; k++)
            {
                final long addr = p.getLong(at);
                final long len = p.getInt(at + 8) & 0xffffffffL;
                final int lkey = p.getInt(at + 12);
                sgl.add(new Sge(addr, len, lkey));
                local.add(new ProcessMemory.Range(bytes.translate(q.deviceIndex, lkey, addr), len));
                OdpFaultIn.before(server, q.deviceIndex, lkey, addr, len);
                at += Wire.SGE_BYTES;
            }
            final long id = nextId++;
            recvs.put(id, new PostedRecv(q, wrId, local));
            try
            {
                q.qp.postRecv(List.of(new RecvWr(id, sgl)));
            }
            catch (final RuntimeException e)
            {
                recvs.remove(id);
                s.sendText("rnicsim: ibv_post_recv (wr_id " + wrId + ") refused by the device after the verb "
                    + "returned: " + e.getMessage() + "\n");
            }
        }
    }

    private record Done(Session.CqInfo cq, WorkCompletion wc)
    {
    }

    /** Time spent in the model (progress and polling) and in moving real bytes, for RNICSIM_FABRIC_STATS. */
    final FabricStats stats = new FabricStats();

    /**
     * Lets the device do all it can, moves the bytes of what succeeded, and queues every completion: in steps while
     * UD QPs have datagrams waiting for their previous one ({@link DatagramSteps}).
     */
    void run()
    {
        peerWait.release();
        datagrams.postNext(sends::containsKey);
        step();
        while (datagrams.postNext(sends::containsKey) || tm.again())
        {
            step();
        }
    }

    private void step()
    {
        final long t0 = FabricStats.wallNs();
        final long c0 = FabricStats.cpuNs();
        server.fabric.progressAll();
        final List<Done> done = new ArrayList<>();
        for (final Object o : allCqs())
        {
            final Session.CqInfo c = (Session.CqInfo) o;
            if (c.cq().isClosed())
            {
                continue;
            }
            List<WorkCompletion> got;
            while (!(got = c.cq().poll(256)).isEmpty())
            {
                for (final WorkCompletion wc : got)
                {
                    done.add(new Done(c, wc));
                }
            }
        }
        final long t1 = FabricStats.wallNs();
        final long c1 = FabricStats.cpuNs();
        stats.modelNs += t1 - t0;
        stats.modelCpuNs += c1 - c0;
        if (done.isEmpty())
        {
            return;
        }
        // 1. a SEND that failed will never be placed
        for (final Done d : done)
        {
            if (!isRecv(d.wc()) && d.wc().status() != WcStatus.SUCCESS)
            {
                final PostedSend ps = sends.get(d.wc().wrId());
                if (ps != null)
                {
                    ps.qp().sendsToPlace.remove(ps);
                    tm.sendFailed(d.wc().wrId());
                }
            }
        }
        // 2. each received SEND: its bytes, from the sender's buffers to the receive's
        for (final Done d : done)
        {
            if (d.wc().opcode() == WcOpcode.RECV && d.wc().status() == WcStatus.SUCCESS)
            {
                placeSend(d.wc());
            }
        }
        // 2b. a datagram no receive took in this step was dropped: its bytes are never placed (DatagramSteps)
        for (final Done d : done)
        {
            if (!isRecv(d.wc()) && d.wc().status() == WcStatus.SUCCESS)
            {
                final PostedSend ps = sends.get(d.wc().wrId());
                if (ps != null && ps.qp().qp.type() == QpType.UD)
                {
                    ps.qp().sendsToPlace.remove(ps);
                }
            }
        }
        // 3. each RDMA WRITE and READ (and atomic) that succeeded
        for (final Done d : done)
        {
            if (!isRecv(d.wc()) && d.wc().status() == WcStatus.SUCCESS)
            {
                final PostedSend ps = sends.get(d.wc().wrId());
                if (ps != null)
                {
                    bytes.oneSided(ps);
                }
            }
        }
        stats.copyNs += FabricStats.wallNs() - t1;
        stats.copyCpuNs += FabricStats.cpuNs() - c1;
        for (final Done d : done)
        {
            deliver(d);
        }
    }

    private List<Object> allCqs()
    {
        final List<Object> cqs = new ArrayList<>();
        for (final Session.QpInfo q : server.qps.values())
        {
            addOnce(cqs, q.sendCq);
            addOnce(cqs, q.recvCq);
        }
        for (final Session.CqInfo c : server.xrc.srqCqs())
        {
            addOnce(cqs, c); // an XRC SRQ's receives complete on its own CQ (an XRC_RECV QP has none)
        }
        return cqs;
    }

    /**
     * One CqInfo per CQ: compared by identity (a record's equals, called per batch, is slow until compiled); none for
     * a QP without one (an XRC_RECV QP).
     */
    private static void addOnce(final List<Object> cqs, final Session.CqInfo cq)
    {
        if (cq == null)
        {
            return;
        }
        for (final Object o : cqs)
        {
            if (o == cq)
            {
                return;
            }
        }
        cqs.add(cq);
    }

    private static boolean isRecv(final WorkCompletion wc)
    {
        return wc.opcode() == WcOpcode.RECV || wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM;
    }

    private void placeSend(final WorkCompletion wc)
    {
        if (tm.placeClaimed(wc))
        {
            return; // a message a tag-matching SRQ matched to a listed tag (TmData)
        }
        final PostedRecv pr = recvs.get(wc.wrId());
        if (pr == null)
        {
            return;
        }
        final Session.QpInfo rq = qpOf(pr, wc);
        if (rq == null)
        {
            return;
        }
        final boolean ud = rq.qp.type() == QpType.UD;
        final Session.QpInfo sender = ud ? udSender(wc.srcQp())
            : server.qps.get(Session.QpInfo.key(rq.peerDeviceIndex, rq.peerQpNum));
        if (sender == null || sender.sendsToPlace.isEmpty())
        {
            return;
        }
        final PostedSend ps = sender.sendsToPlace.removeFirst();
        List<ProcessMemory.Range> dst = pr.local();
        long len = wc.byteLen();
        final boolean withGrh = ud && wc.withGrh() && len >= Datagrams.GRH_BYTES;
        final byte[] grh = withGrh ? UdVerbs.grhAsReceived(sender, ps, server.devices.get(rq.deviceIndex),
            len - Datagrams.GRH_BYTES) : null;
        if (ps.carried() != null && CarriedBytes.place(rq.session, pr.wrId(), dst, grh, ps.carried(),
            withGrh ? len - Datagrams.GRH_BYTES : len))
        {
            dirty.add(rq.session);
            return; // the receiving library writes them before the completion that follows
        }
        if (withGrh)
        {
            // a UD receive starts with the 40-byte GRH, then the payload (ibv_post_recv(3))
            len -= Datagrams.GRH_BYTES;
            MemorySegment.copy(grh, 0, server.memory.scratch(grh.length), ValueLayout.JAVA_BYTE, 0, grh.length);
            bytes.scatter(rq.session.pid, ProcessMemory.clip(dst, grh.length), "the GRH of receive wr_id " + pr.wrId(), rq);
            dst = ProcessMemory.skip(dst, Datagrams.GRH_BYTES);
        }
        if (len == 0)
        {
            return;
        }
        if (!bytes.fill(ps, len))
        {
            return;
        }
        bytes.scatter(rq.session.pid, ProcessMemory.clip(dst, len), "the receive buffer of wr_id " + pr.wrId(), rq);
    }

    /** The UD QP a datagram came from, by the completion's src_qp, on whichever device of the fabric holds it. */
    private Session.QpInfo udSender(final int srcQp)
    {
        for (int d = 0; d < server.devices.size(); d++)
        {
            final Session.QpInfo q = server.qps.get(Session.QpInfo.key(d, srcQp));
            if (q != null && !q.sendsToPlace.isEmpty())
            {
                return q;
            }
        }
        return null;
    }

    private static final boolean DEBUG = System.getenv("RNICSIM_FABRIC_DEBUG") != null;

    private void deliver(final Done d)
    {
        final WorkCompletion wc = d.wc();
        if (DEBUG)
        {
            server.report("fabric: " + wc);
        }
        final boolean recv = isRecv(wc);
        final long appWrId;
        final Session.QpInfo q;
        boolean hidden = false;
        int[] tmOpcodeAndFlags = null;
        if (recv)
        {
            if (tm.givenBack(wc.wrId()))
            {
                return; // the device's own receive of a message a tag matched (TmData)
            }
            tmOpcodeAndFlags = tm.override(wc.wrId());
            final PostedRecv pr = recvs.remove(wc.wrId());
            if (pr == null)
            {
                return;
            }
            appWrId = pr.wrId();
            q = qpOf(pr, wc);
            if (q == null)
            {
                return;
            }
        }
        else
        {
            final PostedSend ps = sends.remove(wc.wrId());
            if (ps == null)
            {
                return;
            }
            appWrId = ps.wrId();
            q = ps.qp();
            hidden = wc.status() == WcStatus.SUCCESS && !ps.signaled();
        }
        final Session to = d.cq().session();
        final ByteBuffer b = to.reserve(Wire.HEADER_BYTES + 8 + Wire.WC_BYTES);
        b.putInt(Wire.HEADER_BYTES + 8 + Wire.WC_BYTES).putShort((short) Wire.OP_WC).putShort((short) 0).putInt(0)
            .putInt(0).putInt(0).putInt(1);
        final int flags = (wc.withImm() ? Wire.WC_WITH_IMM : 0) | (wc.withInv() ? Wire.WC_WITH_INV : 0)
            | (wc.withGrh() ? Wire.WC_GRH : 0) | (tmOpcodeAndFlags == null ? 0 : tmOpcodeAndFlags[1]);
        b.putLong(appWrId).putInt(d.cq().handle()).putInt(q.handle).putInt(wc.status().code())
            .putInt(tmOpcodeAndFlags == null ? wc.opcode().code() : tmOpcodeAndFlags[0]).putInt(wc.vendorErr()).putInt((int) wc.byteLen())
            .putInt(wc.withInv() ? wc.invalidatedRkey() : wc.immData()).putInt(wc.qpNum()).putInt(wc.srcQp()).putInt(flags)
            .putInt(hidden ? Wire.WC_HIDDEN : 0).putInt(0).putLong(wc.completionTimeNs());
        dirty.add(to);
        if (to.strict && wc.status() != WcStatus.SUCCESS && wc.status() != WcStatus.WR_FLUSH_ERR)
        {
            to.sendText(Strict.describe(wc, appWrId, q, wc.wrId()));
        }
    }

    /** Sends what every process is owed. */
    void flushAll()
    {
        for (final Session s : dirty)
        {
            s.flush();
        }
        dirty.clear();
    }
}
