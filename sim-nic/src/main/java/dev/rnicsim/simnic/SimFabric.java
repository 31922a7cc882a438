package dev.rnicsim.simnic;

import dev.rnicsim.pagetable.HostConfig;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BooleanSupplier;

/**
 * A simulated cluster in one JVM: hosts, the devices in them, and the network that connects every device to every
 * other, with one simulated clock and one cost model. QPs find their peers through it by GID and QP number, as an
 * RC connection's address vector names them.
 *
 * <p>Not thread safe: the whole simulation runs on one thread, which makes it deterministic.
 */
public final class SimFabric
{
    private final CostModel costModel;
    private final SimClock clock = new SimClock();
    private final List<SimHost> hosts = new ArrayList<>();
    private final Map<String, SimDevice> devicesByGid = new HashMap<>();
    private final List<java.util.function.Consumer<TraceEvent>> traceListeners = new ArrayList<>();
    private int devices;
    private final NicEngine engine = new NicEngine();
    /** The engine's own thread, or null in the deterministic mode (the default). */
    private volatile EngineThread engineThread;
    private int pathMtuBytes = SimQp.PATH_MTU_BYTES;
    /** The number each device gives its first QP (then the next free ones, as {@link SimDevice#addQp}). */
    private int firstQpNum = FIRST_QP_NUM;
    /** Where the calls being made come from (a script's file:line), for key histories; null: the verb itself. */
    private String origin;

    /**
     * A fabric with the calibrated cost model.
     */
    public SimFabric()
    {
        this(CostModel.defaults());
    }

    /**
     * @param costModel prices of the counted work.
     */
    public SimFabric(final CostModel costModel)
    {
        this.costModel = Objects.requireNonNull(costModel, "costModel");
    }

    /**
     * @param where what the calls made from now on come from, e.g. {@code stale.rsim:12 (dereg mr0)}, recorded in the
     *              devices' key histories and named by diagnoses; null to name the verb call instead.
     */
    public void origin(final String where)
    {
        origin = where;
    }

    /**
     * @return what the calls being made come from, or null when not set.
     */
    public String origin()
    {
        return origin;
    }

    /**
     * @param name   host name, unique in the fabric.
     * @param config the host's memory and kernel settings.
     * @return the new host.
     * @throws IllegalArgumentException when the name is taken, or it or the configuration is null.
     */
    public SimHost addHost(final String name, final HostConfig config)
    {
        if (name == null || config == null)
        {
            throw new IllegalArgumentException((name == null ? "the host name" : "the configuration of host '" + name
                + "'") + " is null; give a name and a HostConfig (HostConfig.builder().build() for the defaults)");
        }
        for (final SimHost h : hosts)
        {
            if (h.name().equals(name))
            {
                throw new IllegalArgumentException("host '" + name + "' exists already");
            }
        }
        final SimHost host = new SimHost(this, name, config);
        hosts.add(host);
        return host;
    }

    /**
     * @param name host name.
     * @return a new host with the default configuration (16 GiB, RLIMIT_MEMLOCK 8 MiB, THP madvise).
     */
    public SimHost addHost(final String name)
    {
        return addHost(name, HostConfig.builder().build());
    }

    /**
     * @return the hosts, in creation order.
     */
    public List<SimHost> hosts()
    {
        return Collections.unmodifiableList(hosts);
    }

    /**
     * @return every device of every host.
     */
    public List<SimDevice> devices()
    {
        final List<SimDevice> all = new ArrayList<>();
        for (final SimHost h : hosts)
        {
            all.addAll(h.devices());
        }
        return all;
    }

    /**
     * @return the simulated clock.
     */
    public SimClock clock()
    {
        return clock;
    }

    /**
     * @return the cost model.
     */
    public CostModel costModel()
    {
        return costModel;
    }

    /**
     * @return the NIC engine that moves the packets of posted work requests.
     */
    public NicEngine engine()
    {
        return engine;
    }

