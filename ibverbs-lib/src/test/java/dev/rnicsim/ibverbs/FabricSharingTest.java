package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two runs of {@link ProgramRunner} on one fabric name share one fabric whichever program ends first: the run that
 * started the fabric keeps serving it while a run that joined it has a program still to come (a client started
 * before its server, whose program ends first). The programs wait on FIFOs the test writes, so each step follows
 * the one before it.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class FabricSharingTest
{
    @TempDir
    Path dir;

    @Test
    void theFabricOutlivesItsHostsProgramWhileAJoinedRunStillNeedsIt() throws Exception
    {
        Programs.require("ibv_devices", "ibverbs-utils");
        Programs.require("mkfifo", "coreutils");
        final Path hostGo = dir.resolve("host-go");
        final Path hostDone = dir.resolve("host-done");
        final Path joinerGo = dir.resolve("joiner-go");
        for (final Path f : List.of(hostGo, hostDone, joinerGo))
        {
            assertThat(new ProcessBuilder("mkfifo", f.toString()).start().waitFor()).isZero();
        }
        final String fabric = "share-" + ProcessHandle.current().pid() + "-" + ThreadLocalRandom.current().nextInt(1 << 30);
        final ProgramRunner.Options options = new ProgramRunner.Options(List.of(new FabricServer.DeviceSpec("mlx5_0",
            DeviceProfiles.connectx5())), fabric, true, false);
        final PrintStream log = new PrintStream(System.err, true, StandardCharsets.UTF_8);
        final CountDownLatch hosting = new CountDownLatch(1);
        final CountDownLatch joined = new CountDownLatch(1);
        final Path joinerOut = dir.resolve("joiner.out");
        final Throwable[] failure = new Throwable[1];

        final Thread host = Thread.ofPlatform().start(() ->
        {
            try
            {
                ProgramRunner.run(options, List.of("sh", "-c", "cat '" + hostGo + "' >/dev/null; echo done > '"
                    + hostDone + "'"), log, f -> hosting.countDown(), pb -> { });
            }
            catch (final Exception e)
            {
                failure[0] = e;
                hosting.countDown();
            }
        });
        hosting.await();
        final Thread joiner = Thread.ofPlatform().start(() ->
        {
            try
            {
                ProgramRunner.run(options, List.of("sh", "-c", "cat '" + joinerGo + "' >/dev/null; ibv_devices"), log,
                    f -> failure[0] = new AssertionError("the joining run started a fabric of its own"),
                    pb ->
                    {
                        pb.redirectOutput(joinerOut.toFile()).redirectErrorStream(true);
                        joined.countDown(); // after it attached, before its program starts
                    });
            }
            catch (final Exception e)
            {
                failure[0] = e;
                joined.countDown();
            }
        });
        joined.await();
        Files.writeString(hostGo, "go\n");             // the host's program ends ...
        assertThat(Files.readString(hostDone)).isEqualTo("done\n"); // ... (it says so as it exits)
        host.join(Duration.ofMillis(500));              // a run that stopped serving at its program's end is gone now
        assertThat(host.isAlive()).as("the host's run still serves the joined run after its own program ended")
            .isTrue();
        Files.writeString(joinerGo, "go\n");           // ... then the joined program opens the device
        joiner.join();
        host.join();
        assertThat(failure[0]).isNull();
        assertThat(Files.readString(joinerOut)).as("the joined program found the fabric's device").contains("mlx5_0")
            .doesNotContain("cannot reach the fabric server");
    }
}
