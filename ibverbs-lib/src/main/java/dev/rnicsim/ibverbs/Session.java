package dev.rnicsim.ibverbs;

import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.VerbsException;
import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * One connected process: its modelled twin on the fabric's host, the objects it created (by the handles the
 * library knows them by), and the bytes waiting to be sent to it. Requests are read by this session's thread and
 * carried out by {@link Verbs} under the fabric's lock.
 *
 * <p>Thread safety: {@link #run()} runs on the session's own thread; everything else is called under
 * {@code FabricServer.lock}.
 */
final class Session
{
    /** An opened device. */
    record CtxInfo(SimContext context, SimDevice device, int deviceIndex)
    {
    }

    /** A CQ and who owns it. */
    record CqInfo(Session session, int handle, CompletionQueue cq)
    {
    }

    /** An MR: what the program registered, where it was registered from, and its model object. */
    record MrInfo(Session session, int handle, MemoryRegion mr, int deviceIndex, long addr, long lengthBytes,
        long iova, String regSite)
    {
    }

    /** A QP, its CQs, and the SENDs it posted whose data has not been placed yet (oldest first). */
    static final class QpInfo
    {
        final Session session;
        final int handle;
        final QueuePair qp;
        final int deviceIndex;
        final CqInfo sendCq;
        final CqInfo recvCq;
        final ArrayDeque<Completions.PostedSend> sendsToPlace = new ArrayDeque<>();
        int peerDeviceIndex = -1;
        int peerQpNum = -1;
        /** The peer QP was seen connected back to this one: its requests go to the model at once ({@link PeerWait}). */
        boolean peerSeenConnected;
        /** A handle of {@code ibv_open_qp} on another handle's XRC target QP: destroying it closes only the handle. */
        boolean opened;
        /** Strict mode: where the program called the ibv_post_send being posted now, or null. */
        String postSite;

        QpInfo(final Session session, final int handle, final QueuePair qp, final int deviceIndex,
            final CqInfo sendCq, final CqInfo recvCq)
        {
            this.session = session;
            this.handle = handle;
            this.qp = qp;
            this.deviceIndex = deviceIndex;
            this.sendCq = sendCq;
            this.recvCq = recvCq;
        }

        static long key(final int deviceIndex, final int qpNum)
        {
            return ((long) deviceIndex << 32) | (qpNum & 0xffffffffL);
        }
    }

    private static final boolean DEBUG = System.getenv("RNICSIM_FABRIC_DEBUG") != null;
    private long batches;
    /** Times this session's thread slept until its process kicked the socket (doorbells through shared memory). */
    long wakeUps;
    private long messages;
    private long busyNs;
    private long busyCpuNs;
    final FabricServer server;
    private final SocketChannel channel;
    final DoorbellReader doorbells;
    final List<Object> handles = new ArrayList<>();
    int pid;
    boolean strict;
    UserProcess process;
    private ByteBuffer out = ByteBuffer.allocateDirect(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
    /** Where the process's doorbells and requests come from once it offered shared memory (null: its socket). */
    volatile DoorbellRing doorbellRing;
    /** The doorbell ring's bytes not yet carried out (a partial message), under the fabric's lock. */
    private ByteBuffer ringIn;
    /** The session has ended: its doorbell ring is closed or about to be. */
    private volatile boolean ended;
    /** A drainer is writing what the process's ring or socket did not take yet ({@link #flush()}). */
    private boolean draining;
    /** How long a drainer waits for the process to make room before it tries again. */
    private static final long DRAIN_PAUSE_NS = 1_000_000L;
    /** Where the messages to the process go once it offered shared memory (null: its socket). */
    private MessageRing ring;
    /** Whether the process still runs (asked while its ring stays full). */
    private final java.util.function.BooleanSupplier alive =
        () -> ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    private final Verbs verbs;

    Session(final FabricServer server, final SocketChannel channel) throws IOException
    {
        this.server = server;
        this.channel = channel;
        channel.setOption(StandardSocketOptions.SO_SNDBUF, 4 << 20);
        channel.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
        handles.add(null); // handle 0 is never valid
        this.doorbells = new DoorbellReader(channel);
        this.verbs = new Verbs(this);
    }

    /** Mirrors this process's real mappings over a range into its modelled twin (see {@link Verbs#mirror}). */
    void mirror(final long addr, final long lengthBytes)
    {
        verbs.mirror(addr, lengthBytes);
    }

    int add(final Object o)
    {
        handles.add(o);
        return handles.size() - 1;
    }

    <T> T get(final int handle, final Class<T> type)
    {
        if (handle <= 0 || handle >= handles.size() || !type.isInstance(handles.get(handle)))
        {
            throw new VerbsException("handle", 22, "no " + type.getSimpleName() + " with handle " + handle
                + " in this process (freed already, or never created)");
        }
        return type.cast(handles.get(handle));
    }

    /** Where the modelled twin of this process keeps the inline data of its posts (the real bytes travel in the
     * doorbell message): far from where Linux places a process's mappings. */
    private static final long INLINE_SCRATCH_VA = 0x1000_0000_0000L;
    private long inlineScratchBytes;

    long inlineScratch(final long lengthBytes)
    {
        if (lengthBytes > inlineScratchBytes)
        {
            final long len = (lengthBytes + 0xffff) & ~0xffffL;
            process.mmap(INLINE_SCRATCH_VA, len, java.util.EnumSet.of(dev.rnicsim.pagetable.Prot.READ,
                dev.rnicsim.pagetable.Prot.WRITE), java.util.EnumSet.of(dev.rnicsim.pagetable.MapFlag.PRIVATE,
                dev.rnicsim.pagetable.MapFlag.ANONYMOUS, dev.rnicsim.pagetable.MapFlag.FIXED));
            inlineScratchBytes = len;
        }
        return INLINE_SCRATCH_VA;
    }

    void run()
    {
        ByteBuffer in = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
        try
        {
            while (doorbellRing == null)
            {
                if (doorbells.read(in) < 0)
                {
                    break;
                }
                in.flip();
                synchronized (server.lock)
                {
                    handle(in);
                }
                in = compact(in);
            }
            if (doorbellRing != null)
            {
                ringIn = in; // what follows comes through shared memory
                server.doorbellPoller.serve(this);
            }
        }
        catch (final IOException e)
        {
            // the process closed its end (it exited): its resources are released below, as the kernel does
        }
        if (FabricStats.ENABLED && pid != 0)
        {
            final FabricStats f = server.completions.stats;
            server.report(String.format(java.util.Locale.ROOT, "fabric: pid %d: %d batches, %d messages, %d wake-ups, %.1f us "
                + "busy per batch (%.1f us of CPU); fabric so far: %.1f ms in the model (%.1f ms of CPU), %.1f ms "
                + "moving bytes (%.1f ms of CPU), %.1f us of simulated time", pid, batches, messages, wakeUps,
                busyNs / 1e3 / Math.max(1, batches), busyCpuNs / 1e3 / Math.max(1, batches), f.modelNs / 1e6,
                f.modelCpuNs / 1e6, f.copyNs / 1e6, f.copyCpuNs / 1e6, server.fabric.clock().nowNs() / 1e3));
        }
        synchronized (server.lock)
        {
            verbs.releaseAll();
            server.completions.flushAll();
            if (ring != null)
            {
                ring.close();
                ring = null;
            }
            ended = true;
            if (doorbellRing != null)
            {
                doorbellRing.close();
            }
        }
        closeChannel();
        server.ended(this);
    }

    /** Carries out the whole messages of {@code in} (flipped; a partial one stays), under the fabric's lock. */
    private void handle(final ByteBuffer in)
    {
        final long t0 = FabricStats.wallNs();
        final long c0 = FabricStats.cpuNs();
        batches++;
        boolean posted = false;
        while (in.remaining() >= Wire.HEADER_BYTES)
        {
            final int len = in.getInt(in.position());
            if (in.remaining() < len)
            {
                break;
            }
            final int start = in.position();
            final int op = in.getShort(start + 4) & 0xffff;
            final int seq = in.getInt(start + 8);
            final ByteBuffer payload = in.slice(start + Wire.HEADER_BYTES, len - Wire.HEADER_BYTES)
                .order(ByteOrder.LITTLE_ENDIAN);
            if (DEBUG)
            {
                server.report("fabric: pid " + pid + " op " + op + " seq " + seq + " len " + len);
            }
            messages++;
            if (op == Wire.OP_RING)
            {
                ring(seq, payload);
            }
            else if (op == Wire.OP_DOORBELL_RING)
            {
                doorbellRing(seq, payload);
            }
            else
            {
                posted |= verbs.dispatch(op, seq, payload);
            }
            in.position(start + len);
        }
        if (posted)
        {
            server.completions.run();
        }
        server.completions.flushAll();
        flush();
        server.forwardStrictWarnings();
        busyNs += FabricStats.wallNs() - t0;
        busyCpuNs += FabricStats.cpuNs() - c0;
    }

    /** Keeps the partial message left in {@code in} for the next read, with room after it. */
    private static ByteBuffer compact(final ByteBuffer in)
    {
        in.compact();
        if (in.hasRemaining())
        {
            return in;
        }
        final ByteBuffer bigger = ByteBuffer.allocateDirect(in.capacity() * 2).order(ByteOrder.LITTLE_ENDIAN);
        in.flip();
        bigger.put(in);
        return bigger;
    }

    /**
     * Carries out what the process has published in its doorbell ring, under the fabric's lock, by whichever of the
     * server's threads polls it ({@link DoorbellPoller}).
     *
     * @return whether there was anything (false too once the session has ended).
     */
    boolean drainDoorbells()
    {
        final DoorbellRing r = doorbellRing;
        if (r == null || ended)
        {
            return false;
        }
        boolean any = false;
        while (r.read(ringIn) > 0)
        {
            any = true;
            ringIn.flip();
            handle(ringIn);
            ringIn = compact(ringIn);
        }
        return any;
    }

    /**
     * DOORBELL_RING: the process offers a memfd for its doorbells and requests (fd, pad, data bytes). The server reads
     * them there from its answer on; the socket then carries only the process's kicks ({@link DoorbellRing}).
     */
    private void doorbellRing(final int seq, final ByteBuffer p)
    {
        try
        {
            final DoorbellRing r = DoorbellRing.open(java.nio.file.Path.of("/proc", Integer.toString(pid), "fd",
                Integer.toString(p.getInt(0))), p.getLong(8));
            send(Wire.OP_DOORBELL_RING, seq, 0, null);
            doorbellRing = r;
        }
        catch (final IOException | RuntimeException e)
        {
            // the socket keeps carrying the doorbells
            send(Wire.OP_DOORBELL_RING, seq, Wire.EIO, null);
        }
    }

    /** Queues a message for the process. */
    void send(final int op, final int seq, final int err, final ByteBuffer payload)
    {
        final int len = Wire.HEADER_BYTES + (payload == null ? 0 : payload.remaining());
        reserve(len);
        out.putInt(len).putShort((short) op).putShort((short) 0).putInt(seq).putInt(err);
        if (payload != null)
        {
            out.put(payload);
        }
    }

    /** Queues a strict-mode report (or another text the program's stderr should show). */
    void sendText(final String text)
    {
        send(Wire.OP_DIAG, 0, 0, ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
    }

    ByteBuffer reserve(final int bytes)
    {
        if (out.remaining() < bytes)
        {
            int cap = out.capacity() * 2;
            while (cap - out.position() < bytes)
            {
                cap *= 2;
            }
            final ByteBuffer b = ByteBuffer.allocateDirect(cap).order(ByteOrder.LITTLE_ENDIAN);
            out.flip();
            b.put(out);
            out = b;
        }
        return out;
    }

    /**
     * RING: the process offers a memfd for the server's messages (fd, pad, data bytes). The answer is the last
     * message on the socket; from then on the socket carries only the ring's kicks ({@link MessageRing}).
     */
    private void ring(final int seq, final ByteBuffer p)
    {
        try
        {
            final MessageRing r = MessageRing.open(java.nio.file.Path.of("/proc", Integer.toString(pid), "fd",
                Integer.toString(p.getInt(0))), p.getLong(8));
            send(Wire.OP_RING, seq, 0, null);
            while (out.position() > 0 && channel.isOpen())
            {
                writeQueued(); // the answer must be on the socket before the ring takes over: the process awaits it
                Thread.onSpinWait();
            }
            ring = r;
        }
        catch (final IOException | RuntimeException e)
        {
            // the socket keeps carrying everything, as for a library that offers no ring
            send(Wire.OP_RING, seq, Wire.EIO, null);
        }
    }

    /**
     * Writes what is queued (under the fabric lock, so messages keep their order), as much as the process's ring or
     * socket takes now: what it does not take stays queued, ahead of later messages, and a drainer writes it as the
     * process makes room. The fabric never waits for one process: a program stopped (SIGSTOP, a debugger) or busy
     * while completions for it keep coming holds up no other program, as a real NIC keeps writing CQEs into a CQ
     * whatever its owner does.
     */
    void flush()
    {
        writeQueued();
        if (out.position() > 0 && !draining)
        {
            draining = true;
            Thread.ofVirtual().name("rnicsim-fabric-drain-" + pid).start(this::drain);
        }
    }

    private void writeQueued()
    {
        if (out.position() == 0)
        {
            return;
        }
        out.flip();
        if (ring != null)
        {
            ring.offer(out, channel);
        }
        else
        {
            try
            {
                channel.write(out); // non-blocking: 0 when the process's socket buffer is full
            }
            catch (final IOException e)
            {
                out.position(out.limit()); // the process has gone; its thread releases its resources
            }
        }
        out.compact();
    }

    /** Writes the queue as the process makes room for it, until it is empty or the process has gone. */
    private void drain()
    {
        boolean more = true;
        while (more)
        {
            java.util.concurrent.locks.LockSupport.parkNanos(DRAIN_PAUSE_NS);
            final boolean live = channel.isOpen() && alive.getAsBoolean();
            synchronized (server.lock)
            {
                if (live)
                {
                    writeQueued();
                }
                more = live && out.position() > 0;
                draining = more;
            }
        }
    }

    void closeChannel()
    {
        doorbells.close();
        try
        {
            channel.close();
        }
        catch (final IOException e)
        {
            // closing a socket whose peer has gone
        }
    }
}