    /**
     * Lets the devices work: moves up to {@code maxPackets} packets of the work requests in flight, the QPs with work
     * taking turns (see {@link NicEngine}).
     *
     * @param maxPackets most packets to move.
     * @return the packets moved; less than asked when nothing was left to do.
     */
    public int progress(final int maxPackets)
    {
        final EngineThread held = enter();
        try
        {
            return engine.progress(maxPackets);
        }
        finally
        {
            exit(held);
        }
    }

    /**
     * Lets the devices work until nothing is left to do (sends waiting for a receive stay waiting).
     *
     * @return the packets moved.
     */
    public long progressAll()
    {
        final EngineThread held = enter();
        try
        {
            final int batch = 1 << 20;
            long moved = 0;
            int n;
            do
            {
                n = engine.progress(batch);
                moved += n;
            }
            while (n == batch);
            return moved;
        }
        finally
        {
            exit(held);
        }
    }

    /**
     * Starts the engine-thread mode ({@link EngineThread}): the NIC engine runs on a thread of its own until the
     * returned handle is closed; posting and polling may come from any thread. The deterministic mode (no thread:
     * poll and progress drive the engine) is the default and the testkit's.
     *
     * @return the running engine thread; close it to go back to the deterministic mode.
     * @throws IllegalStateException when an engine thread already runs on this fabric.
     */
    public synchronized EngineThread startEngineThread()
    {
        if (engineThread != null)
        {
            throw new IllegalStateException("an engine thread already runs on this fabric; close it first");
        }
        final EngineThread t = new EngineThread(this);
        engineThread = t;
        t.start();
        return t;
    }

    /**
     * @return true while an engine thread runs on this fabric.
     */
    public boolean engineThreadRunning()
    {
        return engineThread != null;
    }

    synchronized void engineThreadStopped(final EngineThread t)
    {
        if (engineThread == t)
        {
            engineThread = null;
        }
    }

    /**
     * A verb that shares the engine's state starts: in the engine-thread mode it holds the engine off.
     *
     * @return the engine thread held off, to pass to {@link #exit(EngineThread)}; null in the deterministic mode.
     */
    EngineThread enter()
    {
        final EngineThread t = engineThread;
        if (t != null)
        {
            t.enter();
        }
        return t;
    }

    /**
     * Runs a verb that changes the tables, keys, queues or clock the engine reads — registration and deregistration of
     * every kind of MR, ibv_rereg_mr, ibv_alloc_mw / ibv_dealloc_mw, ibv_advise_mr, ibv_alloc_pd / ibv_dealloc_pd,
     * ibv_create_cq, ibv_create_qp, ibv_create_srq and the XRC verbs (ibv_open_xrcd, ibv_close_xrcd, ibv_create_srq_ex
     * of an XRC SRQ, ibv_create_qp of an XRC target) — under the
     * engine's lock: in the engine-thread mode the engine thread waits while it runs, as for
     * {@link EngineThread#exclusive}, so no packet is placed half-way through it and no DMA follows a deregistration
     * that returned; in the deterministic mode it just runs.
     *
     * @param verb the verb's body.
     * @param <T>  what it returns.
     * @return what it returned.
     */
    <T> T guarded(final java.util.function.Supplier<T> verb)
    {
        final EngineThread held = enter();
        try
        {
            return verb.get();
        }
        finally
        {
            exit(held);
        }
    }

    /**
     * {@link #guarded(java.util.function.Supplier)} for a verb that returns nothing.
     *
     * @param verb the verb's body.
     */
    void guardedRun(final Runnable verb)
    {
        final EngineThread held = enter();
        try
        {
            verb.run();
        }
        finally
        {
            exit(held);
        }
    }

    /** The verb ends ({@code held}: what {@link #enter()} answered). */
    static void exit(final EngineThread held)
    {
        if (held != null)
        {
            held.exit();
        }
    }

    /**
     * Moves packets until {@code done} holds or nothing is left: in the deterministic mode on the calling thread,
     * in the engine-thread mode by waiting for the engine thread ({@code held}: what {@link #enter()} answered).
     */
    void runUntil(final BooleanSupplier done, final EngineThread held)
    {
        if (held != null)
        {
            held.awaitUntil(done);
        }
        else
        {
            engine.runUntil(done);
        }
    }

