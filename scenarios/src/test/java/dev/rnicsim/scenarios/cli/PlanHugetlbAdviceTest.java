package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The advice for hugetlb pools larger than RAM: the largest pool that fits, said to be short of what the groups need,
 * and the pages that do not fit named once, without contradicting the setting.
 */
class PlanHugetlbAdviceTest
{
    @TempDir
    Path dir;

    @Test
    void aPoolThatDoesNotFitInRamIsAdvisedAsLargeAsFitsAndTheRestNamed() throws Exception
    {
        final Path w = Files.writeString(dir.resolve("w.yaml"), """
            groups:
              - name: buf
                count: 3
                size: 4K
                backing: 1g
            """);

        final CliRun r = CliRun.of("plan", "--workload", w.toString(), "--ram", "2G");

        assertThat(r.out()).contains("advice: set 2 1 GiB huge pages (hugepagesz=1G hugepages=2 on the kernel "
            + "command line) for the 1 GiB hugetlb groups: as many as fit in the 2 GiB of RAM; they need 3, so 1 does "
            + "not fit (below)")
            .contains("no setting fixes the rest of the hugetlb pools: the hugetlb groups need 3 GiB")
            .contains("which holds 2 pages of 1 GiB and not the other 1 page of 1 GiB");
    }
}
