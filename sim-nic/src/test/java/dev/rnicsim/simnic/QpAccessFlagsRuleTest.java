package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.VerbsException;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link ProviderRule#QP_ACCESS_FLAGS_CHECKED}: ibv_modify_qp checks qp_access_flags only on rxe, against
 * {@code RXE_ACCESS_SUPPORTED_QP} (every flag but ZERO_BASED and HUGETLB: {@code rxe_qp_chk_attr}); mlx5 takes any
 * (uverbs passes them on, {@code to_mlx5_access_flags} reads the remote bits). rdma-core's tests/test_odp.py gives its
 * RC QPs the MR's access, ON_DEMAND included, and moves them to INIT on both.
 */
class QpAccessFlagsRuleTest
{
    private static final Set<Access> ODP_RIGHTS = EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND,
        Access.REMOTE_ATOMIC, Access.REMOTE_READ, Access.REMOTE_WRITE);

    @ParameterizedTest
    @ValueSource(strings = {"connectx5", "connectx3", "rxe", "rxe-legacy"})
    void onDemandInQpAccessFlagsIsTakenAtInit(final String profile)
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.byName(profile));
        final QueuePair qp = rig.pdA.createQp(dev.rnicsim.verbs.QpInitAttr.rc(rig.cqA));

        qp.modifyToInit(ODP_RIGHTS);

        assertThat(qp.state()).isEqualTo(QpState.INIT);
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx5", "rxe"})
    void zeroBasedInQpAccessFlagsIsRefusedOnlyByRxe(final String profile)
    {
        final DeviceProfile p = DeviceProfiles.byName(profile);
        final RuleRig rig = RuleRig.unconnected(p);
        final QueuePair qp = rig.pdA.createQp(dev.rnicsim.verbs.QpInitAttr.rc(rig.cqA));
        final Set<Access> rights = EnumSet.of(Access.LOCAL_WRITE, Access.ZERO_BASED);

        if (p.follows(ProviderRule.QP_ACCESS_FLAGS_CHECKED))
        {
            final VerbsException e = catchThrowableOfType(VerbsException.class, () -> qp.modifyToInit(rights));
            assertThat(e).isNotNull();
            assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
            assertThat(e.getMessage()).contains("ZERO_BASED").contains("rxe_qp_chk_attr");
            assertThat(qp.state()).as("a refused modify changes nothing").isEqualTo(QpState.RESET);
        }
        else
        {
            qp.modifyToInit(rights);
            assertThat(qp.state()).isEqualTo(QpState.INIT);
        }
        assertThat(p.follows(ProviderRule.QP_ACCESS_FLAGS_CHECKED)).isEqualTo(profile.equals("rxe"));
    }
}
