package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.ProviderRule;
import dev.rnicsim.verbs.DeviceCap;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * src/test/c/xrc_post.c on this module's library: {@code ibv_post_recv} on either XRC QP answers ENOMEM (no receive
 * queue: mlx5 {@code mlx5_post_recv} meets {@code mlx5_wq_overflow} first), and {@code ibv_get_srq_num} on a basic
 * SRQ answers its number on mlx5 ({@code mlx5_get_srq_num}), EOPNOTSUPP on mlx4 ({@code mlx4_get_srq_num} numbers
 * XRC SRQs only) and where the provider has no {@code get_srq_num} (rxe; libibverbs' dummy_ops.c).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class XrcPostProgramTest
{
    @TempDir
    Path dir;

    static Stream<Arguments> devices()
    {
        return Stream.of(Arguments.of("mlx5_0", DeviceProfiles.connectx5()), Arguments.of("mlx4_0",
            DeviceProfiles.connectx3()), Arguments.of("rxe0", DeviceProfiles.rxe()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void xrcReceivesAndSrqNumbersAnswerAsTheDevicesProvider(final String hcaId, final DeviceProfile profile)
        throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/xrc_post.c", "xrc_post");
        try (Programs p = new Programs(dir, hcaId, profile))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.out()).as(r.both()).doesNotContain("FAIL");
            if (profile.attributes().has(DeviceCap.XRC))
            {
                assertThat(r.out()).as(r.both())
                    .contains("ok xrc-recv-queue: ibv_post_recv on an XRC_SEND QP: ENOMEM, bad_wr the first")
                    .contains("ok xrc-recv-queue: ibv_post_recv on an XRC_RECV QP: ENOMEM, bad_wr the first");
            }
            assertThat(r.out()).as(r.both()).contains(profile.follows(ProviderRule.SRQ_NUM_OF_ANY_SRQ)
                ? "ok srq-num: a basic SRQ on mlx5: 0, its own number"
                : profile.attributes().has(DeviceCap.XRC)
                ? "ok srq-num: a basic SRQ on a provider that numbers XRC SRQs only: EOPNOTSUPP, srq_num untouched"
                : "ok srq-num: a basic SRQ on a device without IBV_DEVICE_XRC: EOPNOTSUPP, srq_num untouched");
            assertThat(r.exitCode()).as(r.both()).isZero();
        }
    }
}
