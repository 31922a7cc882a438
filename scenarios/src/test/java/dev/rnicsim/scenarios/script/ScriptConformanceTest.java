package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The conformance rules as a script shows them (the example of docs/conformance.md): a window type other than 1 or 2
 * is EINVAL (ib_uverbs_alloc_mw), a bind's LOCAL_WRITE is accepted and ignored (rdma-core tests/test_mr.py), rxe has
 * no zero-based MRs (RXE_ACCESS_SUPPORTED_MR) but takes FLUSH_GLOBAL access (RXE_DEVICE_CAP_FLAGS), FLUSH_PERSISTENT
 * only over persistent memory (rxe_mr_fill_pages_from_sgt: EINVAL on a simulated host), a PD with users cannot
 * be freed (EBUSY, ib_dealloc_pd_user), and a failed line changes nothing.
 */
class ScriptConformanceTest
{
    /** The example of docs/conformance.md, verbatim. */
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
        qp qp_a pd_a cq_a
        qp qp_b pd_b cq_b
        connect qp_a qp_b
        mmap src app_a 4K
        mmap dst app_b 64K
        reg mr_src pd_a src 4K
        reg mr_dst pd_b dst 64K access=local_write,mw_bind
        say there is no type 3 window
        mw odd pd_b type=3
        expect EINVAL
        mw win pd_b type=1
        say LOCAL_WRITE in a bind is accepted and ignored: the window grants remote rights only
        bind win qp_b mr_dst length=4K access=remote_write,local_write
        expect ok
        poll cq_b
        expect SUCCESS
        write src "through the window"
        post write qp_a sgl=mr_src:18 remote=dst rkey=win.rkey
        poll cq_a
        expect SUCCESS
        expect bytes dst "through the window"
        say rxe's MR access mask has no ZERO_BASED, but FLUSH_GLOBAL is there
        reg zb pd_b dst 4K access=local_write,zero_based
        expect EOPNOTSUPP
        reg fl pd_b dst 4K access=local_write,flush_global
        expect ok
        say FLUSH_PERSISTENT needs persistent memory, which this host has not
        reg fp pd_b dst 4K access=local_write,flush_persistent
        expect EINVAL
        say a PD that still has MRs, a window and a QP cannot be freed
        dealloc pd_b
        expect EBUSY
        expect bytes dst "through the window"
        """;

    /** The FLUSH and ATOMIC_WRITE example of docs/conformance.md, verbatim. */
    static final String PLACEMENT_EXAMPLE = """
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
        qp qp_a pd_a cq_a
        qp qp_b pd_b cq_b
        connect qp_a qp_b access=rw,rr,ra,fg,fp
        mmap src app_a 4K
        mmap log app_b 4K
        write src "commit record"
        reg mr_src pd_a src 4K
        reg mr_log pd_b log 4K access=lw,rw,fg
        post write qp_a sgl=mr_src:13 remote=mr_log
        post flush qp_a remote=mr_log length=13
        poll cq_a 2
        expect SUCCESS
        expect bytes log "commit record"
        say the flag after the data: 8 bytes stored in one piece
        post atomic_write qp_a remote=mr_log+64 value=1
        poll cq_a
        expect SUCCESS
        expect bytes log+64 hex:0100000000000000
        say the whole MR, whatever the address
        post flush qp_a remote=mr_log+4000 level=mr
        poll cq_a
        expect SUCCESS
        say a placement type the MR does not grant
        post flush qp_a remote=mr_log length=13 type=persistent
        poll cq_a
        expect REM_ACCESS_ERR
        """;

    @Test
    void theFlushAndAtomicWriteExampleShouldRunAndEveryExpectHold()
    {
        // ibv_wr_flush and ibv_wr_atomic_write on rxe (rdma-core tests/test_qpex.py test_qp_ex_rc_flush,
        // test_qp_ex_rc_flush_type_violate, test_qp_ex_rc_atomic_write).
        final ScriptRun r = ScriptRun.ok("placement.rsim", PLACEMENT_EXAMPLE);

        assertThat(r.out()).contains("FLUSH").contains("ATOMIC_WRITE").contains("IBV_WC_REM_ACCESS_ERR");
    }

    @Test
    void flushAndAtomicWriteShouldBeRefusedAtPostWithoutTheCapabilityAndOptionsCheckedBeforeTheRun()
    {
        // ConnectX-5 reports neither IB_UVERBS_DEVICE_FLUSH_* nor _ATOMIC_WRITE: EOPNOTSUPP, nothing queued.
        final ScriptRun r = ScriptRun.ok("placement-cx5.rsim", ScriptRun.TWO_CONNECTED_HOSTS + """
            mmap log app_b 4K
            reg mr_log pd_b log 4K access=lw,rw
            post atomic_write qp_a remote=mr_log value=7
            expect EOPNOTSUPP
            post flush qp_a remote=mr_log level=mr
            expect EOPNOTSUPP
            expect bytes log hex:0000000000000000
            """);
        assertThat(r.out()).contains("IB_UVERBS_DEVICE_ATOMIC_WRITE").contains("IB_UVERBS_DEVICE_FLUSH_GLOBAL");

        final ScriptException noValue = org.assertj.core.api.Assertions.catchThrowableOfType(ScriptException.class,
            () -> ScriptRun.run("bad.rsim", ScriptRun.TWO_CONNECTED_HOSTS + """
                post atomic_write qp_a remote=0x1000 rkey=1
                """));
        assertThat(noValue).hasMessageContaining("bad.rsim:14: post atomic_write needs value=N");
        final ScriptException wrongOption = org.assertj.core.api.Assertions.catchThrowableOfType(
            ScriptException.class, () -> ScriptRun.run("bad2.rsim", ScriptRun.TWO_CONNECTED_HOSTS + """
                post write qp_a remote=0x1000 rkey=1 level=mr
                """));
        assertThat(wrongOption).hasMessageContaining("option 'level' is for post flush");
    }

    @Test
    void theDocumentedExampleShouldRunAndEveryExpectHold()
    {
        final ScriptRun r = ScriptRun.ok("conformance.rsim", EXAMPLE);

        assertThat(r.out()).contains("EINVAL").contains("EOPNOTSUPP").contains("EBUSY");
        assertThat(r.out()).contains("RXE_ACCESS_SUPPORTED_MR");
    }

    @Test
    void nullMrDeviceMemoryAndRegMrExShouldWorkInScripts()
    {
        final ScriptRun r = ScriptRun.ok("new-verbs.rsim", ScriptRun.TWO_CONNECTED_HOSTS + """
            mmap src app_a 4K
            mmap dst app_b 4K
            write src "payload"
            reg mr_src pd_a src 4K
            regex mr_dst pd_b 4K addr=dst iova=0x70000000 access=lw,rw,rr
            expect ok
            regex bad pd_b 4K addr=dst dmabuf=3
            expect EINVAL
            post write qp_a sgl=mr_src:7 remote=0x70000000 rkey=mr_dst.rkey
            poll cq_a
            expect SUCCESS
            expect bytes dst "payload"
            nullmr nothing pd_a
            post write qp_a sgl=nothing:7 remote=0x70000000 rkey=mr_dst.rkey
            poll cq_a
            expect SUCCESS
            expect bytes dst hex:00000000000000
            dm onchip app_b 4K
            dmwrite onchip 0 "on the adapter.."
            regdm dmr pd_b onchip 0 4K access=lw,rw,rr,zb
            post read qp_a sgl=mr_src:16 remote=0 rkey=dmr.rkey
            poll cq_a
            expect SUCCESS
            expect bytes src "on the adapter.."
            dmread onchip 0 dst 16
            expect bytes dst "on the adapter.."
            close onchip
            expect EBUSY
            regdm notzb pd_b onchip 0 4K access=lw
            expect EINVAL
            dereg dmr
            expect ok
            dereg dmr
            expect EINVAL
            close onchip
            expect ok
            dereg nothing
            expect ok
            """);

        assertThat(r.out()).contains("ibv_alloc_null_mr").contains("ibv_reg_mr_ex comp_mask=0x3 (address mode)");
        assertThat(r.out()).contains("MR deregistered (ibv_dereg_mr): no host page was pinned for it");
    }

    @Test
    void deviceAndPortFieldsAndGidsShouldBeReadable()
    {
        final ScriptRun r = ScriptRun.ok("fields.rsim", """
            host alpha ram=64M
            device nic alpha profile=rxe
            open app nic
            expect nic.vendor_id == 0xffffff
            expect nic.max_mw == 524287
            expect nic.max_ah == 1048576
            expect nic.max_mcast_grp == 8192
            expect nic.max_total_mcast_qp_attach == 0x70000
            expect nic.max_srq_wr == 1048576
            expect nic.max_srq_sge == 27
            expect nic.gid_tbl_len == 1024
            expect nic.max_msg_sz == 0x80000000
            expect nic.max_dm_size == 0
            expect nic.active_mtu == 3
            queryport app 1
            expect ok
            queryport app 2
            expect EINVAL
            querygid app 1 0
            expect ok
            querygid app 1 5
            expect ENODATA
            """);

        assertThat(r.out()).contains("gid_tbl_len 1024").contains("GID fe80:")
            .as("the MTUs as ibv_devinfo prints them").contains("max_mtu 4096 (5), active_mtu 1024 (3)");
    }

    @Test
    void aDevicesNetdevSetsItsPortsActiveMtuAndItsIpv4GidsAndABadOneAddsNoDevice()
    {
        final ScriptRun r = ScriptRun.ok("netdev.rsim", """
            host alpha ram=64M
            device nic alpha profile=bnxt_re netdev_mtu=9000 ipv4=192.168.1.10
            device std alpha profile=rxe
            device bad alpha profile=rxe netdev_mtu=40
            expect EINVAL
            open app nic
            open app2 std
            expect nic.active_mtu == 5
            expect nic.max_mtu == 5
            expect std.active_mtu == 3
            querygid app 1 3
            expect ok
            querygid app 1 4
            expect ENODATA
            gidtable app
            expect ok
            querygid app2 1 1
            expect ENODATA
            """);

        assertThat(r.out()).contains("netdev MTU 9000 (active_mtu 4096), IPv4 192.168.1.10")
            .contains("GID 0000:0000:0000:0000:0000:ffff:c0a8:010a, RoCE v2")
            .contains("ibv_query_gid_table: 4 valid of")
            .contains("index 2 0000:0000:0000:0000:0000:ffff:c0a8:010a RoCE v1")
            .contains("ETH_MIN_MTU");
    }

    @Test
    void deallocShouldFreeAPdWithoutUsers()
    {
        final ScriptRun r = ScriptRun.ok("dealloc.rsim", """
            host alpha ram=64M
            device nic alpha profile=connectx5
            open app nic
            pd spare app
            dealloc spare
            expect ok
            """);

        assertThat(r.out()).contains("ibv_dealloc_pd: the PD is freed");
    }

    @Test
    void aWindowTypeOtherThanOneOrTwoShouldBeEinvalAndChangeNothing()
    {
        final ScriptRun r = ScriptRun.ok("t.rsim", """
            host alpha ram=64M
            device nic alpha profile=connectx5
            open app nic
            pd pd app
            mw w pd type=3
            expect EINVAL
            mw w pd type=0
            expect EINVAL
            dealloc pd
            expect ok
            """);

        assertThat(r.out()).contains("ib_uverbs_alloc_mw");
    }
}
