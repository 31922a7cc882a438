package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * src/test/c/rdma_core_rules.c on this module's library: the rules of CQ creation, device and QP queries, QP
 * creation flags, send_ops_flags and SRQ sizes that rdma-core's own tests check, with the answers that differ by
 * provider compared with the profile's (mlx5, rxe and mlx4).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class RdmaCoreRulesProgramTest
{
    @TempDir
    Path dir;

    static Stream<Arguments> devices()
    {
        // EINVAL 22, EOPNOTSUPP 95; mlx4's create_qp_ex takes no send_ops_flags at all (rdma-core 44: ENOTSUP)
        return Stream.of(Arguments.of("mlx5_0", DeviceProfiles.connectx5(), 1, 0, 95, 0, 0),
            Arguments.of("rxe0", DeviceProfiles.rxe(), 0, 95, 0, 22, 0),
            Arguments.of("mlx4_0", DeviceProfiles.connectx3(), 0, 0, 95, 22, 95));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void eachRuleAnswersAsTheProfilesProvider(final String hcaId, final DeviceProfile profile, final int inOrderRts,
        final int blockMcastLb, final int atomicWrite, final int srqZeroWr, final int sendOpsSend) throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/rdma_core_rules.c", "rdma_core_rules");
        try (Programs p = new Programs(dir, hcaId, profile))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.out()).as(r.both()).doesNotContain("FAIL")
                .contains("ok cq-vector: comp_vector = num_comp_vectors: NULL with EINVAL")
                .contains("ok cq-vector: the last vector takes a CQ")
                .contains("ok cq-ex-vector: comp_vector = num_comp_vectors: NULL with EINVAL")
                .contains("ok port-cnt-ex: phys_port_cnt_ex equals phys_port_cnt")
                .contains("ok qkey: ibv_query_qp reads back Q_Key 0x123")
                .contains("ok create-flags: create_flags 0: a QP")
                .contains("ok create-flags: a bit no kernel knows: NULL with EINVAL")
                .contains("ok srq-full: max_wr + 1 receives: ENOMEM, bad_wr the one past max_wr")
                .contains("value num_comp_vectors: " + profile.numCompVectors() + "\n")
                .contains("value data_in_order_init: 0\n")
                .contains("value data_in_order_rts: " + inOrderRts + "\n")
                .contains("value block_mcast_lb: " + blockMcastLb + "\n")
                .contains("value send_ops_atomic_write: " + atomicWrite + "\n")
                .contains("value send_ops_tso: 95\n")
                .contains("value send_ops_send: " + sendOpsSend + "\n")
                .contains("value srq_zero_wr: " + srqZeroWr + "\n");
            assertThat(r.exitCode()).as(r.both()).isZero();
        }
    }
}
