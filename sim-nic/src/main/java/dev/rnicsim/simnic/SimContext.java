package dev.rnicsim.simnic;

import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.HostMemory;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayList;
import java.util.List;

/**
 * A simulated device opened by one process: the root of its resource tree. Closing it closes its PDs (with their
 * QPs and MRs) and then its CQs, as the kernel releases a process's objects when it closes the device file.
 *
 * <p>Not thread safe.
 */
public final class SimContext implements Context
{
    /** Bytes of one CQE in the ring (mlx5's 64-byte CQE; assumed for every profile). */
    static final int CQE_BYTES = 64;

    private final SimDevice device;
    private final UserProcess process;
    private final SimHostMemory memory;
    private final List<SimPd> pds = new ArrayList<>();
    private final List<SimPd> pdsView = java.util.Collections.unmodifiableList(pds);
    private final List<SimCq> cqs = new ArrayList<>();
    private final List<SimXrcd> xrcds = new ArrayList<>();
    private boolean closed;
    private final AsyncEventQueue events = new AsyncEventQueue(this);

    SimContext(final SimDevice device, final UserProcess process)
    {
        this.device = device;
        this.process = process;
        this.memory = new SimHostMemory(process, device.fabric());
    }

    @Override
    public SimDevice device()
    {
        return device;
    }

    /**
     * {@code ibv_fork_init} in this context's process: {@link ForkSafety#forkInit()}, EINVAL when it was too late.
     */
    @Override
    public void forkInit()
    {
        device.fabric().guardedRun(() ->
        {
            final ForkSafety fork = device.host().forkSafety(process);
            if (fork.forkInit() != 0)
            {
                throw Errors.invalid("ibv_fork_init", "pid " + process.pid() + " registered memory or created a queue "
                    + "before asking for fork support, and its kernel does not copy pinned pages at fork (libibverbs "
                    + "ibv_fork_init: the ranges already pinned cannot be made MADV_DONTFORK now); call ibv_fork_init, "
                    + "or set RDMAV_FORK_SAFE=1, before the first registration; nothing changed");
            }
        });
    }

    /**
     * {@code ibv_is_fork_initialized} in this context's process ({@link ForkSafety#status()}).
     */
    @Override
    public dev.rnicsim.verbs.ForkStatus forkStatus()
    {
        return dev.rnicsim.verbs.ForkStatus.valueOf(device.host().forkSafety(process).status().name());
    }

    /**
     * @return the process that opened the device.
     */
    public UserProcess process()
    {
        return process;
    }

    @Override
    public DeviceAttributes queryDevice()
    {
        checkOpen("ibv_query_device");
        return device.attributes();
    }

    @Override
    public HostMemory memory()
    {
        return memory;
    }

    @Override
    public ProtectionDomain allocPd()
    {
        return device.fabric().guarded(this::allocPdNow);
    }

    private ProtectionDomain allocPdNow()
    {
        checkOpen("ibv_alloc_pd");
        final int maxPd = device.profile().attributes().maxPd();
        if (device.objects().pdsLive() >= maxPd)
        {
            throw Errors.of("ibv_alloc_pd", Errno.ENOMEM, "PDs live=" + device.objects().pdsLive() + " = max_pd=" + maxPd
                + "; deallocate a PD first or use a device with a larger max_pd");
        }
        final SimPd pd = new SimPd(this, device.objects().allocPdNum());
        device.objects().pdsLive(1);
        pds.add(pd);
        return pd;
    }

    /** The device's completion vectors, {@link DeviceProfile#numCompVectors()}. */
    @Override
    public int numCompVectors()
    {
        return device.profile().numCompVectors();
    }

    @Override
    public CompletionQueue createCq(final int cqe)
    {
        return device.fabric().guarded(() -> createCqNow(cqe));
    }

