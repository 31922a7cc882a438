package dev.rnicsim.scenarios.plan;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import org.junit.jupiter.api.Test;

/**
 * The counts in the plan's advice and notes carry thousands separators, as docs/planning-guide.md promises ("Counts
 * have thousands separators"); the values of settings to type (vm.nr_hugepages=, ulimit -l, hugepages=) do not.
 */
class PlanThousandsSeparatorsTest
{
    private static final long GIB = 1L << 30;
    private static final Planner.HostSpec HOST = new Planner.HostSpec(64 * GIB, 8L << 20, false, 0, 0, 65_530);

    @Test
    void shouldSeparateTheMttEntriesOfTheHugePageAdvice()
    {
        final Plan p = Planner.plan(DeviceProfiles.connectx5(), HOST, Workload.parse("w.yaml", """
            groups:
              - name: big
                count: 1
                size: 4G
                access: lw,rw
            """));
        assertThat(p.advice()).anyMatch(a -> a.startsWith("group big on 2 MiB huge pages: 2,048 MTT entries per MR"
            + " instead of ") && a.matches(".* of \\d{1,3}(,\\d{3})+ \\(\\d{1,3}(,\\d{3})* times fewer\\)"));
    }

    @Test
    void shouldSeparateTheEntriesOfAnImplicitChild()
    {
        final Plan p = Planner.plan(DeviceProfiles.connectx5(), HOST, Workload.parse("w.yaml", """
            groups:
              - name: everything
                count: 1
                size: 2G
                access: lw,rw,odp
                implicit: true
            """));
        assertThat(p.notes()).anyMatch(n -> n.contains("gets a child MR of 262,144 MTT entries on its first fault"));
    }
}
