package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code rnicsim run} of a script whose {@code expect no warnings} fails on many warnings: each is listed once. */
class ExpectNoWarningsCliTest
{
    @TempDir
    Path dir;

    @Test
    void failedExpectNoWarningsShouldListTheWarningsOnceAndSummariseInOneLine() throws Exception
    {
        final StringBuilder script = new StringBuilder("""
            strict on max_reg_rate=1
            host alpha ram=256M
            device nic_a alpha profile=connectx5
            open app_a nic_a
            pd pd_a app_a
            mmap b app_a 64K
            repeat 300
              reg idle pd_a b 4K
              dereg idle
            end
            """);
        final Path file = dir.resolve("many.rsim");
        Files.writeString(file, script.append("expect no warnings\n").toString());
        final StringWriter out = new StringWriter();
        final int code = Rnicsim.execute(new String[] {"run", file.toString()}, new PrintWriter(out, true),
            new PrintWriter(new StringWriter(), true));

        assertThat(code).isEqualTo(Rnicsim.EXPECT_FAILED);
        final String text = out.toString();
        final String listed = "      UNUSED_MR: MR lkey ";
        assertThat(text.split(listed, -1)).as(text).hasSize(2);
        assertThat(text).contains("(and 299 more like it from the same lines)")
            .contains("== " + file + ": FAILED: " + file + ":11: expect no warnings: expected no warnings, got 303: "
                + "(listed above)");
    }
}
