package dev.rnicsim.scenarios.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import org.junit.jupiter.api.Test;

/**
 * {@code --exact} registers every region whole; on workloads where sampling loses nothing (regions of at most
 * 1 GiB whose MRs all cost the same) it agrees with the sampled plan figure for figure, and where the MRs of a group
 * differ it counts the largest and says so.
 */
class PlanExactTest
{
    private static final long GIB = 1L << 30;
    private static final Planner.HostSpec HOST = new Planner.HostSpec(64 * GIB, UserProcess.RLIM_INFINITY, false,
        1000, 0, 65_530);
    private static final Workload MIXED = Workload.parse("w.yaml", """
        groups:
          - name: small
            count: 50
            size: 1M
          - name: huge
            count: 10
            size: 64M
            backing: 2m
          - name: odp
            count: 5
            size: 256M
            access: lw,odp
          - name: gpu
            count: 8
            size: 16M
            backing: gpu
          - name: implicit
            count: 2
            size: 512M
            access: lw,odp
            implicit: true
        """);

    @Test
    void shouldAgreeWithTheSampledPlanOnEveryFigureInTheWorstCase()
    {
        final Plan sampled = Planner.plan(DeviceProfiles.connectx5(), HOST, MIXED, Planner.Contiguity.WORST, false);
        final Plan exact = Planner.plan(DeviceProfiles.connectx5(), HOST, MIXED, Planner.Contiguity.WORST, true);
        for (int i = 0; i < sampled.groups().size(); i++)
        {
            final Plan.GroupResult s = sampled.groups().get(i);
            final Plan.GroupResult e = exact.groups().get(i);
            assertThat(e.sampled()).as(e.name()).isEqualTo(e.mrs());
            assertThat(e.mttEntriesPerMr()).as(e.name()).isEqualTo(s.mttEntriesPerMr());
            assertThat(e.mttReservedPerMr()).as(e.name()).isEqualTo(s.mttReservedPerMr());
            assertThat(e.pinnedBytesPerMr()).as(e.name()).isEqualTo(s.pinnedBytesPerMr());
            assertThat(e.bar1BytesPerMr()).as(e.name()).isEqualTo(s.bar1BytesPerMr());
        }
        assertThat(exact.totals()).isEqualTo(sampled.totals());
        assertThat(exact.limits()).isEqualTo(sampled.limits());
        assertThat(exact.breach()).isNull();
        assertThat(exact.notes()).anyMatch(n -> n.equals("group small: exact: all 50 MRs registered whole"))
            .noneMatch(n -> n.contains("measured on 3 of"));
    }

    @Test
    void shouldFindTheSameMrThatExhaustsMlx4sMttAsTheSampledPlan()
    {
        final DeviceProfile cx3 = DeviceProfiles.connectx3().withMtt(MttConfig.buddy(8, 3));
        final Workload w = Workload.parse("w.json", "{\"groups\":[{\"name\":\"g\",\"count\":200,\"size\":\"64K\"}]}");
        final Plan sampled = Planner.plan(cx3, HOST, w, Planner.Contiguity.WORST, false);
        final Plan exact = Planner.plan(cx3, HOST, w, Planner.Contiguity.WORST, true);
        assertThat(exact.breach()).isEqualTo(sampled.breach());
        assertThat(exact.breach().limit()).isEqualTo("MTT entries");
        assertThat(exact.breach().atMr()).isEqualTo(129);
    }

    @Test
    void shouldCountTheLargestMrWhereContiguousHugePagesMergeDifferently()
    {
        // Best case: whether a region's contiguous 2 MiB pages merge into one 64 MiB MR page depends on its virtual
        // address; the sample sees the first three regions, the exact plan every one and counts the largest.
        final Plan sampled = Planner.plan(DeviceProfiles.connectx5(), HOST, MIXED, Planner.Contiguity.BEST, false);
        final Plan exact = Planner.plan(DeviceProfiles.connectx5(), HOST, MIXED, Planner.Contiguity.BEST, true);
        final Plan.GroupResult s = sampled.groups().get(1);
        final Plan.GroupResult e = exact.groups().get(1);
        assertThat(s.mttEntriesPerMr()).isEqualTo(1);
        assertThat(e.mttEntriesPerMr()).isEqualTo(32);
        assertThat(exact.notes()).contains("group huge: exact: all 10 MRs registered whole; MTT entries per MR from 1 "
            + "to 32, the largest counted for every MR");
        // The other groups do not depend on contiguity and still agree.
        assertThat(exact.groups().get(0).mttEntriesPerMr()).isEqualTo(sampled.groups().get(0).mttEntriesPerMr());
        assertThat(exact.groups().get(2).mttEntriesPerMr()).isEqualTo(sampled.groups().get(2).mttEntriesPerMr());
    }

    @Test
    void shouldRefuseRegionsAboveOneTibWithAMessageInsteadOfRunningOutOfHeap()
    {
        final Workload w = Workload.parse("w.yaml", "groups:\n  - name: big\n    count: 2\n    size: 3T\n"
            + "    backing: 1g\n");
        assertThatThrownBy(() -> Planner.plan(DeviceProfiles.connectx5(), HOST, w, Planner.Contiguity.WORST, true))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("--exact: group 'big' has regions of 3 TiB; --exact registers regions of at most 1 TiB whole "
                + "(a simulated host holds one at a time): plan it without --exact");
    }

    @Test
    void shouldRefuseAWorkloadOfMoreRegionsOrBytesThanAnExactPlanCanRegisterInsteadOfRunningForHours()
    {
        final Workload many = Workload.parse("w.yaml", "groups:\n  - name: tiny\n    count: 1000000000000\n"
            + "    size: 4K\n");
        assertThatThrownBy(() -> Planner.plan(DeviceProfiles.connectx5(), HOST, many, Planner.Contiguity.WORST, true))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("--exact: the workload has 1,000,000,000,000 regions of 3725.29 TiB")
            .hasMessageContaining("at most 16,777,216 regions and 16 TiB").hasMessageEndingWith("plan it without "
                + "--exact, which samples each group");
        final Workload big = Workload.parse("w.yaml", "groups:\n  - name: a\n    count: 17\n    size: 1T\n"
            + "    backing: 1g\n");
        assertThatThrownBy(() -> Planner.plan(DeviceProfiles.connectx5(), HOST, big, Planner.Contiguity.WORST, true))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("17 regions of 17 TiB in all");
        assertThat(Planner.plan(DeviceProfiles.connectx5(), HOST, many, Planner.Contiguity.WORST).groups())
            .as("the same workload planned sampled").hasSize(1);
    }
}
