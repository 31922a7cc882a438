package dev.rnicsim.hwnic;

import dev.rnicsim.verbs.Device;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.TransportType;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.spi.VerbsProvider;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * rdma-core as a verbs provider: {@code Verbs.devices()} lists one {@link RdmaDevice} per device
 * {@code ibv_get_device_list} returns, named {@code rdma:NAME} (e.g. {@code rdma:mlx5_0}). When libibverbs is not
 * installed, the kernel has no RDMA support or there is no device, it lists none, as the SPI asks;
 * {@link #listDevices()} and {@link #device(String)} say why instead.
 *
 * <p>Thread safe: every listing asks libibverbs again (ibv_get_device_list is thread safe).
 */
public final class RdmaVerbsProvider implements VerbsProvider
{
    /** The scheme of rdma-core device names. */
    public static final String SCHEME = "rdma";
    /** The prefix of rdma-core device names; alone, it names the first device. */
    public static final String PREFIX = SCHEME + ":";

    private final Supplier<Libibverbs> library;

    /**
     * The provider over the process's libibverbs (see {@link #forLibrary(String)} for another file).
     */
    public RdmaVerbsProvider()
    {
        this(Libibverbs::system);
    }

    private RdmaVerbsProvider(final Supplier<Libibverbs> library)
    {
        this.library = library;
    }

    /**
     * @param libraryName a soname or path of a libibverbs to load instead of {@code libibverbs.so.1}.
     * @return a provider over that library (loaded on first use).
     */
    public static RdmaVerbsProvider forLibrary(final String libraryName)
    {
        return new RdmaVerbsProvider(() -> Libibverbs.load(libraryName));
    }

    @Override
    public String scheme()
    {
        return SCHEME;
    }

    /**
     * @return the devices; empty when libibverbs is missing, the kernel has no RDMA support or there is none.
     */
    @Override
    public List<Device> devices()
    {
        try
        {
            return new ArrayList<>(listDevices());
        }
        catch (final VerbsException e)
        {
            return new ArrayList<>();
        }
    }

    /**
     * @return the devices, at least one.
     * @throws VerbsException ENOENT when libibverbs cannot be loaded (naming the packages to install); the errno of
     *                        ibv_get_device_list when it fails (ENOSYS: the kernel has no RDMA support); ENODEV when
     *                        the list is empty.
     */
    public List<RdmaDevice> listDevices()
    {
        final Libibverbs lib = library.get();
        final Libibverbs.DeviceList list = lib.getDeviceList();
        if (list.list().address() == 0)
        {
            throw Diagnosis.deviceListFailed(list.errno());
        }
        try
        {
            final List<RdmaDevice> devices = new ArrayList<>(list.count());
            for (int i = 0; i < list.count(); i++)
            {
                final MemorySegment dev = list.device(i);
                devices.add(new RdmaDevice(lib, lib.deviceName(dev), Libc.cString(dev,
                    IbvStructs.DEVICE_DEV_NAME, IbvStructs.IBV_SYSFS_NAME_MAX),
                    TransportType.of(dev.get(java.lang.foreign.ValueLayout.JAVA_INT,
                        IbvStructs.DEVICE_TRANSPORT_TYPE))));
            }
            if (devices.isEmpty())
            {
                throw Diagnosis.noDevices();
            }
            return devices;
        }
        finally
        {
            lib.freeDeviceList(list);
        }
    }

    /**
     * Resolves an rdma-core device name, saying why when there is no such device.
     *
     * @param name {@code rdma:NAME}, or {@code rdma:} alone for the first device.
     * @return the device.
     * @throws VerbsException as {@link #listDevices()}; EINVAL when the name lacks the {@code rdma:} scheme; ENODEV
     *                        naming the devices that exist when none has that name.
     */
    public Device device(final String name)
    {
        if (name == null || !name.startsWith(PREFIX))
        {
            throw new VerbsException("ibv_get_device_list", Errno.EINVAL.code(), "'" + name + "' is no rdma-core "
                + "device name: expected " + PREFIX + "NAME (e.g. rdma:mlx5_0) or " + PREFIX + " for the first device");
        }
        final List<RdmaDevice> devices = listDevices();
        if (name.equals(PREFIX))
        {
            return devices.get(0);
        }
        final List<String> names = new ArrayList<>();
        for (final RdmaDevice d : devices)
        {
            if (d.name().equals(name))
            {
                return d;
            }
            names.add(d.name());
        }
        throw new VerbsException("ibv_get_device_list", Errno.ENODEV.code(), "no rdma-core device named '" + name
            + "'; devices: " + names);
    }

    /**
     * @param name a device name with any scheme.
     * @return true when it is an rdma-core name ({@code rdma:} or {@code rdma:NAME}).
     */
    public static boolean isRdmaName(final String name)
    {
        return name != null && name.startsWith(PREFIX);
    }
}
