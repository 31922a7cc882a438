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
import java.util.concurrent.atomic.AtomicReference;
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
        final AtomicReference<Throwable> failure = new AtomicReference<>();

        final Thread host = Thread.ofPlatform().start(() ->
        {
            try
            {
                ProgramRunner.run(options, List.of("sh", "-c", "cat '" + hostGo + "' >/dev/null; echo done > '"
                    + hostDone + "'"), log, f -> hosting.countDown(), pb -> { });
            }
            catch (final Throwable e)
            {
                failure.compareAndSet(null, e); // an Error too: the test fails at once instead of waiting for it
                hosting.countDown();
            }
        });
        step("the host's run starts the fabric", failure, hosting::await);
        final Thread joiner = Thread.ofPlatform().start(() ->
        {
            try
            {
                ProgramRunner.run(options, List.of("sh", "-c", "cat '" + joinerGo + "' >/dev/null; ibv_devices"), log,
                    f -> failure.compareAndSet(null, new AssertionError("the joining run started a fabric of its own")),
                    pb ->
                    {
                        pb.redirectOutput(joinerOut.toFile()).redirectErrorStream(true);
                        joined.countDown(); // after it attached, before its program starts
                    });
            }
            catch (final Throwable e)
            {
                failure.compareAndSet(null, e);
                joined.countDown();
            }
        });
        step("the second run joins it", failure, joined::await);
        step("the host's program ends", failure, () -> Files.writeString(hostGo, "go\n"));
        step("the host's program says so as it exits", failure,
            () -> assertThat(Files.readString(hostDone)).isEqualTo("done\n"));
        host.join(Duration.ofMillis(500));              // a run that stopped serving at its program's end is gone now
        assertThat(host.isAlive()).as("the host's run still serves the joined run after its own program ended")
            .isTrue();
        step("the joined program opens the device", failure, () -> Files.writeString(joinerGo, "go\n"));
        step("the joined run ends", failure, joiner::join);
        step("the host's run ends", failure, host::join);
        assertThat(failure.get()).isNull();
        assertThat(Files.readString(joinerOut)).as("the joined program found the fabric's device").contains("mlx5_0")
            .doesNotContain("cannot reach the fabric server");
    }

    /** A step of the test that blocks (a latch, a FIFO, a join). */
    @FunctionalInterface
    private interface Blocking
    {
        void run() throws Exception;
    }

    /**
     * Runs a blocking step on a thread of its own and waits for it, failing at once, with the cause, when a run's
     * thread fails first: a FIFO whose reader never came, or a latch no one counts down, would otherwise hold the test
     * until its timeout.
     */
    private static void step(final String what, final AtomicReference<Throwable> failure, final Blocking action)
        throws Exception
    {
        final AtomicReference<Throwable> own = new AtomicReference<>();
        final Thread t = Thread.ofVirtual().start(() ->
        {
            try
            {
                action.run();
            }
            catch (final Throwable e)
            {
                own.set(e);
            }
        });
        while (!t.join(Duration.ofMillis(20)))
        {
            if (failure.get() != null)
            {
                t.interrupt();
                throw new AssertionError(what + ": a run failed first", failure.get());
            }
        }
        if (own.get() != null)
        {
            throw new AssertionError(what, own.get());
        }
    }
}
