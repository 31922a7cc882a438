package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * src/test/c/misuse.c, compiled with gcc against the distribution's {@code <infiniband/verbs.h>} and this module's
 * library: a stale rkey, a freed MR's lkey, an unregistered buffer, a made-up lkey, an unmapped range and a
 * forbidden access combination each get the errno or status a real stack gives, and --strict names the C call
 * sites.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class MisuseProgramTest
{
    @TempDir
    Path dir;

    private Path compile(final String source, final String name) throws Exception
    {
        return Programs.compile(dir, source, name);
    }

    @Test
    void everyMisuseGetsTheErrnoOrStatusOfARealStack() throws Exception
    {
        final Path exe = compile("src/test/c/misuse.c", "misuse");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("ok stale-rkey: completion remote access error")
                .contains("ok freed-mr-lkey: completion local protection error")
                .contains("ok unregistered: completion local protection error")
                .contains("ok wrong-lkey: completion local protection error")
                .contains("ok unmapped: EFAULT").contains("ok access-rule: EINVAL")
                .contains("ok write: the 64 bytes arrived").doesNotContain("FAIL");
            assertThat(r.err()).as("without --strict, no report").doesNotContain("rnicsim strict");
        }
    }

    @Test
    void strictModeNamesTheDeregistrationsCallSiteForAStaleRkey() throws Exception
    {
        final Path exe = compile("src/test/c/misuse.c", "misuse");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run r = p.run(true, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            final List<String> report = r.err().lines().toList();
            assertThat(report).anySatisfy(l -> assertThat(l)
                .contains("rnicsim strict: wr_id 7").contains("IBV_WC_REM_ACCESS_ERR"));
            assertThat(r.err()).containsPattern("deregistered at ibv_dereg_mr called from \\S*misuse\\(main\\+0x")
                .contains("fix: use the key of a live MR")
                .contains("IBV_WC_LOC_PROT_ERR")
                .contains("never held this key on this device");
        }
    }

    @Test
    void strictModeReportsAnMrLeakedAtExitWithItsRegistration() throws Exception
    {
        final Path src = dir.resolve("leak.c");
        Files.writeString(src, """
            #include <infiniband/verbs.h>
            #include <stdlib.h>
            int main(void)
            {
                struct ibv_device **l = ibv_get_device_list(NULL);
                struct ibv_context *ctx = ibv_open_device(l[0]);
                struct ibv_pd *pd = ibv_alloc_pd(ctx);
                void *buf = aligned_alloc(4096, 8192);
                return ibv_reg_mr(pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE) ? 0 : 1;   /* never deregistered */
            }
            """);
        final Path exe = compile(src.toString(), "leak");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run r = p.run(true, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.err()).contains("rnicsim strict: MR leaked at exit").contains("(8192 bytes)")
                .containsPattern("registered by ibv_reg_mr called from \\S*leak\\(main\\+0x");
        }
    }
}
