package dev.rnicsim.simnic;

import dev.rnicsim.verbs.DmaBuf;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;

/**
 * A dma-buf allocated for a verbs user from the host's first GPU: one GPU buffer, exported whole
 * ({@link SimGpu#exportDmabuf}), as rdma-core's tests allocate a dumb buffer on a DRM render node and export it with
 * PRIME. Closing it closes the fd and frees the buffer; MRs registered from it keep the VRAM until deregistered
 * ({@link SimGpu#released}).
 *
 * <p>Not thread safe.
 */
final class SimExportedDmabuf implements DmaBuf
{
    private static final String VERB = "dmabuf_alloc";

    private final SimGpu gpu;
    private final GpuBuffer buffer;
    private final int fd;
    private boolean closed;

    private SimExportedDmabuf(final SimGpu gpu, final GpuBuffer buffer, final int fd)
    {
        this.gpu = gpu;
        this.buffer = buffer;
        this.fd = fd;
    }

    /**
     * Allocates and exports; nothing is left behind on failure.
     *
     * @throws VerbsException ENODEV when the host has no GPU; EINVAL for a size of 0 or less; ENOMEM when the GPU's
     *                        VRAM cannot hold it.
     */
    static SimExportedDmabuf allocate(final SimHost host, final long sizeBytes)
    {
        if (host.gpus().isEmpty())
        {
            throw Errors.of(VERB, Errno.ENODEV, "host " + host.name() + " has no GPU to export a dma-buf from (no DRM "
                + "render node); add a GPU to the host (SimHost.addGpu, script verb gpu)");
        }
        if (sizeBytes <= 0)
        {
            throw Errors.invalid(VERB, "size " + sizeBytes + " bytes must be positive; allocate one byte or more");
        }
        final SimGpu gpu = host.gpus().get(0);
        final GpuBuffer b = gpu.allocate(sizeBytes);
        final int fd = gpu.exportDmabuf(b, 0, b.sizeBytes());
        return new SimExportedDmabuf(gpu, b, fd);
    }

    @Override
    public int fd()
    {
        return fd;
    }

    @Override
    public long sizeBytes()
    {
        return buffer.sizeBytes();
    }

    @Override
    public void write(final long offset, final byte[] data)
    {
        check("write", offset, data.length);
        gpu.write(buffer.gpuVa() + offset, data);
    }

    @Override
    public byte[] read(final long offset, final int lengthBytes)
    {
        check("read", offset, lengthBytes);
        return gpu.read(buffer.gpuVa() + offset, lengthBytes);
    }

    private void check(final String verb, final long offset, final long lengthBytes)
    {
        if (closed)
        {
            throw Errors.of(verb, Errno.EBADF, "dma-buf fd " + fd + " is closed; allocate a new dma-buf");
        }
        if (offset < 0 || lengthBytes < 0 || offset > buffer.sizeBytes() - lengthBytes)
        {
            throw Errors.of(verb, Errno.EFAULT, "offset " + offset + " + " + lengthBytes + " bytes leaves dma-buf fd "
                + fd + " of " + buffer.sizeBytes() + " bytes; read or write inside the dma-buf");
        }
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        gpu.closeDmabuf(fd);
        gpu.free(buffer);
    }

    @Override
    public String toString()
    {
        return "dma-buf fd " + fd + " (" + buffer.sizeBytes() + " bytes of " + gpu.name() + ")";
    }
}