    /**
     * @return the path MTU in bytes every RC connection uses: the ports' active_mtu (IB MTU 4096 unless set).
     */
    public int pathMtuBytes()
    {
        return pathMtuBytes;
    }

    /**
     * @param mtuBytes the ports' active_mtu in bytes: 256, 512, 1024, 2048 or 4096 (enum ibv_mtu, IBA 7.7.9).
     * @throws IllegalArgumentException for another value.
     */
    public void pathMtuBytes(final int mtuBytes)
    {
        if (mtuBytes < 256 || mtuBytes > 4096 || Integer.bitCount(mtuBytes) != 1)
        {
            throw new IllegalArgumentException("path MTU " + mtuBytes + " bytes: an IB MTU is 256, 512, 1024, 2048 "
                + "or 4096 (enum ibv_mtu)");
        }
        this.pathMtuBytes = mtuBytes;
    }

    /** The first QP number of a fabric's devices unless {@link #firstQpNum(int)} set another: 0x11. */
    public static final int FIRST_QP_NUM = 0x11;

    /**
     * @return the number each device of this fabric gives its first QP.
     */
    public int firstQpNum()
    {
        return firstQpNum;
    }

    /**
     * Numbers the QPs of this fabric's devices from {@code qpNum} on, those added later and those that have created
     * no QP yet. Real QP numbers differ between hosts (each device allocates its own 24-bit numbers, IBA 10.2.4), so
     * a fabric that stands for one host of several numbers its QPs apart from the others'.
     *
     * @param qpNum a 24-bit QP number above 1 (QPs 0 and 1 are the special QPs).
     * @throws IllegalArgumentException for another value.
     */
    public void firstQpNum(final int qpNum)
    {
        if (qpNum < 2 || qpNum > 0xffffff)
        {
            throw new IllegalArgumentException("first QP number 0x" + Integer.toHexString(qpNum) + ": a QP number "
                + "is 24 bits, and 0 and 1 are the special QPs");
        }
        this.firstQpNum = qpNum;
        for (final SimDevice d : devices())
        {
            d.objects().firstQpNum(qpNum);
        }
    }

    /**
     * @param qpNum a QP number.
     * @return true when a live QP of that number is on any device of this fabric.
     */
    public boolean anyDeviceHasQp(final int qpNum)
    {
        for (final SimDevice d : devices())
        {
            if (d.qp(qpNum) != null)
            {
                return true;
            }
        }
        return false;
    }

    /** True when someone listens to the trace (so per-packet events are worth building). */
    boolean tracing()
    {
        return !traceListeners.isEmpty();
    }

    /**
     * @param listener called with every span of simulated time (registrations, deregistrations and their
     *                 invalidation stalls, work requests, queue creations) as it ends.
     */
    public void addTraceListener(final java.util.function.Consumer<TraceEvent> listener)
    {
        traceListeners.add(java.util.Objects.requireNonNull(listener, "listener"));
    }

    /** Advances the clock by a span and reports it to the trace listeners. */
    /**
     * CPU time of a host's process that the model prices (its page faults): advances the clock and records a span
     * of category "cpu" on the pseudo-device {@code cpu}.
     */
    void cpuSpan(final String hostName, final String name, final long durationNs, final Map<String, Object> args)
    {
        final long start = clock.nowNs();
        clock.advance(durationNs);
        if (!traceListeners.isEmpty())
        {
            final TraceEvent e = new TraceEvent(name, "cpu", hostName, "cpu", start, durationNs, args);
            for (final java.util.function.Consumer<TraceEvent> l : traceListeners)
            {
                l.accept(e);
            }
        }
    }

    /**
     * Runs CPU work on a process of this fabric (a touch or a write the scripts ask for) and advances the clock by the
     * host page faults it took (first touch: the fault and the zeroing of each page; see {@link CostModel}).
     *
     * @param process the process.
     * @param what    the work's name in the trace.
     * @param work    the work.
     * @param <T>     its result.
     * @return its result.
     */
    public <T> T cpuWork(final dev.rnicsim.pagetable.UserProcess process, final String what,
        final java.util.function.Supplier<T> work)
    {
        String hostName = process.name();
        for (final SimHost h : hosts)
        {
            if (h.host() == process.host())
            {
                hostName = h.name();
            }
        }
        return HostFaultClock.cpu(this, process.host(), hostName, what, work);
    }

