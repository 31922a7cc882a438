package dev.rnicsim.simnic;

import java.util.ArrayList;
import java.util.List;

/**
 * A buffer in a simulated GPU's memory: its GPU virtual address and size, and where in VRAM it lives now (the
 * exporter may move it).
 *
 * <p>Not thread safe.
 */
public final class GpuBuffer
{
    private final SimGpu gpu;
    private final long gpuVa;
    private final long sizeBytes;
    private long vramOffset;
    private boolean freed;
    private final List<SimDmabuf> dmabufs = new ArrayList<>();
    private final List<SimPeerMr> peerMrs = new ArrayList<>();

    GpuBuffer(final SimGpu gpu, final long gpuVa, final long sizeBytes, final long vramOffset)
    {
        this.gpu = gpu;
        this.gpuVa = gpuVa;
        this.sizeBytes = sizeBytes;
        this.vramOffset = vramOffset;
    }

    /**
     * @return the GPU.
     */
    public SimGpu gpu()
    {
        return gpu;
    }

    /**
     * @return its GPU virtual address (unified addressing: an address of the process).
     */
    public long gpuVa()
    {
        return gpuVa;
    }

    /**
     * @return its size in bytes (a multiple of 64 KiB).
     */
    public long sizeBytes()
    {
        return sizeBytes;
    }

    /**
     * @return where it lives in VRAM now, from VRAM's start.
     */
    public long vramOffset()
    {
        return vramOffset;
    }

    /**
     * @param offset bytes from the buffer's start.
     * @return the bus address a peer's DMA uses for that byte now.
     */
    public long busAddr(final long offset)
    {
        return gpu.memory().baseAddr() + vramOffset + offset;
    }

    /**
     * @return true once freed.
     */
    public boolean isFreed()
    {
        return freed;
    }

    void markFreed()
    {
        freed = true;
    }

    void moved(final long newOffset)
    {
        vramOffset = newOffset;
    }

    List<SimDmabuf> dmabufs()
    {
        return dmabufs;
    }

    List<SimPeerMr> peerMrs()
    {
        return peerMrs;
    }

    @Override
    public String toString()
    {
        return "GPU buffer 0x" + Long.toHexString(gpuVa) + "+" + sizeBytes + " on " + gpu.name();
    }
}
