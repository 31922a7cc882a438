package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * src/test/c/strict_refusals.c under strict mode: the refusals of {@code ibv_post_srq_recv} (more SGEs than the SRQ's
 * max_sge, more receives than its max_wr) and of {@code ibv_wr_complete} (a gather list longer than a work request
 * holds, a post on a QP still in RESET) each print the reason and the C call site once, under the verb the program
 * called, as {@link BadInputProgramTest} shows for the other verbs.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class StrictRefusalsProgramTest
{
    @TempDir
    Path dir;

    @Test
    void strictModeSaysWhyPostSrqRecvAndWrCompleteWereRefusedWithTheirCallSites() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/strict_refusals.c", "strict_refusals");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run r = p.run(true, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("ok srq-sge").contains("ok srq-full").contains("ok wr-sge-list")
                .contains("ok wr-reset").doesNotContain("FAIL");
            assertThat(r.err())
                .containsPattern("rnicsim strict: ibv_post_srq_recv refused with EINVAL \\(errno 22\\): receive wr_id 5 "
                    + "has num_sge 2 > max_sge 1 of the SRQ; fix: .+\n  ibv_post_srq_recv called from \\S*strict_refusals\\(")
                .containsPattern("rnicsim strict: ibv_post_srq_recv refused with ENOMEM \\(errno 12\\): the SRQ is full: "
                    + "\\d+ receives posted and not yet consumed, max_wr \\d+; fix: .+\n  ibv_post_srq_recv called from "
                    + "\\S*strict_refusals\\(")
                .containsPattern("rnicsim strict: ibv_wr_complete refused with EINVAL \\(errno 22\\): ibv_wr_set_sge_list "
                    + "on QP 0x\\p{XDigit}+ was given 17 SGEs, above the 16 .+\n  ibv_wr_complete called from "
                    + "\\S*strict_refusals\\(")
                .containsPattern("rnicsim strict: ibv_wr_complete refused with EINVAL \\(errno 22\\): QP 0x\\p{XDigit}+ is "
                    + "in RESET: .+\n  ibv_wr_complete called from \\S*strict_refusals\\(");
            assertThat(r.err().split("ibv_post_srq_recv refused", -1)).as("once per refusal: two").hasSize(3);
            assertThat(r.err().split("ibv_wr_complete refused", -1)).as("once per refusal: two").hasSize(3);
            assertThat(r.err()).as("a refusal of ibv_wr_complete is reported under that verb")
                .doesNotContain("ibv_post_send refused");
        }
    }

    @Test
    void withoutStrictModeTheRefusalsSayNothing() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/strict_refusals.c", "strict_refusals");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.err()).doesNotContain("rnicsim strict:");
        }
    }
}
