package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.ProviderRule;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * src/test/c/qp_reset_query.c: what a C program's {@code ibv_query_qp} reports for a QP taken from RTS to ERR and then
 * RESET is the driver's answer, as the Java API's query gives it ({@link ProviderRule#RESET_KEEPS_QP_ATTRS}): 0 on
 * mlx4 and mlx5, the attributes given before on rxe. Before RESET (in ERR) every driver still reports them.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class QpResetQueryProgramTest
{
    @TempDir
    Path dir;

    private static String attrs(final String out, final String step)
    {
        return out.lines().filter(l -> l.startsWith(step + ": ")).findFirst().orElseThrow()
            .replaceAll("^.* attrs ", "");
    }

    @ParameterizedTest
    @CsvSource({"mlx5_0, connectx5", "mlx4_0, connectx3", "rxe0, rxe"})
    void theAttributesAfterResetAreTheDriversAnswer(final String hca, final String profileName) throws Exception
    {
        final DeviceProfile profile = DeviceProfiles.byName(profileName);
        final Path exe = Programs.compile(dir, "src/test/c/qp_reset_query.c", "qp_reset_query");
        try (Programs p = new Programs(dir, hca, profile))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            final String rts = attrs(r.out(), "rts");
            assertThat(rts).as("connected: port 1 and a peer").startsWith("port 1 ").doesNotContain("dest_qp_num 0x0");
            assertThat(attrs(r.out(), "err")).as("ERR keeps them everywhere").isEqualTo(rts);
            assertThat(r.out()).contains("reset: errno 0 state 0 ");
            if (profile.follows(ProviderRule.RESET_KEEPS_QP_ATTRS))
            {
                assertThat(attrs(r.out(), "reset")).as("rxe_qp_reset leaves qp->attr").isEqualTo(rts);
            }
            else
            {
                assertThat(attrs(r.out(), "reset")).isEqualTo("port 0 access 0x0 path_mtu 0 timeout 0 retry_cnt 0 "
                    + "rnr_retry 0 min_rnr_timer 0 dest_qp_num 0x0");
            }
        }
    }
}
