package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The QP verbs of scripts: modify one transition at a time with the kernel's attribute-mask table
 * (drivers/infiniband/core/verbs.c ib_modify_qp_is_ok), queryqp, UD datagrams to an address handle with the GRH first
 * (IBA 9.8.3), UC without READ, and SRQs with their use counts (ib_destroy_srq_user, ib_dealloc_pd_user). The first
 * example is docs/conformance.md's queue-pair example, verbatim.
 */
class ScriptQpTest
{
    /** The queue-pair example of docs/conformance.md, verbatim. */
    static final String EXAMPLE = """
        host alpha ram=256M
        host beta ram=256M
        device nic_a alpha profile=rxe
        device nic_b beta profile=rxe
        open app_a nic_a
        open app_b nic_b
        pd pd_a app_a
        pd pd_b app_b
        cq cq_a app_a
        cq cq_b app_b
        say one transition at a time: each needs the attributes of the kernel's table
        qp rc_a pd_a cq_a
        qp rc_b pd_b cq_b
        modify rc_a rtr
        expect EINVAL
        modify rc_a init pkey_index=0 port=1 access=rw
        modify rc_a rtr dest=rc_b path_mtu=4096 rq_psn=0 max_dest_rd_atomic=1
        expect EINVAL
        modify rc_a rtr dest=rc_b path_mtu=4096 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12
        modify rc_a rts timeout=14 retry=7 rnr_retry=7 sq_psn=0 max_rd_atomic=1 qkey=5
        expect EINVAL
        modify rc_a rts timeout=14 retry=7 rnr_retry=7 sq_psn=0 max_rd_atomic=1
        expect rc_a.dest_qpn == rc_b.num
        modify rc_a reset
        modify rc_a err
        expect EINVAL
        expect rc_a.state == RESET
        say UD: a Q_Key, an address handle, and the GRH before the payload
        qp ud_a pd_a cq_a type=ud
        qp ud_b pd_b cq_b type=ud
        modify ud_a init pkey_index=0 port=1 qkey=0x11 access=rw
        expect EINVAL
        modify ud_a init pkey_index=0 port=1 qkey=0x11
        modify ud_b init pkey_index=0 port=1 qkey=0x11
        modify ud_a rtr
        modify ud_b rtr
        modify ud_a rts sq_psn=0
        modify ud_b rts sq_psn=0
        mmap src app_a 4K
        mmap dst app_b 4K
        write src "datagram"
        reg mr_src pd_a src 4K
        reg mr_dst pd_b dst 4K
        ah to_b pd_a nic_b
        recv ud_b sgl=mr_dst:4096
        post send ud_a sgl=mr_src:8 ah=to_b remote_qpn=ud_b.num qkey=0x11
        poll cq_b
        expect SUCCESS
        expect bytes dst+40 "datagram"
        poll cq_a
        expect SUCCESS
        post write ud_a sgl=mr_src:8 remote=dst rkey=mr_dst.rkey ah=to_b remote_qpn=ud_b.num qkey=0x11
        expect ok
        poll cq_a
        expect LOC_QP_OP_ERR
        expect ud_a.state == ERR
        say a shared receive queue feeds its QPs and keeps them, and its PD, busy
        srq shared pd_b wr=16 sge=1
        qp s1 pd_b cq_b srq=shared
        recv shared sgl=mr_dst:64
        expect shared.receives == 1
        close shared
        expect EBUSY
        dealloc pd_b
        expect EBUSY
        """;

    @Test
    void theDocumentedQueuePairExampleShouldRunAndEveryExpectHold()
    {
        final ScriptRun r = ScriptRun.ok("qp.rsim", EXAMPLE);

        assertThat(r.out()).contains("missing IBV_QP_MIN_RNR_TIMER").contains("does not take IBV_QP_QKEY")
            .contains("no transition RESET -> ERR").contains("does not take IBV_QP_ACCESS_FLAGS");
        assertThat(r.out()).contains("RESET -> INIT (attr_mask IBV_QP_STATE|IBV_QP_ACCESS_FLAGS|IBV_QP_PKEY_INDEX|"
            + "IBV_QP_PORT = 0x39)");
        assertThat(r.out()).contains("byte_len=48").contains("UD carries SEND and SEND_WITH_IMM only");
        assertThat(r.out()).contains("-> EBUSY: ibv_destroy_srq: 1 QP(s) still take their receives")
            .contains("1 SRQ(s)");
    }

    @Test
    void theRetryCountsShouldReadAsTheDriverKeepsThem()
    {
        final String script = """
            host alpha ram=64M
            device nic alpha profile=PROFILE
            open app nic
            pd pd0 app
            cq cq0 app
            qp qa pd0 cq0
            qp qb pd0 cq0
            connect qa qb retry=9 rnr_retry=15
            expect qa.retry_cnt == RETRY
            expect qa.rnr_retry == RNR
            """;
        ScriptRun.ok("mlx5.rsim", script.replace("PROFILE", "connectx5").replace("RETRY", "1").replace("RNR", "7"));
        ScriptRun.ok("rxe.rsim", script.replace("PROFILE", "rxe").replace("RETRY", "9").replace("RNR", "15"));
    }

