package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link GidTable#validEntries}, which ibv_modify_qp's empty-SGID check reads, is the number of entries
 * {@link GidTable#entries} lists, on every built-in profile's ports, with and without an IPv4 address on the netdev.
 */
class GidValidEntriesTest
{
    @Test
    void countsWhatTheTableListsOnEveryProfileWithAndWithoutAnIpv4Address()
    {
        final SimFabric fabric = new SimFabric();
        final SimHost host = fabric.addHost("h");
        int address = 1;
        for (final Map.Entry<String, DeviceProfile> e : DeviceProfiles.builtIn().entrySet())
        {
            final SimDevice device = host.addDevice("sim:h/" + e.getKey(), e.getValue());
            final int ports = e.getValue().attributes().physPortCnt();
            for (int port = 1; port <= ports; port++)
            {
                assertThat(GidTable.validEntries(device, port)).as("%s port %d", e.getKey(), port)
                    .isEqualTo(GidTable.entries(device, port).size());
            }
            if (e.getValue().linkLayer() == dev.rnicsim.verbs.PortAttributes.LINK_LAYER_ETHERNET)
            {
                // One address per device: two devices of a fabric may not share one (ARP's duplicate detection).
                device.netdev().ipv4("192.0.2." + address++);
                for (int port = 1; port <= ports; port++)
                {
                    assertThat(GidTable.validEntries(device, port)).as("%s port %d with IPv4", e.getKey(), port)
                        .isEqualTo(GidTable.entries(device, port).size());
                }
            }
        }
    }
}
