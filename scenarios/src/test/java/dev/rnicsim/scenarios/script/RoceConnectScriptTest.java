package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * A script's {@code connect} between RoCE ports of different GID kinds: the source GID is the connection manager's
 * (RoCE v2 where the port has it), {@code sgid_index=} and {@code peer_sgid_index=} pick another entry, and
 * {@code modify ... sgid_index=} sets the address vector's.
 */
class RoceConnectScriptTest
{
    private static final String CX6DX_AND_RXE = """
        host alpha ram=64M
        host beta ram=64M
        device dx alpha profile=connectx6dx
        device soft beta profile=rxe
        open app_a dx
        open app_b soft
        pd pd_a app_a
        pd pd_b app_b
        cq cq_a app_a
        cq cq_b app_b
        qp qp_a pd_a cq_a
        qp qp_b pd_b cq_b
        mmap src app_a 64K
        mmap dst app_b 64K
        reg mr_src pd_a src 64K
        reg mr_dst pd_b dst 64K access=lw,rw
        """;

    @Test
    void connectLeavesFromTheRoceV2GidSoAV1AndV2PortReachesAV2OnlyPort()
    {
        final ScriptRun r = ScriptRun.ok("roce-connect.rsim", CX6DX_AND_RXE + """
            connect qp_a qp_b
            show qp qp_a
            show qp qp_b
            post write qp_a sgl=mr_src:64 remote=mr_dst
            poll cq_a
            expect SUCCESS
            """);
        assertThat(r.out()).doesNotContain("RoCE v1 (its sgid_index")
            .contains("path_mtu 1024 bytes, sgid_index 1 (RoCE v2), 0 receives posted")
            .contains("path_mtu 1024 bytes, sgid_index 0 (RoCE v2)");
        assertThat(ScriptRun.ok("ib-show.rsim", ScriptRun.TWO_CONNECTED_HOSTS + "show qp qp_a\n").out())
            .as("InfiniBand: no RoCE source GID").contains("path_mtu 4096 bytes, 0 receives posted");
        assertThat(ScriptRun.ok("closed-show.rsim", ScriptRun.TWO_CONNECTED_HOSTS + "close qp_a\nshow qp qp_a\n")
            .out()).as("a destroyed QP is shown without its path").contains("0 receives posted");
    }

    @Test
    void sgidIndexPicksTheSourceGidAndIbvModifyQpChecksIt()
    {
        final ScriptRun r = ScriptRun.ok("roce-sgid.rsim", CX6DX_AND_RXE + """
            connect qp_a qp_b sgid_index=0 peer_sgid_index=0 retry=1
            post write qp_a sgl=mr_src:64 remote=mr_dst
            poll cq_a
            expect RETRY_EXC_ERR
            qp qp_c pd_a cq_a
            qp qp_d pd_b cq_b
            connect qp_c qp_d peer_sgid_index=1
            expect ENODATA
            connect qp_c qp_d sgid_index=100000
            expect EINVAL
            expect qp_c.state == RESET
            connect qp_c qp_d sgid_index=1
            post write qp_c sgl=mr_src:64 remote=mr_dst
            poll cq_a
            expect SUCCESS
            qp qp_e pd_a cq_a
            modify qp_e init pkey_index=0 port=1 access=rw
            modify qp_e rtr dest=qp_b path_mtu=1024 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12 sgid_index=1
            queryqp qp_e
            """);
        assertThat(r.out()).contains("receives RoCE v2 only", "give both QPs the sgid_index of a RoCE v2 GID")
            .contains("sgid_index=1 names an empty entry of port 1's GID table")
            .contains("sgid_index=100000 is outside the GID table");
    }

    @Test
    void aRefusedConnectLeavesBothQpsAsTheyWere()
    {
        // each refusal comes from a transition of the second QP (its INIT from RTS, its RTR's source GID): checked
        // before the first QP moves, as ibv_modify_qp changes nothing when it fails
        final ScriptRun r = ScriptRun.ok("connect-atomic.rsim", CX6DX_AND_RXE + """
            qp qp_c pd_a cq_a
            qp qp_d pd_b cq_b
            connect qp_c qp_d
            qp qp_e pd_a cq_a
            connect qp_e qp_d
            expect EINVAL
            expect qp_e.state == RESET
            expect qp_d.state == RTS
            connect qp_a qp_b peer_sgid_index=1
            expect ENODATA
            expect qp_a.state == RESET
            connect qp_a qp_b
            expect qp_a.state == RTS
            """);
        assertThat(r.out()).contains("there is no transition RTS -> INIT").contains("nothing changed");
    }

    @Test
    void modifyWithoutSgidIndexLeavesFromEntryZeroAndSaysSoWhereThatIsRoceV1()
    {
        final ScriptRun r = ScriptRun.ok("roce-entry0.rsim", CX6DX_AND_RXE + """
            modify qp_a init pkey_index=0 port=1 access=rw
            modify qp_a rtr dest=qp_b path_mtu=1024 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12
            modify qp_b init pkey_index=0 port=1 access=rw
            modify qp_b rtr dest=qp_a path_mtu=1024 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12
            """);
        // a zeroed ibv_qp_attr's sgid_index 0 is taken as given; the ConnectX-6 Dx's entry 0 is RoCE v1
        assertThat(r.out()).contains("leaves from GID entry 0 (RoCE v1), as a zeroed ibv_qp_attr's sgid_index does")
            .contains("give sgid_index=1 for that");
        assertThat(r.out().split("leaves from GID entry 0", -1)).as("not on rxe, whose entry 0 is RoCE v2")
            .hasSize(2);
    }

    @Test
    void anAddressHandleTakesTheDestinationGidOfTheEntryDgidIndexNames()
    {
        final ScriptRun r = ScriptRun.ok("roce-dgid.rsim", CX6DX_AND_RXE + """
            ah to_b pd_a soft dgid_index=0 sgid_index=1
            """);
        assertThat(r.out()).contains("ibv_create_ah: GID fe80:");
        assertThatThrownBy(() -> ScriptRun.run("roce-dgid-bad.rsim", CX6DX_AND_RXE + """
            ah to_b pd_a soft dgid_index=5
            """)).isInstanceOf(ScriptException.class).hasMessageContaining("dgid_index=5: port 1 of soft has 1 valid "
            + "GID entries (0 to 0)");
    }

    @Test
    void sgidIndexWithoutAnAddressVectorIsAMalformedLine()
    {
        assertThatThrownBy(() -> ScriptRun.run("roce-noav.rsim", CX6DX_AND_RXE + """
            modify qp_a init pkey_index=0 port=1 access=rw sgid_index=1
            """)).isInstanceOf(ScriptException.class)
            .hasMessageContaining("sgid_index= is the address vector's source GID").hasMessageContaining("dest=QP");
        assertThatThrownBy(() -> ScriptRun.run("roce-self.rsim", CX6DX_AND_RXE + """
            connect qp_a qp_a peer_sgid_index=1
            """)).isInstanceOf(ScriptException.class).hasMessageContaining("connects to itself");
    }
}
