package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.verbs.GidEntry;
import dev.rnicsim.verbs.GidType;
import dev.rnicsim.verbs.PortAttributes;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Ethernet-only ConnectX parts (ConnectX-4 Lx, ConnectX-6 Dx, ConnectX-6 Lx) have RoCE ports although their
 * driver, mlx5, also runs the VPI parts whose ports are InfiniBand: the link layer is the profile's
 * ({@link DeviceProfile#linkLayer()}, {@link ConnectXProfiles#ETHERNET_ONLY}).
 */
class EthernetOnlyConnectXTest
{
    @ParameterizedTest
    @ValueSource(strings = {"connectx4lx", "connectx6lx", "connectx6dx"})
    void anEthernetOnlyPartReportsAnEthernetPortWith1024OnA1500ByteNetdevAndRoceV1AndV2Gids(final String name)
    {
        final DeviceProfile profile = DeviceProfiles.byName(name);
        final RuleRig rig = RuleRig.unconnected(profile);
        rig.deviceA.netdev().ipv4("192.168.1.10");

        final PortAttributes port = rig.ctxA.queryPort(1);

        assertThat(port.linkLayer()).as(name).isEqualTo(PortAttributes.LINK_LAYER_ETHERNET);
        assertThat(rig.deviceA.netdev().mtuBytes()).isEqualTo(1500);
        assertThat(port.activeMtu()).as("iboe_get_mtu(1500) = 1024").isEqualTo(3 /* IBV_MTU_1024 */);
        assertThat(port.maxMtu()).isEqualTo(PortAttributes.MTU_4096);
        assertThat(profile.portMtuRule()).isEqualTo(PortMtuRule.IBOE_HEADERS);
        final List<GidEntry> table = rig.ctxA.queryGidTable(port.gidTblLen());
        assertThat(table).extracting(GidEntry::gidType)
            .containsExactly(GidType.ROCE_V1, GidType.ROCE_V2, GidType.ROCE_V1, GidType.ROCE_V2);
        assertThat(table.get(1).gid()).as("v1 and v2 entries of one address").isEqualTo(table.get(0).gid());
        assertThat(GidTable.text(table.get(2).gid())).isEqualTo("0000:0000:0000:0000:0000:ffff:c0a8:010a");

        rig.deviceA.netdev().mtuBytes(9000);

        assertThat(rig.ctxA.queryPort(1).activeMtu()).as("a jumbo netdev").isEqualTo(PortAttributes.MTU_4096);
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx4", "connectx5", "connectx5ex", "connectx6", "connectx7", "bluefield2",
        "bluefield3"})
    void aVpiPartKeepsItsInfinibandPortWhateverTheNetdev(final String name)
    {
        final DeviceProfile profile = DeviceProfiles.byName(name);
        final RuleRig rig = RuleRig.unconnected(profile);

        final PortAttributes port = rig.ctxA.queryPort(1);

        assertThat(port.linkLayer()).as(name).isEqualTo(PortAttributes.LINK_LAYER_INFINIBAND);
        assertThat(port.activeMtu()).isEqualTo(PortAttributes.MTU_4096);
        assertThat(rig.ctxA.queryGidTable(port.gidTblLen())).extracting(GidEntry::gidType)
            .containsExactly(GidType.IB);
    }

    @Test
    void everyOtherProfileKeepsItsDriversLinkLayer()
    {
        for (final DeviceProfile p : DeviceProfiles.builtIn().values())
        {
            if (!ConnectXProfiles.ETHERNET_ONLY.contains(p.name()))
            {
                assertThat(p.linkLayer()).as(p.name()).isEqualTo(DeviceProfile.driverLinkLayer(p.driver()));
            }
        }
        assertThat(DeviceProfiles.builtIn().keySet()).containsAll(ConnectXProfiles.ETHERNET_ONLY);
    }

    @Test
    void aLinkLayerOutsideIbvLinkLayerIsRefusedNamingTheValue()
    {
        final DeviceProfile cx5 = DeviceProfiles.connectx5();

        assertThatThrownBy(() -> cx5.withLinkLayer(3)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("connectx5").hasMessageContaining("linkLayer=3");
        assertThat(cx5.withLinkLayer(PortAttributes.LINK_LAYER_ETHERNET).gidKinds())
            .isEqualTo(GidTable.Kinds.ROCE_V1_AND_V2);
    }
}
