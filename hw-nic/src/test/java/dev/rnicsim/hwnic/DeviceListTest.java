package dev.rnicsim.hwnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.verbs.Device;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.Verbs;
import dev.rnicsim.verbs.VerbsException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The device list on a machine whose kernel has no RDMA support (this one, and most CI hosts): ibv_get_device_list
 * returns NULL with errno ENOSYS, captured through {@code captureCallState}; the provider lists no device and says
 * why, and Verbs still lists the simulated devices (also when libibverbs is missing). The ENOSYS cases are skipped
 * where the kernel does support RDMA or libibverbs is not installed.
 */
class DeviceListTest
{
    /** Skips unless libibverbs is installed and ibv_get_device_list fails with ENOSYS here. */
    private static void assumeNoKernelSupport()
    {
        final Libibverbs lib = Installed.libibverbsOrSkip();
        final Libibverbs.DeviceList list = lib.getDeviceList();
        lib.freeDeviceList(list);
        assumeTrue(list.list().address() == 0 && list.errno() == Errno.ENOSYS.code(), "this kernel has RDMA "
            + "support (ibv_get_device_list returned " + list.count() + " device(s), errno " + list.errno()
            + "): the ENOSYS path cannot be shown here");
    }

    @Test
    void shouldCaptureEnosysFromIbvGetDeviceList()
    {
        assumeNoKernelSupport();

        final Libibverbs.DeviceList list = Libibverbs.system().getDeviceList();

        assertThat(list.list().address()).isZero();
        assertThat(list.count()).isZero();
        assertThat(list.errno()).isEqualTo(Errno.ENOSYS.code());
    }

    @Test
    void shouldSayTheKernelHasNoRdmaSupportWhenAskedForTheDevices()
    {
        assumeNoKernelSupport();
        final RdmaVerbsProvider provider = new RdmaVerbsProvider();

        for (final String name : List.of("rdma:", "rdma:mlx5_0"))
        {
            final VerbsException e = catchThrowableOfType(VerbsException.class, () -> provider.device(name));
            assertThat(e.errno()).as(name).isEqualTo(Errno.ENOSYS.code());
            assertThat(e.verb()).isEqualTo("ibv_get_device_list");
            assertThat(e.getMessage()).contains("no RDMA devices: the kernel has no RDMA support (ENOSYS");
        }
        final VerbsException listing = catchThrowableOfType(VerbsException.class, provider::listDevices);
        assertThat(listing.errno()).isEqualTo(Errno.ENOSYS.code());
        assertThat(provider.devices()).isEmpty();
    }

    @Test
    void shouldStillListTheSimulatedDevicesAndNoRdmaOnesWhenRdmaCoreHasNone()
    {
        final VerbsException why = catchThrowableOfType(VerbsException.class,
            () -> new RdmaVerbsProvider().listDevices());
        assumeTrue(why != null, "rdma-core lists devices here");

        final List<String> names = Verbs.devices().stream().map(Device::name).toList();

        assertThat(names).contains("sim:connectx5", "sim:rxe");
        assertThat(names).noneMatch(n -> n.startsWith("rdma:"));
        final VerbsException e = catchThrowableOfType(VerbsException.class, () -> Verbs.device("rdma:mlx5_0"));
        assertThat(e.errno()).isEqualTo(Errno.ENODEV.code());
    }
}
