package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpState;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link ProviderRule#RESET_KEEPS_QP_ATTRS}: {@code ibv_query_qp} of a QP taken from RTS through ERR to RESET reports
 * the attributes it was given on rxe ({@code rxe_qp_reset} leaves {@code qp->attr}) and 0 on mlx4 and mlx5
 * ({@code mlx4_ib_query_qp} fills nothing for a QP in RESET; mlx5 reads the reset QP context).
 */
class QueryAfterResetTest
{
    @ParameterizedTest
    @ValueSource(strings = {"connectx3", "connectx5", "rxe", "rxe-legacy"})
    void theAttributesAfterResetAreKeptOnRxeAndZeroOnMlx(final String profile)
    {
        final DeviceProfile p = DeviceProfiles.byName(profile);
        final RuleRig rig = RuleRig.connected(p, RuleRig.ALL_REMOTE);
        final QpAttr before = rig.qpA.query();
        rig.qpA.modifyToError();
        final QpAttr.Builder reset = QpAttr.builder().state(QpState.RESET);
        rig.qpA.modify(reset.build(), reset.mask());

        final QpAttr after = rig.qpA.query();

        assertThat(after.qpState()).isEqualTo(QpState.RESET);
        assertThat(p.follows(ProviderRule.RESET_KEEPS_QP_ATTRS)).isEqualTo(p.driver().equals("rxe"));
        if (p.follows(ProviderRule.RESET_KEEPS_QP_ATTRS))
        {
            assertThat(after).usingRecursiveComparison().ignoringFields("qpState", "curQpState", "sqDraining")
                .isEqualTo(before);
            assertThat(after.destQpNum()).isEqualTo(rig.qpB.qpNum());
        }
        else
        {
            assertThat(before.portNum()).isEqualTo(1);
            assertThat(after.portNum()).isZero();
            assertThat(after.destQpNum()).isZero();
            assertThat(after.timeout()).isZero();
            assertThat(after.retryCnt()).isZero();
            assertThat(after.pathMtu()).isZero();
            assertThat(after.qpAccessFlags()).isEmpty();
            assertThat(after.ahAttr()).isNull();
        }
    }
}
