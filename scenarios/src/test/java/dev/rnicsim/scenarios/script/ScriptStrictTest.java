package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Strict mode in scripts: one staged hazard per warning kind, each warning naming its cause and the lines involved,
 * and the expects that assert them.
 */
class ScriptStrictTest
{
    /** Lines 1 to 19: two connected connectx5 hosts in strict mode, a source MR on alpha, a target buffer on beta. */
    private static final String TWO_HOSTS = "strict on\n" + ScriptRun.TWO_CONNECTED_HOSTS + """
        mmap src app_a 64K
        mmap dst app_b 64K
        reg mr_src pd_a src 64K
        write src "payload!"
        reg target pd_b dst 64K access=local_write,remote_write
        """;

    private static ScriptRun ok(final String text)
    {
        return ScriptRun.ok("s.rsim", text);
    }

    @Test
    void staleRkeyShouldWarnWithTheRegisteringAndDeregisteringLines()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            reg gone pd_b dst 4K access=local_write,remote_write
            post write qp_a sgl=mr_src:8 remote=gone
            poll cq_a
            dereg gone
            post write qp_a sgl=mr_src:8 remote=dst rkey=gone.rkey
            poll cq_a
            expect REM_ACCESS_ERR
            expect warning STALE_RKEY
            """);

        assertThat(r.out()).contains("warning STALE_RKEY: RDMA_WRITE wr_id 2 at s.rsim:24 (post write) used rkey 0x")
            .contains("(registered at s.rsim:20 (reg gone), deregistered at s.rsim:23 (dereg gone))")
            .contains("expect warning STALE_RKEY: held");
    }

    @Test
    void deregWhileAWriteIsInFlightShouldWarnWithTheRetiringLine()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            engine manual
            post write qp_a sgl=mr_src:64K remote=target
            progress nic_a 3
            dereg target
            poll cq_a
            expect REM_ACCESS_ERR
            expect warning KEY_RETIRED_IN_FLIGHT
            expect warning STALE_RKEY
            expect no warnings
            """);

        assertThat(r.out()).contains("warning KEY_RETIRED_IN_FLIGHT: ibv_dereg_mr at s.rsim:23 (dereg target) retired "
            + "rkey 0x").contains("while RDMA_WRITE wr_id 1 (posted at s.rsim:21 (post write)) of QP 0x")
            .contains("(3 of 16 packets placed)")
            .contains("expect warning KEY_RETIRED_IN_FLIGHT: held");
    }

    @Test
    void warningsOfARaceUnderTheManualEngineShouldNameThePostingLine()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            engine manual
            post write qp_a sgl=mr_src:64K remote=target
            progress nic_a 3
            dereg target
            poll cq_a
            expect REM_ACCESS_ERR
            """);

        assertThat(r.out()).contains("warning KEY_RETIRED_IN_FLIGHT: ibv_dereg_mr at s.rsim:23 (dereg target)")
            .contains("[lines: s.rsim:21 (post write), s.rsim:23 (dereg target)]")
            .contains("warning STALE_RKEY: RDMA_WRITE wr_id 1 posted at s.rsim:21 (post write) used rkey 0x")
            .contains("[lines: s.rsim:19 (reg target), s.rsim:23 (dereg target), s.rsim:21 (post write), "
                + "s.rsim:24 (poll cq_a)]");
    }

    @Test
    void mrWhoseGatherPlacedPacketsBeforeTheTargetWentAwayShouldNotWarnAsUnused()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            engine manual
            post write qp_a sgl=mr_src:64K remote=target
            progress nic_a 3
            dereg target
            poll cq_a
            expect REM_ACCESS_ERR
            dereg mr_src
            """);

        assertThat(r.out()).contains("(3 of 16 packets placed)").contains("dereg mr_src")
            .doesNotContain("UNUSED_MR");
    }

    @Test
    void mrsOfAMessageCutShortByAPeerGoneShouldNotWarnAsUnused()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            engine manual
            post write qp_a sgl=mr_src:64K remote=target
            progress nic_a 3
            close qp_b
            poll cq_a
            expect RETRY_EXC_ERR
            dereg mr_src
            """);

        assertThat(r.out()).contains("head at packet 3/16").contains("dereg mr_src").doesNotContain("UNUSED_MR");
    }

    @Test
    void staleLkeyShouldWarnWithTheLines()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            reg tmp pd_a src 4K
            post write qp_a sgl=tmp:8 remote=target
            poll cq_a
            dereg tmp
            post write qp_a sgl=tmp:8 remote=target
            poll cq_a
            expect LOC_PROT_ERR
            expect warning STALE_LKEY
            expect no warnings
            """);

        assertThat(r.out()).contains("warning STALE_LKEY: RDMA_WRITE wr_id 2 at s.rsim:24 (post write) sge[0] used "
            + "lkey").contains("(registered at s.rsim:20 (reg tmp), deregistered at s.rsim:23 (dereg tmp))");
    }

    @Test
    void recycledKeyReachingANewMrShouldWarnWithBothMrsLines()
    {
        final ScriptRun r = ok(TWO_HOSTS.replace("device nic_b beta profile=connectx5",
            "device nic_b beta profile=connectx5 max_mr=2") + """
            post write qp_a sgl=mr_src:8 remote=target
            reg first pd_b dst+4K 4K access=local_write,remote_write
            post write qp_a sgl=mr_src:8 remote=first
            poll cq_a
            dereg first
            reg second pd_b dst+8K 4K access=local_write,remote_write
            expect second.rkey == first.rkey
            post write qp_a sgl=mr_src:8 remote=dst+8K rkey=first.rkey
            poll cq_a
            expect SUCCESS
            expect warning STALE_KEY_REUSED
            """);

        assertThat(r.out()).contains("warning STALE_KEY_REUSED: RDMA_WRITE wr_id 3 at s.rsim:27 (post write) (remote) "
            + "used key 0x").contains("registered at s.rsim:25 (reg second); the same key named the MR")
            .contains("registered at s.rsim:21 (reg first) and deregistered at s.rsim:24 (dereg first)")
            .contains("RECYCLED keys");
    }

    @Test
    void dmaThroughAnMrWhoseMemoryWasUnmappedAndMappedAgainShouldWarnOfAStaleMapping()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            post write qp_a sgl=mr_src:8 remote=target
            munmap dst 64K
            mmap again app_b 64K
            expect again == dst
            touch again 64K write
            post write qp_a sgl=mr_src:8 remote=target
            poll cq_a
            expect SUCCESS
            expect warning STALE_MAPPING
            """);

        assertThat(r.out()).contains("warning STALE_MAPPING: RDMA_WRITE wr_id 2 at s.rsim:25 (post write) (remote, key"
            + " 0x").contains("by the MR registered at s.rsim:19 (reg target)").contains("now backed by frame");
    }

    @Test
    void mrLeftAtProcessExitShouldWarnAsALeakNamingTheRegistrationAndTheExit()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            post write qp_a sgl=mr_src:8 remote=target
            poll cq_a
            exit app_b
            expect warning LEAKED_MR
            """);

        assertThat(r.out()).contains("warning LEAKED_MR: MR lkey 0x").contains("(registered at s.rsim:19 (reg target)) "
            + "is still registered when its context on sim:beta/nic_b closes at s.rsim:22 (exit app_b)");
    }

    @Test
    void mrNoDmaReachedShouldWarnAsUnused()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            post write qp_a sgl=mr_src:8 remote=target
            reg idle pd_b dst 4K
            dereg idle
            expect warning UNUSED_MR
            expect no warnings
            """);

        assertThat(r.out()).contains("warning UNUSED_MR: MR lkey 0x").contains("registered at s.rsim:21 (reg idle) saw "
            + "no DMA before it was deregistered at s.rsim:22 (dereg idle)");
    }

    @Test
    void registrationsAboveTheRateShouldWarnOfTheHotPath()
    {
        final ScriptRun r = ok(TWO_HOSTS.replace("strict on", "strict on max_reg_rate=1000") + """
            post write qp_a sgl=mr_src:8 remote=target
            repeat 100
                reg req pd_a src 4K
                post write qp_a sgl=req:8 remote=target
                poll cq_a
                dereg req
            end
            expect warning HOT_REGISTRATION
            expect no warnings
            """);

        assertThat(r.out()).contains("warning HOT_REGISTRATION: 100 registrations on sim:alpha/nic_a in")
            .contains("> the 1000 allowed").contains("[lines: s.rsim:22 (reg req)]");
    }

    @Test
    void flagSeenBeforeItsRelaxedDataShouldWarn()
    {
        final ScriptRun r = ok("""
            strict on
            host alpha ram=256M
            host delta ram=256M
            device nic_a alpha profile=connectx5
            device nic_d delta profile=connectx4-forced-ro
            open app_a nic_a
            open app_d nic_d
            pd pd_a app_a
            pd pd_d app_d
            cq cq_a app_a
            cq cq_d app_d
            qp qp_a pd_a cq_a
            qp qp_d pd_d cq_d
            connect qp_a qp_d
            mmap src app_a 8K
            write src "0123456789abcdef" 4K
            write src+4K hex:0100000000000000
            reg mr_src pd_a src 8K
            mmap dst_d app_d 12K
            reg data_d pd_d dst_d 8K access=lw,rw,ro
            reg flag_d pd_d dst_d+8K 4K access=lw,rw
            repeat 8
                write dst_d hex:00 12K
                watch w nic_d flag=flag_d data=dst_d length=4K
                post write qp_a sgl=mr_src:4K remote=data_d unsignaled
                post write qp_a sgl=mr_src+4K:8 remote=flag_d
                poll cq_a
            end
            expect warning FLAG_BEFORE_DATA
            """);

        assertThat(r.out()).contains("warning FLAG_BEFORE_DATA: watch w at s.rsim:24 (watch w) saw its flag set after")
            .contains("read data that had not all landed (RDMA_WRITE wr_id");
    }

    @Test
    void expectNoWarningsShouldFailListingTheWarnings()
    {
        final ScriptRun r = ScriptRun.run("s.rsim", TWO_HOSTS + """
            reg idle pd_b dst 4K
            dereg idle
            expect no warnings
            """);

        assertThat(r.result().exitCode()).isEqualTo(1);
        assertThat(r.result().failure()).contains("expect no warnings").contains("expected no warnings, got 1:")
            .contains("UNUSED_MR");
    }

    @Test
    void expectWarningWithStrictModeOffShouldSaySo()
    {
        final ScriptRun r = ScriptRun.run("s.rsim", ScriptRun.TWO_CONNECTED_HOSTS + "expect warning LEAKED_MR\n");

        assertThat(r.result().exitCode()).isEqualTo(1);
        assertThat(r.result().failure()).contains("strict mode is off");
    }

    @Test
    void expectNoWarningsShouldListTenGroupsOfAlikeWarningsAndCountTheRest()
    {
        final StringBuilder text = new StringBuilder(TWO_HOSTS);
        for (int i = 0; i < 12; i++)
        {
            text.append("reg idle").append(i).append(" pd_b dst 4K\ndereg idle").append(i).append('\n');
        }
        final ScriptRun r = ScriptRun.run("s.rsim", text.append("expect no warnings\n").toString());

        assertThat(r.result().exitCode()).isEqualTo(1);
        assertThat(r.result().failure()).contains("expected no warnings, got 12:").contains("(reg idle9)")
            .doesNotContain("(reg idle10)").endsWith("\n      (and 2 more: UNUSED_MR)");
        assertThat(r.result().failure().split("\n      UNUSED_MR: ", -1)).hasSize(11);
    }

    @Test
    void expectNoWarningsWithStrictModeOffShouldSaySo()
    {
        final ScriptRun r = ScriptRun.run("s.rsim", ScriptRun.TWO_CONNECTED_HOSTS + "expect no warnings\n");

        assertThat(r.result().exitCode()).isEqualTo(1);
        assertThat(r.result().failure()).contains("expect no warnings").contains("strict mode is off")
            .contains("add 'strict on'");
    }

    @Test
    void expectWarningOfAKindNotSeenShouldNameTheKindsSeen()
    {
        final ScriptRun r = ScriptRun.run("s.rsim", TWO_HOSTS + """
            reg idle pd_b dst 4K
            dereg idle
            expect warning LEAKED_MR
            """);

        assertThat(r.result().exitCode()).isEqualTo(1);
        assertThat(r.result().failure()).contains("expected a warning LEAKED_MR, but the warnings not yet expected "
            + "are UNUSED_MR");
    }

    @Test
    void unknownWarningKindShouldBeMalformed()
    {
        assertThatThrownBy(() -> ScriptRun.run("s.rsim", "expect warning STALE\n")).isInstanceOf(ScriptException.class)
            .hasMessageContaining("s.rsim:1").hasMessageContaining("'STALE' is no warning kind")
            .hasMessageContaining("STALE_MAPPING");
    }

    @Test
    void maxRegRateOfZeroOrLessShouldBeMalformedWithOneMessage()
    {
        for (final String rate : new String[] {"0", "-5"})
        {
            assertThatThrownBy(() -> ScriptRun.run("s.rsim", "host h ram=64M\nstrict on max_reg_rate=" + rate + "\n"))
                .isInstanceOf(ScriptException.class).hasMessageContaining("s.rsim:2")
                .hasMessageContaining("max_reg_rate=" + rate + ": give 1 or more registrations per simulated second");
        }
    }

    @Test
    void optionsOnStrictOffShouldBeMalformed()
    {
        assertThatThrownBy(() -> ScriptRun.run("s.rsim", "host h ram=64M\nstrict off max_reg_rate=5\n"))
            .isInstanceOf(ScriptException.class).hasMessageContaining("s.rsim:2")
            .hasMessageContaining("'strict off' takes no options (max_reg_rate= is for 'strict on')");
    }

    @Test
    void showCountersOfAContextOrHostShouldBeMalformed()
    {
        assertThatThrownBy(() -> ScriptRun.run("s.rsim", ScriptRun.TWO_CONNECTED_HOSTS + "show counters app_a\n"))
            .isInstanceOf(ScriptException.class).hasMessageContaining("s.rsim:14")
            .hasMessageContaining("'show counters' shows a device, and 'app_a' names");
        assertThatThrownBy(() -> ScriptRun.run("s.rsim", ScriptRun.TWO_CONNECTED_HOSTS + "show counters alpha\n"))
            .isInstanceOf(ScriptException.class).hasMessageContaining("s.rsim:14")
            .hasMessageContaining("'alpha' names a host");
        assertThat(ok(ScriptRun.TWO_CONNECTED_HOSTS + "show counters nic_a\n").out()).contains("nic_a");
    }

    @Test
    void strictOptionOfTheRunnerShouldActAsStrictOnAndEndWithACount()
    {
        final StringWriter out = new StringWriter();
        new ScriptRunner(new PrintWriter(out, true), ScriptRunner.Detail.NARRATION).strict(true).run("s.rsim",
            ScriptRun.TWO_CONNECTED_HOSTS + "mmap b app_a 4K\nreg idle pd_a b 4K\n", Path.of("."));

        assertThat(out.toString()).contains("warning UNUSED_MR").contains("registered at s.rsim:15 (reg idle) saw no "
            + "DMA when the run ended").contains("strict: 1 warning, 0 expected");
    }

    @Test
    void strictOffShouldStopWarning()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            strict off
            reg idle pd_b dst 4K
            dereg idle
            expect no warnings
            """);

        assertThat(r.out()).doesNotContain("warning UNUSED_MR: MR lkey").contains("strict mode off");
    }
}
