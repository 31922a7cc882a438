package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code rnicsim plan} with ODP, GPU and hugetlb groups: plans, refusals and errors as the user sees them. */
class PlanKindsCommandTest
{
    @TempDir
    Path dir;

    private Path file(final String text) throws Exception
    {
        final Path p = dir.resolve("w.yaml");
        Files.writeString(p, text);
        return p;
    }

    @Test
    void shouldPlanAnOdpGroupOnConnectX3WithARefusalNotAClassCast() throws Exception
    {
        final Path w = file("""
            groups:
              - name: tensors
                count: 2
                size: 2G
                backing: 2m
                access: lw,rw,odp
            """);
        final CliRun r = CliRun.of("plan", "--profile", "connectx3", "--workload", w.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.err()).doesNotContain("cannot be cast").doesNotContain("Exception");
        assertThat(r.out()).contains("first limit to break: registration refused: connectx3 (mlx4) cannot register "
            + "group 'tensors'").contains("odp general caps 0x0").doesNotContain("raise RLIMIT_MEMLOCK");
        final CliRun cx5 = CliRun.of("plan", "--workload", w.toString(), "--hugepages2m", "4096");
        assertThat(cx5.code()).as(cx5.err()).isZero();
        assertThat(cx5.out()).contains("everything fits").doesNotContain("RLIMIT_MEMLOCK to");
    }

    @Test
    void shouldSayWhichContiguityTheVerdictUses() throws Exception
    {
        final Path w = file("""
            groups:
              - name: tensors
                count: 1
                size: 64M
                backing: 2m
            """);
        final CliRun worst = CliRun.of("plan", "--workload", w.toString(), "--hugepages2m", "32");
        assertThat(worst.out()).contains("the verdict uses the worst case of huge-page contiguity")
            .contains("32 with no two adjacent (worst)");
        final CliRun best = CliRun.of("plan", "--workload", w.toString(), "--hugepages2m", "32", "--contiguity",
            "best");
        assertThat(best.out()).contains("the verdict uses the best case");
        final CliRun bad = CliRun.of("plan", "--workload", w.toString(), "--contiguity", "average");
        assertThat(bad.code()).isEqualTo(2);
        assertThat(bad.err()).contains("--contiguity average: expected best or worst");
        final CliRun sweep = CliRun.of("plan", "--workload", w.toString(), "--contiguity", "worst", "--sweep", "size",
            "--from", "2M", "--to", "64M", "--svg", dir.resolve("s.svg").toString());
        assertThat(sweep.code()).isEqualTo(2);
        assertThat(sweep.err()).contains("--exact and --contiguity do not go with --sweep");
    }

    @Test
    void shouldExitTwoWithFileLineFieldExpectedForEveryMalformedGroup() throws Exception
    {
        final List<String> bad = List.of("    implicit: true\n", "    gpu: dmabuf\n", "    backing: gpu\n    access: "
            + "odp\n", "    access: hugetlb\n", "    implicit: 3\n", "    backing: 16k\n", "    lifetime: forever\n",
            "    access: lw,zz\n", "    iovaAlign: 3K\n", "    colour: blue\n");
        for (final String extra : bad)
        {
            final Path w = file("groups:\n  - name: a\n    count: 1\n    size: 64M\n" + extra);
            final CliRun r = CliRun.of("plan", "--workload", w.toString());
            assertThat(r.code()).as(extra).isEqualTo(2);
            assertThat(r.err().strip()).as(extra).matches("(?s)\\Q" + w + "\\E:\\d+: groups\\[0]\\.\\w+: (expected|"
                + "unknown field; expected) .*").doesNotContain("Exception")
                .doesNotContain("cannot be cast");
        }
    }

    @Test
    void shouldPrintSizesInOneIecStyleWithExactBytesWhereNotWhole() throws Exception
    {
        final Path w = file("""
            groups:
              - name: odd
                count: 3
                size: 1000K
            """);
        final CliRun r = CliRun.of("plan", "--workload", w.toString(), "--memlock", "1M");
        assertThat(r.out()).contains("1000 KiB").contains("2.93 MiB (3,072,000 B)").doesNotContain(" bytes ");
    }
}
