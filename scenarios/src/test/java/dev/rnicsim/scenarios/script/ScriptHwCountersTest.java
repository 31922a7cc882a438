package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * {@code show counters}: each driver's own hw_counters names (mlx5's Q counters on mlx5 profiles, rxe's
 * rxe_hw_counters.c names on rxe), and each counter moving once per event as its driver counts it.
 */
class ScriptHwCountersTest
{
    private static String twoHosts(final String profile)
    {
        return """
            host alpha ram=256M
            host beta ram=256M
            device nic_a alpha profile=%1$s
            device nic_b beta profile=%1$s
            open app_a nic_a
            open app_b nic_b
            pd pd_a app_a
            pd pd_b app_b
            cq cq_a app_a
            cq cq_b app_b
            mmap src app_a 64K
            mmap dst app_b 64K
            reg mr_src pd_a src 64K
            reg target pd_b dst 64K access=local_write,remote_write
            qp qp_a pd_a cq_a
            qp qp_b pd_b cq_b
            """.formatted(profile);
    }

    /** The value of a counter file in the output of {@code show counters DEVICE}, last shown. */
    private static long file(final ScriptRun r, final String device, final String name)
    {
        final String out = r.out();
        final int at = out.lastIndexOf("show counters " + device);
        assertThat(at).as("show counters %s in%n%s", device, out).isNotNegative();
        final int end = out.indexOf("\n  ", out.indexOf("(no packet loss", at));
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^      " + name + " +(\\d+)$")
            .matcher(end < 0 ? out.substring(at) : out.substring(at, end));
        assertThat(m.find()).as("%s in the counters of %s:%n%s", name, device, out.substring(at)).isTrue();
        return Long.parseLong(m.group(1));
    }

    private static ScriptRun ok(final String text)
    {
        return ScriptRun.ok("c.rsim", text);
    }

    @Test
    void mlx5ProfilesShouldShowMlx5sQCountersAndRxeItsOwn()
    {
        final ScriptRun mlx5 = ok(twoHosts("connectx5") + "show counters nic_a\n");
        final ScriptRun rxe = ok(twoHosts("rxe") + "show counters nic_a\n");
        final ScriptRun mlx4 = ok(twoHosts("connectx3") + "show counters nic_a\n");
        final String mlx5Hw = mlx5.out().substring(mlx5.out().indexOf("hw_counters/"));
        final String rxeHw = rxe.out().substring(rxe.out().indexOf("hw_counters/"),
            rxe.out().indexOf("simulator counters"));
        assertThat(mlx5Hw).contains("rnr_nak_retry_err", "local_ack_timeout_err", "out_of_buffer",
            "req_rnr_retries_exceeded", "req_transport_retries_exceeded");
        assertThat(rxeHw).contains("sent_pkts", "rcvd_pkts", "duplicate_request", "out_of_seq_request",
            "rcvd_rnr_err", "send_rnr_err", "rcvd_seq_err", "ack_deferred", "retry_exceeded_err",
            "retry_rnr_exceeded_err", "completer_retry_err", "send_err", "link_downed", "rdma_sends", "rdma_recvs")
            .doesNotContain("rnr_nak_retry_err", "out_of_buffer", "local_ack_timeout_err");
        assertThat(rxeHw.indexOf("sent_pkts")).as("rxe_hw_counters.c order").isLessThan(rxeHw.indexOf("rdma_recvs"));
        assertThat(mlx4.out()).contains("the mlx4 driver's counters are not modelled");
    }

    @Test
    void anRnrExhaustedSendShouldCountEachNakOnceOnMlx5()
    {
        final ScriptRun r = ok(twoHosts("connectx5") + """
            connect qp_a qp_b rnr_retry=3
            post send qp_a sgl=mr_src:8
            poll cq_a
            expect RNR_RETRY_EXC_ERR
            show counters nic_a
            show counters nic_b
            """);
        // four RNR NAKs: three retried (rnr_nak_retry_err), the fourth ends the send (req_rnr_retries_exceeded)
        assertThat(file(r, "nic_a", "rnr_nak_retry_err")).isEqualTo(3);
        assertThat(file(r, "nic_a", "req_rnr_retries_exceeded")).isEqualTo(1);
        assertThat(file(r, "nic_a", "req_cqe_error")).isEqualTo(1);
        // the responder dropped the request four times for lack of a receive WQE
        assertThat(file(r, "nic_b", "out_of_buffer")).isEqualTo(4);
        assertThat(file(r, "nic_a", "local_ack_timeout_err")).isZero();
    }

