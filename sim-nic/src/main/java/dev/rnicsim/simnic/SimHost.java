package dev.rnicsim.simnic;

import dev.rnicsim.pagetable.Host;
import dev.rnicsim.pagetable.HostConfig;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A simulated machine on the fabric: its memory and kernel ({@link Host}) and its RDMA devices.
 *
 * <p>Not thread safe.
 */
public final class SimHost
{
    private final SimFabric fabric;
    private final String name;
    private final Host host;
    private final List<SimDevice> devices = new ArrayList<>();
    private final List<SimGpu> gpus = new ArrayList<>();
    private final java.util.Map<Integer, SimDmabuf> dmabufs = new java.util.HashMap<>();
    private int nextFd = 100;
    /** Unified virtual addresses of GPU buffers: one range for every GPU of the host, far below the top-down mmap
     * area of its processes (which starts at 0x7f00_0000_0000), never reused, so no two buffers ever share one. */
    static final long GPU_VA_BASE = 0x2000_0000_0000L;
    static final long GPU_VA_END = 0x3000_0000_0000L;
    private long nextGpuVa = GPU_VA_BASE;
    private boolean peerMemoryClient;
    /** The fork support of libibverbs in each process that used a device of this host. */
    private final java.util.Map<dev.rnicsim.pagetable.UserProcess, ForkSafety> forkSafety =
        new java.util.IdentityHashMap<>();

    SimHost(final SimFabric fabric, final String name, final HostConfig config)
    {
        this.fabric = fabric;
        this.name = name;
        this.host = new Host(config);
    }

    /**
     * Plugs a device in.
     *
     * @param deviceName the device's name as {@link SimDevice#name()} reports it, e.g. {@code sim:a/mlx5_0}.
     * @param profile    what kind of device.
     * @return the device.
     * @throws IllegalArgumentException when the name or the profile is null.
     */
    public SimDevice addDevice(final String deviceName, final DeviceProfile profile)
    {
        if (deviceName == null || profile == null)
        {
            throw new IllegalArgumentException((deviceName == null ? "the device name" : "the profile of "
                + deviceName) + " is null; give a name such as sim:a/mlx5_0 and a profile (DeviceProfiles)");
        }
        final SimDevice device = new SimDevice(fabric, this, deviceName, profile);
        devices.add(device);
        return device;
    }

    /**
     * Plugs a GPU in.
     *
     * @param gpuName   its name, unique on the host.
     * @param vramBytes its memory in bytes.
     * @param bar1Bytes its BAR1 aperture in bytes.
     * @param topology  its PCIe path to the host's NIC.
     * @return the GPU.
     * @throws IllegalArgumentException for a duplicate name or sizes of 0 or less.
     */
    public SimGpu addGpu(final String gpuName, final long vramBytes, final long bar1Bytes, final GpuTopology topology)
    {
        java.util.Objects.requireNonNull(gpuName, "gpuName");
        java.util.Objects.requireNonNull(topology, "topology");
        if (vramBytes <= 0 || vramBytes > SimGpu.MAX_VRAM_BYTES || bar1Bytes <= 0
            || gpus.stream().anyMatch(g -> g.name().equals(gpuName)))
        {
            throw new IllegalArgumentException("GPU '" + gpuName + "': duplicate name, or VRAM " + vramBytes
                + " bytes outside 1.." + SimGpu.MAX_VRAM_BYTES + ", or BAR1 " + bar1Bytes + " bytes not positive");
        }
        final SimGpu gpu = new SimGpu(this, gpuName, gpus.size(), vramBytes, bar1Bytes, topology);
        gpus.add(gpu);
        return gpu;
    }

    /**
     * @return its GPUs.
     */
    public List<SimGpu> gpus()
    {
        return Collections.unmodifiableList(gpus);
    }

    /**
     * @param address an address of a process on this host.
     * @return the live GPU buffer at that GPU virtual address, or null.
     */
    public GpuBuffer gpuBufferAt(final long address)
    {
        for (final SimGpu g : gpus)
        {
            final GpuBuffer b = g.bufferAt(address);
            if (b != null)
            {
                return b;
            }
        }
        return null;
    }

    /**
     * @return true when a peer-memory client (nvidia-peermem) is loaded, so that ibv_reg_mr accepts GPU virtual
     * addresses.
     */
    public boolean peerMemoryClient()
    {
        return peerMemoryClient;
    }

    /**
     * @param loaded whether a peer-memory client (nvidia-peermem) is loaded.
     * @return this host.
     */
    public SimHost peerMemoryClient(final boolean loaded)
    {
        peerMemoryClient = loaded;
        return this;
    }

    /**
     * @param fd a file descriptor.
     * @return the open dma-buf it names, or null.
     */
    public SimDmabuf dmabuf(final int fd)
    {
        return dmabufs.get(fd);
    }

    /** A fresh GPU virtual address range of {@code bytes}, or -1 when the unified range is used up. */
    long takeGpuVa(final long bytes)
    {
        if (bytes > GPU_VA_END - nextGpuVa)
        {
            return -1;
        }
        final long va = nextGpuVa;
        nextGpuVa += bytes;
        return va;
    }

    int nextFd()
    {
        return nextFd++;
    }

    void registerDmabuf(final SimDmabuf d)
    {
        dmabufs.put(d.fd(), d);
    }

    void unregisterDmabuf(final int fd)
    {
        dmabufs.remove(fd);
    }

    /**
     * @param process a process of this host.
     * @return the fork support of libibverbs in that process (libibverbs/memory.c), created on first use.
     * @throws IllegalArgumentException when the process runs on another host.
     */
    public ForkSafety forkSafety(final dev.rnicsim.pagetable.UserProcess process)
    {
        if (process.host() != host)
        {
            throw new IllegalArgumentException("pid " + process.pid() + " runs on another host than '" + name + "'");
        }
        final ForkSafety existing = forkSafety.get(process);
        if (existing != null)
        {
            return existing;
        }
        // A child's libibverbs is a copy of its parent's memory: fork support and its range counts come along.
        final ForkSafety parent = process.parent() == null ? null : forkSafety.get(process.parent());
        final ForkSafety created = parent == null ? new ForkSafety(process) : parent.copyFor(process);
        forkSafety.put(process, created);
        return created;
    }

    /**
     * @return the host name.
     */
    public String name()
    {
        return name;
    }

    /**
     * @return the memory and kernel model.
     */
    public Host host()
    {
        return host;
    }

    /**
     * @return the fabric it is on.
     */
    public SimFabric fabric()
    {
        return fabric;
    }

    /**
     * @return its devices.
     */
    public List<SimDevice> devices()
    {
        return Collections.unmodifiableList(devices);
    }
}
