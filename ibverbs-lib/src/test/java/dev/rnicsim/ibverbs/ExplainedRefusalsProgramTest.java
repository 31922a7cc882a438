package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * src/test/c/explained_refusals.c: the refusals the library answers itself ({@code ibv_create_cq} of a negative cqe,
 * {@code ibv_resize_cq} where the provider has no resize_cq) and the registrations past the end of user space are
 * explained under strict mode as the model's refusals are (the reason in the verbs' words, the C call site), and say
 * nothing without it; no run ever prints the wire's request numbers.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class ExplainedRefusalsProgramTest
{
    @TempDir
    Path dir;

    @Test
    void strictModeExplainsEachRefusalWithItsCallSite() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/explained_refusals.c", "explained_refusals");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run r = p.run(true, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("ok cq-negative", "ok mr-2^62: Invalid argument",
                "ok mr-2^63-1: Invalid argument", "resize answered 0");
            assertThat(r.err())
                .containsPattern("rnicsim strict: ibv_create_cq refused with EINVAL \\(errno 22\\): cqe=-1 is negative"
                    + ".+; fix: ask for 1 to max_cqe entries.*\n  ibv_create_cq called from \\S*explained_refusals\\(")
                .containsPattern("rnicsim strict: ibv_reg_mr refused with EINVAL \\(errno 22\\): "
                    + "npages=1125899906842624 > UINT_MAX \\(ib_umem_get\\).*\n  ibv_reg_mr called from "
                    + "\\S*explained_refusals\\(")
                .containsPattern("rnicsim strict: ibv_reg_mr refused with EINVAL \\(errno 22\\): "
                    + "npages=2251799813685248 > UINT_MAX")
                .doesNotContain("request ").doesNotContain("TASK_SIZE").doesNotContain("lengthBytes");
        }
    }

    @Test
    void aProviderWithoutResizeCqIsExplainedToo() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/explained_refusals.c", "explained_refusals");
        try (Programs p = new Programs(dir, "bnxt_re0", DeviceProfiles.byName("bnxt_re")))
        {
            final Programs.Run r = p.run(true, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("resize answered 95"); // EOPNOTSUPP
            assertThat(r.err()).containsPattern("rnicsim strict: ibv_resize_cq refused with EOPNOTSUPP \\(errno 95\\): "
                + "the provider of bnxt_re0 has no resize_cq.+fix: create the CQ with the depth it will need\n"
                + "  ibv_resize_cq called from \\S*explained_refusals\\(");
        }
    }

    @Test
    void withoutStrictModeTheRefusalsSayNothing() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/explained_refusals.c", "explained_refusals");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.err()).doesNotContain("rnicsim strict:").doesNotContain("request ")
                .doesNotContain("refused");
        }
    }
}