    @Test
    void anRnrExhaustedSendShouldCountAsRxeCountsIt()
    {
        final ScriptRun r = ok(twoHosts("rxe") + """
            connect qp_a qp_b rnr_retry=2
            post send qp_a sgl=mr_src:8
            poll cq_a
            expect RNR_RETRY_EXC_ERR
            show counters nic_a
            show counters nic_b
            """);
        // rxe's completer counts every RNR NAK it receives (check_ack), then one retry_rnr_exceeded_err
        assertThat(file(r, "nic_a", "rcvd_rnr_err")).isEqualTo(3);
        assertThat(file(r, "nic_a", "retry_rnr_exceeded_err")).isEqualTo(1);
        assertThat(file(r, "nic_b", "send_rnr_err")).isEqualTo(3);
        assertThat(file(r, "nic_a", "rdma_sends")).as("the failed SEND completed in do_complete").isEqualTo(1);
        assertThat(file(r, "nic_b", "rdma_recvs")).isZero();
    }

    @Test
    void aPeerThatNeverAnswersShouldCountEachTimeoutOnce()
    {
        final String lines = """
            connect qp_a qp_b retry=4
            close qp_b
            post write qp_a sgl=mr_src:8 remote=target
            poll cq_a
            expect RETRY_EXC_ERR
            show counters nic_a
            """;
        final ScriptRun mlx5 = ok(twoHosts("connectx5") + lines);
        final ScriptRun rxe = ok(twoHosts("rxe") + lines);
        // retry_cnt 4: the ACK timer expires five times, four followed by a retransmission
        assertThat(file(mlx5, "nic_a", "local_ack_timeout_err")).isEqualTo(4);
        assertThat(file(mlx5, "nic_a", "req_transport_retries_exceeded")).isEqualTo(1);
        assertThat(file(mlx5, "nic_a", "rnr_nak_retry_err")).isZero();
        assertThat(file(rxe, "nic_a", "completer_retry_err")).isEqualTo(4);
        assertThat(file(rxe, "nic_a", "retry_exceeded_err")).isEqualTo(1);
        assertThat(file(rxe, "nic_a", "retry_rnr_exceeded_err")).isZero();
    }

    @Test
    void aRefusedRkeyShouldCountOnceOnEachSide()
    {
        final ScriptRun r = ok(twoHosts("connectx5") + """
            connect qp_a qp_b
            post write qp_a sgl=mr_src:8 remote=target+64K
            poll cq_a
            expect REM_ACCESS_ERR
            show counters nic_a
            show counters nic_b
            """);
        assertThat(file(r, "nic_a", "req_remote_access_errors")).isEqualTo(1);
        assertThat(file(r, "nic_b", "resp_remote_access_errors")).isEqualTo(1);
        assertThat(file(r, "nic_a", "req_cqe_error")).isEqualTo(1);
        assertThat(file(r, "nic_b", "rx_write_requests")).as("a refused write is served by no one").isZero();
        assertThat(file(r, "nic_a", "req_remote_invalid_request")).isZero();
    }

    @Test
    void sendsReceivesAndPacketsShouldCountOnRxe()
    {
        final ScriptRun r = ok(twoHosts("rxe") + """
            connect qp_a qp_b
            recv qp_b sgl=target:4K
            post send qp_a sgl=mr_src:4K
            poll cq_a
            expect SUCCESS
            poll cq_b
            expect SUCCESS
            post write qp_a sgl=mr_src:8 remote=target
            poll cq_a
            show counters nic_a
            show counters nic_b
            """);
        assertThat(file(r, "nic_a", "rdma_sends")).as("the WRITE is no SEND").isEqualTo(1);
        assertThat(file(r, "nic_b", "rdma_recvs")).isEqualTo(1);
        assertThat(file(r, "nic_a", "sent_pkts")).isEqualTo(file(r, "nic_b", "rcvd_pkts")).isPositive();
        assertThat(file(r, "nic_a", "rcvd_rnr_err")).isZero();
    }

    @Test
    void scriptExpressionsShouldReadEitherDriversNames()
    {
        ok(twoHosts("rxe") + """
            connect qp_a qp_b rnr_retry=0
            post send qp_a sgl=mr_src:8
            poll cq_a
            expect RNR_RETRY_EXC_ERR
            expect nic_a.retry_rnr_exceeded_err == 1
            expect nic_a.rcvd_rnr_err == 1
            expect nic_b.send_rnr_err == 1
            expect nic_a.req_rnr_retries_exceeded == 1
            """);
    }
}
