package dev.rnicsim.scenarios.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.scenarios.charts.ChartData;
import dev.rnicsim.simnic.DeviceProfiles;
import java.util.List;
import org.junit.jupiter.api.Test;

class PlanSweepTest
{
    private static final Planner.HostSpec HOST = new Planner.HostSpec(64L << 30, -1, true, 0, 0, 65530);

    @Test
    void shouldDoubleFromFirstToLastWithAtLeastFivePoints()
    {
        assertThat(Sweep.values(1, 16)).containsExactly(1L, 2L, 4L, 8L, 16L);
        assertThat(Sweep.values(3, 50)).containsExactly(3L, 6L, 12L, 24L, 48L, 50L);
        assertThat(Sweep.values(1, 15)).containsExactly(1L, 2L, 4L, 8L, 15L);
        assertThatThrownBy(() -> Sweep.values(1, 8)).hasMessageContaining("at least 5");
    }

    @Test
    void shouldGrowMttEntriesWithSizeAndUse512TimesMoreFor4kThan2m()
    {
        final Sweep s = Sweep.run(DeviceProfiles.byName("connectx5"), HOST, new Workload.Group("buf", 2, 4096, "4k",
            "lw"), Sweep.Kind.SIZE, 1L << 20, 64L << 20);
        final ChartData c = s.mttChart();
        final List<Double> mtt4k = c.ys(Sweep.seriesName("4k"));
        assertThat(mtt4k).hasSize(7).isSorted().doesNotHaveDuplicates();
        assertThat(mtt4k.get(0)).isEqualTo(2 * 256.0);
        assertThat(c.points(Sweep.seriesName("2m"))).hasSize(6);
        assertThat(c.series()).doesNotContainKey(Sweep.seriesName("1g"));
        int checked = 0;
        for (final Sweep.Row r : s.rows())
        {
            if (!r.backing().equals("2m"))
            {
                continue;
            }
            final Plan.GroupResult g = r.plan().groups().get(0);
            final double x = r.value() / 1024.0;
            // Both cover the same bytes: 4 KiB entries against entries of the MR page the driver chose.
            assertThat(c.yAt(Sweep.seriesName("4k"), x) * 4096).isEqualTo((double)g.mttEntriesPerMr() * g.mrs()
                * g.pageSizeBytes());
            if (g.pageSizeBytes() == 2L << 20)
            {
                assertThat(c.yAt(Sweep.seriesName("4k"), x)).isEqualTo(512 * c.yAt(Sweep.seriesName("2m"), x));
                checked++;
            }
        }
        assertThat(checked).as("points where the 2m MRs use 2 MiB MR pages").isPositive();
        assertThat(s.pinnedChart().yAt(Sweep.seriesName("4k"), 64 * 1024)).isEqualTo(2 * 64 * 1024);
    }

    @Test
    void shouldSweepCount()
    {
        final Sweep s = Sweep.run(DeviceProfiles.byName("connectx5"), HOST, new Workload.Group("buf", 1, 4L << 20,
            "4k", "lw"), Sweep.Kind.COUNT, 1, 1000);
        final List<Double> mtt = s.mttChart().ys(Sweep.seriesName("4k"));
        assertThat(mtt).hasSize(11).isSorted();
        assertThat(mtt.get(mtt.size() - 1)).isEqualTo(1000.0 * 1024);
        assertThat(s.mttChart().ys(Sweep.seriesName("2m"))).hasSize(11).isSorted();
    }
}
