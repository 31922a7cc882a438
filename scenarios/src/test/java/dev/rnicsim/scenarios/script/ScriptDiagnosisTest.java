package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Every failed completion a script polls is printed with its mlx5 syndrome (vendor_err) and a diagnosis naming the
 * failed check, the key's MPT index and variant, what the index holds and since which line, and the range or rights
 * asked against those registered: one staged failure per check.
 */
class ScriptDiagnosisTest
{
    /** Lines 1 to 17: two connected connectx5 hosts, a source MR on alpha and a 64 KiB target buffer on beta. */
    private static final String TWO_HOSTS = ScriptRun.TWO_CONNECTED_HOSTS + """
        mmap src app_a 64K
        mmap dst app_b 64K
        reg mr_src pd_a src 64K
        write src "payload!"
        """;

    private static ScriptRun ok(final String text)
    {
        return ScriptRun.ok("d.rsim", text);
    }

    @Test
    void deregisteredRkeyShouldNameTheEmptyIndexAndTheLinesThatRegisteredAndDeregisteredIt()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            reg gone pd_b dst 64K access=local_write,remote_write
            dereg gone
            post write qp_a sgl=mr_src:8 remote=dst rkey=gone.rkey
            poll cq_a
            expect REM_ACCESS_ERR
            """);

        assertThat(r.out()).contains("wc wr_id=1 IBV_WC_REM_ACCESS_ERR vendor_err=0x13")
            .contains("RDMA_WRITE wr_id 1 on QP 0x").contains("(d.rsim:20 (post write))")
            .contains("which holds nothing now: the key's MR was registered at d.rsim:18 (reg gone), then "
                + "deregistered at d.rsim:19 (dereg gone)")
            .contains("syndrome MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR (0x13), check KEY_INDEX");
    }

    @Test
    void failureUnderTheManualEngineShouldNameTheLineThatPostedTheWorkRequestNotThePoll()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            engine manual
            reg target pd_b dst 64K access=local_write,remote_write
            post write qp_a sgl=mr_src:64K remote=target
            progress nic_a 3
            dereg target
            poll cq_a
            expect REM_ACCESS_ERR
            """);

        assertThat(r.out()).contains("why: RDMA_WRITE wr_id 1 on QP 0x").contains("(d.rsim:20 (post write)): rkey")
            .doesNotContain("(d.rsim:23 (poll cq_a))");
    }

    @Test
    void staleVariantShouldNameWhatTheIndexHoldsNowAndSinceWhichLine()
    {
        final ScriptRun r = ok("""
            host alpha ram=256M
            host beta ram=256M
            device nic_a alpha profile=connectx3
            device nic_b beta profile=connectx3 max_mr=2 keys=generation
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
            mmap dst app_b 4K
            reg mr_src pd_a src 4K
            reg first pd_b dst 4K access=local_write,remote_write
            dereg first
            reg second pd_b dst 4K access=local_write,remote_write
            post write qp_a sgl=mr_src:8 remote=dst rkey=first.rkey
            poll cq_a
            expect REM_ACCESS_ERR
            """);

        assertThat(r.out()).contains("check KEY_VARIANT")
            .contains("is stale: MPT index 0x1 now holds key 0x00000101 (MR registered at d.rsim:19 (reg second))")
            .contains("this key's MR was registered at d.rsim:17 (reg first), then deregistered at d.rsim:18 "
                + "(dereg first)")
            .contains("key 0x00000100: MPT index 0x1, variant 0x0 (8 variant bits)")
            .contains("index 0x1 holds now: key 0x00000101");
    }

    @Test
    void keyOfAnotherPdShouldNameBothPds()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            pd other app_b
            reg elsewhere other dst 64K access=local_write,remote_write
            post write qp_a sgl=mr_src:8 remote=dst rkey=elsewhere.rkey
            poll cq_a
            expect REM_ACCESS_ERR
            """);

        assertThat(r.out()).contains("check PD").containsPattern("belongs to PD \\d+ \\(its MR registered at "
            + "d.rsim:\\d+ \\(reg elsewhere\\)\\) but the QP's PD is \\d+")
            .contains("(d.rsim:20 (post write))");
    }

    @Test
    void missingRightShouldNameTheRightsAskedAndGranted()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            reg readonly pd_b dst 64K access=local_write,remote_read
            post write qp_a sgl=mr_src:8 remote=readonly
            poll cq_a
            expect REM_ACCESS_ERR
            """);

        assertThat(r.out()).contains("check RIGHTS").contains("lacks [REMOTE_WRITE]: asked [REMOTE_WRITE], granted "
            + "[LOCAL_WRITE, REMOTE_READ]").contains("(d.rsim:19 (post write))");
    }

    @Test
    void accessPastTheEndShouldNameTheRangeAskedAndTheRangeRegistered()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            reg small pd_b dst 4K access=local_write,remote_write
            post write qp_a sgl=mr_src:8 remote=dst+4092 rkey=small.rkey
            poll cq_a
            expect REM_ACCESS_ERR
            """);

        assertThat(r.out()).contains("check RANGE").containsPattern("asked \\[0x[0-9a-f]+ffc, 0x[0-9a-f]+004\\) "
            + "\\(8 bytes\\), registered \\[0x[0-9a-f]+000, 0x[0-9a-f]+000\\) \\(4096 bytes\\)");
    }

    @Test
    void locallyInvalidatedFastRegistrationMrShouldNameItsStateAndTheInvalidatingLine()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            fastmr f pd_b 16
            map f dst 16K
            post reg_mr qp_b mr=f access=local_write,remote_write
            poll cq_b
            expect SUCCESS
            post local_inv qp_b rkey=f.rkey
            poll cq_b
            expect SUCCESS
            post write qp_a sgl=mr_src:8 remote=dst rkey=f.rkey
            poll cq_a
            expect REM_ACCESS_ERR
            """);

        assertThat(r.out()).contains("check STATE").contains("names an entry in state INVALID, not VALID")
            .contains("invalidated at d.rsim:23 (post local_inv)");
    }

    @Test
    void typeTwoWindowUsedThroughAnotherQpShouldNameTheOwner()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            reg target pd_b dst 64K access=local_write,remote_write,mw_bind
            mw w pd_b type=2
            bind w qp_b target access=remote_write
            poll cq_b
            expect SUCCESS
            qp qp_c pd_a cq_a
            qp qp_d pd_b cq_b
            connect qp_c qp_d
            post write qp_c sgl=mr_src:8 remote=dst rkey=w.rkey
            poll cq_a
            expect REM_ACCESS_ERR
            """);

        assertThat(r.out()).contains("check WINDOW_QP").contains("names a type 2 window bound for another QP")
            .contains("owned by QP 0x").contains("bound at d.rsim:20 (bind w)");
    }

    @Test
    void lostLocalKeyShouldNameTheSgeAndTheLine()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            reg target pd_b dst 64K access=local_write,remote_write
            reg tmp pd_a src 4K
            dereg tmp
            post write qp_a sgl=tmp:8 remote=target
            poll cq_a
            expect LOC_PROT_ERR
            """);

        assertThat(r.out()).contains("IBV_WC_LOC_PROT_ERR vendor_err=0x4")
            .contains("local sge[0] lkey").contains("deregistered at d.rsim:20 (dereg tmp)")
            .contains("MLX5_CQE_SYNDROME_LOCAL_PROT_ERR (0x04)");
    }

    @Test
    void messageLongerThanTheReceiveShouldBeALengthDiagnosisOnBothSides()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            reg rbuf pd_b dst 64K
            recv qp_b sgl=rbuf:4
            post send qp_a sgl=mr_src:8
            poll cq_a
            expect REM_INV_REQ_ERR
            poll cq_b
            expect LOC_LEN_ERR
            """);

        assertThat(r.out()).contains("check LENGTH").contains("message of 8 bytes > receive buffers of 4 bytes")
            .contains("IBV_WC_LOC_LEN_ERR vendor_err=0x1");
    }

    @Test
    void responderQpWithoutTheRightShouldBeAnInvalidRequest()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            reg target pd_b dst 64K access=local_write,remote_write
            qp qp_c pd_a cq_a
            qp qp_d pd_b cq_b
            connect qp_c qp_d access=remote_read
            post write qp_c sgl=mr_src:8 remote=target
            poll cq_a
            expect REM_INV_REQ_ERR
            """);

        assertThat(r.out()).contains("check INVALID_REQUEST").contains("qp_access_flags")
            .contains("(d.rsim:22 (post write))");
    }

    @Test
    void sendWithoutReceiveShouldNameTheRnrRetriesAndThePeerQp()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            qp qp_c pd_a cq_a
            qp qp_d pd_b cq_b
            connect qp_c qp_d rnr_retry=2
            post send qp_c sgl=mr_src:8
            poll cq_a
            expect RNR_RETRY_EXC_ERR
            """);

        assertThat(r.out()).contains("vendor_err=0x16").contains("check RECEIVER_NOT_READY")
            .contains("answered RNR NAK 3 times (rnr_retry=2): no receive was posted on QP 0x")
            .contains("(d.rsim:21 (post send))");
    }

    @Test
    void destroyedPeerShouldBeNoAckAndTheFlushShouldNameTheFirstError()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            close qp_b
            post write qp_a sgl=mr_src:8 remote=dst rkey=0x1234
            post write qp_a sgl=mr_src:8 remote=dst rkey=0x1234
            poll cq_a
            expect RETRY_EXC_ERR
            """);

        assertThat(r.out()).contains("check NO_ACK").contains("no acknowledgement after retry_cnt=")
            .contains("(d.rsim:19 (post write))")
            .contains("check FLUSHED").contains("wr_id 2 flushed: QP 0x").contains("is in ERR since wr_id 1 "
                + "completed with IBV_WC_RETRY_EXC_ERR");
    }

    @Test
    void refusedBindShouldBeALocalOperationNamingTheReason()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            reg plain pd_b dst 4K access=local_write
            mw w pd_b
            bind w qp_b plain
            poll cq_b
            expect MW_BIND_ERR
            """);

        assertThat(r.out()).contains("vendor_err=0x6").contains("check LOCAL_OPERATION")
            .contains("BIND_MW wr_id 1 on QP 0x").contains("(d.rsim:20 (bind w)): the MR lacks MW_BIND access");
    }

    @Test
    void softRoceLeavesVendorErrZeroButStillDiagnoses()
    {
        final ScriptRun r = ok("""
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
            mmap dst app_b 4K
            reg mr_src pd_a src 4K
            reg readonly pd_b dst 4K access=local_write,remote_read
            post write qp_a sgl=mr_src:8 remote=readonly
            poll cq_a
            expect REM_ACCESS_ERR
            """);

        assertThat(r.out()).contains("IBV_WC_REM_ACCESS_ERR vendor_err=0x0").contains("check RIGHTS");
    }

    @Test
    void faultOnAnOdpMrWhoseMemoryIsGoneShouldBeAnOdpFaultDiagnosis()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            reg o pd_b dst 64K access=local_write,remote_write,odp
            munmap dst 64K
            post write qp_a sgl=mr_src:8 remote=o
            poll cq_a
            expect REM_ACCESS_ERR
            """);

        assertThat(r.out()).contains("check ODP_FAULT").contains("the device has no translation and the page fault "
            + "failed").contains("(d.rsim:20 (post write))");
    }

    @Test
    void staleKeyInTheRespondersReceiveShouldNameTheReceiveOnBothSides()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            reg rbuf pd_b dst 64K
            dereg rbuf
            recv qp_b sgl=rbuf:64
            post send qp_a sgl=mr_src:8
            poll cq_a
            expect REM_OP_ERR
            poll cq_b
            expect LOC_PROT_ERR
            """);

        assertThat(r.out()).contains("IBV_WC_REM_OP_ERR vendor_err=0x14").contains("IBV_WC_LOC_PROT_ERR vendor_err=0x4")
            .contains("the responder's receive wr_id").contains("deregistered at d.rsim:19 (dereg rbuf)")
            .contains("syndrome MLX5_CQE_SYNDROME_REMOTE_OP_ERR (0x14)")
            .contains("syndrome MLX5_CQE_SYNDROME_LOCAL_PROT_ERR (0x04)");
    }
}
