package dev.rnicsim.scenarios.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.rnicsim.simnic.CostModel;
import dev.rnicsim.simnic.DeviceProfiles;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The translation-cache verdict comes from running the device's cache model, not from a formula. */
class CacheVerdictTest
{
    private static Plan.GroupResult group(final long mrs, final long sizeBytes, final long entriesPerMr)
    {
        return new Plan.GroupResult("g", mrs, sizeBytes, "4k", Workload.Lifetime.STATIC, 4096, entriesPerMr,
            entriesPerMr, sizeBytes, 0, 0, 0, 1);
    }

    @Test
    void shouldMissAlmostNeverWhenTheWorkingSetFitsTheCache()
    {
        // 16 MRs of 64 entries: 16 + 1,024 translations in a cache of 8,192.
        final CacheVerdict v = CacheVerdict.of(DeviceProfiles.connectx5(), CostModel.defaults(),
            List.of(group(16, 256L << 10, 64)), 1);
        assertThat(v.workingSetEntries()).isEqualTo(16 + 16 * 64);
        assertThat(v.missesPerOp()).isLessThan(0.01);
        assertThat(v.verdict()).contains("the working set fits");
    }

    @Test
    void shouldMissOnNearlyEveryMttLookupWhenTheWorkingSetIsFarLargerThanTheCache()
    {
        // 4 MRs of 1 GiB in 4 KiB pages: a million MTT entries against 8,192 lines.
        final CacheVerdict v = CacheVerdict.of(DeviceProfiles.connectx5(), CostModel.defaults(),
            List.of(group(4, 1L << 30, 1L << 18)), 1);
        assertThat(v.missesPerOp()).isBetween(0.95, 1.05);
        assertThat(v.costNsPerOp()).isCloseTo(v.missesPerOp() * CostModel.defaults().cacheMissNs(), within(1e-6));
        assertThat(v.verdict()).contains("times the cache");
    }

    @Test
    void shouldMissMoreAsTheWorkingSetGrowsAndCountEveryProcess()
    {
        final CacheVerdict one = CacheVerdict.of(DeviceProfiles.connectx5(), CostModel.defaults(),
            List.of(group(64, 1L << 20, 256)), 1);
        final CacheVerdict four = CacheVerdict.of(DeviceProfiles.connectx5(), CostModel.defaults(),
            List.of(group(64, 1L << 20, 256)), 4);
        assertThat(four.workingSetEntries()).isEqualTo(4 * one.workingSetEntries());
        assertThat(four.missesPerOp()).isGreaterThan(one.missesPerOp());
        // A smaller cache of the same ways misses more on the same working set.
        final CacheVerdict small = CacheVerdict.of(DeviceProfiles.connectx5().withCache(1024, 8),
            CostModel.defaults(), List.of(group(64, 1L << 20, 256)), 1);
        assertThat(small.missesPerOp()).isGreaterThan(one.missesPerOp());
    }

    @Test
    void shouldLeaveRefusedGroupsOut()
    {
        final Plan.GroupResult refused = new Plan.GroupResult("r", 10, 1L << 20, "4k", Workload.Lifetime.STATIC, 0,
            0, 0, 0, 0, 0, 0, 0, "odp", 0, 0, 0, 0, "EOPNOTSUPP");
        final CacheVerdict v = CacheVerdict.of(DeviceProfiles.connectx3(), CostModel.defaults(), List.of(refused), 1);
        assertThat(v.workingSetEntries()).isZero();
        assertThat(v.missesPerOp()).isZero();
    }
}
