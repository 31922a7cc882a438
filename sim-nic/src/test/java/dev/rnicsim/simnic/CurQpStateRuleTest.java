package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.VerbsException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link ProviderRule#CUR_QP_STATE_CHECKED_BY_FIRMWARE}: every driver checks the transition from the cur_qp_state it
 * is given against the kernel's table; mlx4 and mlx5 then send the device the command of that transition, which a QP
 * in another state refuses (EINVAL, nothing changed), while rxe (and the drivers modelled as it) moves the QP from
 * where it is. (No transition to RESET or ERR takes IBV_QP_CUR_STATE in the table, so the device's 2RST and 2ERR
 * commands, taken from any state, are never sent for a wrong one.)
 */
class CurQpStateRuleTest
{
    /** An RC QP in INIT, and the attributes of RTR -> RTS claimed from RTR. */
    private static QueuePair inInit(final RuleRig rig)
    {
        final QueuePair qp = rig.pdA.createQp(QpInitAttr.rc(rig.cqA));
        qp.modifyToInit(RuleRig.LOCAL);
        return qp;
    }

    private static QpAttr.Builder rtsClaimingRtr()
    {
        return QpAttr.builder().state(QpState.RTS).curState(QpState.RTR).timeout(14).retryCnt(7).rnrRetry(7)
            .sqPsn(0).maxRdAtomic(1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx3", "connectx4", "connectx5", "connectx7", "rxe", "siw"})
    void aCurQpStateTheQpIsNotInIsRefusedWhereTheDeviceChecksItAndMovesTheQpElsewhere(final String profile)
    {
        final DeviceProfile p = DeviceProfiles.byName(profile);
        final RuleRig rig = RuleRig.connected(p, RuleRig.ALL_REMOTE);
        final QueuePair qp = inInit(rig);
        final QpAttr.Builder claim = rtsClaimingRtr();
        final boolean checked = p.follows(ProviderRule.CUR_QP_STATE_CHECKED_BY_FIRMWARE);
        assertThat(checked).as("the device of %s checks cur_qp_state", profile)
            .isEqualTo(p.driver().equals("mlx4") || p.driver().equals("mlx5"));
        if (checked)
        {
            assertThatThrownBy(() -> qp.modify(claim.build(), claim.mask())).isInstanceOf(VerbsException.class)
                .satisfies(e -> assertThat(((VerbsException) e).errno()).isEqualTo(22))
                .hasMessageContaining("is in INIT, not in cur_qp_state RTR")
                .hasMessageContaining("RTR -> RTS command")
                .hasMessageContaining("CUR_QP_STATE_CHECKED_BY_FIRMWARE")
                .hasMessageContaining("fix: leave IBV_QP_CUR_STATE out of attr_mask");
            assertThat(qp.query().qpState()).as("nothing changed").isEqualTo(QpState.INIT);
        }
        else
        {
            qp.modify(claim.build(), claim.mask());
            assertThat(qp.query().qpState()).as("rxe_qp_from_attr moves it from where it is").isEqualTo(QpState.RTS);
        }
    }

    @Test
    void aCurQpStateWithoutAStateIsRefusedOnMlx5WhenTheQpIsElsewhere()
    {
        // RTS -> RTS without IBV_QP_STATE passes the table; the device gets RTS2RTS_QP for a QP in RESET
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final QpAttr.Builder claim = QpAttr.builder().curState(QpState.RTS);

        assertThatThrownBy(() -> rig.qpA.modify(claim.build(), claim.mask())).isInstanceOf(VerbsException.class)
            .hasMessageContaining("is in RESET, not in cur_qp_state RTS");
        assertThat(rig.qpA.query().qpState()).isEqualTo(QpState.RESET);
    }

    @Test
    void theQpsOwnStateAsCurQpStateIsTakenOnMlx5()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final QpAttr.Builder rtsToRts = QpAttr.builder().state(QpState.RTS).curState(QpState.RTS).minRnrTimer(12);

        rig.qpA.modify(rtsToRts.build(), rtsToRts.mask());

        assertThat(rig.qpA.query().qpState()).isEqualTo(QpState.RTS);
        assertThat(rig.qpA.query().minRnrTimer()).isEqualTo(12);
    }
}
