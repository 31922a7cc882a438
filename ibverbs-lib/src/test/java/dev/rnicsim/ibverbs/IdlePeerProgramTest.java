package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * src/test/c/idle_peer.c as two programs on one fabric: one posts 30,000 receives and then calls no verb, as a program
 * that sleeps or is stopped in a debugger; the other sends 30,000 SENDs to it. More completions are due to the sleeper
 * than the fabric server can hand it at once, and the sender must finish all the same (the server never waits for one
 * program to make room), and the sleeper find every receive completed when it polls at last.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class IdlePeerProgramTest
{
    @TempDir
    Path dir;

    @Test
    void aProgramThatCallsNoVerbHoldsUpNoOtherProgramAndLosesNoCompletion() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/idle_peer.c", "idle_peer");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run[] runs = new Programs.Run[2];
            final Exception[] failed = new Exception[2];
            final Thread[] threads = new Thread[2];
            final String[] roles = {"recv", "send"};
            for (int i = 0; i < 2; i++)
            {
                final int k = i;
                threads[i] = Thread.ofPlatform().start(() ->
                {
                    try
                    {
                        runs[k] = p.run(false, exe.toString(), roles[k], dir.toString());
                    }
                    catch (final Exception e)
                    {
                        failed[k] = e;
                    }
                });
            }
            for (final Thread t : threads)
            {
                t.join();
            }
            assertThat(failed).containsOnlyNulls();
            assertThat(runs[1].exitCode()).as(runs[1].both()).isZero();
            assertThat(runs[1].out()).contains("ok send: every SEND completed successfully");
            assertThat(runs[0].exitCode()).as(runs[0].both()).isZero();
            assertThat(runs[0].out()).contains("ok recv: the sender finished while this program called no verb")
                .contains("ok recv: every receive completed, successfully, when polled at last");
        }
    }
}
