package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.ibverbs.ProgramRunner;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rnicsim exec}: its options are checked before anything runs, and it returns the program's exit status. (The
 * programs that use the library, ibv_rc_pingpong and perftest among them, are run by ibverbs-lib's tests.)
 */
class ExecCommandTest
{
    @TempDir
    Path dir;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int exec(final String... args)
    {
        final String[] all = new String[args.length + 1];
        all[0] = "exec";
        System.arraycopy(args, 0, all, 1, args.length);
        return Rnicsim.execute(all, new PrintWriter(out, true), new PrintWriter(err, true));
    }

    private static void requireLibrary()
    {
        LibraryRequired.require();
    }

    @Test
    void eachProfilesDeviceIsNamedAsItsKernelDriverNamesIt()
    {
        // efa_main.c "efa_%d" (the efa dump's hca_id efa_0), hns_roce "hns_%d", iw_cxgb4 "cxgb4_%d", hfi1 "hfi1_%d";
        // mlx5_0, rxe0, irdma0 and bnxt_re0 as before
        final java.util.Map<String, String> expected = java.util.Map.of("connectx5", "mlx5_0", "connectx3", "mlx4_0",
            "rxe", "rxe0", "e810", "irdma0", "bnxt_re", "bnxt_re0", "efa", "efa_0", "hns", "hns_0", "cxgb4", "cxgb4_0",
            "hfi1", "hfi1_0", "siw", "siw0");
        expected.forEach((profile, name) -> assertThat(ExecCommand.hcaIdOf(
            dev.rnicsim.simnic.DeviceProfiles.byName(profile))).as(profile).isEqualTo(name));
    }

