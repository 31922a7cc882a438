package dev.rnicsim.hwnic;

import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.Device;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.TransportType;
import dev.rnicsim.verbs.VerbsException;
import java.lang.foreign.MemorySegment;

/**
 * An rdma-core device ({@code struct ibv_device}) by name. It holds no native pointer: a device pointer is only
 * valid until the list it came from is freed (ibv_get_device_list(3)), so {@link #open()} lists the devices again,
 * opens the one with this name and frees the list.
 *
 * <p>Immutable and thread safe.
 */
public final class RdmaDevice implements Device
{
    private final Libibverbs lib;
    private final String kernelName;
    private final String uverbsName;
    private final TransportType transportType;

    RdmaDevice(final Libibverbs lib, final String kernelName, final String uverbsName,
        final TransportType transportType)
    {
        this.lib = lib;
        this.kernelName = kernelName;
        this.uverbsName = uverbsName;
        this.transportType = transportType;
    }

    @Override
    public TransportType transportType()
    {
        return transportType;
    }

    @Override
    public String name()
    {
        return RdmaVerbsProvider.PREFIX + kernelName;
    }

    /**
     * @return the kernel's device name, as ibv_devinfo shows it in {@code hca_id} (e.g. {@code mlx5_0}).
     */
    public String kernelName()
    {
        return kernelName;
    }

    /**
     * @return its uverbs character device under /dev/infiniband (e.g. {@code uverbs0}).
     */
    public String uverbsName()
    {
        return uverbsName;
    }

    /**
     * {@code ibv_open_device}.
     *
     * @return a new context.
     * @throws VerbsException ENODEV when the device is gone; EACCES or EPERM naming the /dev/infiniband file when
     *                        it cannot be opened; the errno of ibv_get_device_list when listing fails.
     */
    @Override
    public Context open()
    {
        final Libibverbs.DeviceList list = lib.getDeviceList();
        if (list.list().address() == 0)
        {
            throw Diagnosis.deviceListFailed(list.errno());
        }
        try
        {
            for (int i = 0; i < list.count(); i++)
            {
                final MemorySegment dev = list.device(i);
                if (lib.deviceName(dev).equals(kernelName))
                {
                    final Errnos.Result r = lib.openDevice(dev);
                    if (r.isNull())
                    {
                        throw Diagnosis.openFailed(kernelName, uverbsName, r.errno());
                    }
                    return new RdmaContext(lib, this, Libibverbs.context(r.value()));
                }
            }
        }
        finally
        {
            lib.freeDeviceList(list);
        }
        throw new VerbsException("ibv_open_device", Errno.ENODEV.code(), name() + " is no longer in the device list");
    }

    @Override
    public String toString()
    {
        return name();
    }
}
