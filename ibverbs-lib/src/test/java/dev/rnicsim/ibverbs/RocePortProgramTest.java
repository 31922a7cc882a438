package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * src/test/c/roce_port.c on RoCE profiles whose netdev has an IPv4 address: the GID table's types and refusals
 * ({@code ibv_query_gid_ex}), an address vector without a GRH refused by {@code ibv_create_ah} and by an RC QP's
 * modify to RTR (EINVAL, {@code rdma_check_ah_attr}), a source GID index of an empty entry (ENODATA, {@code rdma_get_gid_attr}), a path_mtu above the port's
 * active_mtu as each driver answers it (hns refuses, rxe takes it), and a datagram sent from the IPv4-mapped GID,
 * whose receive holds an IPv4 header in bytes 20..39 that {@code ibv_init_ah_from_wc} reads back.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class RocePortProgramTest
{
    @TempDir
    Path dir;

    @Test
    void rxeAnswersTheAddressAndMtuCasesAsTheRealStack() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/roce_port.c", "roce_port");
        try (Programs p = new Programs(dir, "rxe0", DeviceProfiles.rxe()))
        {
            p.server().fabric().devices().getFirst().netdev().ipv4("10.1.16.61");
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.out()).as(r.both()).doesNotContain("FAIL")
                .contains("ok gid-types: an IPv4-mapped RoCE v2 entry")
                .contains("ok gid-bad: an index past gid_tbl_len: EINVAL").contains("ok gid-bad: an empty entry: ENODATA")
                .contains("ok ah-nogrh: no GRH on a RoCE port: EINVAL").contains("ok ah-sgid: sgid_index of an empty entry: ENODATA")
                .contains("ok rtr-nogrh: no GRH on a RoCE port: EINVAL, still INIT")
                .contains("ok pmtu: path_mtu 4096 above active_mtu 1024: taken")
                .contains("ok grh-ipv4: bytes 0..19 are zero")
                .contains("ok grh-ipv4: bytes 20..39 hold an IPv4 header")
                .contains("ok grh-ipv4: ibv_init_ah_from_wc: the IPv4-mapped GID and its index");
            assertThat(r.exitCode()).as(r.both()).isZero();
        }
    }

    @Test
    void hnsRefusesAPathMtuAboveTheActiveMtuAndBnxtReSendsIpv4FromItsV2Entry() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/roce_port.c", "roce_port");
        try (Programs p = new Programs(dir, "hns_0", DeviceProfiles.byName("hns")))
        {
            p.server().fabric().devices().getFirst().netdev().ipv4("192.168.1.10");
            final Programs.Run r = p.run(false, exe.toString(), "pmtu-refused");
            assertThat(r.out()).as(r.both()).doesNotContain("FAIL")
                .contains("ok pmtu: path_mtu 4096 above active_mtu 1024: EINVAL");
            assertThat(r.exitCode()).as(r.both()).isZero();
        }
        try (Programs p = new Programs(dir, "bnxt_re0", DeviceProfiles.byName("bnxt_re")))
        {
            p.server().fabric().devices().getFirst().netdev().ipv4("192.168.1.10");
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.out()).as(r.both()).doesNotContain("FAIL")
                .contains("ok grh-ipv4: ibv_init_ah_from_wc: the IPv4-mapped GID and its index");
            assertThat(r.exitCode()).as(r.both()).isZero();
        }
    }
}