    void span(final SimDevice device, final String name, final String category, final long durationNs,
        final Map<String, Object> args)
    {
        final long start = clock.nowNs();
        clock.advance(durationNs);
        if (!traceListeners.isEmpty())
        {
            final TraceEvent e = new TraceEvent(name, category, device.host().name(), device.name(), start, durationNs,
                args);
            for (final java.util.function.Consumer<TraceEvent> l : traceListeners)
            {
                l.accept(e);
            }
        }
    }

    /**
     * Ends a span whose parts advanced the clock already (the packets of a message): advances the clock by what of
     * {@code totalNs} they did not, so that the message costs {@code totalNs} in all, and reports one span from
     * {@code startNs} to now.
     */
    void spanSince(final SimDevice device, final String name, final String category, final long startNs,
        final long totalNs, final long advancedNs, final Map<String, Object> args)
    {
        clock.advance(Math.max(0, totalNs - advancedNs));
        if (!traceListeners.isEmpty())
        {
            final TraceEvent e = new TraceEvent(name, category, device.host().name(), device.name(), startNs,
                clock.nowNs() - startNs, args);
            for (final java.util.function.Consumer<TraceEvent> l : traceListeners)
            {
                l.accept(e);
            }
        }
    }

    /** Advances the clock by a span of a GPU's work (a copy) and reports it with category {@code gpu}. */
    void gpuSpan(final SimGpu gpu, final String name, final long durationNs, final Map<String, Object> args)
    {
        final long start = clock.nowNs();
        clock.advance(durationNs);
        if (!traceListeners.isEmpty())
        {
            final TraceEvent e = new TraceEvent(name, "gpu", gpu.host().name(), gpu.name(), start, durationNs, args);
            for (final java.util.function.Consumer<TraceEvent> l : traceListeners)
            {
                l.accept(e);
            }
        }
    }

    /**
     * Reports a span that overlaps one already counted on another device (the responder's side of a work request),
     * without advancing the clock.
     */
    void overlap(final SimDevice device, final String name, final String category, final long startNs,
        final long durationNs, final Map<String, Object> args)
    {
        if (!traceListeners.isEmpty())
        {
            final TraceEvent e = new TraceEvent(name, category, device.host().name(), device.name(), startNs,
                durationNs, args);
            for (final java.util.function.Consumer<TraceEvent> l : traceListeners)
            {
                l.accept(e);
            }
        }
    }

    /** Gives a new device its place on the network: a node GUID unique in the fabric. */
    long attach(final SimDevice device, final long profileGuid)
    {
        devices++;
        final long guid = (profileGuid & ~0xffffffL) | devices;
        devicesByGid.put(gidOf(guid), device);
        return guid;
    }

    SimDevice deviceByGid(final String gid)
    {
        final SimDevice d = devicesByGid.get(gid);
        if (d != null || gid == null)
        {
            return d;
        }
        // another entry of a device's GID table: its IPv4-mapped GID, or an iWARP port's MAC GID
        for (final SimDevice each : devicesByGid.values())
        {
            if (GidTable.holds(each, gid))
            {
                return each;
            }
        }
        return null;
    }

    /**
     * @param nodeGuid a node GUID.
     * @return the link-local GID of port 1 built from it (fe80::GUID), in text form.
     */
    static String gidOf(final long nodeGuid)
    {
        final java.util.HexFormat hex = java.util.HexFormat.of();
        return "fe80:0000:0000:0000:" + hex.toHexDigits((short)(nodeGuid >>> 48)) + ":"
            + hex.toHexDigits((short)(nodeGuid >>> 32)) + ":" + hex.toHexDigits((short)(nodeGuid >>> 16)) + ":"
            + hex.toHexDigits((short)nodeGuid);
    }
}
