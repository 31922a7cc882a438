package dev.rnicsim.verbs;

import dev.rnicsim.verbs.spi.VerbsProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * Entry point: the devices of every provider on the class path ({@code ibv_get_device_list}).
 *
 * <p>Thread safe.
 */
public final class Verbs
{
    private Verbs()
    {
    }

    /**
     * @return every device of every provider found with {@link ServiceLoader}, providers in class-path order.
     */
    public static List<Device> devices()
    {
        final List<Device> devices = new ArrayList<>();
        for (final VerbsProvider provider : ServiceLoader.load(VerbsProvider.class))
        {
            devices.addAll(provider.devices());
        }
        return devices;
    }

    /**
     * @param name a device name with its scheme, e.g. {@code sim:connectx5}.
     * @return the device.
     * @throws VerbsException ENODEV naming the devices that exist when none has that name.
     */
    public static Device device(final String name)
    {
        final List<String> names = new ArrayList<>();
        for (final Device d : devices())
        {
            if (d.name().equals(name))
            {
                return d;
            }
            names.add(d.name());
        }
        throw new VerbsException("ibv_get_device_list", Errno.ENODEV.code(), "no device named '" + name
            + "'; devices: " + names
            + "; use one of those names");
    }
}
