package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link ProviderRule#RESET_CLEANS_CQ}: a QP moved to RESET takes its unpolled completions out of its CQ on mlx4,
 * mlx5 and hns (their providers' {@code mlx4_cq_clean}, {@code mlx5_cq_clean} and {@code hns_roce_v2_cq_clean}), so a QP restated after an error
 * (rdma-core's tests/test_mr.py {@code restate_qps}) does not poll the flushes of its earlier life; rxe and siw leave
 * the CQ as it is. The completions of other QPs of the CQ stay in every case.
 */
class ResetCqCleanTest
{
    private static void reset(final QueuePair qp)
    {
        final QpAttr.Builder reset = QpAttr.builder().state(QpState.RESET);
        qp.modify(reset.build(), reset.mask());
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx3", "connectx5", "connectx4", "hns", "rxe", "siw", "bnxt_re"})
    void resetShouldRemoveTheQpsFlushesWhereTheProviderCleansTheCq(final String profile)
    {
        final DeviceProfile p = DeviceProfiles.byName(profile);
        final RuleRig rig = RuleRig.connected(p, RuleRig.ALL_REMOTE);
        final long buf = rig.bufferA(KeyRig.PAGE);
        final MemoryRegion mr = rig.pdA.regMr(buf, KeyRig.PAGE, RuleRig.LOCAL);
        for (int i = 1; i <= 3; i++)
        {
            rig.qpA.postRecv(RecvWr.of(i, new Sge(buf, 64, mr.lkey())));
        }
        rig.qpA.modifyToError();
        // One of the flushes polled; the others wait in the CQ when the QP goes to RESET.
        assertThat(rig.cqA.poll(1)).singleElement().satisfies(wc -> {
            assertThat(wc.status()).isEqualTo(WcStatus.WR_FLUSH_ERR);
            assertThat(wc.wrId()).isEqualTo(1);
        });
        // Another QP of the same CQ, in error with a flushed receive of its own.
        final QueuePair other = rig.pdA.createQp(QpInitAttr.rc(rig.cqA));
        other.modifyToInit(RuleRig.LOCAL);
        other.postRecv(RecvWr.of(90, new Sge(buf, 64, mr.lkey())));
        other.modifyToError();

        reset(rig.qpA);

        final List<WorkCompletion> left = rig.cqA.poll(64);
        final boolean cleans = p.follows(ProviderRule.RESET_CLEANS_CQ);
        assertThat(cleans).as("the provider of %s cleans the CQ", profile)
            .isEqualTo(p.driver().equals("mlx4") || p.driver().equals("mlx5") || p.driver().equals("hns"));
        assertThat(left).as("completions of the other QP stay").anyMatch(wc -> wc.qpNum() == other.qpNum()
            && wc.wrId() == 90 && wc.status() == WcStatus.WR_FLUSH_ERR);
        assertThat(left.stream().filter(wc -> wc.qpNum() == rig.qpA.qpNum()).count())
            .as("flushes of the reset QP left in the CQ").isEqualTo(cleans ? 0 : 2);
    }
}
