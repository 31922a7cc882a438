package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.SimDevice;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fabric's JIT warm-up ({@link FabricWarmUp}): it writes on a fabric of its own, so the served fabric's clock
 * and counters stay as the programs leave them, and it stops at a program's first work request.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class FabricWarmUpTest
{
    @TempDir
    Path dir;

    @Test
    void theWarmUpWritesOnAFabricOfItsOwnAndLeavesTheServedOneUntouched() throws Exception
    {
        final PrintStream log = new PrintStream(System.err, true, StandardCharsets.UTF_8);
        try (FabricServer server = FabricServer.start(dir.resolve("f.sock"), List.of(new FabricServer.DeviceSpec(
            "mlx5_0", DeviceProfiles.connectx5())), log))
        {
            final List<java.util.Map<String, Long>> before = server.devices.stream().map(SimDevice::counters)
                .toList();
            if (server.warmUpThread != null)
            {
                server.warmUpThread.join();
            }
            else
            {
                server.warmUp.run(); // RNICSIM_FABRIC_WARMUP=0 in this environment: run it here
            }

            if (ProgramWarmUp.available())
            {
                // the training program on a private fabric of the warm-up's own, through the server's whole path
                assertThat(server.warmUp.programDone()).as("the training program ran to its end").isTrue();
            }
            else
            {
                assertThat(server.warmUp.writes()).isPositive();
                assertThat(server.warmUp.sends()).as("a small SEND after each WRITE")
                    .isEqualTo(server.warmUp.writes());
            }
            assertThat(server.connectionsEver()).as("the training program never connects to the served fabric")
                .isZero();
            assertThat(server.fabric().clock().nowNs()).isZero();
            assertThat(server.devices.stream().map(SimDevice::counters).toList()).isEqualTo(before);
        }
    }

    @Test
    void aWarmUpStoppedBeforeItStartsWritesNothing()
    {
        final FabricWarmUp warmUp = new FabricWarmUp(DeviceProfiles.connectx5());
        warmUp.stop();

        warmUp.run();

        assertThat(warmUp.writes()).isZero();
        assertThat(warmUp.sends()).isZero();
    }

    @Test
    void aWarmUpRunsToItsBudgetWhenNoProgramPosts()
    {
        final FabricWarmUp warmUp = new FabricWarmUp(DeviceProfiles.connectx5());

        final long start = System.nanoTime();
        warmUp.run();

        // all its writes, or as many as its wall-clock budget allowed on a busy machine
        assertThat(warmUp.writes() == FabricWarmUp.MAX_WRITES
            || System.nanoTime() - start >= FabricWarmUp.MAX_WALL_NS).isTrue();
        assertThat(warmUp.writes()).isPositive();
    }
}
