package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.DriverProfiles;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * src/test/c/mr_kinds.c on this module's library: {@code ibv_alloc_null_mr} and {@code ibv_reg_dmabuf_mr} answer as
 * the device's rdma-core 44 provider and the kernel do. What each provider has is a fact of the distribution's
 * binaries, written here rather than read from the profiles: of the providers in /usr/lib/.../libibverbs only libmlx5
 * has alloc_null_mr, and only libmlx5 and libefa import {@code ibv_cmd_reg_dmabuf_mr} (so bnxt_re, whose kernel
 * driver registers dma-bufs, answers EOPNOTSUPP through rdma-core 44). A null MR's writes go nowhere and its reads
 * are zeros; a dma-buf fd is checked after the access flags, EBADF for no file and EINVAL for a file that is not a
 * dma-buf ({@code dma_buf_get}).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class MrKindsProgramTest
{
    @TempDir
    Path dir;

    static Stream<Arguments> devices()
    {
        return Stream.of(Arguments.of("mlx5_0", DeviceProfiles.connectx5(), "null,dmabuf"),
            Arguments.of("efa_0", DriverProfiles.efa(), "dmabuf"),
            Arguments.of("bnxt_re0", DriverProfiles.bnxtRe(), "-"),
            Arguments.of("rxe0", DeviceProfiles.rxe(), "-"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void nullAndDmabufMrsAnswerAsTheProvider(final String hcaId, final DeviceProfile profile, final String has)
        throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/mr_kinds.c", "mr_kinds");
        try (Programs p = new Programs(dir, hcaId, profile))
        {
            final Programs.Run r = p.run(false, exe.toString(), has);
            assertThat(r.out()).as(r.both()).doesNotContain("FAIL");
            if (has.contains("null"))
            {
                assertThat(r.out()).as(r.both())
                    .contains("ok null-mr: ibv_alloc_null_mr: an lkey, addr NULL, length SIZE_MAX")
                    .contains("ok null-mr-recv: a SEND received into an SGE of the null MR: IBV_WC_SUCCESS, byte_len "
                        + "256, the memory at the SGE's address untouched")
                    .contains("ok null-mr-send: a SEND whose SGE is of the null MR: the receiver gets 128 zeros")
                    .contains("ok null-mr: ibv_dereg_mr of the null MR: 0");
            }
            else
            {
                assertThat(r.out()).as(r.both())
                    .contains("ok null-mr: a provider without alloc_null_mr: NULL, EOPNOTSUPP");
            }
            if (has.contains("dmabuf"))
            {
                assertThat(r.out()).as(r.both())
                    .contains("ok dmabuf-bad-fd: fd -1: NULL, EBADF (dma_buf_get finds no file)")
                    .contains("ok dmabuf-not: the fd of /dev/null: NULL, EINVAL (not a dma-buf)")
                    .contains("ok dmabuf-access: REMOTE_WRITE without LOCAL_WRITE and fd -1: NULL, EINVAL (access is "
                        + "checked before the fd)");
            }
            else
            {
                assertThat(r.out()).as(r.both()).contains("ok dmabuf-bad-fd: a provider without reg_dmabuf_mr: NULL, "
                    + "EOPNOTSUPP before the fd is looked at");
            }
            assertThat(r.exitCode()).as(r.both()).isZero();
        }
    }
}
