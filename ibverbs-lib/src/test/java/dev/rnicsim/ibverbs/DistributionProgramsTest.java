package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.DriverProfiles;
import dev.rnicsim.verbs.DeviceAttributes;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The distribution's own programs (ibverbs-utils, perftest, pyverbs), unmodified, on the simulated device through
 * this module's libibverbs.so.1. They run under CI=true on every machine: .ci/run installs the packages, and a
 * missing one fails the test with its name.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class DistributionProgramsTest
{
    @TempDir
    Path dir;

    @Test
    void ibvDevicesListsTheSimulatedDeviceWithItsNodeGuid() throws Exception
    {
        Programs.require("ibv_devices", "ibverbs-utils");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run r = p.run(false, "ibv_devices");
            final long guid = p.server().fabric().devices().get(0).attributes().nodeGuid();
            assertThat(r.exitCode()).isZero();
            assertThat(r.out()).containsPattern("mlx5_0\\s+" + String.format("%016x", guid));
        }
    }

    @Test
    void ibvDevinfoShowsTheProfilesAttributes() throws Exception
    {
        Programs.require("ibv_devinfo", "ibverbs-utils");
        try (Programs p = new Programs(dir, "rxe0", DeviceProfiles.rxe()))
        {
            final Programs.Run r = p.run(false, "ibv_devinfo", "-v");
            final DeviceAttributes a = DeviceProfiles.rxe().attributes();
            assertThat(r.exitCode()).isZero();
            assertThat(r.out()).contains("hca_id:\trxe0")
                .containsPattern("max_qp:\\s+" + a.maxQp() + "\n")
                .containsPattern("max_mr:\\s+" + a.maxMr() + "\n")
                .containsPattern("max_mr_size:\\s+0x" + Long.toHexString(a.maxMrSizeBytes()) + "\n")
                .containsPattern("page_size_cap:\\s+0x" + Long.toHexString(a.pageSizeCap()) + "\n")
                .containsPattern("vendor_part_id:\\s+" + a.vendorPartId() + "\n")
                .containsPattern("max_srq_wr:\\s+" + a.maxSrqWr() + "\n")
                .containsPattern("max_srq_sge:\\s+" + a.maxSrqSge() + "\n")
                .containsPattern("max_mcast_grp:\\s+" + a.maxMcastGrp() + "\n")
                .containsPattern("max_mcast_qp_attach:\\s+" + a.maxMcastQpAttach() + "\n")
                .containsPattern("max_total_mcast_qp_attach:\\s+" + a.maxTotalMcastQpAttach() + "\n")
                .containsPattern("max_ah:\\s+" + a.maxAh() + "\n")
                .containsPattern("device_cap_flags_ex:\\s+0x" + Long.toHexString(a.deviceCapFlags()).toUpperCase(
                    java.util.Locale.ROOT) + "\n")
                .contains("link_layer:\t\tEthernet")
                .contains("PORT_ACTIVE");
        }
    }

    /**
     * The node type the driver registers decides the transport libibverbs reports: IBV_NODE_RNIC gives iWARP (the
     * cxgb4 dump prints {@code iWARP (1)}), EFA's IBV_NODE_UNSPECIFIED gives {@code unspecified (4)} (the efa dump),
     * a CA InfiniBand.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
        cxgb4      | iWARP (1)
        siw        | iWARP (1)
        e810-iwarp | iWARP (1)
        efa        | unspecified (4)
        e810       | InfiniBand (0)
        connectx5  | InfiniBand (0)
        """)
    void ibvDevinfoPrintsTheTransportOfTheDriver(final String profileName, final String transport) throws Exception
    {
        Programs.require("ibv_devinfo", "ibverbs-utils");
        final DeviceProfile profile = DeviceProfiles.byName(profileName);
        try (Programs p = new Programs(dir, hcaIdOf(profile), profile))
        {
            final Programs.Run r = p.run(false, "ibv_devinfo");
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).containsPattern("transport:\\s+" + java.util.regex.Pattern.quote(transport) + "\n");
        }
    }

    @Test
    void ibvDevinfoPrintsTheTransportOfTheProfilesDriver() throws Exception
    {
        Programs.require("ibv_devinfo", "ibverbs-utils");
        // the dumps: cxgb4 "iWARP (1)", efa "unspecified (4)" (node types RNIC and UNSPECIFIED in sysfs)
        for (final var e : java.util.Map.of("cxgb4_0", DriverProfiles.cxgb4(), "efa_0", DriverProfiles.efaGen1(),
            "mlx5_0", DeviceProfiles.connectx5()).entrySet())
        {
            try (Programs p = new Programs(dir, e.getKey(), e.getValue()))
            {
                final Programs.Run r = p.run(false, "ibv_devinfo");
                assertThat(r.exitCode()).as(r.both()).isZero();
                assertThat(r.out()).as(e.getKey()).contains("hca_id:\t" + e.getKey() + "\n")
                    .contains("transport:\t\t\t" + e.getValue().traits().transport().devinfo() + "\n");
            }
        }
    }

    @Test
    void ibvRcPingpongServerAndClientComplete() throws Exception
    {
        Programs.require("ibv_rc_pingpong", "ibverbs-utils");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final String port = String.valueOf(Programs.port());
            final List<Programs.Run> runs = p.serverAndClient(List.of("ibv_rc_pingpong", "-p", port, "-c"),
                List.of("ibv_rc_pingpong", "-p", port, "-c", "localhost"), "Couldn't connect");
            for (final Programs.Run r : runs)
            {
                assertThat(r.exitCode()).as(r.both()).isZero();
                assertThat(r.out()).contains("8192000 bytes in").contains("1000 iters in");
            }
        }
    }

    @Test
    void ibvRcPingpongWaitsForCompletionEventsOnItsChannel() throws Exception
    {
        // -e: each side sleeps in ibv_get_cq_event on a completion channel instead of polling its CQ
        Programs.require("ibv_rc_pingpong", "ibverbs-utils");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final String port = String.valueOf(Programs.port());
            final List<Programs.Run> runs = p.serverAndClient(List.of("ibv_rc_pingpong", "-p", port, "-e", "-c"),
                List.of("ibv_rc_pingpong", "-p", port, "-e", "-c", "localhost"), "Couldn't connect");
            for (final Programs.Run r : runs)
            {
                assertThat(r.exitCode()).as(r.both()).isZero();
                assertThat(r.both()).doesNotContain("Failed to get cq_event").doesNotContain("mismatch");
                assertThat(r.out()).contains("8192000 bytes in").contains("1000 iters in");
            }
        }
    }

    @Test
    void ibvRcPingpongOf64KibMessagesChecksEveryBuffer() throws Exception
    {
        Programs.require("ibv_rc_pingpong", "ibverbs-utils");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final String port = String.valueOf(Programs.port());
            final List<Programs.Run> runs = p.serverAndClient(
                List.of("ibv_rc_pingpong", "-p", port, "-s", "65536", "-n", "1000", "-c"),
                List.of("ibv_rc_pingpong", "-p", port, "-s", "65536", "-n", "1000", "-c", "localhost"),
                "Couldn't connect");
            for (final Programs.Run r : runs)
            {
                assertThat(r.exitCode()).as(r.both()).isZero();
                // -c: each side compares every received buffer with the pattern the other wrote
                assertThat(r.both()).doesNotContain("mismatch").doesNotContain("Error");
                assertThat(r.out()).contains("131072000 bytes in").contains("1000 iters in");
            }
        }
    }

    @Test
    void ibvXsrqPingpongServerAndClientCompleteThroughXrcDomainsAndSrqs() throws Exception
    {
        // XRC: ibv_open_xrcd on a file, an XRC SRQ (ibv_create_srq_ex) and XRC_RECV and XRC_SEND QPs on each side;
        // every SEND names the peer's SRQ number, which each side prints and the other reads
        xsrqPingpong();
    }

    @Test
    void ibvXsrqPingpongWaitsForItsReceivesOnACompletionChannel() throws Exception
    {
        xsrqPingpong("-e", "-n", "50");
    }

    @Test
    void ibvXsrqPingpongServesTwoClientsThatShareOneXrcDomainThroughTheirFile() throws Exception
    {
        // -c 2: both clients open the same file with O_CREAT and so one XRC domain of the device (the kernel's
        // find_xrcd by inode); the server sends to each client's SRQ over the XRC_RECV QP of the other client, which
        // only a shared domain accepts (else IBV_WC_REM_INV_REQ_ERR)
        Programs.require("ibv_xsrq_pingpong", "ibverbs-utils");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final String port = String.valueOf(Programs.port());
            final List<String> server = List.of("ibv_xsrq_pingpong", "-p", port, "-c", "2");
            final List<String> client = List.of("ibv_xsrq_pingpong", "-p", port, "-c", "2", "localhost");
            final List<Programs.Run> runs = p.serverAndClients(server, List.of(client, client), "Couldn't connect");
            final java.util.regex.Pattern local = java.util.regex.Pattern.compile(
                "local: LID 0001, QPN RECV ([0-9a-f]{6}) SEND ([0-9a-f]{6}), PSN [0-9a-f]{6}, SRQN ([0-9a-f]{6})");
            final java.util.Set<String> clientSrqs = new java.util.HashSet<>();
            for (final Programs.Run r : runs)
            {
                assertThat(r.exitCode()).as(r.both()).isZero();
                assertThat(r.both()).doesNotContain("Couldn't").doesNotContain("error").doesNotContain("Failed");
                assertThat(r.out()).endsWith("success\n");
            }
            for (final Programs.Run c : runs.subList(1, 3))
            {
                final java.util.regex.Matcher m = local.matcher(c.out());
                assertThat(m.find()).as(c.out()).isTrue();
                clientSrqs.add(m.group(3));
                // the server connected to the QPs each client created
                assertThat(runs.get(0).out()).contains("remote: LID 0001, QPN RECV " + m.group(1) + " SEND "
                    + m.group(2));
            }
            assertThat(clientSrqs).as("each client has an XRC SRQ of its own in the shared domain").hasSize(2);
            final java.util.regex.Matcher serverLocal = local.matcher(runs.get(0).out());
            int serverQps = 0;
            while (serverLocal.find())
            {
                serverQps++;
            }
            assertThat(serverQps).as("the server made one XRC_RECV and one XRC_SEND QP per client").isEqualTo(2);
        }
    }

    private void xsrqPingpong(final String... options) throws Exception
    {
        Programs.require("ibv_xsrq_pingpong", "ibverbs-utils");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final String port = String.valueOf(Programs.port());
            final List<String> server = new ArrayList<>(List.of("ibv_xsrq_pingpong", "-p", port));
            server.addAll(List.of(options));
            final List<String> client = new ArrayList<>(server);
            client.add("localhost");
            final List<Programs.Run> runs = p.serverAndClient(server, client, "Couldn't connect");
            final java.util.regex.Pattern local = java.util.regex.Pattern.compile(
                "local: LID 0001, QPN RECV ([0-9a-f]{6}) SEND ([0-9a-f]{6}), PSN [0-9a-f]{6}, SRQN ([0-9a-f]{6})");
            final String[] seenByPeer = new String[2];
            for (int i = 0; i < 2; i++)
            {
                final Programs.Run r = runs.get(i);
                assertThat(r.exitCode()).as(r.both()).isZero();
                assertThat(r.both()).doesNotContain("Couldn't").doesNotContain("error").doesNotContain("Failed");
                assertThat(r.out()).endsWith("success\n");
                final java.util.regex.Matcher m = local.matcher(r.out());
                assertThat(m.find()).as(r.out()).isTrue();
                assertThat(m.group(3)).as("an XRC SRQ number (ibv_get_srq_num)").isNotEqualTo("000000");
                seenByPeer[1 - i] = "remote: LID 0001, QPN RECV " + m.group(1) + " SEND " + m.group(2);
            }
            // each side connected to the QPs the other created
            assertThat(runs.get(0).out()).contains(seenByPeer[0]);
            assertThat(runs.get(1).out()).contains(seenByPeer[1]);
        }
    }

    @Test
    void ibvUcPingpongServerAndClientComplete() throws Exception
    {
        pingpong("ibv_uc_pingpong", "8192000 bytes in");
    }

    @Test
    void ibvUcPingpongOf1000ExchangesChecksEveryBuffer() throws Exception
    {
        pingpong("ibv_uc_pingpong", "8192000 bytes in", "-n", "1000", "-c");
    }

    @Test
    void ibvSrqPingpongServerAndClientCompleteOn16QpsSharingOneSrq() throws Exception
    {
        pingpong("ibv_srq_pingpong", "8192000 bytes in");
    }

    @Test
    void ibvSrqPingpongOf1000ExchangesChecksEveryBuffer() throws Exception
    {
        pingpong("ibv_srq_pingpong", "8192000 bytes in", "-n", "1000", "-c");
    }

    @Test
    void ibvUdPingpongServerAndClientCompleteThroughAddressHandles() throws Exception
    {
        // UD: ibv_create_ah, wr.ud in every send, and each receive's payload after the 40-byte GRH
        pingpong("ibv_ud_pingpong", "2048000 bytes in");
    }

    @Test
    void ibvUdPingpongOf1000ExchangesChecksEveryPayloadAfterItsGrh() throws Exception
    {
        pingpong("ibv_ud_pingpong", "2048000 bytes in", "-n", "1000", "-c");
    }

    /**
     * The pingpong programs on devices that lack what an option or the program's QP type needs: each refuses as on
     * the real device, with the program's own message and exit status 1, before it listens (the program's check of
     * {@code ibv_query_device_ex}, or the verb's errno). ODP: the mlx5 parts that report it and current rxe (not
     * BlueField-2, as its dump; not implicit ODP on rxe). Completion timestamps: {@code completion_timestamp_mask} is
     * 0 but on mlx5. Device memory: {@code max_dm_size} is 0 but on ConnectX-5 and later. {@code -N}
     * ({@code ibv_create_qp_ex} with send_ops_flags): libmlx4 takes none, libbnxt_re has no {@code create_qp_ex}. QP types: each driver's {@code create_qp}
     * (drivers.md, QP types). SRQs: none on erdma. XRC: librxe has no {@code open_xrcd} (EOPNOTSUPP, 95). CQs: rdma-core 44's libmana makes
     * none without a parent domain's allocators (EINVAL).
     */
    @ParameterizedTest(name = "{0} {2} on {1}")
    @CsvSource(delimiter = '|', textBlock = """
        ibv_rc_pingpong   | bluefield2 | -o        | The device isn't ODP capable or does not support RC send and receive with ODP
        ibv_rc_pingpong   | rxe        | -g 0 -O   | The device doesn't support implicit ODP
        ibv_rc_pingpong   | connectx3  | -t        | The device isn't completion timestamp capable
        ibv_rc_pingpong   | connectx4  | -j        | Device doesn't support dm allocation
        ibv_rc_pingpong   | connectx3  | -N        | Couldn't create QP
        ibv_rc_pingpong   | bnxt_re    | -g 0 -N   | Couldn't create QP
        ibv_rc_pingpong   | efa        | -g 0      | Couldn't create QP
        ibv_uc_pingpong   | bnxt_re    | -g 0      | Couldn't create QP
        ibv_uc_pingpong   | e810       | -g 0      | Couldn't create QP
        ibv_ud_pingpong   | cxgb4      | -g 0      | Couldn't create QP
        ibv_ud_pingpong   | hns        | -g 0      | Couldn't create QP
        ibv_srq_pingpong  | erdma      | -g 0      | Couldn't create SRQ
        ibv_xsrq_pingpong | rxe        | -g 0      | Couldn't Open the XRC Domain 95
        ibv_ud_pingpong   | mana       | -g 0      | Couldn't create CQ
        """)
    void aPingpongRefusesWhatItsDeviceLacksAsTheRealOneDoes(final String program, final String profileName,
        final String options, final String message) throws Exception
    {
        Programs.require(program, "ibverbs-utils");
        final DeviceProfile profile = DeviceProfiles.byName(profileName);
        try (Programs p = new Programs(dir, hcaIdOf(profile), profile))
        {
            final List<String> server = new ArrayList<>(List.of(program, "-p", String.valueOf(Programs.port())));
            server.addAll(List.of(options.split(" ")));
            final Programs.Run r = p.run(false, server.toArray(String[]::new));
            assertThat(r.exitCode()).as(r.both()).isEqualTo(1);
            assertThat(r.err()).as(r.both()).contains(message);
            assertThat(r.out()).as("it stopped before it listened").doesNotContain("local address");
        }
    }

    /**
     * The pingpong programs where the device has what they ask for, server and client on one fabric: RoCE ports
     * with {@code -g 0} (a GID is mandatory there), ODP with and without prefetch, completion timestamps, device
     * memory, the {@code ibv_wr_*} API, UD on the drivers that take it, SRQs with fewer QPs, a larger MTU.
     */
    @ParameterizedTest(name = "{0} {2} on {1}")
    @CsvSource(delimiter = '|', textBlock = """
        ibv_rc_pingpong  | rxe        | -g 0 -o -P -c
        ibv_rc_pingpong  | rxe        | -g 0 -N
        ibv_rc_pingpong  | bnxt_re    | -g 0
        ibv_rc_pingpong  | connectx5  | -t -c
        ibv_rc_pingpong  | connectx6  | -j
        ibv_rc_pingpong  | connectx7  | -O -P -m 4096 -s 16384 -c
        ibv_rc_pingpong  | hns        | -g 0 -e
        ibv_ud_pingpong  | e810       | -g 0 -c
        ibv_ud_pingpong  | efa        | -g 0
        ibv_uc_pingpong  | hfi1       | -c
        ibv_srq_pingpong | connectx5  | -q 4 -o -c
        """)
    void aPingpongCompletesWhereItsDeviceHasWhatItAsksFor(final String program, final String profileName,
        final String options) throws Exception
    {
        Programs.require(program, "ibverbs-utils");
        final DeviceProfile profile = DeviceProfiles.byName(profileName);
        try (Programs p = new Programs(dir, hcaIdOf(profile), profile))
        {
            final List<String> server = new ArrayList<>(List.of(program, "-p", String.valueOf(Programs.port()), "-n",
                "20"));
            server.addAll(List.of(options.split(" ")));
            final List<String> client = new ArrayList<>(server);
            client.add("localhost");
            for (final Programs.Run r : p.serverAndClient(server, client, "Couldn't connect"))
            {
                assertThat(r.exitCode()).as(r.both()).isZero();
                assertThat(r.both()).doesNotContain("mismatch").doesNotContain("Couldn't").doesNotContain("Failed");
                assertThat(r.out()).contains("20 iters in");
            }
        }
    }

    /**
     * A RoCE port without {@code -g} gives the program's address vector no GID, which the core refuses on RoCE
     * ({@code rdma_check_ah_attr}: EINVAL at RTR); an iWARP device takes RTR without one but no modify to RTS from
     * the application (its connection manager's stream is missing: EINVAL), with {@code -g} or without.
     */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', textBlock = """
        rxe        | -c   | Failed to modify QP to RTR
        siw        | -g 0 | Failed to modify QP to RTS
        cxgb4      | -c   | Failed to modify QP to RTS
        e810-iwarp | -g 0 | Failed to modify QP to RTS
        """)
    void ibvRcPingpongFailsToConnectWhereTheStackRefusesItsModify(final String profileName, final String options,
        final String message) throws Exception
    {
        Programs.require("ibv_rc_pingpong", "ibverbs-utils");
        final DeviceProfile profile = DeviceProfiles.byName(profileName);
        try (Programs p = new Programs(dir, hcaIdOf(profile), profile))
        {
            final List<String> server = new ArrayList<>(List.of("ibv_rc_pingpong", "-p",
                String.valueOf(Programs.port()), "-n", "5"));
            server.addAll(List.of(options.split(" ")));
            final List<String> client = new ArrayList<>(server);
            client.add("localhost");
            final List<Programs.Run> runs = p.serverAndClient(server, client, "Couldn't connect to localhost");
            assertThat(runs.get(0).exitCode()).as(runs.get(0).both()).isEqualTo(1);
            assertThat(runs.get(0).err()).contains(message).contains("Couldn't connect to remote QP");
            assertThat(runs.get(1).exitCode()).as(runs.get(1).both()).isEqualTo(1);
            assertThat(runs.get(1).out()).doesNotContain("iters in");
        }
    }

    /** The device name rnicsim exec gives a profile (ExecCommand): the driver's prefix and 0, mlx5_0, rxe0, efa_0. */
    private static String hcaIdOf(final DeviceProfile p)
    {
        return p.traits().hcaIdPrefix() + "0";
    }

    @Test
    void pyverbsOpensTheDeviceAndRegistersAnMr() throws Exception
    {
        Programs.require("python3", "python3-pyverbs");
        final Path python = Path.of("/usr/bin/python3");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run probe = p.run(false, python.toString(), "-c", "import pyverbs.device");
            if (probe.exitCode() != 0)
            {
                Programs.require("pyverbs-module-of-" + python, "python3-pyverbs");
            }
            final Programs.Run r = p.run(false, python.toString(), "src/test/python/pyverbs_mr.py");
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("device mlx5_0 max_mr " + DeviceProfiles.connectx5().attributes().maxMr())
                .contains("length 65536").contains("deregistered");
        }
    }

    @Test
    void perftestWriteBandwidthReportsItsTable() throws Exception
    {
        perftest("ib_write_bw", "BW average[MB/sec]", "-s", "65536", "-n", "200");
    }

    @Test
    void perftestReadBandwidthReportsItsTable() throws Exception
    {
        perftest("ib_read_bw", "BW average[MB/sec]", "-s", "65536", "-n", "200");
    }

    @Test
    void perftestSendLatencyReportsItsTable() throws Exception
    {
        perftest("ib_send_lat", "t_avg[usec]", "-s", "2", "-n", "200");
    }

    @Test
    void perftestSendLatencyOverXrcReportsItsTable() throws Exception
    {
        // -c XRC: XRC domains, SRQs and QPs, and ibv_wr_set_xrc_srqn in the ibv_wr_* API perftest posts with
        perftest("ib_send_lat", "t_avg[usec]", "-c", "XRC", "-s", "2", "-n", "200");
    }

    @Test
    void perftestWriteBandwidthOverXrcReportsItsTable() throws Exception
    {
        perftest("ib_write_bw", "BW average[MB/sec]", "-c", "XRC", "-s", "65536", "-n", "200");
    }

    private void perftest(final String program, final String column, final String... args) throws Exception
    {
        Programs.require(program, "perftest");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final String port = String.valueOf(Programs.port());
            final java.util.ArrayList<String> server = new ArrayList<>(List.of(program, "-p", port));
            server.addAll(List.of(args));
            final java.util.ArrayList<String> client = new ArrayList<>(server);
            client.add("localhost");
            final List<Programs.Run> runs = p.serverAndClient(server, client, "Couldn't connect");
            assertThat(runs.get(0).exitCode()).as(runs.get(0).both()).isZero();
            assertThat(runs.get(1).exitCode()).as(runs.get(1).both()).isZero();
            assertThat(runs.get(1).out()).contains(column).contains("Device         : mlx5_0");
        }
    }

    /**
     * Runs an ibverbs-utils pingpong program as server and client (the client starts once the server listens) and
     * checks both complete with their usual totals and, under -c, find no byte out of place.
     */
    private void pingpong(final String program, final String bytesLine, final String... options) throws Exception
    {
        Programs.require(program, "ibverbs-utils");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final String port = String.valueOf(Programs.port());
            final List<String> server = new ArrayList<>(List.of(program, "-p", port));
            server.addAll(List.of(options));
            final List<String> client = new ArrayList<>(server);
            client.add("localhost");
            final List<Programs.Run> runs = p.serverAndClient(server, client, "Couldn't connect");
            for (final Programs.Run r : runs)
            {
                assertThat(r.exitCode()).as(r.both()).isZero();
                assertThat(r.both()).doesNotContain("mismatch").doesNotContain("Couldn't");
                assertThat(r.out()).contains(bytesLine).contains("1000 iters in");
            }
        }
    }
}
