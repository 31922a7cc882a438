package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * src/test/c/small_messages.c on the library: the bytes of small SENDs and RDMA WRITEs travel with their doorbell and
 * come back to the receiving library before the receive's completion ({@link CarriedBytes}); they land exactly
 * where the receive's SGEs say, as the longer messages the server moves do, never where the model refused the
 * request, and an unmapped send or receive buffer neither crashes the program nor goes unreported in strict mode.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class SmallMessagesProgramTest
{
    @TempDir
    Path dir;

    @Test
    void smallMessagesLandWhereTheSgesSayAndOnlyWhereTheModelAllowed() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/small_messages.c", "small_messages");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("ok send-sges: the 100 bytes split 30 + 70")
                .contains("ok send-512: status success, byte_len 512, bytes as sent")
                .contains("ok send-513: status success, byte_len 513, bytes as sent")
                .contains("ok write-small: the 64 bytes arrived, and no more")
                .contains("ok send-iova: the 48 bytes at iova + 100 of the MR arrived")
                .contains("ok send-refused: completion local protection error")
                .contains("ok send-refused: the receive buffer is untouched")
                .contains("ok send-unmapped").contains("ok recv-unmapped").doesNotContain("FAIL");
            assertThat(r.err()).as("without --strict, no report").doesNotContain("rnicsim strict");
        }
    }

    @Test
    void strictModeReportsSmallMessagesToAndFromUnmappedBuffers() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/small_messages.c", "small_messages");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run r = p.run(true, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.err()).containsPattern("SEND wr_id 1 on QP 0x[0-9a-f]+ \\(posted by ibv_post_send called "
                + "from \\S*small_messages").contains("could not read the send buffer [0x")
                .contains("could not write the receive buffer of wr_id 2")
                .contains("(DMA into memory no longer mapped); fix: keep a registered buffer mapped until ibv_dereg_mr");
        }
    }
}
