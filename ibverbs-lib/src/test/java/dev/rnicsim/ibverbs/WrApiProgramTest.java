package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * src/test/c/wr_api.c, compiled against the distribution's {@code <infiniband/verbs.h>} and run on this module's
 * library: every function pointer of {@code struct ibv_qp_ex} answers (ibv_wr_post(3)); the window operations
 * (ibv_wr_bind_mw, ibv_wr_local_inv, ibv_wr_send_inv) work as their ibv_post_send work requests do, and the
 * operations the simulated device does not execute (TSO, ATOMIC_WRITE) make ibv_wr_complete answer EOPNOTSUPP
 * instead of calling through a null pointer.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class WrApiProgramTest
{
    @TempDir
    Path dir;

    @Test
    void everyExtendedPostFunctionAnswersAsARealStack() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/wr_api.c", "wr_api");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.out()).as(r.both()).doesNotContain("FAIL")
                .contains("ok wr-bind-mw: the bytes arrived through the window")
                .contains("ok wr-local-inv: completion remote access error")
                .contains("ok wr-send-inv: the receive completion carries IBV_WC_WITH_INV and the window's rkey")
                .contains("ok wr-tso: ibv_wr_send_tso: ibv_wr_complete answered EOPNOTSUPP")
                .contains("ok wr-atomic-write: ibv_wr_atomic_write: ibv_wr_complete answered EOPNOTSUPP")
                .contains("ok wr-ud-addr: completion success");
            assertThat(r.exitCode()).as(r.both()).isZero();
        }
    }
}
