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
     */
    public SimDevice addDevice(final String deviceName, final DeviceProfile profile)
    {
        final SimDevice device = new SimDevice(fabric, this, deviceName, profile);
        devices.add(device);
        return device;
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
