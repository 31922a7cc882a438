package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An output file in a folder that takes no new files ({@code /proc}: even root cannot create a file there) is
 * refused before the run, in the words of the other file errors (the option, the path, the cause and the fix), and
 * a check of a file that can be written leaves no file behind.
 */
class OutputFileCheckTest
{
    @TempDir
    Path dir;

    @Test
    void aTraceInProcShouldBeRefusedBeforeTheRunNamingTheFileTheCauseAndTheFix() throws Exception
    {
        final Path s = Files.writeString(dir.resolve("s.rsim"), "host h ram=256M\nsay ran\n");

        final CliRun r = CliRun.of("run", s.toString(), "--trace", "/proc/rnicsim-trace.json");

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.out()).doesNotContain("ran");
        assertThat(r.err()).startsWith("--trace /proc/rnicsim-trace.json: ")
            .containsAnyOf("cannot create the file: the folder /proc takes no new files", "permission denied")
            .doesNotContain("Exception").doesNotContain("(No such file or directory)");
        if (r.err().contains("cannot create the file"))
        {
            assertThat(r.err()).contains("; name a file in a folder you can write to");
        }
    }

    @Test
    void anOutputFileThatIsTheInputShouldBeRefusedBeforeAnythingRunsAndTheInputKept() throws Exception
    {
        final String script = "host h ram=256M\nsay ran\n";
        final Path s = Files.writeString(dir.resolve("t.rsim"), script);
        final Path link = Files.createSymbolicLink(dir.resolve("link.json"), s);
        final String workload = "{\"groups\":[{\"name\":\"buf\",\"count\":4,\"size\":\"1M\"}]}";
        final Path w = Files.writeString(dir.resolve("ww.json"), workload);

        final CliRun trace = CliRun.of("run", "-q", "--trace", s.toString(), s.toString());
        final CliRun html = CliRun.of("run", "-q", "--html", dir.resolve(".").resolve("t.rsim").toString(),
            s.toString());
        final CliRun viaLink = CliRun.of("run", "-q", "--trace", link.toString(), s.toString());
        final CliRun plan = CliRun.of("plan", "--workload", w.toString(), "--sweep", "size", "--from", "1M", "--to",
            "1G", "--svg", w.toString());

        for (final CliRun r : java.util.List.of(trace, html, viaLink))
        {
            assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
            assertThat(r.out()).doesNotContain("ran");
            assertThat(r.err()).contains("is the file the FILE argument names").contains("would replace the input");
        }
        assertThat(trace.err()).startsWith("--trace ");
        assertThat(html.err()).startsWith("--html ");
        assertThat(plan.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(plan.err()).contains("--svg " + w + " is the file --workload names");
        assertThat(Files.readString(s)).isEqualTo(script);
        assertThat(Files.readString(w)).isEqualTo(workload);
    }

    @Test
    void checkingAWritableFileShouldLeaveNoFileBehind()
    {
        final Path trace = dir.resolve("t.json");

        assertThat(OutputFile.problem("--trace", trace)).isNull();

        assertThat(trace).doesNotExist();
    }

    @Test
    void aTourTraceInProcShouldBeRefusedBeforeTheTour()
    {
        final CliRun r = CliRun.of("tour", "-q", "--trace", "/proc/rnicsim-tour.json");

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).startsWith("--trace /proc/rnicsim-tour.json: ");
    }
}