    @Test
    void shouldRefuseAnUnknownProfileNamingTheBuiltInOnes()
    {
        assertThat(exec("--profile", "connectx99", "--", "true")).isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).contains("no built-in profile 'connectx99'").contains("connectx5");
    }

    @Test
    void shouldRefuseAProfileAndADumpTogether() throws IOException
    {
        final Path dump = Files.writeString(dir.resolve("dump.txt"), "hca_id:\tmlx5_0\n");
        assertThat(exec("--profile", "rxe", "--devinfo", dump.toString(), "--", "true"))
            .isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).contains("give --profile or --devinfo, not both");
    }

    @Test
    void shouldRefuseANetdevMtuOutsideEthernetsRangeAndATextThatIsNoIpv4Address()
    {
        assertThat(exec("--profile", "rxe", "--netdev-mtu", "40", "--", "true")).isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).contains("--netdev-mtu 40: an MTU of 40 bytes is outside 68..65535");
        assertThat(exec("--profile", "rxe", "--netdev-mtu", "9k", "--", "true")).isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).contains("--netdev-mtu", "'9k': an MTU is a plain number of bytes",
            "give the MTU in bytes, e.g. 9000");
        assertThat(exec("--profile", "rxe", "--netdev-mtu", "99999999999", "--", "true"))
            .isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).contains("an MTU of 99999999999 bytes is outside 68..65535");
        assertThat(exec("--profile", "rxe", "--ipv4", "10.0.0", "--", "true")).isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).contains("--ipv4 10.0.0: '10.0.0' is no IPv4 address");
        assertThat(exec("--profile", "rxe", "--ipv4", "127.0.0.1", "--", "true")).isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).contains("--ipv4 127.0.0.1: '127.0.0.1' is a loopback address");
    }

    @Test
    void shouldRefuseTheNetdevSettingsOnAPortWithoutAnEthernetNetdev()
    {
        assertThat(exec("--profile", "connectx5", "--ipv4", "10.0.0.1", "--", "true")).isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).contains("--ipv4 10.0.0.1: connectx5 (mlx5) has an InfiniBand link layer")
            .contains("give the option to a RoCE or iWARP profile");
        assertThat(exec("--profile", "connectx5", "--netdev-mtu", "9000", "--", "true"))
            .isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).contains("--netdev-mtu 9000: connectx5 (mlx5) has an InfiniBand link layer");
    }

    @Test
    void shouldRefuseAFabricNameThatIsNoFileName()
    {
        assertThat(exec("--fabric", "../x", "--", "true")).isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).contains("--fabric '../x'");
    }

    @Test
    void shouldReturnTheProgramsExitStatus()
    {
        requireLibrary();
        assertThat(exec("--", "true")).isZero();
        assertThat(exec("--", "sh", "-c", "exit 7")).isEqualTo(7);
    }

    @Test
    void shouldRunTheProgramWithTheLibraryFirstOnItsPathAndTheFabricsSocket() throws IOException
    {
        requireLibrary();
        final Path env = dir.resolve("env.txt");
        assertThat(exec("--strict", "--", "sh", "-c", "env > " + env)).isZero();
        final String seen = Files.readString(env);
        assertThat(seen).contains("LD_LIBRARY_PATH=" + ProgramRunner.libraryDir())
            .containsPattern("RNICSIM_FABRIC_SOCKET=\\S*rnicsim-fabric-exec-\\d+\\.sock")
            .contains("RNICSIM_STRICT=1");
        final Path lock = ProgramRunner.socketOf("exec-" + ProcessHandle.current().pid())
            .resolveSibling("rnicsim-fabric-exec-" + ProcessHandle.current().pid() + ".lock");
        assertThat(lock).as("a private fabric leaves no lock file behind").doesNotExist();
    }

    @Test
    void shouldSayCommandNotFoundAsAShellDoesAndExit127()
    {
        assertThat(exec("--", "rnicsim-no-such-program")).isEqualTo(127);
        assertThat(err.toString()).startsWith("rnicsim exec: rnicsim-no-such-program: command not found (searched PATH: ")
            .doesNotContain("Cannot run program").doesNotContain("error=");
        assertThat(exec("--", dir.resolve("missing").toString())).isEqualTo(127);
        assertThat(err.toString()).contains(dir.resolve("missing") + ": No such file or directory");
    }

    @Test
    void shouldNameTheMissingInterpreterOfAScriptThatIsThereAndExit127() throws IOException
    {
        requireLibrary();
        final Path script = Files.writeString(dir.resolve("script.sh"), "#!/no/such/interpreter -x\nexit 0\n");
        Files.setPosixFilePermissions(script, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        assertThat(exec("--", script.toString())).as(err.toString()).isEqualTo(127);
        assertThat(err.toString()).contains(script + ": cannot be started: No such file or directory")
            .contains("the interpreter of its #! line, '/no/such/interpreter', is not");
    }

    @Test
    void shouldSayPermissionDeniedWithTheModeAndExit126() throws IOException
    {
        final Path script = Files.writeString(dir.resolve("script.sh"), "#!/bin/sh\nexit 0\n");
        Files.setPosixFilePermissions(script, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        assertThat(exec("--", script.toString())).isEqualTo(126);
        assertThat(err.toString()).contains("rnicsim exec: " + script + ": Permission denied (its mode is rw-r--r--")
            .contains("chmod +x");
        assertThat(exec(dir.toString())).isEqualTo(126);
        assertThat(err.toString()).contains("rnicsim exec: " + dir + ": Is a directory");
    }

    @Test
    void shouldSayHowToNameTheProgramWhenThereIsNone()
    {
        assertThat(exec()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(exec("--profile", "rxe", "--")).isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).contains("rnicsim exec: no program to run: name it after exec's own options")
            .doesNotContain("Missing required parameter").doesNotContain("Usage:");
    }

    @Test
    void shouldNameTheNearestProfileOfAMistypedOne()
    {
        assertThat(exec("--profile", "connectx55", "--", "true")).isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).contains("no built-in profile 'connectx55'; did you mean 'connectx5'?");
    }

    @Test
    void shouldNotStartWithAColonWhenTheDumpOptionIsEmpty()
    {
        assertThat(exec("--devinfo", "", "--", "true")).isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).startsWith("--devinfo is empty: give the file to read");
    }

    @Test
    void shouldNameTheOptionAndTheFileOfADumpOfAnotherFormat() throws IOException
    {
        final Path json = Files.writeString(dir.resolve("dump.json"), "{\"max_qp\": 5}\n");
        assertThat(exec("--devinfo", json.toString(), "--", "true")).isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).startsWith("--devinfo " + json + ": not an ibv_devinfo dump");
    }

    @Test
    void shouldPassTheProgramsOwnOptionsThatFollowItWithoutDashDash() throws IOException
    {
        requireLibrary();
        final Path env = dir.resolve("env.txt");
        assertThat(exec("--strict", "sh", "-c", "env > " + env + "; exit 5")).isEqualTo(5);
        assertThat(Files.readString(env)).as("exec's own options before the program still count")
            .contains("RNICSIM_STRICT=1");
        assertThat(exec("sh", "-c", "exit 0", "--strict", "-v")).isZero();
        assertThat(err.toString()).doesNotContain("Unknown option");
    }

    @Test
    void shouldNameTheSignalThatEndedTheProgramAsAShellDoes()
    {
        requireLibrary();
        assertThat(exec("--", "sh", "-c", "kill -SEGV $$")).isEqualTo(128 + 11);
        assertThat(err.toString()).contains("rnicsim exec: sh: Segmentation fault (").contains("signal 11)");
        assertThat(exec("--", "sh", "-c", "exit 3")).isEqualTo(3);
        assertThat(err.toString()).as("an exit status is no signal").doesNotContain("signal 3");
    }

    @Test
    void aProgramsOwnExitStatusAbove128ShouldNotBeReportedAsASignal()
    {
        requireLibrary();
        assertThat(exec("--", "sh", "-c", "exit 139")).as("the status, as a shell's $?").isEqualTo(139);
        assertThat(exec("--", "sh", "-c", "exit 130")).isEqualTo(130);
        assertThat(err.toString()).as("exit 139 and exit 130 are the program's own").doesNotContain("rnicsim exec:");
        assertThat(exec("--", "sh", "-c", "kill -KILL $$")).as("a real SIGKILL").isEqualTo(128 + 9);
        assertThat(err.toString()).contains("rnicsim exec: sh: Killed (").contains("signal 9)");
    }

    @Test
    void shouldSayWhichAttributesADumpLacksAndWhereTheyComeFrom() throws IOException
    {
        requireLibrary();
        // 'ibv_devinfo' without -v: the device's names and port, none of its limits
        final Path dump = Files.writeString(dir.resolve("short.txt"), "hca_id:\tmlx5_0\n\ttransport:\t\t\t"
            + "InfiniBand (0)\n\tfw_ver:\t\t\t\t16.35\n\tvendor_id:\t\t\t0x02c9\n\tvendor_part_id:\t\t\t4119\n"
            + "\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n");
        assertThat(exec("--devinfo", dump.toString(), "--", "true")).isZero();
        assertThat(err.toString()).contains("rnicsim exec: --devinfo " + dump + ": ")
            .contains("device attributes are not in the dump (").contains("page_size_cap")
            .contains("they take the values of built-in profile connectx5")
            .contains("a dump of 'ibv_devinfo -v' (with -v) has them");
    }

    @Test
    void shouldNameTheDumpOnceInEachWarning() throws IOException
    {
        requireLibrary();
        // no hca_id: the driver is chosen by vendor_id 0 (older rxe), which the reader warns about
        final Path dump = Files.writeString(dir.resolve("rxe-old.txt"), "\ttransport:\t\t\tInfiniBand (0)\n"
            + "\tfw_ver:\t\t\t\t0.0.0\n\tvendor_id:\t\t\t0x0000\n\tvendor_part_id:\t\t\t0\n"
            + "\tphys_port_cnt:\t\t\t1\n");
        assertThat(exec("--devinfo", dump.toString(), "--", "true")).isZero();
        assertThat(err.toString()).contains("rnicsim exec: " + dump + ": driver rxe chosen: ")
            .doesNotContain(dump + ": " + dump);
    }

    @Test
    void aRunJoiningAFabricOfOtherDevicesOrWithATraceShouldBeRefusedNamingTheFabricsProfile() throws Exception
    {
        requireLibrary();
        final Path go = dir.resolve("go");
        assertThat(new ProcessBuilder("mkfifo", go.toString()).start().waitFor()).isZero();
        final Path ready = dir.resolve("ready");
        final String fabric = "cli-join-" + ProcessHandle.current().pid();
        final int[] hostCode = {-1};
        final Thread host = Thread.ofPlatform().start(() -> hostCode[0] = Rnicsim.execute(new String[] {"exec",
            "--fabric", fabric, "--profile", "rxe", "--", "sh", "-c", "touch '" + ready + "'; cat '" + go
                + "' >/dev/null"}, new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter())));
        try
        {
            while (!Files.exists(ready) && host.isAlive())
            {
                java.util.concurrent.locks.LockSupport.parkNanos(10_000_000L); // until the host's program runs
            }
            final Path touched = dir.resolve("touched");
            assertThat(exec("--fabric", fabric, "--profile", "connectx5", "--", "touch", touched.toString()))
                .isEqualTo(Rnicsim.MALFORMED);
            assertThat(err.toString()).contains("rnicsim exec: fabric '" + fabric + "' is running with profile rxe "
                + "(device rxe0), served by another rnicsim exec (process " + ProcessHandle.current().pid() + ")")
                .contains("this run asks for profile connectx5 (device mlx5_0)").contains("use another --fabric name");
            final Path trace = dir.resolve("t.json");
            assertThat(exec("--fabric", fabric, "--trace", trace.toString(), "--", "touch", touched.toString()))
                .isEqualTo(Rnicsim.MALFORMED);
            assertThat(err.toString()).contains("--trace " + trace + ": fabric '" + fabric + "' is served by another "
                + "rnicsim exec").contains("which keeps no trace").contains("only the run that starts a fabric");
            assertThat(touched).as("a refused run starts no program").doesNotExist();
            assertThat(trace).doesNotExist();
            assertThat(exec("--fabric", fabric, "--profile", "rxe", "--", "touch", touched.toString())).isZero();
            assertThat(exec("--fabric", fabric, "--", "true")).as("a run naming no device takes the fabric's").isZero();
            assertThat(touched).exists();
        }
        finally
        {
            if (host.isAlive())
            {
                Files.writeString(go, "go\n"); // the host's program ends
            }
            host.join();
            // a named fabric keeps its lock file for the runs to come; this test's name has none to come
            Files.deleteIfExists(ProgramRunner.socketOf(fabric).resolveSibling("rnicsim-fabric-" + fabric + ".lock"));
        }
        assertThat(hostCode[0]).isZero();
    }
}
