package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * src/test/c/doorbell_ring.c on the library: a process's doorbells and requests reach the server through shared
 * memory ({@link DoorbellRing}, {@code src/main/c/ring.c}) unless {@code RNICSIM_DOORBELL_RING=0} or
 * {@code RNICSIM_RING=0}, and either way a ping-pong, one post longer than the whole ring and a parent and its forked
 * child ringing at once on their shared connection keep every doorbell's order and bytes.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class DoorbellRingProgramTest
{
    @TempDir
    Path dir;

    private Programs.Run run(final String... env) throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/doorbell_ring.c", "doorbell_ring");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final String[] command = new String[env.length + 2];
            command[0] = "env";
            System.arraycopy(env, 0, command, 1, env.length);
            command[command.length - 1] = exe.toString();
            final Programs.Run r = p.run(false, command);
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("ok pingpong: 2000 rounds").contains("ok long-chain: 4096 WRITEs")
                .contains("ok fork: parent and child rang 2000 SENDs each at once (child exit 0): 2000 and 2000")
                .doesNotContain("FAIL");
            return r;
        }
    }

    @Test
    void doorbellsComeThroughSharedMemoryInOrderAcrossAForkAndPastTheRingsLength() throws Exception
    {
        assertThat(run().out()).contains("doorbells: ring");
    }

    @Test
    void withTheDoorbellRingTurnedOffTheSocketCarriesTheDoorbells() throws Exception
    {
        assertThat(run("RNICSIM_DOORBELL_RING=0").out()).contains("doorbells: socket");
    }

    @Test
    void withTheRingsTurnedOffTheSocketCarriesEverything() throws Exception
    {
        assertThat(run("RNICSIM_RING=0").out()).contains("doorbells: socket");
    }
}
