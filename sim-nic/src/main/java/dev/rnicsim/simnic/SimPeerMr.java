package dev.rnicsim.simnic;

import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.mtt.TableException;
import dev.rnicsim.verbs.Access;
import java.util.Map;
import java.util.Set;

/**
 * A simulated MR over GPU memory, registered one of three ways:
 * <ul>
 *   <li>{@link Kind#PEER_MEMORY}: ibv_reg_mr on a GPU virtual address with a peer-memory client loaded
 *       (MLNX_OFED's {@code ib_register_peer_memory_client}, nvidia-peermem): the client pins the GPU pages and maps
 *       them through BAR1; when the buffer is freed the client's invalidation callback makes the NIC stop using them
 *       (the MR's translation is zapped and its accesses fail);</li>
 *   <li>{@link Kind#DMABUF_PINNED}: ibv_reg_dmabuf_mr on a device that cannot take invalidations
 *       ({@code ib_umem_dmabuf_get_pinned}: {@code dma_buf_pin}, mapped once; the exporter cannot move it);</li>
 *   <li>{@link Kind#DMABUF_DYNAMIC}: ibv_reg_dmabuf_mr with a dynamic attachment (mlx5): mapped at registration;
 *       the exporter's {@code move_notify} zaps the translation and unmaps it; the next device access faults
 *       ({@code pagefault_dmabuf_mr}) and maps the buffer where it lives now.</li>
 * </ul>
 * Every mapping takes room in the GPU's BAR1 aperture for its pages; registration fails with EFAULT when the aperture
 * is full.
 *
 * <p>Not thread safe.
 */
public final class SimPeerMr extends FixedMr
{
    /** How the MR reaches GPU memory. */
    public enum Kind
    {
        /** ibv_reg_mr on a GPU virtual address through a peer-memory client. */
        PEER_MEMORY,
        /** ibv_reg_dmabuf_mr, pinned attachment. */
        DMABUF_PINNED,
        /** ibv_reg_dmabuf_mr, dynamic attachment with move_notify. */
        DMABUF_DYNAMIC
    }

    private final Kind kind;
    private final GpuBuffer buffer;
    private final SimDmabuf dmabuf;
    /** Bytes from the buffer's start (peer memory) or the dma-buf's start to the MR's first byte. */
    private final long offset;
    private final long mttEntries;
    private long bar1Mapped;
    private boolean revoked;
    private long moves;
    private long faults;

    SimPeerMr(final SimPd pd, final Kind kind, final GpuBuffer buffer, final SimDmabuf dmabuf, final long offset,
        final long addr, final long lengthBytes, final long iova, final int lkey, final int rkey,
        final Set<Access> access, final long mttEntries, final long bar1Mapped)
    {
        super(pd, addr, lengthBytes, iova, lkey, rkey, access);
        this.kind = kind;
        this.buffer = buffer;
        this.dmabuf = dmabuf;
        this.offset = offset;
        this.mttEntries = mttEntries;
        this.bar1Mapped = bar1Mapped;
    }








    /**
     * @return how it was registered.
     */
    public Kind kind()
    {
        return kind;
    }

    /**
     * @return the GPU buffer behind it.
     */
    public GpuBuffer buffer()
    {
        return buffer;
    }

    /**
     * @return the GPU.
     */
    public SimGpu gpu()
    {
        return buffer.gpu();
    }

    /**
     * @return MTT entries holding its translation.
     */
    public long mttEntries()
    {
        return mttEntries;
    }

    /**
     * @return BAR1 bytes it maps now (0 after a move until the next fault re-maps it).
     */
    public long bar1MappedBytes()
    {
        return bar1Mapped;
    }

    /**
     * @return true once the peer-memory client revoked it (the buffer was freed under it).
     */
    public boolean isRevoked()
    {
        return revoked;
    }

    /**
     * @return move_notify calls it received.
     */
    public long moves()
    {
        return moves;
    }

    /**
     * @return device page faults that re-mapped it after a move.
     */
    public long pageFaults()
    {
        return faults;
    }

    /** The bus address of one MR byte now. */
    long busAddr(final long mrOffset)
    {
        return dmabuf != null ? dmabuf.busAddr(offset + mrOffset) : buffer.busAddr(offset + mrOffset);
    }

    /** Bytes of BAR1 the MR's pages take: whole 64 KiB GPU pages. */
    long bar1Footprint()
    {
        final long first = (busAddr(0) - buffer.gpu().memory().baseAddr()) & -SimGpu.GPU_PAGE_BYTES;
        final long end = busAddr(lengthBytes - 1) - buffer.gpu().memory().baseAddr() + 1;
        return ((end + SimGpu.GPU_PAGE_BYTES - 1) & -SimGpu.GPU_PAGE_BYTES) - first;
    }

