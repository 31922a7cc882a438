package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * plan's inputs: an smaps KernelPageSize that is no page size or does not divide its mapping (fs/proc/task_mmu.c
 * reports vma_kernel_pagesize), a workload value given as a list, a sweep bound too large for 64 bits, and
 * vm.max_map_count 0 (its sysctl's minimum).
 */
class PlanInputChecksTest
{
    @TempDir
    Path dir;

    private Path smaps(final String name, final String kernelPageSize) throws Exception
    {
        return Files.writeString(dir.resolve(name), """
            7f0000000000-7f0000100000 rw-p 00000000 00:00 0
            Size:               1024 kB
            KernelPageSize:     %s kB
            MMUPageSize:        %s kB
            Rss:                   0 kB
            AnonHugePages:         0 kB
            VmFlags: rd wr mr mw me ac
            """.formatted(kernelPageSize, kernelPageSize));
    }

    @Test
    void anSmapsKernelPageSizeThatIsNoPageSizeOrDoesNotDivideTheMappingIsRefused() throws Exception
    {
        final CliRun three = CliRun.of("plan", "--smaps", smaps("s3", "3").toString());
        final CliRun twoMeg = CliRun.of("plan", "--smaps", smaps("s2m", "2048").toString());
        final CliRun four = CliRun.of("plan", "--smaps", smaps("s4", "4").toString());

        assertThat(three.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(three.err()).contains("KernelPageSize 3 kB is no page size");
        assertThat(twoMeg.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(twoMeg.err()).contains("KernelPageSize 2048 kB does not divide the mapping of 1024 kB");
        assertThat(four.code()).as(four.err()).isZero();
    }

    @Test
    void aListWhereASizeIsExpectedIsShownAsGiven() throws Exception
    {
        final Path w = Files.writeString(dir.resolve("w.yaml"), "groups:\n  - name: b\n    count: 1\n    size: [1,2]\n");
        final CliRun r = CliRun.of("plan", "--workload", w.toString());
        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("got '[1,2]'").doesNotContain("got ''");
    }

    @Test
    void aSweepBoundTooLargeSaysSoAndMaxMapCountZeroIsTaken() throws Exception
    {
        final Path w = Files.writeString(dir.resolve("w.json"),
            "{\"groups\":[{\"name\":\"buf\",\"count\":4,\"size\":\"1M\"}]}");
        final CliRun big = CliRun.of("plan", "--workload", w.toString(), "--sweep", "size", "--from", "1", "--to",
            "8E", "--svg", dir.resolve("s.svg").toString());
        final CliRun zero = CliRun.of("plan", "--workload", w.toString(), "--max-map-count", "0");

        assertThat(big.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(big.err()).startsWith("--to 8E: ").contains("at most 8388607T");
        assertThat(zero.err()).doesNotContain("expected 1 or more");
        assertThat(zero.out()).contains("vm.max_map_count");
    }
}
