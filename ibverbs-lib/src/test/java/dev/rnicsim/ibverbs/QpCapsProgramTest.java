package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * src/test/c/qp_caps.c: a C program's {@code ibv_create_qp} gets back in {@code attr->cap} what the provider granted,
 * and {@code ibv_query_qp} reports the same (libmlx5 sizes its WQEs: 64 send work requests of 1 SGE or 64 inline bytes
 * take 320-byte WQEs, 102 of them, 124 inline bytes; rxe gives its send WQE the room of the larger of the SGEs and the
 * inline bytes and its queues 2^k - 1 slots; libmlx4 a 128-byte WQE with 17 spare, 111 work requests, 6 SGEs and 88
 * inline bytes; libirdma 4-quanta WQEs in a queue of 1024 quanta less 258 reserved, 191; siw, hns, bnxt_re and cxgb4
 * report as asked); {@code cq->cqe} is each driver's rounding of 100 (siw: 128, bnxt_re 128, cxgb4 110, irdma 100, the
 * others 127); a QP on an SRQ asked for more receive work requests than max_qp_wr is created on rxe, which does not
 * check them, and EINVAL elsewhere; {@code ibv_query_qp} of it answers 0 receive caps.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class QpCapsProgramTest
{
    @TempDir
    Path dir;

    @ParameterizedTest
    @CsvSource({
        "mlx5_0, connectx5, 127, send_wr 102 recv_wr 16 send_sge 1 recv_sge 1 inline 124, refused errno 22",
        "rxe0, rxe, 127, send_wr 127 recv_wr 15 send_sge 4 recv_sge 1 inline 64, created errno 0",
        "siw0, siw, 128, send_wr 64 recv_wr 10 send_sge 1 recv_sge 1 inline 64, refused errno 22",
        "hns_0, hns, 127, send_wr 64 recv_wr 10 send_sge 1 recv_sge 1 inline 64, refused errno 22",
        "mlx4_0, connectx3, 127, send_wr 111 recv_wr 16 send_sge 6 recv_sge 1 inline 88, refused errno 22",
        "irdma0, e810, 100, send_wr 191 recv_wr 15 send_sge 1 recv_sge 1 inline 64, no srq errno 95",
        "bnxt_re0, bnxt_re, 128, send_wr 64 recv_wr 10 send_sge 1 recv_sge 1 inline 64, refused errno 22",
        "cxgb4_0, cxgb4, 110, send_wr 64 recv_wr 10 send_sge 1 recv_sge 1 inline 64, refused errno 22"})
    void createQpWritesBackWhatTheProviderGranted(final String hca, final String profileName, final int cqe,
        final String caps, final String onSrq) throws Exception
    {
        final DeviceProfile profile = DeviceProfiles.byName(profileName);
        final Path exe = Programs.compile(dir, "src/test/c/qp_caps.c", "qp_caps");
        try (Programs p = new Programs(dir, hca, profile))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("cq: cqe " + cqe + "\n", "created: " + caps + "\n", "queried: " + caps + "\n",
                "srq qp: " + onSrq + "\n");
        }
    }

    @Test
    void queryQpOfAQpOnAnSrqAnswersNoReceiveCapsWhereCreationGaveThemBack() throws Exception
    {
        // rxe takes a QP on an SRQ with any receive caps and writes them back as given (rxe_qp_init_resp makes no
        // receive queue), but rxe_qp_to_init leaves them out of ibv_query_qp's zeroed answer: 0
        final Path exe = Programs.compile(dir, "src/test/c/qp_caps.c", "qp_caps");
        try (Programs p = new Programs(dir, "rxe0", DeviceProfiles.rxe()))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("srq qp: send_wr 7 recv_wr 1048577 send_sge 1 recv_sge 1 inline 16\n",
                "srq qp queried: send_wr 7 recv_wr 0 send_sge 1 recv_sge 0 inline 16\n");
        }
    }
}
