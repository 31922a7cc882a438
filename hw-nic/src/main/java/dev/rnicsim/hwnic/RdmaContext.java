package dev.rnicsim.hwnic;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.ForkStatus;
import dev.rnicsim.verbs.GidEntry;
import dev.rnicsim.verbs.HostMemory;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.XrcDomain;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * An open rdma-core device ({@code struct ibv_context}): the root of the resource tree Context → PD → {QP, MW, MR}
 * and Context → CQ. Closing it closes everything it owns, children first, then {@code ibv_close_device}; a second
 * close does nothing.
 *
 * <p>QPs are addressed through one port and one GID table entry: port {@value #DEFAULT_PORT} and GID index
 * {@value #DEFAULT_GID_INDEX} unless the system properties {@value #PORT_PROPERTY} and {@value #GID_INDEX_PROPERTY}
 * say otherwise (on RoCE the GID index selects RoCE v1 or v2; {@code show_gids} lists them).
 *
 * <p>Not thread safe: the resource tree is kept without locks, so use a context from one thread at a time (the
 * native verbs underneath may run concurrently on different objects, libibverbs(7)).
 */
public final class RdmaContext implements Context
{
    private static final ValueLayout.OfShort JAVA_SHORT_BE = JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN);

    /** Port used for QPs unless {@value #PORT_PROPERTY} is set. */
    public static final int DEFAULT_PORT = 1;
    /** GID table index used for QP addresses unless {@value #GID_INDEX_PROPERTY} is set. */
    public static final int DEFAULT_GID_INDEX = 0;
    /** System property: the port number QPs use. */
    public static final String PORT_PROPERTY = "rnicsim.rdma.port";
    /** System property: the GID index QP addresses use. */
    public static final String GID_INDEX_PROPERTY = "rnicsim.rdma.gidIndex";

    private final Libibverbs lib;
    private final RdmaDevice device;
    private final MemorySegment ctx;
    private final MemorySegment postSendFn;
    private final MemorySegment postRecvFn;
    private final MemorySegment pollCqFn;
    private final List<RdmaPd> pds = new ArrayList<>();
    private final List<RdmaCq> cqs = new ArrayList<>();
    private final List<RdmaXrcd> xrcds = new ArrayList<>();
    private final int portNum = Integer.getInteger(PORT_PROPERTY, DEFAULT_PORT);
    private final int gidIndex = Integer.getInteger(GID_INDEX_PROPERTY, DEFAULT_GID_INDEX);
    private DeviceAttributes attributes;
    private Port port;
    private boolean closed;

    RdmaContext(final Libibverbs lib, final RdmaDevice device, final MemorySegment ctx)
    {
        this.lib = lib;
        this.device = device;
        this.ctx = ctx;
        // The ops table is filled by ibv_open_device and never changes; the inline verbs read it on every call.
        this.postSendFn = ctx.get(ADDRESS, IbvStructs.CONTEXT_OPS_POST_SEND);
        this.postRecvFn = ctx.get(ADDRESS, IbvStructs.CONTEXT_OPS_POST_RECV);
        this.pollCqFn = ctx.get(ADDRESS, IbvStructs.CONTEXT_OPS_POLL_CQ);
    }

    @Override
    public RdmaDevice device()
    {
        return device;
    }

    /**
     * {@code ibv_query_device_ex}, falling back to {@code ibv_query_device} as verbs.h does.
     *
     * @return the attributes.
     * @throws VerbsException EINVAL when the context is closed; the provider's errno when the query fails.
     */
    @Override
    public DeviceAttributes queryDevice()
    {
        checkOpen("ibv_query_device_ex");
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment attr = arena.allocate(IbvStructs.IBV_DEVICE_ATTR_EX);
            final Errnos.Result r = lib.queries().queryDeviceEx(ctx, attr);
            if (r.value() != 0)
            {
                throw new VerbsException("ibv_query_device_ex", r.errno(), device.name() + ": the query failed");
            }
            attributes = AttributesReader.read(attr);
            return attributes;
        }
    }

    /**
     * @return the attributes of the last query, querying once if needed.
     */
    DeviceAttributes attributes()
    {
        return attributes != null ? attributes : queryDevice();
    }

    /**
     * @return the memory of this process: native mappings ({@link NativeHostMemory#shared()}), the same for every
     *     context, as every context of a process shares its address space.
     */
    @Override
    public HostMemory memory()
    {
        return NativeHostMemory.shared();
    }

    @Override
    public ProtectionDomain allocPd()
    {
        checkOpen("ibv_alloc_pd");
        final Errnos.Result r = lib.allocPd(ctx);
        if (r.isNull())
        {
            throw new VerbsException("ibv_alloc_pd", r.errno(), device.name() + ": no PD allocated (max_pd="
                + attributes().maxPd() + ")");
        }
        final RdmaPd pd = new RdmaPd(this, r.pointer(IbvStructs.IBV_PD.byteSize()));
        pds.add(pd);
        return pd;
    }

    /**
     * {@code ibv_create_cq(context, cqe, NULL, NULL, 0)}: no completion channel, vector 0.
     *
     * @param cqe minimum number of entries, 1 to {@code max_cqe}.
     * @return the CQ.
     * @throws VerbsException EINVAL for cqe below 1 (checked here) or above max_cqe (by the provider); ENOMEM
     *                        with the memlock limit when the ring cannot be pinned.
     */
    @Override
    public CompletionQueue createCq(final int cqe)
    {
        final String verb = "ibv_create_cq";
        checkOpen(verb);
        if (cqe < 1)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "cqe=" + cqe + " must be at least 1");
        }
        final Errnos.Result r = lib.createCq(ctx, cqe);
        if (r.isNull())
        {
            throw new VerbsException(verb, r.errno(), "cqe=" + cqe + " (max_cqe=" + attributes().maxCqe() + ")"
                + (r.errno() == Errno.ENOMEM.code() || r.errno() == Errno.EPERM.code() ? ": " + Diagnosis.memlock()
                    : ""));
        }
        final RdmaCq cq = new RdmaCq(this, r.pointer(IbvStructs.IBV_CQ.byteSize()));
        cqs.add(cq);
        return cq;
    }

    /**
     * {@code ibv_open_xrcd} without a file (ibv_open_xrcd(3)): see {@link RdmaXrcd#open}.
     *
     * @throws VerbsException EINVAL when the context is closed; otherwise as {@link RdmaXrcd#open}.
     */
    @Override
    public XrcDomain openXrcd()
    {
        checkOpen("ibv_open_xrcd");
        final RdmaXrcd xrcd = RdmaXrcd.open(this);
        xrcds.add(xrcd);
        return xrcd;
    }

    /**
     * {@code ibv_create_qp_ex} of an XRC_RECV QP in the domain (ibv_create_qp_ex(3)): see
     * {@link RdmaXrcd#createRecvQp}.
     *
     * @throws VerbsException EINVAL when the context is closed or the domain is not an open domain of it.
     */
    @Override
    public QueuePair createXrcRecvQp(final XrcDomain xrcd)
    {
        checkOpen("ibv_create_qp_ex");
        if (!(xrcd instanceof RdmaXrcd x) || x.context() != this)
        {
            throw new VerbsException("ibv_create_qp_ex", Errno.EINVAL.code(), "the XRC domain must be an open domain "
                + "of this context: " + xrcd);
        }
        return x.createRecvQp();
    }

    /** {@code ibv_alloc_dm} ({@link RdmaDm}). */
    @Override
    public dev.rnicsim.verbs.DeviceMemory allocDm(final long lengthBytes)
    {
        return RdmaDm.allocate(this, dev.rnicsim.verbs.DmAttr.of(lengthBytes));
    }

    /** {@code ibv_alloc_dm} with the whole attribute set, comp_mask as given ({@link RdmaDm}). */
    @Override
    public dev.rnicsim.verbs.DeviceMemory allocDm(final dev.rnicsim.verbs.DmAttr attr)
    {
        return RdmaDm.allocate(this, attr);
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    /**
     * Closes the PDs (with their QPs, SRQs, windows and MRs), then the XRC domains, then the CQs, then
     * {@code ibv_close_device}. Idempotent; failures are collected and the first is thrown after everything was
     * tried.
     */
    /**
     * {@code ibv_fork_init} of the library (process-wide: this JVM).
     */
    @Override
    public void forkInit()
    {
        final int rc = lib.forks().forkInit();
        if (rc != 0)
        {
            throw new VerbsException("ibv_fork_init", rc, "fork support could not be turned on (EINVAL: memory was "
                + "registered before and the kernel does not copy pinned pages at fork); call ibv_fork_init, or set "
                + "RDMAV_FORK_SAFE=1, before the first registration of the process");
        }
    }

    /**
     * {@code ibv_is_fork_initialized} of the library (process-wide: this JVM).
     */
    @Override
    public ForkStatus forkStatus()
    {
        final int status = lib.forks().isForkInitialized();
        return status >= 0 && status < ForkStatus.values().length ? ForkStatus.values()[status] : ForkStatus.DISABLED;
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        RuntimeException failure = Closing.each(cqs, RdmaCq::close, Closing.each(xrcds, RdmaXrcd::closeWithQps,
            Closing.each(pds, RdmaPd::close, null)));
        if (pds.isEmpty() && cqs.isEmpty() && xrcds.isEmpty())
        {
            final Errnos.Result r = lib.closeDevice(ctx);
            closed = true;
            if (r.value() != 0)
            {
                final VerbsException e = new VerbsException("ibv_close_device", r.errno(), device.name());
                if (failure == null)
                {
                    failure = e;
                }
                else
                {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null)
        {
            throw failure;
        }
    }

    // ------------------------------------------------------------------ for the children

    void xrcdClosed(final RdmaXrcd xrcd)
    {
        xrcds.remove(xrcd);
    }

    Libibverbs lib()
    {
        return lib;
    }

    MemorySegment segment()
    {
        return ctx;
    }

    MemorySegment postSendFn()
    {
        return postSendFn;
    }

    MemorySegment postRecvFn()
    {
        return postRecvFn;
    }

    MemorySegment pollCqFn()
    {
        return pollCqFn;
    }

    void pdClosed(final RdmaPd pd)
    {
        pds.remove(pd);
    }

    void cqClosed(final RdmaCq cq)
    {
        cqs.remove(cq);
    }

    void checkOpen(final String verb)
    {
        if (closed)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), device.name() + ": the context is closed");
        }
    }

    /**
     * The port QPs use, as ibv_query_port and ibv_query_gid report it.
     *
     * @param num       port number.
     * @param state     {@code enum ibv_port_state}.
     * @param activeMtu {@code enum ibv_mtu} of the link.
     * @param lid       LID (0 on RoCE).
     * @param linkLayer IBV_LINK_LAYER_*.
     * @param gidIndex  the GID index used.
     * @param gid       the GID at that index, in its text form.
     */
    record Port(int num, int state, int activeMtu, int lid, int linkLayer, int gidIndex, String gid)
    {
        /**
         * @return true when addresses must carry a GID (RoCE, or no LID).
         */
        boolean global()
        {
            return linkLayer == Ibv.IBV_LINK_LAYER_ETHERNET || lid == 0;
        }
    }

    /**
     * @return the port QPs use, queried once.
     * @throws VerbsException the errno of ibv_query_port or ibv_query_gid.
     */
    Port port()
    {
        checkOpen("ibv_query_port");
        if (port != null)
        {
            return port;
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment attr = arena.allocate(IbvStructs.IBV_PORT_ATTR);
            final Errnos.Result r = lib.queries().queryPort(ctx, portNum, attr);
            if (r.value() != 0)
            {
                throw new VerbsException("ibv_query_port", r.errno(), device.name() + " port " + portNum
                    + " (set -D" + PORT_PROPERTY + "=N for another)");
            }
            final MemorySegment gid = arena.allocate(IbvStructs.IBV_GID);
            final Errnos.Result g = lib.queries().queryGid(ctx, portNum, gidIndex, gid);
            if (g.value() != 0)
            {
                throw new VerbsException("ibv_query_gid", g.errno(), device.name() + " port " + portNum
                    + " GID index " + gidIndex + " (set -D" + GID_INDEX_PROPERTY + "=N for another)");
            }
            port = new Port(portNum, attr.get(JAVA_INT, IbvStructs.PORT_ATTR_STATE),
                attr.get(JAVA_INT, IbvStructs.PORT_ATTR_ACTIVE_MTU),
                Short.toUnsignedInt(attr.get(JAVA_SHORT, IbvStructs.PORT_ATTR_LID)),
                Byte.toUnsignedInt(attr.get(JAVA_BYTE, IbvStructs.PORT_ATTR_LINK_LAYER)), gidIndex,
                gidText(gid.toArray(JAVA_BYTE)));
            return port;
        }
    }

    /**
     * {@code ibv_query_port} (through the extended table's {@code query_port} where the context has one, as verbs.h
     * does).
     *
     * @throws VerbsException the provider's errno: EINVAL for a port the device does not have.
     */
    @Override
    public dev.rnicsim.verbs.PortAttributes queryPort(final int portNum)
    {
        checkOpen("ibv_query_port");
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment attr = arena.allocate(IbvStructs.IBV_PORT_ATTR);
            final Errnos.Result r = lib.queries().queryPort(ctx, portNum, attr);
            if (r.value() != 0)
            {
                throw new VerbsException("ibv_query_port", r.errno(), device.name() + " port " + portNum + " (ports "
                    + "are numbered from 1 to phys_port_cnt " + attributes().physPortCnt() + ")");
            }
            return new dev.rnicsim.verbs.PortAttributes(attr.get(JAVA_INT, IbvStructs.PORT_ATTR_STATE),
                attr.get(JAVA_INT, IbvStructs.PORT_ATTR_MAX_MTU), attr.get(JAVA_INT, IbvStructs.PORT_ATTR_ACTIVE_MTU),
                attr.get(JAVA_INT, IbvStructs.PORT_ATTR_GID_TBL_LEN),
                Integer.toUnsignedLong(attr.get(JAVA_INT, IbvStructs.PORT_ATTR_PORT_CAP_FLAGS)),
                Integer.toUnsignedLong(attr.get(JAVA_INT, IbvStructs.PORT_ATTR_MAX_MSG_SZ)),
                Short.toUnsignedInt(attr.get(JAVA_SHORT, IbvStructs.PORT_ATTR_PKEY_TBL_LEN)),
                Byte.toUnsignedInt(attr.get(JAVA_BYTE, IbvStructs.PORT_ATTR_LINK_LAYER)));
        }
    }

    /**
     * {@code ibv_query_gid}.
     *
     * @throws VerbsException the errno: EINVAL for a port the device lacks or an index past gid_tbl_len; ENODATA for
     *                        an empty entry.
     */
    @Override
    public byte[] queryGid(final int portNum, final int index)
    {
        checkOpen("ibv_query_gid");
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment gid = arena.allocate(IbvStructs.IBV_GID);
            final Errnos.Result g = lib.queries().queryGid(ctx, portNum, index, gid);
            if (g.value() != 0)
            {
                throw new VerbsException("ibv_query_gid", g.errno(), device.name() + " port " + portNum
                    + " GID index " + index + " (indexes run from 0 to the port's gid_tbl_len - 1)");
            }
            return gid.toArray(JAVA_BYTE);
        }
    }

    /**
     * {@code ibv_query_pkey} (ibv_query_pkey(3)).
     *
     * @return the P_Key, 16 bits in host order.
     * @throws VerbsException the errno the library gave: ENOENT for a port or index with no entry (rdma-core reads
     *                        the sysfs file {@code ports/PORT/pkeys/INDEX}).
     */
    @Override
    public int queryPkey(final int portNum, final int index)
    {
        checkOpen("ibv_query_pkey");
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment pkey = arena.allocate(JAVA_SHORT);
            final Errnos.Result r = lib.queries().queryPkey(ctx, portNum, index, pkey);
            if (r.value() != 0)
            {
                throw new VerbsException("ibv_query_pkey", r.errno(), device.name() + " port " + portNum
                    + " P_Key index " + index + " (indexes run from 0 to the port's pkey_tbl_len - 1)");
            }
            return Short.toUnsignedInt(pkey.get(JAVA_SHORT_BE, 0));
        }
    }

    /**
     * {@code ibv_query_gid_table} (ibv_query_gid_table(3)): the valid entries of every port's GID table.
     *
     * @throws VerbsException EINVAL for a negative maxEntries (checked here), or the errno the library gave (EINVAL
     *                        for 0 entries or fewer than the valid ones; EOPNOTSUPP when it predates the verb).
     */
    @Override
    public List<GidEntry> queryGidTable(final int maxEntries)
    {
        final String verb = "ibv_query_gid_table";
        checkOpen(verb);
        if (maxEntries < 0)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "max_entries=" + maxEntries + " must be 0 or more");
        }
        try (Arena arena = Arena.ofConfined())
        {
            final long entryBytes = DeviceQueryVerbs.GID_ENTRY_BYTES;
            final MemorySegment entries = arena.allocate(entryBytes * Math.max(1, maxEntries), 8);
            final long n = lib.queries().queryGidTable(ctx, entries, maxEntries);
            if (n < 0)
            {
                throw new VerbsException(verb, (int)-n, device.name() + ": max_entries=" + maxEntries + " (room is "
                    + "needed for every valid entry of every port's GID table, gid_tbl_len each)");
            }
            final List<GidEntry> table = new ArrayList<>((int)n);
            for (long i = 0; i < n; i++)
            {
                final MemorySegment e = entries.asSlice(i * entryBytes, entryBytes);
                final int type = e.get(JAVA_INT, DeviceQueryVerbs.GID_ENTRY_PORT_NUM + 4); // gid_type
                table.add(new GidEntry(e.get(JAVA_INT, DeviceQueryVerbs.GID_ENTRY_PORT_NUM),
                    e.get(JAVA_INT, DeviceQueryVerbs.GID_ENTRY_GID_INDEX), e.asSlice(0, 16).toArray(JAVA_BYTE),
                    type == 2 ? dev.rnicsim.verbs.GidType.ROCE_V2 : type == 1 ? dev.rnicsim.verbs.GidType.ROCE_V1
                    : dev.rnicsim.verbs.GidType.IB));
            }
            return table;
        }
    }

    /**
     * @param raw the 16 bytes of a GID, network order.
     * @return eight groups of four hex digits, e.g. {@code fe80:0000:0000:0000:0202:c9ff:fe00:0001}.
     */
    static String gidText(final byte[] raw)
    {
        final StringBuilder sb = new StringBuilder(39);
        final HexFormat hex = HexFormat.of();
        for (int i = 0; i < 16; i += 2)
        {
            if (i > 0)
            {
                sb.append(':');
            }
            sb.append(hex.toHexDigits(raw[i])).append(hex.toHexDigits(raw[i + 1]));
        }
        return sb.toString();
    }

    @Override
    public String toString()
    {
        return "RdmaContext[" + device.name() + (closed ? ", closed" : "") + "]";
    }
}
