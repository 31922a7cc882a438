package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.simnic.DeviceProfiles;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@link ProgramRunner} refuses before anything runs: a program that is not there (no fabric is started for
 * it), and a live fabric that is not what the joining run asked for (its program is not started). The fabric's
 * origin, which the joining run is shown, goes with the fabric.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ProgramRunnerRefusalTest
{
    @TempDir
    Path dir;

    private final PrintStream log = new PrintStream(System.err, true, StandardCharsets.UTF_8);

    private static String fabricName()
    {
        return "refusal-" + ProcessHandle.current().pid() + "-" + ThreadLocalRandom.current().nextInt(1 << 30);
    }

    private static ProgramRunner.Options options(final String fabric, final FabricOrigin origin,
        final java.util.function.Function<FabricOrigin, String> joinCheck)
    {
        return new ProgramRunner.Options(List.of(new FabricServer.DeviceSpec("rxe0", DeviceProfiles.byName("rxe"))),
            fabric, true, false, origin, joinCheck, false);
    }

    @Test
    void aProgramThatIsNotThereShouldStartNoFabric()
    {
        final String fabric = fabricName();
        assertThatThrownBy(() -> ProgramRunner.run(options(fabric, null, null), List.of(dir.resolve("nothing")
            .toString()), log, f -> fail("a fabric was started for a program that is not there")))
            .isInstanceOfSatisfying(ProgramLookup.NotRunnable.class, e -> assertThat(e.exitStatus()).isEqualTo(127))
            .hasMessageContaining("No such file or directory");
        assertThat(ProgramRunner.socketOf(fabric)).doesNotExist();
        assertThat(FabricOrigin.fileOf(fabric)).doesNotExist();
    }

    @Test
    void anErrorWhereTheFabricIsHandedToTheCallerShouldLeaveNoFabricServing() throws Exception
    {
        requireLibrary();
        final String fabric = fabricName();
        assertThatThrownBy(() -> ProgramRunner.run(options(fabric, null, null), List.of("true"), log, f ->
        {
            throw new AssertionError("the caller's own check failed");
        })).isInstanceOf(AssertionError.class).hasMessage("the caller's own check failed");
        assertThat(ProgramRunner.socketOf(fabric)).as("the fabric was closed").doesNotExist();
        assertThat(FabricOrigin.fileOf(fabric)).doesNotExist();
    }

    @Test
    void aJoinThatTheFabricsOriginRefusesShouldStartNoProgram() throws Exception
    {
        requireLibrary();
        final Path go = dir.resolve("go");
        assertThat(new ProcessBuilder("mkfifo", go.toString()).start().waitFor()).isZero();
        final String fabric = fabricName();
        final CountDownLatch hosting = new CountDownLatch(1);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final FabricOrigin asked = new FabricOrigin(0, "profile rxe (device rxe0)", "/somewhere/trace.json");
        final Thread host = Thread.ofPlatform().start(() ->
        {
            try
            {
                ProgramRunner.run(options(fabric, asked, null), List.of("sh", "-c", "cat '" + go + "' >/dev/null"),
                    log, f -> hosting.countDown(), pb -> { });
            }
            catch (final Exception e)
            {
                failure.set(e);
                hosting.countDown();
            }
        });
        hosting.await();
        final AtomicReference<FabricOrigin> seen = new AtomicReference<>();
        final Path started = dir.resolve("started");
        assertThatThrownBy(() -> ProgramRunner.run(options(fabric, null, origin ->
        {
            seen.set(origin);
            return "not this one";
        }), List.of("touch", started.toString()), log, f -> fail("the joining run started a fabric of its own"),
            pb -> { }))
            .isInstanceOf(ProgramRunner.JoinRefused.class).hasMessage("not this one");
        assertThat(started).as("the refused run's program").doesNotExist();
        assertThat(seen.get()).isEqualTo(new FabricOrigin(ProcessHandle.current().pid(), asked.devices(),
            asked.trace(), FabricSettings.of(System.getenv())));
        Files.writeString(go, "go\n");
        host.join();
        assertThat(failure.get()).isNull();
        assertThat(FabricOrigin.fileOf(fabric)).as("the origin goes with the fabric").doesNotExist();
    }

    /** Skips the test where the library cannot be built (no gcc or headers); fails it under CI=true instead. */
    private static void requireLibrary()
    {
        try
        {
            ProgramRunner.libraryDir();
        }
        catch (final IOException e)
        {
            if ("true".equals(System.getenv("CI")))
            {
                fail(e.getMessage());
            }
            assumeTrue(false, e.getMessage());
        }
    }
}