    /** Writes the whole translation of a dynamic MR (registration, or a fault after a move); returns entries. */
    long mapAll(final AdapterTables tables)
    {
        long written = 0;
        final boolean writable = access.contains(Access.LOCAL_WRITE);
        final long pageOffset = iova & 0xfff;
        // By offsets from the MR's first byte, so that an iova range crossing 2^63 is walked in unsigned order.
        for (long mrOffset = 0; mrOffset < lengthBytes; mrOffset = ((mrOffset + pageOffset + 4096) & ~0xfffL)
            - pageOffset)
        {
            if (tables.mapOnDemand(lkey, iova + mrOffset, busAddr(mrOffset) & ~0xfffL, writable))
            {
                written++;
            }
        }
        return written;
    }

    /** The exporter is about to move the buffer: zap the translation, unmap BAR1 (mlx5_ib_dmabuf_invalidate_cb). */
    void moveNotify()
    {
        final SimDevice device = pd.context().device();
        device.writeOrdering().drain();
        moves++;
        final long zapped = device.tables().zapOnDemand(lkey, iova, lengthBytes);
        buffer.gpu().unmapBar1(bar1Mapped);
        bar1Mapped = 0;
        device.count(SimCounter.KEY_INVALIDATIONS, 1);
        device.fabric().span(device, "move_notify", "invalidation", device.fabric().costModel()
            .odpInvalidationNs(zapped), Map.of("lkey", lkey, "dmabuf_fd", dmabuf.fd(), "entries_zapped", zapped));
    }

    /** The device met the zapped translation after a move: re-map from where the buffer lives now. */
    String resolve(final boolean remote)
    {
        final SimDevice device = pd.context().device();
        faults++;
        device.count(SimCounter.ODP_PAGE_FAULTS, 1);
        final long need = bar1Footprint();
        if (bar1Mapped == 0 && !buffer.gpu().mapBar1(need))
        {
            device.count(SimCounter.ODP_PAGE_FAULT_FAILURES, 1);
            return buffer.gpu().bar1Exhausted(need);
        }
        bar1Mapped = need;
        final long written;
        try
        {
            written = mapAll(device.tables());
        }
        catch (final TableException e)
        {
            device.count(SimCounter.ODP_PAGE_FAULT_FAILURES, 1);
            return e.getMessage();
        }
        device.count(SimCounter.ODP_ENTRIES_MAPPED, written);
        final long ns = device.fabric().costModel().odpFaultNs(0, 0, 0, written);
        final Map<String, Object> args = Map.of("lkey", lkey, "dmabuf_fd", dmabuf.fd(), "entries_mapped", written,
            "side", remote ? "responder" : "requester");
        if (remote)
        {
            device.fabric().overlap(device, "dmabuf_page_fault", "odp", device.fabric().clock().nowNs(), ns, args);
            device.keys().addRemoteFaultNs(ns);
        }
        else
        {
            device.fabric().span(device, "dmabuf_page_fault", "odp", ns, args);
        }
        return null;
    }

    /** The peer-memory client's invalidation: the buffer is being freed; the NIC must stop using its pages. */
    void peerFreed(final String why)
    {
        if (revoked || closed)
        {
            return;
        }
        final SimDevice device = pd.context().device();
        device.writeOrdering().drain();
        revoked = true;
        final long dropped = device.tables().revoke(lkey);
        buffer.gpu().unmapBar1(bar1Mapped);
        bar1Mapped = 0;
        buffer.peerMrs().remove(this);
        device.invalidated(REVOKED + " (" + why + ")", lkey, dropped);
    }

    /** The cause {@link #peerFreed} writes in the key's history. */
    private static final String REVOKED = "peer memory freed";

    /**
     * @param event a key's last event (null: none).
     * @return true when it is a peer-memory client's revocation of the key's translation ({@link #peerFreed}): the key
     * still names its MR, whose accesses fail with NOT_PRESENT.
     */
    static boolean revokedBy(final KeyHistory.Event event)
    {
        return event != null && event.what() == KeyHistory.What.INVALIDATED && event.cause() != null
            && event.cause().startsWith(REVOKED);
    }

    @Override
    String kindName()
    {
        return "an MR over GPU memory (" + kind + ")";
    }


    @Override
    public void close()
    {
        pd.context().device().fabric().guardedRun(this::deregister);
    }

    private void deregister()
    {
        if (!closed)
        {
            pd.deregisterPeer(this);
        }
    }

    /** Gives back BAR1 and the attachment; the tables entry is the caller's to free. */
    void markClosed()
    {
        closed = true;
        buffer.gpu().unmapBar1(bar1Mapped);
        bar1Mapped = 0;
        buffer.peerMrs().remove(this);
        if (dmabuf != null)
        {
            dmabuf.detach(this, kind == Kind.DMABUF_PINNED);
        }
    }

    @Override
    public String toString()
    {
        return kind + " MR[addr=0x" + Long.toHexString(addr) + " length=" + lengthBytes + " iova=0x"
            + Long.toHexString(iova) + " lkey=0x" + Integer.toHexString(lkey) + " on " + buffer + "]";
    }
}
