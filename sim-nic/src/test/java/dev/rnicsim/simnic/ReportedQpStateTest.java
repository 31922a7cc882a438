package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpState;
import java.util.EnumSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link ReportedQpState}: an iWARP driver reports a QP in RESET as INIT (siw {@code siw_qp_state_to_ib_qp_state},
 * cxgb4 {@code to_ib_qp_state}; rdma-core tests/test_qp.py {@code query_qp_common_test}); the others answer RESET.
 */
class ReportedQpStateTest
{
    @ParameterizedTest
    @ValueSource(strings = {"siw", "cxgb4", "e810-iwarp", "erdma", "connectx5", "rxe", "e810"})
    void aQpInResetIsReportedAsInitOnIwarpOnly(final String profile)
    {
        final DeviceProfile p = DeviceProfiles.byName(profile);
        final RuleRig rig = RuleRig.unconnected(p);
        final QpState expected = p.traits().transport() == DriverTraits.Transport.IWARP ? QpState.INIT : QpState.RESET;

        assertThat(rig.qpA.query().qpState()).as("a new QP").isEqualTo(expected);
        assertThat(rig.qpA.query().curQpState()).isEqualTo(expected);
        assertThat(rig.qpA.state()).as("it behaves as in RESET").isEqualTo(QpState.RESET);

        final QpAttr.Builder init = QpAttr.builder().state(QpState.INIT).pkeyIndex(0).port(1)
            .accessFlags(EnumSet.of(Access.REMOTE_WRITE));
        rig.qpA.modify(init.build(), init.mask());
        final QpAttr.Builder reset = QpAttr.builder().state(QpState.RESET);
        rig.qpA.modify(reset.build(), reset.mask());
        assertThat(rig.qpA.query().qpState()).as("modified back to RESET").isEqualTo(expected);
    }
}
