package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The mistakes a new user makes with names and files on the command line are answered with what was meant: the
 * nearest profile or scenario, the profiles of a device's name, and what a file given as a dump is instead.
 */
class NewUserMistakesTest
{
    @TempDir
    Path dir;

    @Test
    void aMistypedScenarioShouldGetTheNearestOne()
    {
        final CliRun run = CliRun.of("scenario", "run", "mtt-exhaustoin");
        assertThat(run.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(run.err()).contains("no scenario 'mtt-exhaustoin'; did you mean 'mtt-exhaustion'?");
        assertThat(CliRun.of("scenario", "show", "mtt-exhaustoin").err()).contains("did you mean 'mtt-exhaustion'?");
    }

    @Test
    void aMistypedProfileShouldGetTheNearestOneOnEveryCommand() throws IOException
    {
        assertThat(CliRun.of("devinfo", "--profile", "connectx55").err())
            .contains("no built-in profile 'connectx55'; did you mean 'connectx5'?");
        final Path workload = Files.writeString(dir.resolve("w.json"), "{\"groups\": []}");
        final CliRun plan = CliRun.of("plan", "--workload", workload.toString(), "--profile", "conectx5");
        assertThat(plan.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(plan.err()).contains("--profile conectx5: no built-in profile 'conectx5'; did you mean 'connectx5'?");
    }

    @Test
    void aDevicesNameGivenAsAProfileShouldNameTheProfilesOfThatDevice()
    {
        final CliRun r = CliRun.of("devinfo", "--profile", "mlx5_0");
        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("'mlx5_0' is the name a kernel driver gives a device")
            .contains("connectx5").contains("bluefield2").doesNotContain("rxe");
        assertThat(CliRun.of("exec", "--profile", "rxe0", "--", "true").err()).contains("[rxe, rxe-legacy]");
    }

    @Test
    void theJsonOfDevinfoGivenAsADumpShouldBeCalledSo() throws IOException
    {
        final CliRun json = CliRun.of("devinfo", "--profile", "rxe", "--json");
        final Path file = Files.writeString(dir.resolve("rxe.json"), json.out());
        final CliRun r = CliRun.of("devinfo", "--file", file.toString());
        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("not an ibv_devinfo dump").contains("this file is JSON")
            .contains("give the profile's name with --profile instead");
    }

    @Test
    void theListOfIbvDevicesGivenAsADumpShouldBeCalledSo() throws IOException
    {
        final Path file = Files.writeString(dir.resolve("devices.txt"), "    device          \t   node GUID\n"
            + "    ------          \t----------------\n    mlx5_0          \t98039b0300000001\n");
        final Path workload = Files.writeString(dir.resolve("w.json"), "{\"groups\": []}");
        final CliRun r = CliRun.of("plan", "--workload", workload.toString(), "--devinfo", file.toString());
        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("this file is what 'ibv_devices' prints");
        final CliRun other = CliRun.of("exec", "--devinfo", Files.writeString(dir.resolve("notes.txt"), "hello\n")
            .toString(), "--", "true");
        assertThat(other.err()).contains("make a dump with 'ibv_devinfo -v > FILE'");
    }

    @Test
    void aDashOrAFolderGivenAsAFileShouldBeCalledSo()
    {
        final CliRun dash = CliRun.of("run", "-");
        assertThat(dash.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(dash.err()).contains("'-' is not standard input here: save the input to a file");
        final CliRun folder = CliRun.of("devinfo", "--file", dir.toString());
        assertThat(folder.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(folder.err()).contains(dir + ": a folder, not a file");
    }

    @Test
    void versionOfASubcommandShouldBeTheCommandsVersion()
    {
        final String version = CliRun.of("--version").out().strip();
        assertThat(version).startsWith("rnicsim ");
        for (final String sub : new String[] {"exec", "devinfo", "plan", "run", "tour"})
        {
            final CliRun r = CliRun.of(sub, "-V");
            assertThat(r.code()).isZero();
            assertThat(r.out().strip()).as(sub + " -V").isEqualTo(version);
        }
        assertThat(CliRun.of("scenario", "list", "--version").out().strip()).isEqualTo(version);
    }
}
