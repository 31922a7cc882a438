package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The distribution's programs on a RoCE port as a real one looks: its active MTU from the netdev's MTU (1024 on the
 * usual 1500 bytes, 4096 on a jumbo 9000) and its GID table from the netdev's addresses and the driver's RoCE types
 * (sim-nic PortMtuRule, GidTable; drivers.md, RoCE ports).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class RocePortProgramsTest
{
    @TempDir
    Path dir;

    private Programs programs(final String hcaId, final String profile, final int netdevMtu, final String ipv4)
        throws Exception
    {
        final Programs p = new Programs(dir, hcaId, DeviceProfiles.byName(profile));
        p.server().fabric().devices().getFirst().netdev().mtuBytes(netdevMtu).ipv4(ipv4);
        return p;
    }

    @Test
    void ibvDevinfoShowsTheActiveMtuOfTheNetdevAndEachGidWithItsType() throws Exception
    {
        Programs.require("ibv_devinfo", "ibverbs-utils");
        try (Programs p = programs("rxe0", "rxe", 1500, "10.1.16.61"))
        {
            final Programs.Run r = p.run(false, "ibv_devinfo", "-v");
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("max_mtu:\t\t4096 (5)\n").contains("active_mtu:\t\t1024 (3)\n")
                .containsPattern("GID\\[  0\\]:\\s+fe80::[0-9a-f:]+, RoCE v2\n")
                .contains("GID[  1]:\t\t::ffff:10.1.16.61, RoCE v2\n")
                .doesNotContain("GID[  2]");
        }
        try (Programs p = programs("bnxt_re0", "bnxt_re", 9000, "192.168.1.10"))
        {
            final Programs.Run r = p.run(false, "ibv_devinfo", "-v");
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("active_mtu:\t\t4096 (5)\n")
                .containsPattern("GID\\[  0\\]:\\s+fe80(:[0-9a-f]{4}){7}, RoCE v1\n")
                .containsPattern("GID\\[  1\\]:\\s+fe80::[0-9a-f:]+, RoCE v2\n")
                .contains("GID[  2]:\t\t0000:0000:0000:0000:0000:ffff:c0a8:010a, RoCE v1\n")
                .contains("GID[  3]:\t\t::ffff:192.168.1.10, RoCE v2\n");
        }
        try (Programs p = programs("mlx5_0", "connectx5", 1500, "192.168.1.10"))
        {
            final Programs.Run r = p.run(false, "ibv_devinfo", "-v");
            assertThat(r.out()).as("an InfiniBand port keeps its MTU and its one GID")
                .contains("active_mtu:\t\t4096 (5)\n").doesNotContain("GID[  1]").doesNotContain("RoCE");
        }
    }

    @Test
    void ibvUdPingpongRefusesAMessageLargerThanThePortsMtuUntilTheNetdevTakesJumboFrames() throws Exception
    {
        Programs.require("ibv_ud_pingpong", "ibverbs-utils");
        try (Programs p = programs("rxe0", "rxe", 1500, null))
        {
            final Programs.Run r = p.run(false, "ibv_ud_pingpong", "-p", String.valueOf(Programs.port()), "-g", "0",
                "-s", "2048");
            assertThat(r.exitCode()).as(r.both()).isEqualTo(1);
            assertThat(r.err()).contains("Requested size larger than port MTU (1024)");
            assertThat(r.out()).as("it stopped before it listened").doesNotContain("local address");
        }
        try (Programs p = programs("rxe0", "rxe", 9000, null))
        {
            completes(p, "ibv_ud_pingpong", "-g", "0", "-s", "2048", "-c");
        }
    }

    @Test
    void ibvRcPingpongConnectsThroughAnIpv4MappedGidOfEitherRoceType() throws Exception
    {
        Programs.require("ibv_rc_pingpong", "ibverbs-utils");
        try (Programs p = programs("rxe0", "rxe", 1500, "10.1.16.61"))
        {
            final List<Programs.Run> runs = completes(p, "ibv_rc_pingpong", "-g", "1", "-c");
            assertThat(runs.get(1).out()).contains("GID ::ffff:10.1.16.61");
        }
        try (Programs p = programs("bnxt_re0", "bnxt_re", 1500, "10.1.16.61"))
        {
            completes(p, "ibv_rc_pingpong", "-g", "2", "-c"); // the address's RoCE v1 entry
        }
    }

    @Test
    void ibvRcPingpongWithPathMtu4096PassesMessagesThatFitOnePacketAndLargeOnesOnJumboFrames() throws Exception
    {
        Programs.require("ibv_rc_pingpong", "ibverbs-utils");
        try (Programs p = programs("rxe0", "rxe", 1500, null))
        {
            completes(p, "ibv_rc_pingpong", "-g", "0", "-m", "4096", "-s", "1024", "-c");
        }
        try (Programs p = programs("rxe0", "rxe", 9000, null))
        {
            completes(p, "ibv_rc_pingpong", "-g", "0", "-m", "4096", "-s", "16384", "-c");
        }
    }

    /**
     * Path MTU 4096 on 1500-byte netdevs: the client's first message, 4096 bytes in one packet, is dropped on the
     * link and its SEND ends after the retries (the server, which never hears from it, is ended by {@code timeout}).
     */
    @Test
    void ibvRcPingpongWithPathMtu4096OnA1500ByteNetdevEndsWithRetryExceeded() throws Exception
    {
        Programs.require("ibv_rc_pingpong", "ibverbs-utils");
        Programs.require("timeout", "coreutils");
        try (Programs p = programs("rxe0", "rxe", 1500, null))
        {
            final String port = String.valueOf(Programs.port());
            final List<Programs.Run> runs = p.serverAndClient(List.of("timeout", "20", "ibv_rc_pingpong", "-p", port,
                "-g", "0", "-m", "4096", "-n", "5"), List.of("ibv_rc_pingpong", "-p", port, "-g", "0", "-m", "4096",
                "-n", "5", "localhost"), "Couldn't connect");
            assertThat(runs.get(1).exitCode()).as(runs.get(1).both()).isEqualTo(1);
            assertThat(runs.get(1).err()).contains("Failed status transport retry counter exceeded (12)");
            assertThat(runs.get(1).out()).doesNotContain("iters in");
            assertThat(runs.get(0).out()).as("the server heard nothing").doesNotContain("iters in");
        }
    }

    @Test
    void perftestReportsThePortsActiveMtu() throws Exception
    {
        Programs.require("ib_write_bw", "perftest");
        try (Programs p = programs("rxe0", "rxe", 1500, null))
        {
            final String port = String.valueOf(Programs.port());
            final List<Programs.Run> runs = p.serverAndClient(List.of("ib_write_bw", "-p", port, "-x", "0"),
                List.of("ib_write_bw", "-p", port, "-x", "0", "localhost"), "Couldn't connect");
            assertThat(runs.get(1).exitCode()).as(runs.get(1).both()).isZero();
            assertThat(runs.get(1).out()).containsPattern("Mtu\\s+: 1024\\[B\\]");
        }
    }

    /** Runs the program as server and client, 20 exchanges, and checks both complete without a failure. */
    private static List<Programs.Run> completes(final Programs p, final String program, final String... options)
        throws Exception
    {
        final List<String> server = new ArrayList<>(List.of(program, "-p", String.valueOf(Programs.port()), "-n",
            "20"));
        server.addAll(List.of(options));
        final List<String> client = new ArrayList<>(server);
        client.add("localhost");
        final List<Programs.Run> runs = p.serverAndClient(server, client, "Couldn't connect");
        for (final Programs.Run r : runs)
        {
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.both()).doesNotContain("mismatch").doesNotContain("Couldn't").doesNotContain("Failed");
            assertThat(r.out()).contains("20 iters in");
        }
        return runs;
    }
}
