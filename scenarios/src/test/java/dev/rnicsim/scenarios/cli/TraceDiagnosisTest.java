package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The --trace timeline carries the diagnosis of a failed work request in its span's arguments, and --strict on the
 * command line reports what strict mode sees.
 */
class TraceDiagnosisTest
{
    private static final String SCRIPT = """
        host alpha ram=256M
        host beta ram=256M
        device nic_a alpha profile=connectx5
        device nic_b beta profile=connectx5
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
        reg gone pd_b dst 4K access=local_write,remote_write
        dereg gone
        post write qp_a sgl=mr_src:8 remote=dst rkey=gone.rkey
        poll cq_a
        expect REM_ACCESS_ERR
        """;

    @TempDir
    Path dir;

    @Test
    void failedWriteSpanShouldCarryTheDiagnosisAndStrictShouldWarn() throws Exception
    {
        final Path script = dir.resolve("t.rsim");
        Files.writeString(script, SCRIPT, StandardCharsets.UTF_8);
        final Path trace = dir.resolve("t.json");
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();

        final int code = Rnicsim.execute(new String[] {"run", "--strict", "--trace", trace.toString(),
            script.toString()}, new PrintWriter(out, true), new PrintWriter(err, true));

        assertThat(code).as(err.toString()).isZero();
        String diagnosis = null;
        for (final JsonNode e : new ObjectMapper().readTree(trace.toFile()).path("traceEvents"))
        {
            if (e.path("name").asText().equals("RDMA_WRITE") && e.path("args").has("diagnosis"))
            {
                diagnosis = e.path("args").path("diagnosis").asText();
            }
        }
        assertThat(diagnosis).contains("holds nothing now").contains("deregistered at t.rsim:18 (dereg gone)");
        assertThat(out.toString()).contains("warning STALE_RKEY").contains("warning UNUSED_MR")
            .contains("strict: 3 warnings, 0 expected");
    }

    @Test
    void diagnosisInTheTraceUnderTheManualEngineShouldNameThePostingLine() throws Exception
    {
        final Path script = dir.resolve("m.rsim");
        Files.writeString(script, "engine manual\n" + SCRIPT.substring(0, SCRIPT.indexOf("reg gone")).replace(
            "4K", "64K") + """
            reg target pd_b dst 64K access=local_write,remote_write
            post write qp_a sgl=mr_src:64K remote=target
            progress nic_a 3
            dereg target
            poll cq_a
            expect REM_ACCESS_ERR
            """, StandardCharsets.UTF_8);
        final Path trace = dir.resolve("m.json");

        final int code = Rnicsim.execute(new String[] {"run", "-q", "--trace", trace.toString(), script.toString()},
            new PrintWriter(new StringWriter(), true), new PrintWriter(new StringWriter(), true));

        assertThat(code).isZero();
        String diagnosis = null;
        for (final JsonNode e : new ObjectMapper().readTree(trace.toFile()).path("traceEvents"))
        {
            if (e.path("name").asText().equals("RDMA_WRITE") && e.path("args").has("diagnosis"))
            {
                diagnosis = e.path("args").path("diagnosis").asText();
            }
        }
        assertThat(diagnosis).contains("RDMA_WRITE wr_id 1 on QP 0x").contains("(m.rsim:19 (post write))")
            .doesNotContain("(poll cq_a)");
    }

    @Test
    void writeToADestroyedPeerShouldCarryTheNoAckDiagnosisInItsSpan() throws Exception
    {
        final Path script = dir.resolve("n.rsim");
        Files.writeString(script, SCRIPT.substring(0, SCRIPT.indexOf("reg gone")) + """
            close qp_b
            post write qp_a sgl=mr_src:8 remote=dst rkey=0x100
            poll cq_a
            expect RETRY_EXC_ERR
            """, StandardCharsets.UTF_8);
        final Path trace = dir.resolve("n.json");

        final int code = Rnicsim.execute(new String[] {"run", "-q", "--trace", trace.toString(), script.toString()},
            new PrintWriter(new StringWriter(), true), new PrintWriter(new StringWriter(), true));

        assertThat(code).isZero();
        assertThat(Files.readString(trace)).contains("no acknowledgement after retry_cnt=")
            .contains("n.rsim:18 (post write)");
    }
}
