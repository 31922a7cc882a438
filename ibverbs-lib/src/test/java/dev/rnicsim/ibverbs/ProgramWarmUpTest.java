package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.simnic.DeviceProfiles;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The program part of the fabric's warm-up ({@link ProgramWarmUp}): the library's training program on a private
 * fabric server, ended at once when the served fabric's first work request arrives.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ProgramWarmUpTest
{
    private static final FabricServer.DeviceSpec DEVICE = new FabricServer.DeviceSpec("mlx5_0",
        DeviceProfiles.connectx5());

    @Test
    void theTrainingProgramRunsToItsEndOnAPrivateFabric()
    {
        assumeTrue(ProgramWarmUp.available() || System.getenv("CI") != null, "the C library is not built here");

        final boolean done = ProgramWarmUp.run(DEVICE, List.of("256", "32", "64"), () -> false,
            System.nanoTime() + TimeUnit.SECONDS.toNanos(60));

        // the program exits 0 only when every WRITE, READ and SEND completed with IBV_WC_SUCCESS
        assertThat(done).isTrue();
    }

    @Test
    void aStopEndsTheProgramAtOnce()
    {
        assumeTrue(ProgramWarmUp.available() || System.getenv("CI") != null, "the C library is not built here");
        final AtomicInteger asked = new AtomicInteger();

        // a workload far longer than the test's time limit: only the stop can end it in time
        final boolean done = ProgramWarmUp.run(DEVICE, List.of("100000000", "0"), () -> asked.incrementAndGet() > 3,
            System.nanoTime() + TimeUnit.MINUTES.toNanos(10));

        assertThat(done).as("ended, not run to its end").isFalse();
        assertThat(asked.get()).isEqualTo(4);
    }

    @Test
    void aWarmUpStoppedBeforeItStartsStartsNoProgram()
    {
        assumeTrue(ProgramWarmUp.available() || System.getenv("CI") != null, "the C library is not built here");
        final AtomicInteger asked = new AtomicInteger();

        final boolean done = ProgramWarmUp.run(DEVICE, List.of("256", "32"), () -> asked.incrementAndGet() > 0,
            System.nanoTime() + TimeUnit.SECONDS.toNanos(60));

        assertThat(done).isFalse();
        assertThat(asked.get()).as("asked once, before anything started").isEqualTo(1);
    }
}
