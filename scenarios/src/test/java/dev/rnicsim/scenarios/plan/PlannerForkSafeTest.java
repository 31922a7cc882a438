package dev.rnicsim.scenarios.plan;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.DeviceProfiles;
import org.junit.jupiter.api.Test;

/**
 * {@code plan --fork-safe}: with libibverbs fork support every MR is MADV_DONTFORK (rdma-core libibverbs/memory.c
 * {@code ibv_madvise_range}), and each such range splits the mapping it is carved from (mm/madvise.c,
 * {@code vm.max_map_count}), so an MR counts two mappings instead of one.
 */
class PlannerForkSafeTest
{
    private static Workload mrs(final long count)
    {
        return Workload.parse("w.json", "{\"groups\":[{\"name\":\"g\",\"count\":" + count
            + ",\"size\":\"4K\",\"backing\":\"4k\"}]}");
    }

    private static Planner.HostSpec host(final boolean forkSafe)
    {
        return new Planner.HostSpec(16L << 30, UserProcess.RLIM_INFINITY, false, 0, 0, 1000, 1, forkSafe);
    }

    private static Plan.Limit mapCount(final Plan p)
    {
        return p.limits().stream().filter(l -> l.name().equals("vm.max_map_count")).findFirst().orElseThrow();
    }

    @Test
    void forkSafeRegistrationsCountTwoMappingsEachAgainstMaxMapCount()
    {
        final Plan plain = Planner.plan(DeviceProfiles.connectx5(), host(false), mrs(600));
        final Plan safe = Planner.plan(DeviceProfiles.connectx5(), host(true), mrs(600));
        assertThat(mapCount(plain).required()).isEqualTo(600);
        assertThat(mapCount(plain).fits()).isTrue();
        assertThat(mapCount(safe).required()).isEqualTo(1200);
        assertThat(mapCount(safe).fits()).isFalse();
        assertThat(safe.breach().limit()).isEqualTo("vm.max_map_count");
        assertThat(safe.notes()).anySatisfy(n -> assertThat(n).contains("--fork-safe"));
        assertThat(plain.breach()).isNull();
    }

    @Test
    void forkSafeRegistrationsAndDeregistrationsPayTheirMadviseAndSplit()
    {
        // libibverbs: one MADV_DONTFORK at ibv_reg_mr (2 VMAs more), one MADV_DOFORK at ibv_dereg_mr (2 fewer).
        final Plan plain = Planner.plan(DeviceProfiles.connectx5(), host(false), mrs(10));
        final Plan safe = Planner.plan(DeviceProfiles.connectx5(), host(true), mrs(10));
        final long madvise = dev.rnicsim.simnic.CostModel.defaults().forkSafetyNs(1, 2, 0);
        assertThat(madvise).isPositive();
        assertThat(safe.groups().get(0).regNsPerMr() - plain.groups().get(0).regNsPerMr()).isEqualTo(madvise);
        assertThat(safe.groups().get(0).deregNsPerMr() - plain.groups().get(0).deregNsPerMr()).isEqualTo(madvise);
        assertThat(safe.notes()).anySatisfy(n -> assertThat(n).contains("to each registration and deregistration"));
    }
}
