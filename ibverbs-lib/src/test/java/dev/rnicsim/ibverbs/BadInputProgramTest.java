package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * src/test/c/bad_input.c, compiled with gcc against the distribution's {@code <infiniband/verbs.h>} and this module's
 * library: an {@code ibv_modify_qp} whose mask lacks what the transition requires or holds what it does not take, a
 * port or P_Key index the device lacks, an unknown state or mask bit, an address handle through port 0, a receive on a
 * QP of an SRQ, more SGEs than the send queue takes and an access bit that is no flag each get the errno of the mlx5
 * stack (a bit of the optional range no device implements is taken, as the kernel takes it), leave the QP as it was,
 * and a correct RDMA WRITE on the same QP works after them.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class BadInputProgramTest
{
    @TempDir
    Path dir;

    @Test
    void everyBadCallGetsTheErrnoOfTheMlx5StackAndChangesNothing() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/bad_input.c", "bad_input");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("ok modify-mask: Invalid argument").contains("ok modify-port: Invalid argument")
                .contains("ok modify-pkey: Invalid argument").contains("ok modify-state: Invalid argument")
                .contains("ok modify-bits: Operation not supported").contains("ok modify-skip: Invalid argument")
                .contains("ok modify-rts-rts: Invalid argument").contains("ok modify-rts-rts: RTS -> RTS")
                .contains("ok ah-port: NULL").contains("ok recv-srq-qp: Cannot allocate memory")
                .contains("ok send-sge: Cannot allocate memory")
                .contains("ok reg-access: an optional access bit is taken").contains("ok reg-access: Invalid argument").contains("ok write: the 32 bytes arrived")
                .doesNotContain("FAIL");
            assertThat(r.err()).as("a refusal at post time, not after the verb returned")
                .doesNotContain("refused by the device after the verb returned");
        }
    }

    /**
     * Strict mode says why each refused verb was refused, once, with its C call site: the library's own post checks
     * (more SGEs than max_send_sge, a receive to a QP of an SRQ) and the model's refusals (a modify whose mask lacks
     * what the transition requires, an access bit that is no flag), each naming the rule, the objects and the fix.
     */
    @Test
    void strictModeSaysWhyEachRefusedVerbWasRefusedWithItsCallSite() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/bad_input.c", "bad_input");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run r = p.run(true, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).doesNotContain("FAIL");
            assertThat(r.err())
                .containsPattern("rnicsim strict: ibv_post_send refused with ENOMEM \\(errno 12\\): wr_id 7 has num_sge 3 "
                    + "> max_send_sge 2 that QP 0x\\p{XDigit}+ was granted; fix: split the gather list")
                .containsPattern("rnicsim strict: ibv_post_recv refused with ENOMEM \\(errno 12\\): QP 0x\\p{XDigit}+ takes "
                    + "its receives from an SRQ and has no receive queue of its own; fix: post receives to the SRQ")
                .containsPattern("\n  ibv_post_send called from \\S*bad_input\\(")
                .containsPattern("rnicsim strict: ibv_modify_qp refused with EINVAL \\(errno 22\\): .+\n  ibv_modify_qp "
                    + "called from \\S*bad_input\\(")
                .containsPattern("rnicsim strict: ibv_reg_mr refused with EINVAL \\(errno 22\\): .+\n  ibv_reg_mr called "
                    + "from \\S*bad_input\\(");
            assertThat(r.err().split("ibv_post_send refused", -1)).as("once per refusal: one post_send refused")
                .hasSize(2);
        }
    }

    @Test
    void anAddressHandleWithoutAGrhOnARoceDeviceIsEinvalAndOneWithItIsMade() throws Exception
    {
        final Path src = dir.resolve("roce_ah.c");
        Files.writeString(src, """
            #include <errno.h>
            #include <infiniband/verbs.h>
            #include <stdio.h>
            int main(void)
            {
                struct ibv_device **l = ibv_get_device_list(NULL);
                struct ibv_context *ctx = ibv_open_device(l[0]);
                struct ibv_pd *pd = ibv_alloc_pd(ctx);
                union ibv_gid gid;
                if (!pd || ibv_query_gid(ctx, 1, 0, &gid))
                    return 2;
                struct ibv_ah_attr a = {.dlid = 1, .port_num = 1};
                errno = 0;
                struct ibv_ah *bare = ibv_create_ah(pd, &a);
                printf("without a GRH: %s errno %d\\n", bare ? "made" : "NULL", errno);
                a.is_global = 1;
                a.grh.dgid = gid;
                a.grh.hop_limit = 1;
                struct ibv_ah *grh = ibv_create_ah(pd, &a);
                printf("with a GRH: %s\\n", grh ? "made" : "NULL");
                return 0;
            }
            """);
        final Path exe = Programs.compile(dir, src.toString(), "roce_ah");
        try (Programs p = new Programs(dir, "rxe0", DeviceProfiles.rxe()))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).as("rdma_check_ah_attr: a RoCE AV needs a GRH").contains("without a GRH: NULL errno 22")
                .contains("with a GRH: made");
        }
    }
}
