package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * src/test/c/open_qp.c on this module's library: {@code ibv_open_qp} opens an XRC target QP made by another context
 * in the XRC domain both opened through one file, the handles share one QP, and the wrong number, domain, type or
 * mask answer as the kernel's {@code ib_uverbs_open_qp} / {@code ib_open_qp} and libibverbs'
 * {@code ibv_cmd_open_qp} do (EINVAL; EOPNOTSUPP for a mask bit past IBV_QP_OPEN_ATTR_TYPE); the QP goes with the
 * last handle on it, made or opened ({@code __ib_destroy_shared_qp}); on rxe, whose provider has no open_qp,
 * EOPNOTSUPP.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class OpenQpProgramTest
{
    @TempDir
    Path dir;

    static Stream<Arguments> xrcDevices()
    {
        return Stream.of(Arguments.of("mlx5_0", DeviceProfiles.connectx5()), Arguments.of("mlx4_0",
            DeviceProfiles.connectx3()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("xrcDevices")
    void anXrcTargetQpOpensByNumberInItsDomain(final String hcaId, final DeviceProfile profile) throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/open_qp.c", "open_qp");
        try (Programs p = new Programs(dir, hcaId, profile))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.out()).as(r.both()).doesNotContain("FAIL")
                .contains("ok open: the target QP's number in the domain both contexts opened through one file: a QP "
                    + "of that number, XRC_RECV, on the opening context")
                .contains("ok shared: INIT through the opened handle: the maker's handle queries INIT (one QP)")
                .contains("ok bad-num: a number that names no target QP of the domain: NULL, EINVAL")
                .contains("ok bad-xrcd: the target QP's number in another domain (opened without a file): NULL, "
                    + "EINVAL")
                .contains("ok bad-type: qp_type IBV_QPT_RC: NULL, EINVAL")
                .contains("ok bad-mask: no IBV_QP_OPEN_ATTR_TYPE: NULL, EINVAL")
                .contains("ok bad-mask: a bit past IBV_QP_OPEN_ATTR_TYPE: NULL, EOPNOTSUPP")
                .contains("ok close: ibv_destroy_qp on the opened handle: 0, and the maker's QP lives on until it "
                    + "destroys it")
                .contains("ok maker-first: the maker destroys its handle first: the QP lives on for the opened handles "
                    + "(queried, opened again), and goes with the last one (then EINVAL)");
            assertThat(r.exitCode()).as(r.both()).isZero();
        }
    }

    @Test
    void aDeviceWithoutXrcAnswersEopnotsupp() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/open_qp.c", "open_qp");
        try (Programs p = new Programs(dir, "rxe0", DeviceProfiles.rxe()))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.out()).as(r.both()).doesNotContain("FAIL")
                .contains("ok no-xrc: a device without IBV_DEVICE_XRC: NULL, EOPNOTSUPP (its provider has no open_qp)");
            assertThat(r.exitCode()).as(r.both()).isZero();
        }
    }
}
