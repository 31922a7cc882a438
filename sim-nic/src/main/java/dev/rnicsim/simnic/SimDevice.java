package dev.rnicsim.simnic;

import dev.rnicsim.dma.DmaEngine;
import dev.rnicsim.dma.DmaPort;
import dev.rnicsim.mtt.AdapterConfig;
import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.mtt.MptConfig;
import dev.rnicsim.mtt.TranslationCache;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.Device;
import dev.rnicsim.verbs.DeviceAttributes;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A simulated RDMA device in a host: its profile, adapter tables (MTT, MPT, translation cache), DMA engine,
 * counters and registration trace. {@link #open()} gives a {@link Context} for a new process on the host, as a
 * program opening the device would; {@link #open(UserProcess)} for a given process.
 *
 * <p>Not thread safe.
 */
public final class SimDevice implements Device
{
    /** Registration events kept for {@link #recentRegistrations()}. */
    public static final int TRACE_CAPACITY = 1024;

    private final SimFabric fabric;
    private final SimHost host;
    private final String name;
    private final DeviceProfile profile;
    private final long nodeGuid;
    private final String gid;
    /** The netdev its Ethernet ports sit on: MTU and addresses ({@link PortNetdev}). */
    private final PortNetdev netdev = new PortNetdev(this);
    private final AdapterTables tables;
    private final DmaEngine dma = new DmaEngine();
    private final DmaPort port;
    private final long[] counters = new long[SimCounter.values().length];
    private final DeviceKeys keys;
    private final List<SimContext> contexts = new ArrayList<>();
    private final Deque<RegistrationEvent> trace = new ArrayDeque<>();
    private final List<Consumer<RegistrationEvent>> listeners = new ArrayList<>();
    private final List<DeviceObserver> observers = new ArrayList<>();
    private final KeyHistory keyHistory;
    private final XrcdTable xrcdTable = new XrcdTable();
    /** Object numbers and live counts against the max_* limits. */
    private final DeviceObjects objects;
    private int processes;

    SimDevice(final SimFabric fabric, final SimHost host, final String name, final DeviceProfile profile)
    {
        this.fabric = fabric;
        this.host = host;
        this.name = name;
        this.profile = profile;
        this.objects = new DeviceObjects(fabric.firstQpNum());
        this.tables = new AdapterTables(new AdapterConfig(profile.mtt(),
            new MptConfig(profile.mptEntries(), profile.traits().keyVariantBits(), profile.variantPolicy(),
                profile.indexPolicy(), profile.seed()),
            // rxe: a user MR's pages are PAGE_SIZE pages whatever page_size_cap says (ProviderRule)
            profile.follows(ProviderRule.USER_MR_IN_BASE_PAGES) ? host.host().config().basePage().bytes()
                : profile.attributes().pageSizeCap(), profile.cacheEntries(), profile.cacheWays(),
            dev.rnicsim.mtt.Errno.valueOf(profile.traits().noPageSizeErrno().name())));
        this.keys = new DeviceKeys(this);
        this.port = new DmaPort(tables, host.host().physicalMemory()).withFaults(keys::pageFault)
            .withOrdering(new dev.rnicsim.dma.WriteOrdering(profile.relaxedOrdering(),
                profile.follows(ProviderRule.RELAXED_ORDERING_UNSAFE_PLATFORM), profile.seed()));
        this.nodeGuid = fabric.attach(this, profile.attributes().nodeGuid());
        this.gid = SimFabric.gidOf(nodeGuid);
        this.keyHistory = new KeyHistory(fabric, tables.mpt().config().variantBits());
        netdev.mtuBytes(profile.netdevMtuBytes()); // a dump's active_mtu tells the netdev it was taken on
    }

    /**
     * @return what each MPT index held and since when (for diagnoses).
     */
    public KeyHistory keyHistory()
    {
        return keyHistory;
    }

    @Override
    public String name()
    {
        return name;
    }

    /**
     * @return the transport of the profile's driver ({@link DriverTraits#transport()}): IWARP for siw, cxgb4, erdma
     *         and irdma in iWARP mode, UNSPECIFIED for efa and mana, IB for the rest.
     */
    @Override
    public dev.rnicsim.verbs.TransportType transportType()
    {
        return dev.rnicsim.verbs.TransportType.of(profile.traits().transport().code());
    }

    /**
     * Opens the device for a new process on its host (named {@code app-N}), as a program would.
     *
     * @return the context; closing it releases everything it owns.
     */
    @Override
    public Context open()
    {
        processes++;
        return open(host.host().spawn("app-" + processes));
    }

    /** @return the XRC domains of the device named by a file, by inode (shared by all its contexts). */
    XrcdTable xrcdTable()
    {
        return xrcdTable;
    }

    /**
     * @param process the process opening the device; its memory is what MRs register and its RLIMIT_MEMLOCK
     *                bounds what they pin. When it exits, the context closes (the kernel closes its files).
     * @return the context.
     * @throws dev.rnicsim.verbs.VerbsException EINVAL when the process is not a live process of this device's host.
     */
    public SimContext open(final UserProcess process)
    {
        if (process == null || process.host() != host.host() || process.exited())
        {
            throw Errors.invalid("ibv_open_device", "the process must be a live process of host '" + host.name()
                + "', where " + name + " sits; got " + (process == null ? "none" : "pid " + process.pid()
                + (process.exited() ? " (exited)" : " of another host")));
        }
        // ibverbs_init, at the first ibv_get_device_list of the process: RDMAV_FORK_SAFE / IBV_FORK_SAFE.
        host.forkSafety(process).ibverbsInit();
        final SimContext context = new SimContext(this, process);
        process.onExit(context::close);
        contexts.add(context);
        return context;
    }

    /**
     * @return the profile.
     */
    public DeviceProfile profile()
    {
        return profile;
    }

    /**
     * @return the attributes {@code ibv_query_device_ex} reports: the profile's, with this device's node GUID.
     */
    public DeviceAttributes attributes()
    {
        return profile.attributes().toBuilder().nodeGuid(nodeGuid).sysImageGuid(nodeGuid).build();
    }

    /**
     * @return the name {@code ibv_devinfo} shows as {@code hca_id}: the device name after its last ':' or '/'.
     */
    public String hcaId()
    {
        return name.substring(Math.max(name.lastIndexOf(':'), name.lastIndexOf('/')) + 1);
    }

    /**
     * @return an {@code ibv_devinfo -v}-style dump of this device, which {@link DevinfoReader} reads back to the
     * same attributes.
     */
    public String devinfo()
    {
        return DevinfoWriter.write(hcaId(), attributes());
    }

    /**
     * @return the host it sits in.
     */
    public SimHost host()
    {
        return host;
    }

    /**
     * @return the fabric.
     */
    public SimFabric fabric()
    {
        return fabric;
    }

    /**
     * @return port 1's GID in text form.
     */
    public String gid()
    {
        return gid;
    }

    /**
     * @return the node GUID the fabric gave the device.
     */
    public long nodeGuid()
    {
        return nodeGuid;
    }

    /**
     * @return the netdev of its Ethernet ports, to set its MTU and address.
     */
    public PortNetdev netdev()
    {
        return netdev;
    }

    /**
     * @return what {@code ibv_query_port} reports for its ports: the profile's, with the MTUs the netdev decides
     *         ({@link PortMtuRule}).
     */
    public dev.rnicsim.verbs.PortAttributes portAttributes()
    {
        return netdev.portAttributes(profile);
    }

    /**
     * @return the adapter tables (MTT, MPT, translation cache), for inspection.
     */
    public AdapterTables tables()
    {
        return tables;
    }

    /**
     * @return the DMA engine, for inspection of its counts.
     */
    public DmaEngine dmaEngine()
    {
        return dma;
    }

    /**
     * @param counter a counter.
     * @return its value now.
     */
    public long counter(final SimCounter counter)
    {
        final TranslationCache cache = tables.cache();
        return switch (counter)
        {
            case MR_LIVE -> tables.mpt().inUse() - tables.windowCount();
            case ODP_MR_LIVE -> keys.odpLive();
            case MTT_ENTRIES_IN_USE -> tables.mtt().entriesInUse();
            case TRANSLATION_CACHE_HITS -> cache.hits();
            case TRANSLATION_CACHE_MISSES -> cache.misses();
            case TRANSLATION_CACHE_INVALIDATIONS -> cache.invalidations();
            case DMA_BYTES -> dma.bytesMoved();
            case DMA_TRANSLATIONS -> dma.translations();
            default -> counters[counter.ordinal()];
        };
    }

    /**
     * @return every counter by its label, in the order of {@link SimCounter}.
     */
    public Map<String, Long> counters()
    {
        final Map<String, Long> map = new LinkedHashMap<>();
        for (final SimCounter c : SimCounter.values())
        {
            map.put(c.label(), counter(c));
        }
        return map;
    }

    /**
     * @return the last {@value #TRACE_CAPACITY} registrations and deregistrations, oldest first.
     */
    public List<RegistrationEvent> recentRegistrations()
    {
        return List.copyOf(trace);
    }

    /**
     * @param listener called with every registration and deregistration event, as it happens.
     */
    public void addRegistrationListener(final Consumer<RegistrationEvent> listener)
    {
        listeners.add(listener);
    }

    /**
     * @return the live contexts.
     */
    public List<SimContext> contexts()
    {
        return Collections.unmodifiableList(contexts);
    }

    // ------------------------------------------------------------------ package-private: used by the verbs objects

    DmaPort port()
    {
        return port;
    }

    void count(final SimCounter counter, final long delta)
    {
        counters[counter.ordinal()] += delta;
    }

    void record(final RegistrationEvent event)
    {
        keyHistory.registration(event);
        if (trace.size() == TRACE_CAPACITY)
        {
            trace.removeFirst();
        }
        trace.addLast(event);
        for (final Consumer<RegistrationEvent> l : listeners)
        {
            l.accept(event);
        }
    }

    /** @return the device's object numbers and live counts. */
    DeviceObjects objects()
    {
        return objects;
    }

    void removeQp(final int qpNum)
    {
        objects.removeQp(qpNum);
    }

    SimQp qp(final int qpNum)
    {
        return objects.qp(qpNum);
    }

    /** @return a QP of this number destroyed lately (its number not taken since), or null. */
    SimQp destroyedQp(final int qpNum)
    {
        return objects.destroyedQp(qpNum);
    }

    /**
     * @return the live QPs of this device, by QP number.
     */
    public java.util.List<SimQp> queuePairs()
    {
        return objects.queuePairs();
    }

    /**
     * @param observer sees registrations, deregistrations, transfers, failures and context closes from now on.
     */
    public void addObserver(final DeviceObserver observer)
    {
        observers.add(java.util.Objects.requireNonNull(observer, "observer"));
    }

    /**
     * @param observer an observer added before; no longer called.
     */
    public void removeObserver(final DeviceObserver observer)
    {
        observers.remove(observer);
    }

    /** Calls every observer (none, most of the time). */
    void observe(final Consumer<DeviceObserver> call)
    {
        if (!observers.isEmpty())
        {
            for (final DeviceObserver o : List.copyOf(observers))
            {
                call.accept(o);
            }
        }
    }


    /**
     * @param key an lkey or rkey.
     * @return the live MR of this device with that lkey (or, when none, that rkey), or null.
     */
    public SimMr memoryRegion(final int key)
    {
        return keys.memoryRegion(key);
    }

    /**
     * @param key an rkey.
     * @return the live memory window of this device with that rkey, or null.
     */
    public SimMw memoryWindow(final int key)
    {
        return keys.window(key);
    }

    /**
     * @param key an lkey or rkey.
     * @return the live MR over GPU memory with that key, or null.
     */
    public SimPeerMr peerMemoryRegion(final int key)
    {
        return keys.peerMemoryRegion(key);
    }

    /**
     * @param key an lkey or rkey.
     * @return the live ODP MR with that key, or null.
     */
    public SimOdpMr odpMemoryRegion(final int key)
    {
        return keys.odpMemoryRegion(key);
    }

    /** @return the device's key lookups, ODP page-fault routing and ZERO_BASED offsets. */
    DeviceKeys keys()
    {
        return keys;
    }

    /** {@link DeviceKeys#hasPeerMemory}. */
    boolean hasPeerMemory()
    {
        return keys.hasPeerMemory();
    }

    /** {@link DeviceKeys#takeRemoteFaultNs}. */
    long takeRemoteFaultNs()
    {
        return keys.takeRemoteFaultNs();
    }

    /** {@link DeviceKeys#keyAddress}. */
    long keyAddress(final int key, final long addr)
    {
        return keys.keyAddress(key, addr);
    }

    void contextClosed(final SimContext context)
    {
        contexts.remove(context);
    }



    /**
     * Prices and records a key invalidation other than a deregistration (window bind or dealloc, LOCAL_INV,
     * SEND_WITH_INV, rereg): the NIC stalls while it drops the key's cached translations (S13).
     */
    void invalidated(final String what, final int key, final long cacheEntriesDropped)
    {
        count(SimCounter.KEY_INVALIDATIONS, 1);
        if (!"bind_mw".equals(what))
        {
            keyHistory.invalidated(what, key);
        }
        fabric.span(this, "invalidate", "invalidation", fabric.costModel().invalidationStallNs(),
            !fabric.tracing() ? Map.of() : Map.of("cause", what, "key", key, "cache_entries_dropped",
            cacheEntriesDropped));
    }




    /**
     * @return how this device places DMA writes into its host's memory (relaxed ordering, chunks in flight; add a
     * listener to watch placements as a polling CPU would).
     */
    public dev.rnicsim.dma.WriteOrdering writeOrdering()
    {
        return port.ordering();
    }

    /**
     * Starts a CPU of this device's host polling a flag while the device's writes land ({@link FlagWatch}).
     *
     * @param process    the polling process (its addresses).
     * @param flagVa     address of the 8-byte little-endian flag.
     * @param flagValue  the value that means "data ready".
     * @param dataVa     address of the data read when the flag is seen.
     * @param dataLength bytes of data.
     * @return the watch; close it to stop.
     * @throws IllegalArgumentException when the process is not a live process of this host or the length is
     *                                  negative.
     */
    public FlagWatch watchFlag(final UserProcess process, final long flagVa, final long flagValue, final long dataVa,
        final int dataLength)
    {
        if (process == null || process.exited() || process.host() != host.host() || dataLength < 0)
        {
            throw new IllegalArgumentException("watchFlag: the process must be a live process of host "
                + host.name() + " and the data length 0 or more (got " + process + ", " + dataLength + ")");
        }
        final FlagWatch w = new FlagWatch(this, process, flagVa, flagValue, dataVa, dataLength);
        port.ordering().addListener(w);
        return w;
    }

    /**
     * @param key an lkey or rkey of this device.
     * @return true when the device applies relaxed ordering to that MR's writes: the MR asks for it and the device
     * supports it (IBV_ACCESS_RELAXED_ORDERING is accepted everywhere and ignored elsewhere).
     */
    public boolean relaxedWrites(final int key)
    {
        if (!profile.relaxedOrdering())
        {
            return false;
        }
        final int access = tables.mpt().accessBits(key);
        return access != -1 && (access & dev.rnicsim.mtt.AccessFlags.RELAXED_ORDERING) != 0;
    }










    /** Keys of live null MRs, and the device's sink frame (-1: none yet). */
    private final java.util.Set<Integer> nullMrKeys = new java.util.HashSet<>();
    private long nullMrSink = -1;

    private SimDm.Space deviceMemory;

    /** The device memory of ibv_alloc_dm, set up at its first use. */
    SimDm.Space deviceMemory()
    {
        if (deviceMemory == null)
        {
            deviceMemory = new SimDm.Space(this);
        }
        return deviceMemory;
    }

    /** The device memory if an ibv_alloc_dm has set it up, else null (closing a context then has none to free). */
    SimDm.Space deviceMemoryIfUsed()
    {
        return deviceMemory;
    }

    long nullMrSinkFrame()
    {
        if (nullMrSink < 0)
        {
            nullMrSink = SimNullMr.sinkFrame(this);
        }
        return nullMrSink;
    }

    void nullMrAdded(final int key)
    {
        nullMrKeys.add(key);
    }

    void nullMrRemoved(final int key)
    {
        nullMrKeys.remove(key);
    }

    boolean isNullMrKey(final int key)
    {
        return !nullMrKeys.isEmpty() && nullMrKeys.contains(key);
    }

    /** Zeroes the sink frame: what a null MR reads is zeros; what was written to it is gone. */
    void clearNullMrSink()
    {
        host.host().physicalMemory().write(nullMrSink, new byte[4096], 0, 4096);
    }


}
