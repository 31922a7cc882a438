package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * src/test/c/message_ring.c on the library: the server's messages reach a process through shared memory
 * ({@link MessageRing}, {@code src/main/c/ring.c}) unless {@code RNICSIM_RING=0}, and either way tens of thousands
 * of completions (several times the ring's length) keep their order, count and bytes, with and without a
 * completion channel's thread asleep on the socket.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class MessageRingProgramTest
{
    @TempDir
    Path dir;

    @Test
    void completionsComeThroughSharedMemoryInOrderWithAndWithoutACompletionChannel() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/message_ring.c", "message_ring");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("ring: mapped").contains("ok stream: 40000 completions")
                .contains("ok channel-event:").contains("ok channel-event-completion:")
                .contains("ok stream-with-channel: 40000 completions").contains("ok pingpong: 2000 rounds")
                .contains("ok idle-sleeps:").doesNotContain("FAIL");
        }
    }

    @Test
    void aPingPongWhosePollsSleepUntilTheServerKicksLosesNothing() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/message_ring.c", "message_ring");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            // after 1 µs of empty polls the program sleeps until the server writes into its ring, round after round
            final Programs.Run r = p.run(false, "env", "RNICSIM_POLL_SPIN_NS=1000", exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("ring: mapped").contains("ok pingpong: 2000 rounds")
                .contains("ok stream: 40000 completions").contains("ok idle-sleeps:").doesNotContain("FAIL");
        }
    }

    @Test
    void withPollSpinZeroAnIdlePollOnlyYieldsAndNeverSleeps() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/message_ring.c", "message_ring");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            // RNICSIM_POLL_SPIN_NS=0: the wait of a ping-pong never sleeps (20,000 empty polls, no voluntary switch)
            final Programs.Run r = p.run(false, "env", "RNICSIM_POLL_SPIN_NS=0", exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("ok pingpong: 2000 rounds").contains("ok idle-yields: 0 sleeps in 20000")
                .doesNotContain("FAIL");
        }
    }

    @Test
    void withTheRingTurnedOffTheSocketCarriesEverythingAsBefore() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/message_ring.c", "message_ring");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run r = p.run(false, "env", "RNICSIM_RING=0", exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("ring: none").contains("ok stream: 40000 completions")
                .contains("ok channel-event-completion:").contains("ok stream-with-channel: 40000 completions")
                .contains("ok pingpong: 2000 rounds").contains("ok idle-yields: 0 sleeps in 20000")
                .doesNotContain("FAIL");
        }
    }
}
