package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Script values the verbs' C types hold as C converts them: an SGE length is {@code uint32_t} (ibv_sge.length; -1 is
 * 4294967295, 4G is 0, C11 6.3.1.3), and the device's answer to it shows at completion instead of aborting the script;
 * a wr_id is {@code uint64_t} and prints unsigned.
 */
class ScriptCValuesTest
{
    private static final String BUFFERS = ScriptRun.TWO_CONNECTED_HOSTS + """
        mmap sa app_a 1M
        mmap db app_b 1M
        reg ms pd_a sa 1M access=lw
        reg md pd_b db 1M access=lw,rw,rr
        """;

    @Test
    void aNegativeSgeLengthIsUint32AndFailsAtCompletionWithoutAbortingTheScript()
    {
        final ScriptRun r = ScriptRun.ok("sge.rnicsim", BUFFERS + """
            post write qp_a sgl=ms:0-1 remote=md rkey=md.rkey id=0-1
            poll cq_a
            expect IBV_WC_LOC_LEN_ERR
            recv qp_b sgl=md:0-1
            say still running
            """);
        assertThat(r.out()).contains("posted wr_id=18446744073709551615 (RDMA_WRITE, 4294967295 bytes)")
            .contains("wc wr_id=18446744073709551615 IBV_WC_LOC_LEN_ERR").contains("still running")
            .doesNotContain("wr_id=-1").doesNotContain("wr_id -1");
    }

    @Test
    void anSgeLengthOf4GIsZeroAsTheCAssignmentMakesIt()
    {
        final ScriptRun r = ScriptRun.ok("sge4g.rnicsim", BUFFERS + """
            post write qp_a sgl=ms:4G remote=md rkey=md.rkey
            poll cq_a
            expect IBV_WC_SUCCESS
            """);
        assertThat(r.out()).contains("(RDMA_WRITE, 0 bytes)");
    }
}
