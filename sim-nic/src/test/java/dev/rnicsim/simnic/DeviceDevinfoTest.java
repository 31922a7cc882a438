package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DeviceDevinfoTest
{
    @Test
    void shouldDumpEveryBuiltInDeviceSoThatTheReaderGetsTheSameAttributesBack()
    {
        final SimFabric fabric = new SimFabric();
        final SimHost host = fabric.addHost("h");
        for (final DeviceProfile p : DeviceProfiles.builtIn().values())
        {
            final SimDevice d = host.addDevice("sim:h/" + p.name() + "_0", p);
            final String dump = d.devinfo();
            assertThat(dump).startsWith("hca_id:\t" + p.name() + "_0");
            final DevinfoResult back = DevinfoReader.parse(dump, "sim");
            assertThat(back.profile().attributes()).isEqualTo(d.attributes());
            assertThat(back.defaultedFields()).isEmpty();
            assertThat(back.profile().driver()).isEqualTo(p.driver());
        }
    }

    @Test
    void shouldGiveEveryDeviceOfAFabricItsOwnNodeGuidAndGid()
    {
        final SimFabric fabric = new SimFabric();
        final SimDevice a = fabric.addHost("a").addDevice("sim:a/mlx5_0", DeviceProfiles.connectx5());
        final SimDevice b = fabric.addHost("b").addDevice("sim:b/mlx5_0", DeviceProfiles.connectx5());
        assertThat(a.attributes().nodeGuid()).isNotEqualTo(b.attributes().nodeGuid());
        assertThat(a.gid()).isNotEqualTo(b.gid()).startsWith("fe80:0000:0000:0000:");
        assertThat(a.hcaId()).isEqualTo("mlx5_0");
    }
}
