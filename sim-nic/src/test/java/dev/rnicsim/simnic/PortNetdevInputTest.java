package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.PortAttributes;
import dev.rnicsim.verbs.VerbsException;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/**
 * Bad input to a port's netdev ({@link PortNetdev}): MTUs outside Ethernet's range, named with the value given,
 * addresses {@code inet_pton} does not read or no host can hold, an address another device of the fabric holds, and
 * the two settings on a port without an Ethernet netdev. Each refusal leaves the netdev as it was.
 */
class PortNetdevInputTest
{
    private static VerbsException refused(final Runnable r)
    {
        final VerbsException e = catchThrowableOfType(VerbsException.class, r::run);
        assertThat(e).as("the call fails").isNotNull();
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        return e;
    }

    @Property
    void everyMtuOfEthernetsRangeIsTakenAndGivesAnActiveMtuNoLargerThanMaxMtu(
        @ForAll @IntRange(min = 68, max = 65535) final int mtu)
    {
        final SimDevice rxe = new SimFabric().addHost("h").addDevice("sim:h/rxe", DeviceProfiles.byName("rxe"));
        rxe.netdev().mtuBytes(mtu);
        final PortAttributes p = rxe.portAttributes();
        assertThat(p.activeMtu()).isBetween(1, p.maxMtu());
        assertThat(PortMtuRule.bytesOf(p.activeMtu()) + PortMtuRule.RXE_HEADER_BYTES <= Math.max(mtu, 256 + 80))
            .as("a packet of active_mtu with rxe's headers fits the netdev (or 256, the least)").isTrue();
    }

    @Property
    void anMtuOutsideTheRangeIsRefusedWithTheValueAsGiven(
        @ForAll @LongRange(min = Long.MIN_VALUE / 2, max = Long.MAX_VALUE / 2) final long mtu)
    {
        if (mtu >= 68 && mtu <= 65535)
        {
            PortNetdev.checkMtu(mtu);
            return;
        }
        final VerbsException e = refused(() -> PortNetdev.checkMtu(mtu));
        assertThat(e.getMessage()).contains("an MTU of " + mtu + " bytes", "ETH_MIN_MTU..ETH_MAX_MTU", "give 1500");
    }

    @Test
    void anMtuThatAnIntWouldWrapIntoRangeIsStillRefused()
    {
        final long wraps = -(1L << 32) + 1500;
        assertThat((int)wraps).isEqualTo(1500);
        assertThat(refused(() -> PortNetdev.checkMtu(wraps)).getMessage()).contains(String.valueOf(wraps));
        final PortNetdev netdev = new PortNetdev().mtuBytes(9000);
        refused(() -> netdev.mtuBytes(0));
        refused(() -> netdev.mtuBytes(-1));
        refused(() -> netdev.mtuBytes(65536));
        assertThat(netdev.mtuBytes()).as("unchanged").isEqualTo(9000);
        assertThat(new PortNetdev().mtuBytes(1000).mtuBytes()).as("below IPv6's 1280 is taken, as dev_set_mtu does")
            .isEqualTo(1000);
    }

    @Test
    void addressesInetPtonDoesNotReadOrNoHostHoldsAreRefused()
    {
        final PortNetdev netdev = new PortNetdev().ipv4("192.168.1.10");
        for (final String text : new String[] {"1.2.3", "1.2.3.4.5", "1.2.3.256", "01.2.3.4", "1.2.3.4/24", "",
            " 1.2.3.4", "a.b.c.d", "1..2.3"})
        {
            assertThat(refused(() -> netdev.ipv4(text)).getMessage()).as(text).contains("no IPv4 address",
                "inet_pton", "e.g. 192.168.1.10");
        }
        assertThat(refused(() -> netdev.ipv4("0.0.0.0")).getMessage()).contains("this network");
        assertThat(refused(() -> netdev.ipv4("127.0.0.1")).getMessage()).contains("loopback");
        assertThat(refused(() -> netdev.ipv4("224.0.0.1")).getMessage()).contains("multicast", "class D");
        assertThat(refused(() -> netdev.ipv4("255.255.255.255")).getMessage()).contains("broadcast");
        assertThat(refused(() -> netdev.ipv4("240.1.1.1")).getMessage()).contains("reserved");
        assertThat(netdev.ipv4()).as("unchanged").containsExactly(192, 168, 1, 10);
        assertThat(new PortNetdev().ipv4("0.1.2.3".replace("0.", "10.")).ipv4()).containsExactly(10, 1, 2, 3);
    }

    @Test
    void anAddressAnotherDeviceOfTheFabricHoldsIsRefused()
    {
        final SimFabric fabric = new SimFabric();
        final SimDevice a = fabric.addHost("a").addDevice("sim:a/rxe", DeviceProfiles.byName("rxe"));
        final SimDevice b = fabric.addHost("b").addDevice("sim:b/rxe", DeviceProfiles.byName("rxe"));
        a.netdev().ipv4("10.0.0.1");
        b.netdev().ipv4("10.0.0.2");
        final VerbsException e = refused(() -> b.netdev().ipv4("10.0.0.1"));
        assertThat(e.getMessage()).contains("10.0.0.1 is already the IPv4 address of " + a.name(), "::ffff:10.0.0.1",
            "give each device its own address");
        assertThat(b.netdev().ipv4()).as("unchanged").containsExactly(10, 0, 0, 2);
        a.netdev().ipv4("10.0.0.1");
        assertThat(a.netdev().ipv4()).as("its own address again").containsExactly(10, 0, 0, 1);
        refused(() -> PortNetdev.checkFree(fabric, "10.0.0.2", null));
        new SimFabric().addHost("c").addDevice("sim:c/rxe", DeviceProfiles.byName("rxe")).netdev().ipv4("10.0.0.1");
    }

    @Test
    void theSettingsMeanNothingOnAPortWithoutAnEthernetNetdev()
    {
        assertThat(PortNetdev.refusalOffEthernet(DeviceProfiles.connectx5(), "ipv4=10.0.0.1")).contains(
            "ipv4=10.0.0.1", "connectx5 (mlx5)", "InfiniBand", "4096 bytes", "roce_gid_mgmt", "connectx6dx");
        assertThat(PortNetdev.refusalOffEthernet(DeviceProfiles.byName("efa"), "netdev_mtu=9000")).contains("EFA");
        assertThat(PortNetdev.refusalOffEthernet(DeviceProfiles.byName("rxe"), "ipv4=10.0.0.1")).isNull();
        assertThat(PortNetdev.refusalOffEthernet(DeviceProfiles.byName("siw"), "netdev_mtu=9000")).as("iWARP")
            .isNull();
        assertThat(PortNetdev.refusalOffEthernet(DeviceProfiles.byName("connectx6dx"), "ipv4=10.0.0.1")).isNull();
    }
}
