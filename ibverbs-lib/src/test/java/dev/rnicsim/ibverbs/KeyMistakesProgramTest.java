package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * src/test/c/key_mistakes.c: the key mistakes users make, each answered with the status of a real stack, and under
 * --strict explained: the rule, the keys, the C call sites of the post and of the registration, and the fix.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class KeyMistakesProgramTest
{
    @TempDir
    Path dir;

    private Programs.Run run(final boolean strict) throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/key_mistakes.c", "key_mistakes");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run r = p.run(strict, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).doesNotContain("FAIL").contains("all cases as a real stack answers");
            return r;
        }
    }

    /** The report of the completion of wr_id {@code wrId} that follows the line naming {@code firstLine}. */
    private static String report(final Programs.Run r, final String firstLine)
    {
        final List<String> lines = r.err().lines().toList();
        final StringBuilder b = new StringBuilder();
        boolean in = false;
        for (final String l : lines)
        {
            if (l.startsWith("rnicsim strict:"))
            {
                in = l.contains(firstLine);
            }
            if (in)
            {
                b.append(l).append('\n');
            }
        }
        assertThat(b).as("a report with %s in\n%s", firstLine, r.err()).isNotEmpty();
        return b.toString();
    }

    @Test
    void withoutStrictEveryMistakeGetsTheStatusOfARealStackAndNoReport() throws Exception
    {
        final Programs.Run r = run(false);
        assertThat(r.out()).contains("ok madeup-lkey: completion local protection error")
            .contains("ok orphan-window: completion remote access error")
            .contains("ok invalidated-window: completion remote access error")
            .contains("ok local-inv-mr: completion local QP operation error")
            .contains("ok unmapped-target: completion success");
        assertThat(r.err()).doesNotContain("rnicsim strict");
    }

    @Test
    void strictReportsNameTheRuleTheKeysTheCallSitesAndTheFix() throws Exception
    {
        final Programs.Run r = run(true);

        assertThat(report(r, "IBV_WC_LOC_PROT_ERR"))
            .as("a made-up lkey: never issued, and the lkey of the MR that covers the address")
            .containsPattern("RDMA_WRITE wr_id 7 on QP 0x[0-9a-f]+ \\(ibv_post_send called from \\S*key_mistakes")
            .containsPattern("fix: 0x00abcd00 was never issued on sim:host/mlx5_0: use the lkey 0x[0-9a-f]{8} of the "
                + "MR of 4096 bytes at iova 0x[0-9a-f]+ \\(registered at ibv_reg_mr called from \\S*key_mistakes\\("
                + "main\\+0x");

        final String orphan = report(r, "IBV_WC_REM_ACCESS_ERR");
        assertThat(orphan).as("a window orphaned by its MR's deregistration")
            .containsPattern("names a type 2 window that is no longer bound: its MR was deregistered \\(invalidated "
                + "at ibv_dereg_mr called from \\S*key_mistakes\\(main\\+0x")
            .contains("fix: unbind or deallocate the windows of an MR before deregistering it")
            .doesNotContain("lacks [REMOTE_READ]");

        assertThat(report(r, "IBV_WC_LOC_QP_OP_ERR")).as("LOCAL_INV of an MR's key")
            .containsPattern("is the key of an ordinary MR \\(MR of 4096 bytes .*registered at ibv_reg_mr called "
                + "from \\S*key_mistakes\\(main\\+0x")
            .contains("  fix: revoke an MR's keys with ibv_dereg_mr");

        assertThat(report(r, "the device could not write the target of an RDMA WRITE"))
            .as("DMA into memory unmapped under a registered MR: the request, its post site, the key, the MR")
            .containsPattern("rnicsim strict: RDMA_WRITE wr_id 7 on QP 0x[0-9a-f]+ \\(posted by ibv_post_send "
                + "called from \\S*key_mistakes")
            .containsPattern("\\[0x[0-9a-f]+, 0x[0-9a-f]+\\) in process \\d+, under the MR of 8192 bytes at "
                + "0x[0-9a-f]+ \\(lkey 0x[0-9a-f]{8}, rkey 0x[0-9a-f]{8}\\) registered by ibv_reg_mr called from "
                + "\\S*key_mistakes\\(main\\+0x")
            .contains("(errno 14, EFAULT: no mapping there now)")
            .contains("fix: keep a registered buffer mapped until ibv_dereg_mr has returned");
    }
}
