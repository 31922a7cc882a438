package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
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
        // libhns hns_roce_verify_cq: max(64, roundup_pow_of_two(cqe)); kernel set_cq_param: cq_entries - 1 (the
        // ring holds cq_entries: shouldHoldOneCompletionMoreThanItReportsOnHns)
        assertThat(reported(DriverProfiles.hns(), 1, 100, 128)).containsExactly(63, 127, 127);
    }

    @Test
    void shouldRoundUpToAPowerOfTwoOnEfaAndRefuseACountThatRoundsPastMaxCqe()
    {
        // libefa efa_create_cq: attr->cqe = roundup_pow_of_two(cqe); the kernel's efa_create_cq takes that depth
        for (final DeviceProfile efa : List.of(DriverProfiles.efaGen1(), DriverProfiles.efa(), DriverProfiles.efaGen3()))
        {
            assertThat(reported(efa, 1, 100, 128, efa.attributes().maxCqe())).as(efa.name())
                .containsExactly(1, 128, 128, efa.attributes().maxCqe());
        }
        // efa_create_cq refuses entries above max_cq_depth: a device of 20000 takes 16384, not 16385
        final DeviceProfile narrow = DriverProfiles.efa().withAttributes(
            DriverProfiles.efa().attributes().toBuilder().maxCqe(20000).build());
        final SimContext ctx = RuleRig.unconnected(narrow).ctxB;
        final long pinnedBefore = ctx.device().counter(SimCounter.PINNED_BYTES);
        final VerbsException e = catchThrowableOfType(VerbsException.class, () -> ctx.createCq(16385));
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.getMessage()).contains("cqe=16385", "32768 entries", "max_cqe=20000", "efa_create_cq",
            "ask for at most 16384", "nothing created");
        assertThat(ctx.device().counter(SimCounter.PINNED_BYTES)).isEqualTo(pinnedBefore);
        assertThat(ctx.createCq(16384).cqe()).isEqualTo(16384);
    }

    @Test
    void shouldReportTheCountAskedForOnIrdma()
    {
        // libirdma ucreate_cq: cq->cqe = the count asked for (its larger ring is not reported)
        assertThat(reported(DeviceProfiles.e810(), 1, 100, 128, 1000)).containsExactly(1, 100, 128, 1000);
        assertThat(reported(DriverProfiles.e810Iwarp(), 100)).containsExactly(100);
    }

    @Test
    void shouldRoundAsBnxtReCxgb4AndQedrDo()
    {
        // bnxt_re_create_cq: ib_cq.cqe = roundup_pow_of_two(cqe + 1), not one less
        assertThat(reported(DriverProfiles.bnxtRe(), 1, 100, 128)).containsExactly(2, 128, 256);
        // c4iw_create_cq: roundup(cqe + 2, 16) - 2
        assertThat(reported(DriverProfiles.cxgb4(), 1, 14, 15, 100, 128)).containsExactly(14, 14, 30, 110, 142);
        // qedr_create_cq: (cqe + 1) 32-byte CQEs aligned to a 4 KiB page
        assertThat(reported(DriverProfiles.qedr(), 1, 100, 127, 128)).containsExactly(128, 128, 128, 256);
        // the drivers not read keep mlx5's rounding
        assertThat(reported(DriverProfiles.erdma(), 100)).containsExactly(127);
    }

    @Test
    void shouldHoldOneCompletionMoreThanItReportsOnHns()
    {
        // set_cq_param: a ring of cq_depth (64 for 1 asked) reported as cq_depth - 1; the 65th completion overflows
        final SimCq hns = (SimCq) RuleRig.unconnected(DriverProfiles.hns()).ctxB.createCq(1);
        assertThat(hns.cqe()).isEqualTo(63);
        for (int i = 0; i < 64; i++)
        {
            assertThat(hns.push(completion(i))).as("completion %d", i).isTrue();
        }
        assertThat(hns.push(completion(64))).isFalse();
        assertThat(hns.overrun()).isTrue();
        // elsewhere a CQ holds what it reports
        final SimCq cx5 = (SimCq) RuleRig.unconnected(DeviceProfiles.connectx5()).ctxB.createCq(1);
        assertThat(cx5.push(completion(0))).isTrue();
        assertThat(cx5.push(completion(1))).isFalse();
    }

    private static WorkCompletion completion(final long wrId)
    {
        return new WorkCompletion(wrId, WcStatus.SUCCESS, WcOpcode.SEND, 1, 0, false, 0, false, 0, 0);
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
