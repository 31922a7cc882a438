package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

class PlanSmapsSweepCommandTest
{
    @TempDir
    Path dir;

    @Test
    void shouldPlanTheOwnSmaps()
    {
        Assumptions.assumeTrue(Files.isReadable(Path.of("/proc/self/smaps")), "needs Linux /proc/self/smaps");
        final CliRun r = CliRun.of("plan", "--smaps", "/proc/self/smaps", "--smaps-filter", "heap|^$", "--memlock",
            "unlimited", "--ram", "64G");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("total:").contains("0x");
    }

    @Test
    void groupsNamedByTheirAddressRangeShouldKeepTheColumnsUnderTheirHeadings()
    {
        Assumptions.assumeTrue(Files.isReadable(Path.of("/proc/self/smaps")), "needs Linux /proc/self/smaps");
        final CliRun r = CliRun.of("plan", "--smaps", "/proc/self/smaps", "--memlock", "unlimited", "--ram", "64G");
        assertThat(r.code()).as(r.err()).isZero();
        final java.util.List<String> lines = r.out().lines().toList();
        final int header = lines.indexOf(lines.stream().filter(l -> l.startsWith("group ")).findFirst().orElseThrow());
        final String heading = lines.get(header);
        final int mrsEnd = heading.indexOf("MRs") + 3;
        final java.util.List<String> rows = lines.subList(header + 1, lines.indexOf(lines.stream()
            .filter(l -> l.startsWith("total")).findFirst().orElseThrow()));
        assertThat(rows).isNotEmpty().allSatisfy(row ->
        {
            assertThat(row).as("a group's name (0x...-0x... [name]) and its MR count, under 'MRs'").startsWith("0x");
            assertThat(row.length()).as("each row as long as the heading:%n%s%n%s", heading, row)
                .isEqualTo(heading.length());
            assertThat(row.substring(0, mrsEnd)).as("the MR count ends under 'MRs':%n%s%n%s", heading, row)
                .endsWith(" 1");
        });
    }

    @Test
    void shouldExitTwoWithFileAndLineForMalformedSmaps() throws Exception
    {
        final Path s = dir.resolve("bad.smaps");
        Files.writeString(s, "7f00-7f01 rw-p 00000000 00:00 0\nSize:  lots kB\n");
        final CliRun r = CliRun.of("plan", "--smaps", s.toString());
        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).startsWith(s + ":2: expected").doesNotContain("Exception");
        final Path w = dir.resolve("w.json");
        Files.writeString(w, "{\"groups\":[{\"count\":1,\"size\":\"1M\"}]}");
        assertThat(CliRun.of("plan", "--smaps", s.toString(), "--workload", w.toString()).err())
            .contains("exactly one of --workload FILE and --smaps FILE");
        assertThat(CliRun.of("plan").code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(CliRun.of("plan", "--workload", w.toString(), "--smaps-filter", "x").code())
            .isEqualTo(Rnicsim.MALFORMED);
    }

    @Test
    void shouldWriteAnSvgThatParsesAsXml() throws Exception
    {
        final Path w = dir.resolve("w.json");
        Files.writeString(w, "{\"groups\":[{\"name\":\"buf\",\"count\":4,\"size\":\"1M\"}]}");
        final Path svg = dir.resolve("sweep.svg");
        final CliRun r = CliRun.of("plan", "--workload", w.toString(), "--sweep", "size", "--from", "1M", "--to",
            "2G", "--svg", svg.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("MTT entries").contains("1g").contains("chart: ");
        final DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
        final Document doc = factory.newDocumentBuilder().parse(svg.toFile());
        assertThat(doc.getDocumentElement().getNodeName()).isEqualTo("svg");
        assertThat(Files.readString(svg)).contains("4 KiB pages (4k)").contains("1 GiB pages (1g)")
            .contains("MTT entries against region size").contains("Pinned memory against region size");
    }

    @Test
    void shouldRejectBadSweeps() throws Exception
    {
        final Path w = dir.resolve("w.json");
        Files.writeString(w, "{\"groups\":[{\"count\":4,\"size\":\"1M\"},{\"count\":1,\"size\":\"1M\"}]}");
        final Path svg = dir.resolve("s.svg");
        assertThat(CliRun.of("plan", "--workload", w.toString(), "--sweep", "size", "--from", "1M", "--to", "1G",
            "--svg", svg.toString()).err()).contains("one group, found 2");
        Files.writeString(w, "{\"groups\":[{\"count\":4,\"size\":\"1M\"}]}");
        assertThat(CliRun.of("plan", "--workload", w.toString(), "--sweep", "size", "--from", "1M", "--to", "1G")
            .code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(CliRun.of("plan", "--workload", w.toString(), "--sweep", "size", "--from", "1M", "--to", "4M",
            "--svg", svg.toString()).err()).contains("at least 5");
        assertThat(CliRun.of("plan", "--workload", w.toString(), "--sweep", "bytes", "--from", "1M", "--to", "1G",
            "--svg", svg.toString()).code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(Files.exists(svg)).isFalse();
    }
}
