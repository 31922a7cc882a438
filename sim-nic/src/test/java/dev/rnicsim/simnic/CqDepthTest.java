package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.CompletionQueue;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The {@code cqe} each driver grants and reports for a CQ ({@link CqDepth}).
 */
class CqDepthTest
{
    private static List<Integer> reported(final DeviceProfile profile, final int... asked)
    {
        final SimContext ctx = RuleRig.unconnected(profile).ctxB;
        final List<Integer> out = new java.util.ArrayList<>();
        for (final int cqe : asked)
        {
            final CompletionQueue cq = ctx.createCq(cqe);
            out.add(cq.cqe());
        }
        return out;
    }

    @Test
    void shouldRoundToAPowerOfTwoAboveTheCountLessOneOnMlx4Mlx5AndRxe()
    {
        assertThat(reported(DeviceProfiles.connectx5(), 1, 100, 127, 128)).containsExactly(1, 127, 127, 255);
        assertThat(reported(DeviceProfiles.connectx3(), 100, 128)).containsExactly(127, 255);
        assertThat(reported(DeviceProfiles.rxe(), 100, 128)).containsExactly(127, 255);
    }

    @Test
    void shouldRoundUpToAPowerOfTwoOnSiw()
    {
        // siw_create_cq: size = roundup_pow_of_two(cqe); base_cq.cqe = size
        assertThat(reported(DriverProfiles.siw(), 1, 100, 128)).containsExactly(1, 128, 128);
    }

    @Test
    void shouldTakeAtLeast64AndReportOneLessOnHns()
    {
        // libhns hns_roce_verify_cq: max(64, roundup_pow_of_two(cqe)); kernel set_cq_param: cq_entries - 1
        assertThat(reported(DriverProfiles.hns(), 1, 100, 128)).containsExactly(63, 127, 127);
    }

    @Test
    void shouldPinARingWithRoomForTheEntriesItReported()
    {
        final SimContext ctx = RuleRig.unconnected(DriverProfiles.siw()).ctxB;
        final SimCq cq = (SimCq) ctx.createCq(100);
        assertThat(cq.cqe()).isEqualTo(128);
        assertThat(cq.ring().lengthBytes()).isGreaterThanOrEqualTo(128L * SimContext.CQE_BYTES);
    }
}
