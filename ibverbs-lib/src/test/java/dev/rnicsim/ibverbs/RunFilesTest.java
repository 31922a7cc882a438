package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run of {@link ProgramRunner} on a fabric of its own leaves no file behind: the lock that a forked child and its
 * parent share (fork.c) is in the run's own directory, which goes with the run, as do the fabric's socket, origin and
 * lock file. And it tells a program's own exit status above 128 from a signal's end.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class RunFilesTest
{
    @TempDir
    Path dir;

    private final PrintStream log = new PrintStream(System.err, true, StandardCharsets.UTF_8);

    private ProgramRunner.Result run(final String fabric, final String script) throws Exception
    {
        return ProgramRunner.run(new ProgramRunner.Options(List.of(new FabricServer.DeviceSpec("mlx5_0",
            DeviceProfiles.connectx5())), fabric, true, false), List.of("sh", "-c", script), log, f -> { },
            pb -> pb.redirectOutput(dir.resolve("out.txt").toFile()).redirectErrorStream(true));
    }

    private static List<String> filesNaming(final Path folder, final String fabric) throws Exception
    {
        try (Stream<Path> files = Files.list(folder))
        {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.contains(fabric)).toList();
        }
    }

    @Test
    void aRunWhoseProgramForksShouldLeaveNoFileBehind() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/device_memory.c", "device_memory");
        final String fabric = "files-" + ProcessHandle.current().pid() + "-" + ThreadLocalRandom.current()
            .nextInt(1 << 30);
        final Path listing = dir.resolve("listing.txt");
        final Path lockPath = dir.resolve("lock-path.txt");
        final ProgramRunner.Result r = run(fabric, "'" + exe + "' && echo \"$RNICSIM_FORK_LOCK\" > '" + lockPath
            + "' && ls \"$(dirname \"$RNICSIM_FORK_LOCK\")\" > '" + listing + "'");
        final String out = Files.readString(dir.resolve("out.txt"));
        assertThat(r.exitCode()).as(out).isZero();
        assertThat(out).contains("ok fork: the child allocated and freed device memory on its parent's context");
        assertThat(Files.readString(listing)).as("the forked processes locked a file of the run's own directory")
            .contains("fork-lock");
        final Path runLock = Path.of(Files.readString(lockPath).trim());
        assertThat(runLock.getParent()).as("the run's directory goes with the run").doesNotExist();
        final Path folder = ProgramRunner.socketOf(fabric).getParent();
        assertThat(filesNaming(folder, fabric)).as("no socket, origin, lock or fork-lock of the fabric is left in "
            + folder).isEmpty();
    }

    @Test
    void aProgramsOwnExitStatusAbove128ShouldBeNoSignal() throws Exception
    {
        final String fabric = "status-" + ProcessHandle.current().pid() + "-" + ThreadLocalRandom.current()
            .nextInt(1 << 30);
        final ProgramRunner.Result exited = run(fabric, "exit 130");
        assertThat(exited.exitCode()).isEqualTo(130);
        assertThat(exited.programSignal()).as("exit 130 is the program's own status").isZero();
        final ProgramRunner.Result killed = run(fabric, "kill -INT $$");
        assertThat(killed.exitCode()).as("as a shell's $?").isEqualTo(130);
        assertThat(killed.programSignal()).as("a real SIGINT").isEqualTo(2);
        final ProgramRunner.Result killedHard = run(fabric, "kill -KILL $$");
        assertThat(killedHard.programSignal()).isEqualTo(9);
    }
}
