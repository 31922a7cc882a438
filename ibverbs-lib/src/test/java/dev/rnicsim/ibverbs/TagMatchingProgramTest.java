package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.ConnectXProfiles;
import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * src/test/c/tag_matching.c, compiled against the distribution's {@code <infiniband/verbs.h>} and run on this
 * module's library: tm_caps, a TM SRQ, ibv_post_srq_ops and tagged SENDs (eager, unexpected, NO_TAG, rendezvous)
 * answer as mlx5 and the kernel do on a ConnectX-5; a ConnectX-4 (mlx5 without tag matching) and rxe report tm_caps
 * 0 and refuse the SRQ as their stacks do.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class TagMatchingProgramTest
{
    @TempDir
    Path dir;

    @Test
    void tagMatchingAnswersAsMlx5AndMovesTheBytes() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/tag_matching.c", "tag_matching");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.out()).as(r.both()).doesNotContain("FAIL")
                .contains("tm_caps flags 1 max_num_tags 127 max_ops 32768 max_sge 1 max_rndv_hdr_size 64")
                .contains("ok create-bad: a TM SRQ on a plain CQ: NULL, EINVAL")
                .contains("ok create-bad: max_num_tags above tm_caps.max_num_tags: NULL, EINVAL")
                .contains("ok ops-bad: ibv_post_srq_ops on a basic SRQ: EINVAL, bad_op the first")
                .contains("ok ops-bad: an unknown opcode: EINVAL, bad_op it")
                .contains("ok add: handles 0, 1, 2; IBV_WC_TM_ADD with each wr_id")
                .contains("ok ops-bad: a 4th tag on a list of 3: ENOMEM")
                .contains("ok eager: IBV_WC_TM_RECV, MATCH|DATA_VALID, recv_wr_id, tag 8 and app_ctx; the payload "
                    + "after the TMH in the tag's buffer")
                .contains("ok unexpected: IBV_WC_TM_RECV without MATCH on the ordinary receive; the whole message, "
                    + "TMH included")
                .contains("ok sync: IBV_WC_TM_SYNC with its wr_id")
                .contains("ok no-tag: IBV_WC_TM_NO_TAG on the ordinary receive")
                .contains("ok del: DEL of a listed tag: IBV_WC_SUCCESS; of a consumed one: IBV_WC_TM_ERR")
                .contains("ok eager-no-recv: with no ordinary receive posted, a SEND matching a listed tag completes: "
                    + "IBV_WC_TM_RECV, MATCH|DATA_VALID, the payload in the tag's buffer")
                .contains("ok rndv: MATCH with the tag, then DATA_VALID: the 1000 bytes the RVH names read into the "
                    + "tag's buffer")
                .contains("ok rndv: the sender's receive completes with a TMH of opcode IBV_TMH_FIN")
                .contains("ok rndv: a matched message takes no ordinary receive: the next NO_TAG message finds it")
                .contains("ok destroy: the TM SRQ once its QP is gone: 0");
            assertThat(r.exitCode()).as(r.both()).isZero();
        }
    }

    @Test
    void devicesWithoutTagMatchingReportZerosAndRefuseTheSrq() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/tag_matching.c", "tag_matching");
        try (Programs cx4 = new Programs(dir, "mlx5_0", ConnectXProfiles.connectx4());
            Programs rxe = new Programs(dir, "rxe0", DeviceProfiles.rxe()))
        {
            for (final Programs p : new Programs[] {cx4, rxe})
            {
                final Programs.Run r = p.run(false, exe.toString());
                assertThat(r.out()).as(r.both()).doesNotContain("FAIL")
                    .contains("tm_caps flags 0 max_num_tags 0 max_ops 0 max_sge 0 max_rndv_hdr_size 0")
                    .contains("ok caps: no tag matching: tm_caps 0, and ibv_create_srq_ex of type TM NULL");
                assertThat(r.exitCode()).as(r.both()).isZero();
            }
        }
    }
}