    @Test
    void aDestQpnKeptWholeShouldReadAsTheUnsignedNumberQueryQpAnswers()
    {
        ScriptRun.ok("destqpn.rsim", """
            host alpha ram=64M
            device nic alpha profile=rxe
            open app nic
            pd pd0 app
            cq cq0 app
            qp qa pd0 cq0
            qp qb pd0 cq0
            modify qa init pkey_index=0 port=1 access=rw
            modify qa rtr dest=qb dest_qpn=0xffffffff path_mtu=1024 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12
            expect qa.dest_qpn == 0xffffffff
            expect qa.dest_qpn > 0
            """);
    }

    @Test
    void aWriteHeldByTimeoutZeroShouldSayItWaitsForAnAckNotForAReceive()
    {
        final ScriptRun r = ScriptRun.ok("timeout0.rsim", """
            host alpha ram=64M
            device nic alpha
            open app nic
            pd pd0 app
            cq cq0 app
            mmap buf app 64K
            reg mr0 pd0 buf 64K access=lw,rw
            qp qa pd0 cq0
            qp qb pd0 cq0
            modify qa init pkey_index=0 port=1 access=rw
            modify qa rtr dest=qb path_mtu=1024 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12
            modify qa rts sq_psn=0 timeout=0 retry=7 rnr_retry=7 max_rd_atomic=1
            post write qa sgl=mr0:4K remote=mr0+8K rkey=mr0.rkey
            expect qa.sends_waiting == 1
            """);

        assertThat(r.out()).contains("waiting: no acknowledgement comes and timeout 0 never gives up")
            .doesNotContain("no receive posted (RNR)");
    }

    @Test
    void ucShouldCarryWritesButNoReadsAndSqdShouldHoldSends()
    {
        final ScriptRun r = ScriptRun.ok("uc.rsim", """
            host alpha ram=64M
            host beta ram=64M
            device nic_a alpha profile=hfi1
            device nic_b beta profile=hfi1
            open app_a nic_a
            open app_b nic_b
            pd pd_a app_a
            pd pd_b app_b
            cq cq_a app_a
            cq cq_b app_b
            qp uc_a pd_a cq_a type=uc
            qp uc_b pd_b cq_b type=uc
            connect uc_a uc_b access=rw
            mmap src app_a 4K
            mmap dst app_b 4K
            write src "unreliable"
            reg mr_src pd_a src 4K
            reg mr_dst pd_b dst 4K access=lw,rw
            modify uc_a sqd
            post write uc_a sgl=mr_src:10 remote=mr_dst
            expect uc_a.sends_waiting == 1
            modify uc_a rts
            poll cq_a
            expect SUCCESS
            expect bytes dst "unreliable"
            queryqp uc_a
            expect uc_a.type == UC
            expect uc_a.path_mtu == 4096
            post read uc_a sgl=mr_src:10 remote=mr_dst
            expect EINVAL
            """);

        assertThat(r.out()).contains("UC QP 0x");
    }

    @Test
    void connectShouldGiveUcQpsRemoteWriteOnlyByDefault()
    {
        // UC carries no RDMA READ or atomic: connect's default qp_access_flags for UC is REMOTE_WRITE, RC's all three
        final ScriptRun r = ScriptRun.ok("uc-default.rsim", """
            host alpha ram=64M
            device nic_a alpha profile=connectx5
            open app_a nic_a
            pd pd_a app_a
            cq cq_a app_a
            qp uc_a pd_a cq_a type=uc
            qp uc_b pd_a cq_a type=uc
            connect uc_a uc_b
            qp rc_a pd_a cq_a
            qp rc_b pd_a cq_a
            connect rc_a rc_b
            """);

        assertThat(r.out()).contains("connect uc_a uc_b").containsPattern("connect uc_a uc_b\\R.*qp_access_flags "
            + "\\[REMOTE_WRITE\\],").containsPattern("connect rc_a rc_b\\R.*qp_access_flags \\[REMOTE_WRITE, "
            + "REMOTE_READ, REMOTE_ATOMIC\\]");
    }

    @Test
    void efaShouldCarryDatagramsOnUdQpsAndRefuseRcAndSrqs()
    {
        // efa_verbs.c efa_create_qp: UD and SRD only; EFA reports max_srq 0.
        final ScriptRun r = ScriptRun.ok("efa.rsim", """
            host alpha ram=64M
            host beta ram=64M
            device nic_a alpha profile=efa
            device nic_b beta profile=efa
            open app_a nic_a
            open app_b nic_b
            pd pd_a app_a
            pd pd_b app_b
            cq cq_a app_a
            cq cq_b app_b
            qp rc pd_a cq_a
            expect EOPNOTSUPP
            qp ud_a pd_a cq_a type=ud
            qp ud_b pd_b cq_b type=ud
            modify ud_a init pkey_index=0 port=1 qkey=7
            modify ud_b init pkey_index=0 port=1 qkey=7
            modify ud_a rtr
            modify ud_b rtr
            modify ud_a rts sq_psn=0
            modify ud_b rts sq_psn=0
            srq s pd_b
            expect EOPNOTSUPP
            mmap src app_a 4K
            mmap dst app_b 4K
            write src "over efa"
            reg mr_src pd_a src 4K
            reg mr_dst pd_b dst 4K
            ah to_b pd_a nic_b
            recv ud_b sgl=mr_dst:4096
            post send ud_a sgl=mr_src:8 ah=to_b remote_qpn=ud_b.num qkey=7
            poll cq_b
            expect SUCCESS
            expect bytes dst+40 "over efa"
            """);

        assertThat(r.out()).contains("byte_len=48").contains("max_srq=0");
    }
}
