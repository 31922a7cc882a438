package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.PortAttributes;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * A dump's port section: its {@code link_layer:} decides the profile's link layer where it says Ethernet (ibv_devinfo's
 * {@code link_layer_str} prints "InfiniBand" for unspecified too), and its {@code max_mtu:} and {@code active_mtu:}
 * the port's MTUs (on Ethernet through the netdev MTU they tell).
 */
class DevinfoPortSectionTest
{
    private static String dump(final String file) throws Exception
    {
        return Files.readString(Path.of(DevinfoPortSectionTest.class.getResource("/devinfo/" + file).toURI()));
    }

    private static final String ETHERNET_PORT = """
                port:   1
                        state:                  PORT_ACTIVE (4)
                        max_mtu:                4096 (5)
                        active_mtu:             1024 (3)
                        sm_lid:                 0
                        port_lid:               0
                        port_lmc:               0x00
                        link_layer:             Ethernet
        """;

    @Test
    void aConnectX5DumpTakenOnEthernetGetsTheEthernetLinkLayer() throws Exception
    {
        final String text = dump("connectx5-mlx5.txt").stripTrailing() + "\n" + ETHERNET_PORT;
        final DeviceProfile p = DevinfoReader.parse(text, "cx5-eth.txt").profile();
        assertThat(p.driver()).isEqualTo("mlx5");
        assertThat(p.linkLayer()).isEqualTo(PortAttributes.LINK_LAYER_ETHERNET);
        assertThat(p.gidKinds()).isEqualTo(GidTable.Kinds.ROCE_V1_AND_V2);
    }

    @Test
    void theSameDumpWithoutAPortSectionKeepsInfiniBand() throws Exception
    {
        final DeviceProfile p = DevinfoReader.parse(dump("connectx5-mlx5.txt"), "cx5.txt").profile();
        assertThat(p.linkLayer()).isEqualTo(PortAttributes.LINK_LAYER_INFINIBAND);
    }

    @Test
    void anInfiniBandPortSectionKeepsInfiniBandAndCxgb4sEthernetStays() throws Exception
    {
        assertThat(DevinfoReader.parse(dump("hfi1.txt"), "hfi1.txt").profile().linkLayer())
            .isEqualTo(PortAttributes.LINK_LAYER_INFINIBAND);
        assertThat(DevinfoReader.parse(dump("cxgb4.txt"), "cxgb4.txt").profile().linkLayer())
            .isEqualTo(PortAttributes.LINK_LAYER_ETHERNET);
    }

    @Test
    void anEthernetDumpsActiveMtuTellsTheNetdevItWasTakenOn() throws Exception
    {
        final DeviceProfile usual = DevinfoReader.parse(dump("connectx5-mlx5.txt").stripTrailing() + "\n"
            + ETHERNET_PORT, "cx5-eth.txt").profile();
        assertThat(usual.portMtus()).isEqualTo(new PortMtus(5, 3, true));
        assertThat(usual.netdevMtuBytes()).as("1024 is what 1500 bytes give").isEqualTo(1500);

        final DeviceProfile jumbo = DevinfoReader.parse(dump("connectx5-mlx5.txt").stripTrailing() + "\n"
            + ETHERNET_PORT.replace("1024 (3)", "4096 (5)"), "cx5-jumbo.txt").profile();
        assertThat(jumbo.netdevMtuBytes()).isEqualTo(9000);
        final SimDevice device = new SimFabric().addHost("h").addDevice("sim:h/cx5", jumbo);
        assertThat(device.netdev().mtuBytes()).isEqualTo(9000);
        assertThat(device.portAttributes().activeMtu()).as("as the dump said").isEqualTo(PortAttributes.MTU_4096);

        final DeviceProfile mid = DevinfoReader.parse(dump("connectx5-mlx5.txt").stripTrailing() + "\n"
            + ETHERNET_PORT.replace("1024 (3)", "2048 (4)"), "cx5-2048.txt").profile();
        assertThat(mid.netdevMtuBytes()).as("2048 + iboe_get_mtu's 96 bytes").isEqualTo(2144);
        assertThat(mid.portAttributes().activeMtu()).isEqualTo(4);
    }

    @Test
    void anInfinibandDumpsMtusAreTheLinksAndBadOnesAreWarnedAbout() throws Exception
    {
        final String ib = ETHERNET_PORT.replace("Ethernet", "InfiniBand").replace("1024 (3)", "2048 (4)");
        final DevinfoResult r = DevinfoReader.parse(dump("connectx5-mlx5.txt").stripTrailing() + "\n" + ib,
            "cx5-2048.txt");
        assertThat(r.profile().portAttributes().activeMtu()).as("the subnet's 2048").isEqualTo(4);
        assertThat(r.profile().portAttributes().maxMtu()).isEqualTo(PortAttributes.MTU_4096);
        final RuleRig rig = RuleRig.connected(r.profile(), RuleRig.REMOTE_ALL);
        assertThat(rig.qpA.query().pathMtu()).as("a connection takes the active MTU").isEqualTo(4);
        assertThat(r.warnings()).isEmpty();

        final DevinfoResult bad = DevinfoReader.parse(dump("connectx5-mlx5.txt").stripTrailing() + "\n"
            + ib.replace("2048 (4)", "3000 (7)"), "cx5-bad.txt");
        assertThat(bad.profile().portMtus()).isEqualTo(PortMtus.FULL);
        assertThat(bad.warnings()).anySatisfy(w -> assertThat(w).contains("active_mtu '3000 (7)' is no IB MTU"));
        final DevinfoResult above = DevinfoReader.parse(dump("connectx5-mlx5.txt").stripTrailing() + "\n"
            + ib.replace("4096 (5)", "1024 (3)"), "cx5-above.txt");
        assertThat(above.profile().portMtus()).isEqualTo(PortMtus.FULL);
        assertThat(above.warnings()).anySatisfy(w -> assertThat(w).contains("above max_mtu"));
    }
}
