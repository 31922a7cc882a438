package dev.rnicsim.simnic;

import java.util.ArrayList;
import java.util.List;

/**
 * A dma-buf exported by a simulated GPU: a range of one buffer, named by a file descriptor, with its importers
 * (NIC MRs attached to it, dynamic or pinned).
 *
 * <p>Not thread safe.
 */
public final class SimDmabuf
{
    private final int fd;
    private final GpuBuffer buffer;
    private final long offset;
    private final long sizeBytes;
    private final List<SimPeerMr> attachments = new ArrayList<>();
    private int pinnedImporters;
    private boolean closed;

    SimDmabuf(final int fd, final GpuBuffer buffer, final long offset, final long sizeBytes)
    {
        this.fd = fd;
        this.buffer = buffer;
        this.offset = offset;
        this.sizeBytes = sizeBytes;
    }

    /**
     * @return its file descriptor.
     */
    public int fd()
    {
        return fd;
    }

    /**
     * @return the GPU buffer it exports.
     */
    public GpuBuffer buffer()
    {
        return buffer;
    }

    /**
     * @return where it starts in the buffer, in bytes.
     */
    public long offset()
    {
        return offset;
    }

    /**
     * @return its size in bytes.
     */
    public long sizeBytes()
    {
        return sizeBytes;
    }

    /**
     * @param byteOffset bytes from the dma-buf's start.
     * @return the bus address of that byte now.
     */
    long busAddr(final long byteOffset)
    {
        return buffer.busAddr(offset + byteOffset);
    }

    List<SimPeerMr> attachments()
    {
        return attachments;
    }

    int pinnedImporters()
    {
        return pinnedImporters;
    }

    void attach(final SimPeerMr mr, final boolean pinned)
    {
        attachments.add(mr);
        if (pinned)
        {
            pinnedImporters++;
        }
    }

    void detach(final SimPeerMr mr, final boolean pinned)
    {
        attachments.remove(mr);
        if (pinned)
        {
            pinnedImporters--;
        }
        buffer.gpu().released(this);
    }

    boolean isClosed()
    {
        return closed;
    }

    void markClosed()
    {
        closed = true;
    }
}