    private CompletionQueue createCqNow(final int cqe)
    {
        checkOpen("ibv_create_cq");
        final DeviceAttributes a = device.profile().attributes();
        if (cqe < 1 || cqe > a.maxCqe())
        {
            throw Errors.invalid("ibv_create_cq", "cqe=" + cqe + " must be 1..max_cqe=" + a.maxCqe() + "; ask "
                + (cqe < 1 ? "for at least 1 entry" : "for fewer entries") + "; nothing created");
        }
        CqDepth.check("ibv_create_cq", device.profile(), cqe);
        if (device.objects().cqsLive() >= a.maxCq())
        {
            throw Errors.of("ibv_create_cq", Errno.ENOMEM, "CQs live=" + device.objects().cqsLive() + " = max_cq=" + a.maxCq()
                + "; destroy a CQ first or use a device with a larger max_cq");
        }
        // the driver rounds the count and reports what it granted (CqDepth: mlx5_create_cq, siw_create_cq, ...)
        final int reported = CqDepth.reported(device.profile(), cqe);
        final long entries = CqDepth.ringEntries(reported);
        final Ring ring;
        final ForkSafety fork = device.host().forkSafety(process);
        final long workBefore = fork.workNs(device.fabric().costModel());
        try
        {
            ring = Ring.map(fork, entries * CQE_BYTES);
        }
        catch (final KernelException e)
        {
            throw Errors.of("ibv_create_cq", e);
        }
        finally
        {
            SimPd.madviseSpan(device, fork, workBefore, "MADV_DONTFORK (CQ ring)");
        }
        final SimCq cq = new SimCq(this, reported, ring);
        device.objects().cqsLive(1);
        device.count(SimCounter.PINNED_BYTES, ring.lengthBytes());
        device.fabric().span(device, "create_cq", "queue", device.fabric().costModel().queueCreateNs(ring.pages()),
            !device.fabric().tracing() ? java.util.Map.of()
            : java.util.Map.of("cqe", reported, "ring_bytes", ring.lengthBytes()));
        cqs.add(cq);
        return cq;
    }

    /**
     * @return its live protection domains.
     */
    public List<SimPd> protectionDomains()
    {
        return List.copyOf(pds);
    }

    /** @return the live protection domains, not copied: for a search that changes none. */
    List<SimPd> pdsView()
    {
        return pdsView;
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        device.observe(o -> o.closing(this));
        events.clear();
        // XRC_RECV QPs belong to no PD; XRC SRQs close with their PDs; the domains after both.
        final RuntimeException failure = Closing.each(List.copyOf(cqs), SimCq::close, Closing.each(List.copyOf(xrcds),
            SimXrcd::close, Closing.each(List.copyOf(pds), SimPd::close, Closing.each(List.copyOf(xrcds),
            SimXrcd::closeAll, null))));
        SimDm.freeAll(this);
        closed = true;
        device.contextClosed(this);
        if (failure != null)
        {
            throw failure;
        }
    }

    @Override
    public dev.rnicsim.verbs.DeviceMemory allocDm(final long lengthBytes)
    {
        checkOpen("ibv_alloc_dm");
        return SimDm.allocate(this, dev.rnicsim.verbs.DmAttr.of(lengthBytes));
    }

    @Override
    public dev.rnicsim.verbs.DeviceMemory allocDm(final dev.rnicsim.verbs.DmAttr attr)
    {
        checkOpen("ibv_alloc_dm");
        return SimDm.allocate(this, attr);
    }

    @Override
    public dev.rnicsim.verbs.PortAttributes queryPort(final int portNum)
    {
        final String verb = "ibv_query_port";
        checkOpen(verb);
        checkPort(verb, portNum);
        return device.portAttributes();
    }

    /** One entry of the port's GID table ({@link GidTable}: the link-local GIDs, then the netdev's IPv4 address). */
    @Override
    public byte[] queryGid(final int portNum, final int index)
    {
        return entry("ibv_query_gid", portNum, index).gid();
    }

    /** {@code ibv_query_gid_ex}: the entry with its type ({@link GidTable}). */
    @Override
    public dev.rnicsim.verbs.GidEntry queryGidEntry(final int portNum, final int index)
    {
        return entry("ibv_query_gid_ex", portNum, index);
    }

