package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The script forms of the NIC engine: engine auto|manual, progress, queued posts, show inflight and show qp. */
class ScriptEngineTest
{
    private static final String BUFFERS = ScriptRun.TWO_CONNECTED_HOSTS + """
        mmap src app_a 64K
        mmap dst app_b 64K
        write src "hello"
        reg mr_src pd_a src 64K
        reg mr_dst pd_b dst 64K access=local_write,remote_write
        """;

    @Test
    void aManualEngineQueuesPostsAndProgressMovesPacketsOfOneDevice()
    {
        final ScriptRun r = ScriptRun.ok("e.rsim", BUFFERS + """
            engine manual
            post write qp_a sgl=mr_src:64K remote=mr_dst
            expect bytes dst hex:0000000000
            progress nic_b 3
            expect last.count == 0
            progress nic_a 3
            expect last.count == 3
            show inflight nic_a
            show qp qp_a
            expect bytes dst "hello"
            poll cq_a
            expect SUCCESS
            show inflight nic_a
            """);

        assertThat(r.out()).contains("queued wr_id=1 (RDMA_WRITE, 65536 bytes, 16 packets) on QP 0x11: 1 WQE on the "
            + "send queue");
        assertThat(r.out()).contains("moved 0 packets on sim:beta/nic_b; nothing in flight");
        assertThat(r.out()).contains("moved 3 packets on sim:alpha/nic_a; QP 0x11: 1 WQE (head at packet 3/16)");
        assertThat(r.out()).contains("wqe 0: wr_id=1 RDMA_WRITE 65536 bytes, in flight: 3/16 packets placed (12288 "
            + "bytes)");
        assertThat(r.out()).contains("sim:alpha/nic_a: nothing in flight");
    }

    @Test
    void theAutoEngineRunsEveryPostBeforeTheNextStatement()
    {
        final ScriptRun r = ScriptRun.ok("e.rsim", BUFFERS + """
            post write qp_a sgl=mr_src:64K remote=mr_dst unsignaled
            expect bytes dst "hello"
            engine manual
            engine auto
            """);

        assertThat(r.out()).contains("posted wr_id=1 (RDMA_WRITE, 65536 bytes)");
        assertThat(r.out()).contains("engine auto: the fabric works until nothing is left after every statement");
    }

    @Test
    void aFencedSendWaitsForTheReadBeforeItAndAnUnfencedOneDoesNot()
    {
        final ScriptRun r = ScriptRun.ok("e.rsim", BUFFERS + """
            engine manual
            mmap back app_a 64K
            mmap back2 app_a 64K
            mmap landing app_b 4K
            mmap landing2 app_b 4K
            write dst+60K "read me back"
            reg mr_back pd_a back 64K
            reg mr_back2 pd_a back2 64K
            reg mr_landing pd_b landing 4K
            reg mr_landing2 pd_b landing2 4K
            reg mr_rd pd_b dst 64K access=local_write,remote_read
            recv qp_b sgl=mr_landing:4K
            post read qp_a sgl=mr_back:64K remote=mr_rd
            post send qp_a sgl=mr_back+60K:4K
            poll cq_a 2
            expect bytes landing hex:000000000000000000000000
            recv qp_b sgl=mr_landing2:4K
            post read qp_a sgl=mr_back2:64K remote=mr_rd
            post send qp_a sgl=mr_back2+60K:4K fence
            poll cq_a 2
            expect bytes landing2 "read me back"
            """);

        assertThat(r.out()).contains("(SEND, 4096 bytes, 1 packet)");
    }

    @Test
    void aLocalWorkRequestOnAManualEngineSaysItIsQueued()
    {
        final ScriptRun r = ScriptRun.ok("e.rsim", BUFFERS + """
            engine manual
            mw win pd_b type=2
            reg mr_win pd_b dst 64K access=local_write,mw_bind
            bind win qp_b mr_win access=remote_write
            poll cq_b
            expect SUCCESS
            """);

        assertThat(r.out()).contains("queued (engine manual): it runs on progress or poll, 1 WQE on the send queue")
            .doesNotContain("waiting behind a send");
    }

    @Test
    void aNegativePacketCountIsRefusedWithTheRule()
    {
        assertThatThrownBy(() -> ScriptRun.run("e.rsim", BUFFERS + "progress nic_a 0-1\n"))
            .isInstanceOf(ScriptException.class).hasMessageContaining("progress moves N >= 0 packets, got -1");
    }
}
