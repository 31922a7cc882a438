package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * The script forms of the asynchronous event queue (ibv_get_async_event(3)): {@code events CONTEXT}, {@code expect
 * event KIND [OBJECT]} and {@code expect no events}. Sources of each event: sim-nic AsyncEventRules and
 * AsyncEventQueue (IBA C9-222.1.1, o11-5.2.5, 11.6.3.1; rxe_resp.c, rxe_cq.c; mlx5 mlx5_ib_qp_event).
 */
class AsyncEventScriptTest
{
    /** Two QPs of one context on an SRQ-less loopback connection, and a registered buffer. */
    private static final String LOOPBACK = """
        host alpha ram=256M
        device nic alpha profile=%s
        open app nic
        pd pd0 app
        cq cq0 app
        qp qa pd0 cq0
        qp qb pd0 cq0
        mmap buf app 64K
        reg mr0 pd0 buf 64K access=lw,rw,rr
        """;

    @Test
    void shouldPrintAndCheckTheResponderAccessErrorOnMlx5()
    {
        // IBA C9-222.1.1: an RDMA WRITE without immediate data refused for its rkey is reported at the responder.
        final ScriptRun r = ScriptRun.ok("events.rnicsim", LOOPBACK.formatted("connectx5") + """
            connect qa qb
            post write qa sgl=mr0:64 remote=buf+4096 rkey=0x1234
            poll cq0
            expect REM_ACCESS_ERR
            events app
            expect event QP_ACCESS_ERR qb
            expect event IBV_EVENT_QP_ACCESS_ERR
            events app
            expect no events
            """);
        assertThat(r.out()).contains("IBV_EVENT_QP_ACCESS_ERR on QP qb (0x")
            .contains("no receive carries the error").contains("ibv_get_async_event: no event pending");
    }

    @Test
    void shouldFailAnExpectOfAnEventOnAnotherObjectOrOfAnEventNotRaised()
    {
        final ScriptRun wrongObject = ScriptRun.run("events.rnicsim", LOOPBACK.formatted("connectx5") + """
            connect qa qb
            post write qa sgl=mr0:64 remote=buf+4096 rkey=0x1234
            poll cq0
            expect REM_ACCESS_ERR
            events app
            expect event QP_ACCESS_ERR qa
            """);
        assertThat(wrongObject.result().exitCode()).isOne();
        assertThat(wrongObject.result().failure()).contains("expected IBV_EVENT_QP_ACCESS_ERR on qa")
            .contains("IBV_EVENT_QP_ACCESS_ERR on QP qb");
        // rxe raises no COMM_EST (rxe_resp.c); mlx5 does (MLX5_EVENT_TYPE_COMM_EST).
        final String rtr = """
            modify qb init pkey_index=0 port=1 access=rw
            modify qb rtr dest=qa path_mtu=4096 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12
            modify qa init pkey_index=0 port=1 access=rw
            modify qa rtr dest=qb path_mtu=4096 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12
            modify qa rts timeout=14 retry=7 rnr_retry=7 sq_psn=0 max_rd_atomic=1
            post write qa sgl=mr0:64 remote=mr0+4096
            events app
            """;
        ScriptRun.ok("comm.rnicsim", LOOPBACK.formatted("connectx5") + rtr + "expect event COMM_EST qb\n");
        final ScriptRun rxe = ScriptRun.run("comm.rnicsim", LOOPBACK.formatted("rxe") + rtr
            + "expect event COMM_EST\n");
        assertThat(rxe.result().failure()).contains("expected IBV_EVENT_COMM_EST, the last 'events' returned none");
    }

    @Test
    void shouldRefuseAnUnknownEventKindOrAnObjectThatIsNoQpCqOrSrqBeforeRunning()
    {
        assertThatThrownBy(() -> ScriptRun.run("bad.rnicsim", LOOPBACK.formatted("connectx5") + """
            events app
            expect event QP_ACCES_ERR
            """)).isInstanceOf(ScriptException.class).hasMessageContaining("got 'QP_ACCES_ERR'")
            .hasMessageContaining("QP_ACCESS_ERR");
        assertThatThrownBy(() -> ScriptRun.run("bad.rnicsim", LOOPBACK.formatted("connectx5") + """
            events app
            expect event CQ_ERR pd0
            """)).isInstanceOf(ScriptException.class)
            .hasMessageContaining("'pd0' is no QP, CQ or SRQ of this script");
    }

    @Test
    void shouldReportTheSrqLimitAndTheLastWqeOfAQpOnTheSrq()
    {
        // ibv_modify_srq(3) with rxe get_srq_wqe; IBA o11-5.2.5 with rxe flush_recv_queue.
        ScriptRun.ok("srq.rnicsim", LOOPBACK.formatted("rxe") + """
            srq shared pd0 wr=8 sge=1 limit=2
            qp qs pd0 cq0 srq=shared
            connect qa qs
            recv shared sgl=mr0:64
            recv shared sgl=mr0:64
            post send qa sgl=mr0+8192:8
            poll cq0 2
            events app
            expect event SRQ_LIMIT_REACHED shared
            modify qs err
            events app
            expect event QP_LAST_WQE_REACHED qs
            """);
    }
}
