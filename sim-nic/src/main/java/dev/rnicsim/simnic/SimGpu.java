package dev.rnicsim.simnic;

import dev.rnicsim.pagetable.DeviceMemory;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A simulated GPU in a host: device memory (VRAM) on the host's PCIe bus, a BAR1 aperture through which peers
 * (the NIC) reach it, allocation of buffers at GPU virtual addresses (unified addressing: each buffer has an address
 * in the process's address space that no host VMA maps), export of a range as a dma-buf, and the exporter's right to
 * move a buffer (eviction or migration), which tells every dynamic importer first ({@code move_notify}).
 *
 * <p>BAR1: peer-to-peer access needs the pages mapped through the aperture. Every registration of GPU memory
 * (peer memory or dma-buf) maps its pages there for as long as the mapping lives; when the aperture is full the
 * mapping fails, as {@code nvidia_p2p_get_pages} does. A typical aperture is 256 MiB (the size {@code nvidia-smi -q}
 * reports under "BAR1 Memory Usage" on many boards; assumed as default). Memory is allocated in 64 KiB pages, the
 * page size of NVIDIA's peer-to-peer API ({@code NVIDIA_P2P_PAGE_SIZE_64KB}).
 *
 * <p>Not thread safe.
 */
public final class SimGpu
{
    /** Allocation and BAR1 mapping granularity: 64 KiB. */
    public static final long GPU_PAGE_BYTES = 64L << 10;
    /** Default BAR1 aperture: 256 MiB (assumed, see the class comment). */
    public static final long DEFAULT_BAR1_BYTES = 256L << 20;
    /** Most VRAM a simulated GPU may have: 1 TiB. */
    public static final long MAX_VRAM_BYTES = 1L << 40;

    private final SimHost host;
    private final String name;
    private final int index;
    private final DeviceMemory vram;
    private final long bar1Bytes;
    private GpuTopology topology;
    private long bar1Used;
    /** Free VRAM ranges: offset → length. */
    private final TreeMap<Long, Long> free = new TreeMap<>();
    private final Map<Long, GpuBuffer> buffers = new TreeMap<>();

    SimGpu(final SimHost host, final String name, final int index, final long vramBytes, final long bar1Bytes,
        final GpuTopology topology)
    {
        this.host = host;
        this.name = name;
        this.index = index;
        this.vram = host.host().physicalMemory().attachDeviceMemory(name, vramBytes);
        this.bar1Bytes = bar1Bytes;
        this.topology = topology;
        free.put(0L, vramBytes);
    }

    /**
     * @return its name.
     */
    public String name()
    {
        return name;
    }

    /**
     * @return the host it sits in.
     */
    public SimHost host()
    {
        return host;
    }

    /**
     * @return VRAM in bytes.
     */
    public long vramBytes()
    {
        return vram.sizeBytes();
    }

    /**
     * @return VRAM allocated now, in bytes.
     */
    public long vramUsedBytes()
    {
        long f = 0;
        for (final long len : free.values())
        {
            f += len;
        }
        return vram.sizeBytes() - f;
    }

    /**
     * @return the BAR1 aperture in bytes.
     */
    public long bar1Bytes()
    {
        return bar1Bytes;
    }

    /**
     * @return BAR1 bytes mapped for peers now.
     */
    public long bar1UsedBytes()
    {
        return bar1Used;
    }

    /**
     * @return its PCIe path to the host's NIC.
     */
    public GpuTopology topology()
    {
        return topology;
    }

    /**
     * @param newTopology its PCIe path to the host's NIC.
     * @return this GPU.
     */
    public SimGpu topology(final GpuTopology newTopology)
    {
        topology = java.util.Objects.requireNonNull(newTopology, "topology");
        return this;
    }

    /**
     * @return the device memory on the bus (bus addresses of VRAM).
     */
    public DeviceMemory memory()
    {
        return vram;
    }

    /**
     * {@code cudaMalloc}: VRAM for a buffer, at a fresh GPU virtual address.
     *
     * @param bytes bytes, more than 0; rounded up to 64 KiB.
     * @return the buffer.
     * @throws VerbsException ENOMEM when no free VRAM range is large enough (naming the free VRAM); EINVAL for a size
     *                        of 0 or less.
     */
    public GpuBuffer allocate(final long bytes)
    {
        if (bytes <= 0)
        {
            throw new VerbsException("cudaMalloc", Errno.EINVAL.code(), "size " + bytes + " bytes"
                + " must be positive; allocate one byte or more");
        }
        if (bytes > vram.sizeBytes())
        {
            throw new VerbsException("cudaMalloc", Errno.ENOMEM.code(), name + ": " + bytes + " bytes asked, more than"
                + " its " + vram.sizeBytes() + " bytes of VRAM"
                + "; allocate less, or use a GPU with more VRAM");
        }
        final long size = (bytes + GPU_PAGE_BYTES - 1) & -GPU_PAGE_BYTES;
        final long offset = takeVram(size);
        if (offset < 0)
        {
            throw new VerbsException("cudaMalloc", Errno.ENOMEM.code(), name + ": no free VRAM range of " + size
                + " bytes (" + (vram.sizeBytes() - vramUsedBytes()) + " of " + vram.sizeBytes() + " bytes free)"
                + "; free GPU buffers first (cudaFree) or allocate less");
        }
        final long va = host.takeGpuVa(size);
        if (va < 0)
        {
            giveVram(offset, size);
            throw new VerbsException("cudaMalloc", Errno.ENOMEM.code(), "the unified address range for GPU memory "
                + "on host " + host.name() + " is used up"
                + "; free GPU buffers first (cudaFree)");
        }
        final GpuBuffer b = new GpuBuffer(this, va, size, offset);
        buffers.put(b.gpuVa(), b);
        return b;
    }

    /**
     * {@code cudaFree}. Peer-memory MRs on the buffer are told first (the peer-memory client's invalidation: the NIC
     * stops using the pages); a dma-buf exported from it keeps the VRAM until it is released.
     *
     * @param b a live buffer of this GPU.
     * @throws VerbsException EINVAL when it is not a live buffer of this GPU.
     */
    public void free(final GpuBuffer b)
    {
        if (b == null || b.gpu() != this || b.isFreed())
        {
            throw new VerbsException("cudaFree", Errno.EINVAL.code(), "not a live buffer of " + name + ": " + b
                + " (a double cudaFree or a buffer of another GPU); free each live buffer once, on its own GPU");
        }
        for (final SimPeerMr mr : List.copyOf(b.peerMrs()))
        {
            mr.peerFreed("cudaFree of the buffer");
        }
        b.markFreed();
        buffers.remove(b.gpuVa());
        if (b.dmabufs().isEmpty())
        {
            giveVram(b.vramOffset(), b.sizeBytes());
        }
    }

    /**
     * {@code cuMemGetHandleForAddressRange(..., CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD)}: exports part of a buffer as a
     * dma-buf.
     *
     * @param b           the buffer.
     * @param offset      first byte, from the buffer's start, a multiple of 64 KiB.
     * @param lengthBytes bytes, more than 0, a multiple of 64 KiB.
     * @return the dma-buf's file descriptor (in the host's table).
     * @throws VerbsException EINVAL when the range is misaligned or leaves the buffer, or the buffer is freed.
     */
    public int exportDmabuf(final GpuBuffer b, final long offset, final long lengthBytes)
    {
        if (b == null || b.gpu() != this || b.isFreed() || offset < 0 || lengthBytes <= 0
            || offset % GPU_PAGE_BYTES != 0 || lengthBytes % GPU_PAGE_BYTES != 0
            || offset > b.sizeBytes() - lengthBytes)
        {
            throw new VerbsException("cuMemGetHandleForAddressRange", Errno.EINVAL.code(), "range +" + offset + "/"
                + lengthBytes + " of " + b + ": must be 64 KiB aligned and inside a live buffer of " + name);
        }
        final SimDmabuf d = new SimDmabuf(host.nextFd(), b, offset, lengthBytes);
        b.dmabufs().add(d);
        host.registerDmabuf(d);
        return d.fd();
    }

    /**
     * Closes a dma-buf's file descriptor: the exporter's reference goes; the VRAM of a freed buffer returns when its
     * last dma-buf is closed. MRs registered from it keep their own reference until deregistered.
     *
     * @param fd the dma-buf's descriptor.
     * @throws VerbsException EBADF when fd names no open dma-buf of this GPU.
     */
    public void closeDmabuf(final int fd)
    {
        final SimDmabuf d = host.dmabuf(fd);
        if (d == null || d.buffer().gpu() != this)
        {
            throw new VerbsException("close", Errno.EBADF.code(), "fd " + fd + " is no open dma-buf of " + name
                + "; close each open dma-buf fd once, on its own GPU");
        }
        host.unregisterDmabuf(fd);
        d.markClosed();
        released(d);
    }

    /** A dma-buf with no descriptor and no importer left: the freed buffer's VRAM goes back. */
    void released(final SimDmabuf d)
    {
        if (!d.isClosed() || !d.attachments().isEmpty())
        {
            return;
        }
        final GpuBuffer b = d.buffer();
        b.dmabufs().remove(d);
        if (b.isFreed() && b.dmabufs().isEmpty())
        {
            giveVram(b.vramOffset(), b.sizeBytes());
        }
    }

    /**
     * The exporter moves a buffer to other VRAM (eviction, defragmentation): every dynamic importer of its dma-bufs
     * is told first ({@code move_notify}: the NIC zaps its translation), then the bytes move. A pinned importer
     * forbids it.
     *
     * @param b the buffer.
     * @throws VerbsException EBUSY when a dma-buf of it is pinned by an importer ({@code dma_buf_pin}) or a
     *                        peer-memory MR holds it; ENOMEM when no other VRAM range is free; EINVAL when it is not
     *                        a live buffer of this GPU.
     */
    public void move(final GpuBuffer b)
    {
        if (b == null || b.gpu() != this || b.isFreed())
        {
            throw new VerbsException("move", Errno.EINVAL.code(), "not a live buffer of " + name + ": " + b
                + "; move a live buffer of this GPU");
        }
        for (final SimDmabuf d : b.dmabufs())
        {
            if (d.pinnedImporters() > 0)
            {
                throw new VerbsException("move", Errno.EBUSY.code(), "dma-buf fd " + d.fd() + " of " + b
                    + " is pinned by " + d.pinnedImporters() + " importer(s) (dma_buf_pin)"
                    + "; deregister the dma-buf MRs first");
            }
        }
        if (!b.peerMrs().isEmpty())
        {
            throw new VerbsException("move", Errno.EBUSY.code(), b + " is pinned by " + b.peerMrs().size()
                + " peer-memory MR(s) (nvidia_p2p_get_pages)"
                + "; deregister the peer-memory MRs first");
        }
        final long target = takeVram(b.sizeBytes());
        if (target < 0)
        {
            throw new VerbsException("move", Errno.ENOMEM.code(), name + ": no free VRAM range of " + b.sizeBytes()
                + " bytes to move " + b + " to"
                + "; free GPU buffers first (cudaFree)");
        }
        for (final SimDmabuf d : b.dmabufs())
        {
            for (final SimPeerMr mr : List.copyOf(d.attachments()))
            {
                mr.moveNotify();
            }
        }
        vram.move(b.vramOffset(), target, b.sizeBytes());
        giveVram(b.vramOffset(), b.sizeBytes());
        b.moved(target);
    }

    /**
     * @param gpuVa a GPU virtual address.
     * @return the live buffer holding it, or null.
     */
    public GpuBuffer bufferAt(final long gpuVa)
    {
        final Map.Entry<Long, GpuBuffer> e = ((TreeMap<Long, GpuBuffer>)buffers).floorEntry(gpuVa);
        return e != null && gpuVa - e.getKey() < e.getValue().sizeBytes() ? e.getValue() : null;
    }

    /**
     * Stores bytes at a GPU virtual address, as a kernel on the GPU would (no cost).
     *
     * @param gpuVa first byte.
     * @param data  bytes.
     * @throws VerbsException EFAULT when the range is not inside one live buffer.
     */
    public void write(final long gpuVa, final byte[] data)
    {
        final GpuBuffer b = checked(gpuVa, data.length, "write");
        vram.write(b.vramOffset() + (gpuVa - b.gpuVa()), data, 0, data.length);
    }

    /**
     * Loads bytes from a GPU virtual address (no cost).
     *
     * @param gpuVa       first byte.
     * @param lengthBytes bytes.
     * @return the bytes.
     * @throws VerbsException EFAULT when the range is not inside one live buffer.
     */
    public byte[] read(final long gpuVa, final int lengthBytes)
    {
        final GpuBuffer b = checked(gpuVa, lengthBytes, "read");
        final byte[] out = new byte[lengthBytes];
        vram.read(b.vramOffset() + (gpuVa - b.gpuVa()), out, 0, lengthBytes);
        return out;
    }

    /**
     * {@code cudaMemcpy} from GPU memory to host memory of a process, priced by the cost model
     * ({@link CostModel#gpuCopyNs}) on the simulated clock: one leg of a transfer bounced through host memory.
     *
     * @param gpuVa       first GPU byte.
     * @param process     the process owning the host buffer.
     * @param hostAddr    first host byte.
     * @param lengthBytes bytes.
     * @throws VerbsException EFAULT when either range is not accessible.
     */
    public void copyToHost(final long gpuVa, final UserProcess process, final long hostAddr, final int lengthBytes)
    {
        final byte[] data = read(gpuVa, lengthBytes);
        try
        {
            process.write(hostAddr, data);
        }
        catch (final RuntimeException e)
        {
            throw new VerbsException("cudaMemcpy", Errno.EFAULT.code(), "host range 0x" + Long.toHexString(hostAddr)
                + "+" + lengthBytes + ": " + (e instanceof KernelException k
                && k.errno() == dev.rnicsim.pagetable.Errno.EFAULT ? k.detail() : e.getMessage()));
        }
        span("cudaMemcpy D2H", lengthBytes);
    }

    /**
     * {@code cudaMemcpy} from host memory of a process to GPU memory, priced like {@link #copyToHost}.
     *
     * @param process     the process owning the host buffer.
     * @param hostAddr    first host byte.
     * @param gpuVa       first GPU byte.
     * @param lengthBytes bytes.
     * @throws VerbsException EFAULT when either range is not accessible.
     */
    public void copyFromHost(final UserProcess process, final long hostAddr, final long gpuVa, final int lengthBytes)
    {
        checked(gpuVa, lengthBytes, "cudaMemcpy");
        final byte[] data;
        try
        {
            data = process.read(hostAddr, lengthBytes);
        }
        catch (final RuntimeException e)
        {
            throw new VerbsException("cudaMemcpy", Errno.EFAULT.code(), "host range 0x" + Long.toHexString(hostAddr)
                + "+" + lengthBytes + ": " + (e instanceof KernelException k
                && k.errno() == dev.rnicsim.pagetable.Errno.EFAULT ? k.detail() : e.getMessage()));
        }
        write(gpuVa, data);
        span("cudaMemcpy H2D", lengthBytes);
    }

    private void span(final String what, final long bytes)
    {
        host.fabric().gpuSpan(this, what, host.fabric().costModel().gpuCopyNs(bytes), Map.of("bytes", bytes));
    }

    private GpuBuffer checked(final long gpuVa, final long lengthBytes, final String what)
    {
        final GpuBuffer b = bufferAt(gpuVa);
        if (b == null || lengthBytes < 0 || gpuVa - b.gpuVa() > b.sizeBytes() - lengthBytes)
        {
            throw new VerbsException(what, Errno.EFAULT.code(), "GPU range 0x" + Long.toHexString(gpuVa) + "+"
                + lengthBytes + " is not inside a live buffer of " + name
                + "; copy inside a live buffer of this GPU");
        }
        return b;
    }

    // ------------------------------------------------------------------ BAR1 and VRAM

    /** Maps bytes through BAR1 for a peer; false (nothing mapped) when the aperture is full. */
    boolean mapBar1(final long bytes)
    {
        if (bar1Used + bytes > bar1Bytes)
        {
            return false;
        }
        bar1Used += bytes;
        return true;
    }

    void unmapBar1(final long bytes)
    {
        bar1Used -= bytes;
    }

    /**
     * GPUDirect RDMA maps peer memory through the GPU's BAR1 aperture, the primary resource its mappings consume
     * (NVIDIA's GPUDirect RDMA guide, "Display BAR Space"); a GPU with a 256 MiB BAR1 (Tesla T4) cannot register more
     * than that at once, as Mellanox/nv_peer_memory issue 101 found.
     *
     * @param bytes the bytes asked.
     * @return why the mapping failed and how to fix it.
     */
    String bar1Exhausted(final long bytes)
    {
        return name + ": BAR1 aperture exhausted: " + bytes + " bytes asked, " + bar1Used + " of " + bar1Bytes
            + " bytes mapped (nvidia_p2p_get_pages); peer-memory MRs are bounded by BAR1, not by VRAM (nvidia-smi -q "
            + "shows BAR1 Memory Usage): register less at once, deregister idle GPU MRs, or use a GPU with a larger "
            + "BAR1 (resizable BAR)";
    }

    private long takeVram(final long size)
    {
        for (final Map.Entry<Long, Long> e : free.entrySet())
        {
            if (e.getValue() >= size)
            {
                final long at = e.getKey();
                free.remove(at);
                if (e.getValue() > size)
                {
                    free.put(at + size, e.getValue() - size);
                }
                return at;
            }
        }
        return -1;
    }

    private void giveVram(final long offset, final long size)
    {
        long start = offset;
        long length = size;
        final Map.Entry<Long, Long> before = free.floorEntry(offset);
        if (before != null && before.getKey() + before.getValue() == offset)
        {
            start = before.getKey();
            length += before.getValue();
            free.remove(before.getKey());
        }
        final Long after = free.get(offset + size);
        if (after != null)
        {
            length += after;
            free.remove(offset + size);
        }
        free.put(start, length);
    }

    /**
     * @return the live buffers, by GPU virtual address.
     */
    public List<GpuBuffer> buffers()
    {
        return new ArrayList<>(buffers.values());
    }

    @Override
    public String toString()
    {
        return "GPU " + name + "[vram=" + vram.sizeBytes() + " bar1=" + bar1Bytes + " topology=" + topology + "]";
    }
}
