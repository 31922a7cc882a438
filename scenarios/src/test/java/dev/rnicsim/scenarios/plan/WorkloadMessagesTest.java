package dev.rnicsim.scenarios.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * YAML a workload cannot hold is named in the workload's terms, and an smaps with more mappings than a plan takes is
 * merged, saying so.
 */
class WorkloadMessagesTest
{
    @Test
    void severalYamlDocumentsShouldBeNamedAsSuch()
    {
        assertThatThrownBy(() -> Workload.parse("w.yaml", "groups:\n  - count: 1\n    size: 4K\n---\ngroups: []\n"))
            .hasMessageContaining("w.yaml:").hasMessageContaining("more than one YAML document ('---' starts another)")
            .hasMessageNotContaining("Jackson").hasMessageNotContaining("DeserializationFeature")
            .hasMessageNotContaining("JsonNode");
    }

    @Test
    void yamlInfinityShouldBeNamedAsNoCount()
    {
        assertThatThrownBy(() -> Workload.parse("w.yaml", "groups:\n  - count: .inf\n    size: 4K\n"))
            .hasMessageContaining("w.yaml:2:").hasMessageContaining("'.inf' is no number a workload takes")
            .hasMessageContaining("YAML's infinity");
    }

    @Test
    void yamlAliasesShouldBeRefusedWithTheirLine()
    {
        assertThatThrownBy(() -> Workload.parse("w.yaml", "groups:\n  - &g {count: 1, size: 4K}\n  - *g\n"))
            .hasMessageContaining("w.yaml:2: YAML anchors and aliases ('&g') are not read in a workload");
    }

    @Test
    void aPlainYamlWorkloadStillParses()
    {
        assertThat(Workload.parse("w.yaml", "groups:\n  - name: a-b*c\n    count: 2\n    size: 4K\n").groups())
            .hasSize(1);
    }

    private static String smaps(final int mappings, final boolean adjacent)
    {
        final StringBuilder sb = new StringBuilder();
        long at = 0x7f0000000000L;
        for (int i = 0; i < mappings; i++)
        {
            final long len = adjacent ? 4096 : 4096L * (1 + i % 3);
            sb.append(Long.toHexString(at)).append('-').append(Long.toHexString(at + len))
                .append(" rw-p 00000000 00:00 0\nSize: ").append(len / 1024).append(" kB\nKernelPageSize: 4 kB\n");
            at += len + (adjacent || i % 2 == 0 ? 0 : 8192);
            if (!adjacent)
            {
                at += 4096;
            }
        }
        return sb.toString();
    }

    @Test
    void moreMappingsThanAPlanTakesShouldMergeAdjacentOnesAndSaySo()
    {
        final Workload w = SmapsWorkload.parse("big.smaps", smaps(Workload.MAX_GROUPS + 1, true), null);

        assertThat(w.groups()).hasSize(1);
        assertThat(w.groups().get(0).sizeBytes()).isEqualTo(4096L * (Workload.MAX_GROUPS + 1));
        assertThat(w.groups().get(0).name()).contains("100001 adjacent mappings merged")
            .contains("more than 100000");
    }

    @Test
    void moreMappingsThanAPlanTakesAndNotAdjacentShouldMergeBySizeWithCounts()
    {
        final Workload w = SmapsWorkload.parse("big.smaps", smaps(Workload.MAX_GROUPS + 2, false), null);

        assertThat(w.groups()).hasSize(3);
        assertThat(w.groups().stream().mapToLong(Workload.Group::count).sum()).isEqualTo(Workload.MAX_GROUPS + 2);
        assertThat(w.groups().get(0).name()).contains("mappings of 4096 bytes (4k), merged by size")
            .contains("100002 qualifying mappings");
    }

    @Test
    void accessThatIbvRegMrRefusesShouldSayItsErrnoOnce()
    {
        assertThatThrownBy(() -> Workload.parse("w.yaml", "groups:\n  - count: 1\n    size: 4K\n    access: rw\n"))
            .hasMessageContaining("would fail ibv_reg_mr with EINVAL: ")
            .satisfies(e -> assertThat(e.getMessage().split("EINVAL", -1)).as(e.getMessage()).hasSize(2));
    }
}
