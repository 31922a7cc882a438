package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * src/test/c/field_widths.c through the library: what a C program's values wider than the QP context's fields get.
 * PSNs are masked to 24 bits on both drivers (core {@code _ib_modify_qp}); mlx5 masks retry_cnt, rnr_retry and
 * min_rnr_timer to 3, 3 and 5 bits and the ACK timeout to 5, rxe keeps the first three whole and refuses a timeout
 * above 31 ({@code rxe_qp_chk_attr}); a negative num_sge passes mlx5's signed compare and posts no SGE, while librxe's
 * unsigned one refuses it.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class FieldWidthsProgramTest
{
    @TempDir
    Path dir;

    @Test
    void mlx5MasksTheNarrowFieldsAndPostsANegativeSgeCountAsNone() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/field_widths.c", "field_widths");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("rtr: 0").contains("rts: 0")
                .contains("query: rq_psn=0x5 sq_psn=0x42 retry_cnt=1 rnr_retry=7 min_rnr_timer=8 max_dest_rd_atomic=4")
                .contains("timeout: 0, state RTS, timeout=14")
                .contains("depth 200: Invalid argument, max_dest_rd_atomic=0")
                .contains("dest-qpn: 0, high bits=0x0, low bits b's")
                .contains("depth 0: max_dest_rd_atomic=1")
                .contains("send-negative: posted, success, nothing written")
                .contains("recv-negative: posted");
        }
    }

    @Test
    void rxeKeepsTheRetryFieldsWholeRefusesTheTimeoutAndANegativeSgeCount() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/field_widths.c", "field_widths");
        try (Programs p = new Programs(dir, "rxe0", DeviceProfiles.rxe()))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("rtr: 0").contains("rts: 0")
                .contains("query: rq_psn=0x5 sq_psn=0x42 retry_cnt=9 rnr_retry=15 min_rnr_timer=40 max_dest_rd_atomic=4")
                .contains("timeout: Invalid argument, state not RTS, timeout=0")
                .contains("depth 200: 0, max_dest_rd_atomic=0")
                .contains("dest-qpn: 0, high bits=0x5a, low bits b's")
                .contains("depth 0: max_dest_rd_atomic=0")
                .contains("send-negative: Invalid argument")
                .contains("recv-negative: Invalid argument");
        }
    }
}