    private dev.rnicsim.verbs.GidEntry entry(final String verb, final int portNum, final int index)
    {
        checkOpen(verb);
        checkPort(verb, portNum);
        final int len = device.profile().portAttributes().gidTblLen();
        if (index < 0 || index >= len)
        {
            throw Errors.invalid(verb, "GID index " + index + " is outside the table of " + len + " entries"
                + " (ibv_query_gid_ex); give an index inside the GID table");
        }
        final List<dev.rnicsim.verbs.GidEntry> valid = GidTable.entries(device, portNum);
        if (index >= valid.size())
        {
            throw Errors.of(verb, Errno.ENODATA, "GID index " + index + " of port " + portNum + " is empty "
                + "(ibv_query_gid_ex): the port has " + valid.size() + " valid " + (valid.size() == 1 ? "entry"
                : "entries") + ", index 0" + (valid.size() == 1 ? "" : " to " + (valid.size() - 1))
                + " (index 0 holds the link-local GID " + GidTable.text(valid.getFirst().gid()) + ")"
                + (device.profile().gidKinds().roce() && device.netdev().ipv4() == null
                ? " (its netdev has no IPv4 address, so no ::ffff:a.b.c.d entries)" : "")
                + "; query an index the port has filled");
        }
        return valid.get(index);
    }

    @Override
    public int queryPkey(final int portNum, final int index)
    {
        checkOpen("ibv_query_pkey");
        return PortTables.pkey(device, portNum, index);
    }

    @Override
    public List<dev.rnicsim.verbs.GidEntry> queryGidTable(final int maxEntries)
    {
        checkOpen("ibv_query_gid_table");
        return PortTables.gidTable(this, device, maxEntries);
    }

    /** From the host's first GPU (see {@link SimExportedDmabuf}). */
    @Override
    public dev.rnicsim.verbs.DmaBuf allocDmabuf(final long sizeBytes)
    {
        checkOpen("dmabuf_alloc");
        return SimExportedDmabuf.allocate(device.host(), sizeBytes);
    }

    private void checkPort(final String verb, final int portNum)
    {
        final int ports = device.profile().attributes().physPortCnt();
        if (portNum < 1 || portNum > ports)
        {
            throw Errors.invalid(verb, "port " + portNum + " is outside 1.." + ports + " (phys_port_cnt)"
                + "; give a port from 1 to phys_port_cnt");
        }
    }

    @Override
    public dev.rnicsim.verbs.XrcDomain openXrcd()
    {
        return device().fabric().guarded(() ->
        {
            final SimXrcd x = XrcRules.open(this);
            xrcds.add(x);
            return x;
        });
    }

    /**
     * {@code ibv_open_xrcd} with a file: a handle of this context on the domain the inode names on this device, shared
     * with every other context of the device that opens it ({@link XrcdTable}).
     */
    @Override
    public dev.rnicsim.verbs.XrcDomain openXrcd(final dev.rnicsim.verbs.XrcdFile file, final boolean create,
        final boolean exclusive)
    {
        return device().fabric().guarded(() ->
        {
            final SimXrcd x = device().xrcdTable().open(this, file, create, exclusive);
            xrcds.add(x);
            return x;
        });
    }

    @Override
    public dev.rnicsim.verbs.QueuePair createXrcRecvQp(final dev.rnicsim.verbs.XrcDomain xrcd)
    {
        return device().fabric().guarded(() -> XrcRules.createTarget(this, xrcd));
    }

    /**
     * @return its live XRC domains.
     */
    public List<SimXrcd> xrcDomains()
    {
        return List.copyOf(xrcds);
    }

    void xrcdClosed(final SimXrcd x)
    {
        xrcds.remove(x);
    }

    void pdClosed(final SimPd pd)
    {
        pds.remove(pd);
        device.objects().pdsLive(-1);
    }

    void cqClosed(final SimCq cq)
    {
        cqs.remove(cq);
        device.objects().cqsLive(-1);
    }

    void checkOpen(final String verb)
    {
        if (closed)
        {
            // an exited process's files are closed by the kernel (ib_uverbs_close releases the context's objects)
            throw new VerbsException(verb, Errno.EINVAL.code(), "the context is closed (" + (process().exited()
                ? "process " + process().pid() + " exited, which released it); open the device again from a live "
                + "process" : "ibv_close_device released it); open the device again"));
        }
    }

    /**
     * @return the context's asynchronous event queue.
     */
    public AsyncEventQueue events()
    {
        return events;
    }

    @Override
    public java.util.Optional<dev.rnicsim.verbs.AsyncEvent> getAsyncEvent()
    {
        checkOpen("ibv_get_async_event");
        return events.get();
    }

    @Override
    public void ackAsyncEvent(final dev.rnicsim.verbs.AsyncEvent event)
    {
        checkOpen("ibv_ack_async_event");
        events.ack(event);
    }
}
