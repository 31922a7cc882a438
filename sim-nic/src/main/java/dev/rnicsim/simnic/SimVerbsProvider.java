package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Device;
import dev.rnicsim.verbs.spi.VerbsProvider;
import java.util.ArrayList;
import java.util.List;

/**
 * The simulator as a verbs provider: {@code Verbs.devices()} lists one simulated device per built-in profile,
 * named {@code sim:PROFILE} (e.g. {@code sim:connectx5}), all in one default host ({@code host0}, the default
 * {@link dev.rnicsim.pagetable.HostConfig}: 16 GiB, RLIMIT_MEMLOCK 8 MiB, and one GPU {@code gpu0} of
 * {@value #DEFAULT_GPU_VRAM_BYTES} bytes behind the NIC's PCIe switch, to export dma-bufs from) on one default fabric. Each
 * {@code open()} starts a new process on that host, so two contexts of one device talk to each other over
 * loopback. For several hosts, build a {@link SimFabric} directly.
 *
 * <p>Not thread safe (the default fabric is shared by every caller in the JVM).
 */
public final class SimVerbsProvider implements VerbsProvider
{
    /** VRAM of the default host's GPU: 16 GiB (an assumed mid-range data-centre GPU; nothing is priced from it). */
    public static final long DEFAULT_GPU_VRAM_BYTES = 16L << 30;

    private static SimFabric defaultFabric;

    @Override
    public String scheme()
    {
        return "sim";
    }

    @Override
    public List<Device> devices()
    {
        return new ArrayList<>(defaultFabric().devices());
    }

    /**
     * @return the fabric behind {@code Verbs.devices()}, created on first use.
     */
    public static synchronized SimFabric defaultFabric()
    {
        if (defaultFabric == null)
        {
            final SimFabric fabric = new SimFabric();
            final SimHost host = fabric.addHost("host0");
            host.addGpu("gpu0", DEFAULT_GPU_VRAM_BYTES, SimGpu.DEFAULT_BAR1_BYTES, GpuTopology.PIX);
            for (final DeviceProfile p : DeviceProfiles.builtIn().values())
            {
                host.addDevice("sim:" + p.name(), p);
            }
            defaultFabric = fabric;
        }
        return defaultFabric;
    }
}
