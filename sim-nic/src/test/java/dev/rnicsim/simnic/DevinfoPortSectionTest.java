package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.PortAttributes;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * A dump's port section: its {@code link_layer:} decides the profile's link layer where it says Ethernet (ibv_devinfo's
 * {@code link_layer_str} prints "InfiniBand" for unspecified too).
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
}
