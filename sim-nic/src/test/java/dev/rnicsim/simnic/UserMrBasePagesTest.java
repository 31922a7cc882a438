package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * {@link ProviderRule#USER_MR_IN_BASE_PAGES}: rxe translates a user MR in PAGE_SIZE pages (rxe_mr_init's page_size,
 * one rxe_mr_fill_pages_from_sgt entry per page) whatever its page_size_cap of 0xfffff000; mlx5 takes the best page
 * size ib_umem_find_best_pgsz finds.
 */
class UserMrBasePagesTest
{
    private static SimMr register64K(final DeviceProfile profile)
    {
        final RuleRig rig = RuleRig.unconnected(profile);
        final long buf = rig.bufferA(64 << 10);
        return (SimMr)rig.pdA.regMr(buf, 64 << 10, RuleRig.LOCAL);
    }

    @Test
    void rxeKeepsOneEntryPerPageSizePage()
    {
        for (final DeviceProfile rxe : java.util.List.of(DeviceProfiles.rxe(), DeviceProfiles.byName("rxe-legacy")))
        {
            final SimMr mr = register64K(rxe);
            assertThat(mr.pageSizeBytes()).as(rxe.name()).isEqualTo(4096);
            assertThat(mr.mttEntries()).as(rxe.name()).isEqualTo(16);
        }
        assertThat(DeviceProfiles.rxe().attributes().pageSizeCap()).as("what the device reports is unchanged")
            .isEqualTo(0xfffff000L);
    }

    @Test
    void mlx5TakesTheLargestPageSizeTheCapAndThePagesAllow()
    {
        final SimMr mr = register64K(DeviceProfiles.connectx5());
        assertThat(mr.mttEntries()).isLessThanOrEqualTo(16);
        assertThat(mr.pageSizeBytes()).isGreaterThanOrEqualTo(4096);
    }
}
