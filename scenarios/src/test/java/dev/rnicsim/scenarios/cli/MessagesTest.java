package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The messages of the command line's file options: each names the option, the path and the cause, and a bad output
 * file is found before anything runs.
 */
class MessagesTest
{
    private static final String SCRIPT = "host alpha ram=256M\nsay hello from the script\n";

    @TempDir
    Path dir;

    private Path script(final String name, final String text) throws Exception
    {
        final Path f = dir.resolve(name);
        Files.writeString(f, text, StandardCharsets.UTF_8);
        return f;
    }

    @Test
    void traceIntoAMissingFolderShouldBeRefusedBeforeTheRunNamingOptionPathAndFolder() throws Exception
    {
        final Path s = script("s.rsim", SCRIPT);
        final Path trace = dir.resolve("no/such/t.json");

        final CliRun r = CliRun.of("run", s.toString(), "--trace", trace.toString());

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("--trace " + trace + ": the folder " + trace.getParent() + " does not exist")
            .contains("creates no folders");
        assertThat(r.out()).as("nothing ran").doesNotContain("hello from the script");
        assertThat(dir.resolve("no")).doesNotExist();
    }

    @Test
    void htmlIntoAMissingFolderOrAFolderShouldBeRefusedBeforeAnythingRuns() throws Exception
    {
        final Path s = script("s.rsim", SCRIPT);
        final Path page = dir.resolve("no").resolve("page.html");

        final CliRun run = CliRun.of("run", s.toString(), "--html", page.toString());
        final CliRun tour = CliRun.of("tour", "-q", "--html", dir.toString());
        final CliRun scenario = CliRun.of("scenario", "run", "first-registration", "--html", "");

        assertThat(run.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(run.err()).contains("--html " + page + ": the folder " + page.getParent() + " does not exist");
        assertThat(run.out()).as("nothing ran").doesNotContain("hello from the script");
        assertThat(tour.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(tour.err()).contains("--html " + dir + ": is a folder");
        assertThat(tour.out()).as("the tour did not run").isEmpty();
        assertThat(scenario.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(scenario.err()).contains("--html is empty");
        assertThat(dir.resolve("no")).doesNotExist();
    }

    @Test
    void twoOutputOptionsNamingOneFileShouldBeRefusedBeforeAnythingRuns() throws Exception
    {
        final Path f = dir.resolve("out.html");

        final CliRun tour = CliRun.of("tour", "-q", "--html", f.toString(), "--trace", f.toString());
        final CliRun scenario = CliRun.of("scenario", "run", "registration-cost", "--svg", f.toString(), "--html",
            f.toString());

        assertThat(tour.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(tour.err()).contains("--trace and --html both name " + f);
        assertThat(tour.out()).isEmpty();
        assertThat(scenario.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(scenario.err()).contains("--svg and --html both name " + f);
        assertThat(f).doesNotExist();
    }

    @Test
    void traceOrSvgThatIsAFolderShouldSaySo() throws Exception
    {
        final Path s = script("s.rsim", SCRIPT);

        final CliRun trace = CliRun.of("run", s.toString(), "--trace", dir.toString());
        final CliRun svg = CliRun.of("scenario", "run", "registration-cost", "--svg", dir.toString());

        assertThat(trace.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(trace.err()).contains("--trace " + dir + ": is a folder, not a file");
        assertThat(svg.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(svg.err()).contains("--svg " + dir + ": is a folder, not a file");
        assertThat(svg.out()).as("nothing ran").isEmpty();
    }

    @Test
    void emptyPathsShouldNameTheirOption()
    {
        final CliRun run = CliRun.of("run", "");
        final CliRun devinfo = CliRun.of("devinfo", "--file=");
        final CliRun plan = CliRun.of("plan", "--workload=");
        final CliRun trace = CliRun.of("tour", "--trace=");

        assertThat(run.err()).contains("the FILE argument is empty").doesNotStartWith(":");
        assertThat(devinfo.err()).contains("--file is empty").doesNotStartWith(":");
        assertThat(plan.err()).contains("--workload is empty");
        assertThat(trace.err()).contains("--trace is empty");
        assertThat(run.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(trace.code()).isEqualTo(Rnicsim.MALFORMED);
    }

    @Test
    void scriptWithAByteOrderMarkShouldRun() throws Exception
    {
        final Path s = script("bom.rsim", "\uFEFF" + SCRIPT);

        final CliRun r = CliRun.of("run", s.toString());

        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("host alpha: 256 MiB RAM");
    }

    @Test
    void scriptsJoinedWithCatShouldRunWithTheByteOrderMarkOfEach() throws Exception
    {
        final Path s = script("joined.rsim", "\uFEFF\uFEFF" + SCRIPT + "\n\uFEFFsay joined\n");

        final CliRun r = CliRun.of("run", s.toString());

        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("host alpha: 256 MiB RAM").contains("joined");
    }

    @Test
    void argumentStartingWithAtShouldBeAFileNameNotAnArgumentFile() throws Exception
    {
        final Path s = script("@odd.rsim", SCRIPT);

        final CliRun r = CliRun.of("run", s.toString());

        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("hello from the script");
    }

    @Test
    void malformedScriptAfterAGoodOneShouldStopBeforeAnythingRuns() throws Exception
    {
        final Path good = script("good.rsim", SCRIPT);
        final Path bad = script("bad.rsim", "repeat 2 host h ram=256M\n");

        final CliRun r = CliRun.of("run", good.toString(), bad.toString());

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("bad.rsim:1: 'repeat 2' (line 1) would create host 'h' 2 times");
    }
}
