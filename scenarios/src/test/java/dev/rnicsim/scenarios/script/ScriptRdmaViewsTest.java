package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * {@code show counters} in the sysfs layout with the kernel's counter names, each moving with its event, and the
 * iproute2 {@code rdma} tool's views.
 */
class ScriptRdmaViewsTest
{
    /** Lines 1 to 17: two connected connectx5 hosts, a source MR on alpha and a writable target MR on beta. */
    private static final String TWO_HOSTS = ScriptRun.TWO_CONNECTED_HOSTS + """
        mmap src app_a 64K
        mmap dst app_b 64K
        reg mr_src pd_a src 64K
        reg target pd_b dst 64K access=local_write,remote_write
        """;

    private static ScriptRun ok(final String text)
    {
        return ScriptRun.ok("v.rsim", text);
    }

    private static long file(final String out, final String name)
    {
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^      " + name + " +(\\d+)$")
            .matcher(out);
        long last = -1;
        while (m.find())
        {
            last = Long.parseLong(m.group(1));
        }
        return last;
    }

    @Test
    void countersShouldBeTheSysfsFilesAndMoveWithTheirEvents()
    {
        final ScriptRun before = ok(TWO_HOSTS + "show counters nic_b\n");
        final ScriptRun after = ok(TWO_HOSTS + """
            post write qp_a sgl=mr_src:4K remote=target
            poll cq_a
            post write qp_a sgl=mr_src:8 remote=target+64K
            poll cq_a
            expect REM_ACCESS_ERR
            show counters nic_b
            show counters nic_a
            """);

        assertThat(before.out()).contains("/sys/class/infiniband/nic_b/ports/1/counters/")
            .contains("/sys/class/infiniband/nic_b/ports/1/hw_counters/");
        assertThat(file(before.out(), "rx_write_requests")).isZero();
        assertThat(file(before.out(), "resp_remote_access_errors")).isZero();
        final String b = after.out().substring(after.out().indexOf("show counters nic_b"),
            after.out().indexOf("show counters nic_a"));
        final String a = after.out().substring(after.out().indexOf("show counters nic_a"));
        assertThat(file(b, "rx_write_requests")).isEqualTo(1);
        assertThat(file(b, "port_rcv_data")).isEqualTo(1024);
        assertThat(file(b, "unicast_rcv_packets")).isEqualTo(1);
        assertThat(file(b, "resp_remote_access_errors")).isEqualTo(1);
        assertThat(file(a, "req_remote_access_errors")).isEqualTo(1);
        assertThat(file(a, "req_cqe_error")).isEqualTo(1);
        assertThat(file(a, "port_xmit_data")).isEqualTo(1024);
        assertThat(file(a, "out_of_sequence")).isZero();
    }

    @Test
    void rnrAndAckTimeoutCountersShouldMoveWhenTheirEventsHappen()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            qp qp_c pd_a cq_a
            qp qp_d pd_b cq_b
            connect qp_c qp_d rnr_retry=1
            post send qp_c sgl=mr_src:8
            poll cq_a
            expect RNR_RETRY_EXC_ERR
            close qp_b
            post write qp_a sgl=mr_src:8 remote=target
            poll cq_a
            expect RETRY_EXC_ERR
            show counters nic_a
            show counters nic_b
            """);

        final String a = r.out().substring(r.out().indexOf("show counters nic_a"), r.out().indexOf(
            "show counters nic_b"));
        final String b = r.out().substring(r.out().indexOf("show counters nic_b"));
        assertThat(file(a, "rnr_nak_retry_err")).isEqualTo(1);
        assertThat(file(a, "local_ack_timeout_err")).isEqualTo(1);
        assertThat(file(b, "out_of_buffer")).as("the first try and its one retry, each NAKed").isEqualTo(2);
    }

    @Test
    void rdmaResShouldListEachObjectInTheToolsFormat()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            show rdma res mr
            show rdma res pd nic_b
            show rdma res qp nic_a
            show rdma res cq
            show rdma statistic nic_b
            """);

        assertThat(r.out()).containsPattern("dev nic_a mrn 1 rkey 0x100 lkey 0x100 iova 0x[0-9a-f]+ mrlen 65536 pdn 1 "
            + "pid 1000 comm app_a").containsPattern("dev nic_b mrn 1 rkey 0x100 lkey 0x100 iova 0x[0-9a-f]+ mrlen "
            + "65536 pdn 1 pid 1000 comm app_b")
            .contains("dev nic_b pdn 1 users 2 pid 1000 comm app_b")
            .containsPattern("link nic_a/1 lqpn 17 rqpn 17 type RC state RTS sq-psn \\d+ pid 1000 comm app_a")
            .contains("dev nic_a cqn 1 cqe 127 users 1 pid 1000 comm app_a")
            .contains("link nic_b/1 rx_write_requests 0 rx_read_requests 0 rx_atomic_requests 0 out_of_buffer 0");
    }

    @Test
    void rdmaShowOfAnUnknownDeviceOrObjectShouldBeMalformedBeforeAnythingRuns()
    {
        assertThatThrownBy(() -> ScriptRun.run("v.rsim", TWO_HOSTS + "show rdma res mr qp_a\n"))
            .isInstanceOf(ScriptException.class).hasMessageContaining("v.rsim:18")
            .hasMessageContaining("'qp_a' is no device (it names a qp)");
        assertThatThrownBy(() -> ScriptRun.run("v.rsim", TWO_HOSTS + "show rdma res srq\n"))
            .isInstanceOf(ScriptException.class)
            .hasMessageContaining("expected 'show rdma res mr|pd|qp|cq [DEVICE]' or 'show rdma statistic [DEVICE]'");
    }
}
