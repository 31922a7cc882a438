package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * A script's {@code device} line attacked with bad netdev settings: each refusal is EINVAL with the rule, the value
 * and a fix, adds no device and leaves the fabric's other devices as they were; a malformed value is refused before
 * anything runs.
 */
class RoceDeviceLineTest
{
    @Test
    void badNetdevSettingsAreRefusedAndAddNoDevice()
    {
        final ScriptRun r = ScriptRun.ok("roce-input.rsim", """
            host alpha ram=64M
            device a alpha profile=rxe ipv4=10.0.0.1
            device twin alpha profile=rxe ipv4=10.0.0.1
            expect EINVAL
            device ib alpha profile=connectx5 ipv4=10.0.0.2
            expect EINVAL
            device ib2 alpha profile=connectx5 netdev_mtu=9000
            expect EINVAL
            device efa0 alpha profile=efa netdev_mtu=9000
            expect EINVAL
            device zero alpha profile=rxe netdev_mtu=0
            expect EINVAL
            device huge alpha profile=rxe netdev_mtu=99999999999
            expect EINVAL
            device octal alpha profile=rxe ipv4=010.0.0.1
            expect EINVAL
            device group alpha profile=rxe ipv4=224.0.0.1
            expect EINVAL
            device small alpha profile=rxe netdev_mtu=1000 ipv4=10.0.0.3
            open app a
            open app2 small
            expect small.active_mtu == 2
            querygid app 1 1
            expect ok
            gidtable app2
            expect ok
            """);
        assertThat(r.out()).contains("10.0.0.1 is already the IPv4 address of sim:alpha/a's netdev on this fabric")
            .contains("ipv4=10.0.0.2: connectx5 (mlx5) has an InfiniBand link layer")
            .contains("netdev_mtu=9000: efa (efa) has an unspecified (EFA) link layer")
            .contains("EINVAL: netdev_mtu=0: an MTU of 0 bytes is outside 68..65535")
            .contains("an MTU of 99999999999 bytes is outside 68..65535")
            .contains("'010.0.0.1' is no IPv4 address (inet_pton)")
            .contains("'224.0.0.1' is a multicast group")
            .contains("GID 0000:0000:0000:0000:0000:ffff:0a00:0001, RoCE v2")
            .contains("netdev MTU 1000 (active_mtu 512), IPv4 10.0.0.3")
            .doesNotContain("Exception");
    }

    @Test
    void aNegativeOrRepeatedNetdevSettingIsAMalformedScript()
    {
        assertThatThrownBy(() -> ScriptRun.run("neg.rsim", """
            host alpha ram=64M
            device a alpha profile=rxe netdev_mtu=-1500
            """)).isInstanceOf(ScriptException.class).hasMessageContaining("netdev_mtu= is -1500")
            .hasMessageContaining("68 to 65535");
        for (final String suffixed : new String[] {"9k", "9K", "1_5k", "2*4k"})
        {
            assertThatThrownBy(() -> ScriptRun.run("suffix.rsim", """
                host alpha ram=64M
                device a alpha profile=rxe netdev_mtu=%s
                """.formatted(suffixed))).as(suffixed).isInstanceOf(ScriptException.class)
                .hasMessageContaining("netdev_mtu=" + suffixed + ": an MTU takes no size suffix")
                .hasMessageContaining("give the MTU in bytes, e.g. 9000");
        }
        ScriptRun.ok("hex.rsim", """
            host alpha ram=64M
            device a alpha profile=rxe netdev_mtu=0x2328
            expect ok
            """);
        assertThatThrownBy(() -> ScriptRun.run("twice.rsim", """
            host alpha ram=64M
            device a alpha profile=rxe ipv4=10.0.0.1 ipv4=10.0.0.2
            """)).isInstanceOf(ScriptException.class).hasMessageContaining("option 'ipv4' given twice");
    }
}
