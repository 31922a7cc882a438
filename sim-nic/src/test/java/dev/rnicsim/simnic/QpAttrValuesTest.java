package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.VerbsException;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link QpAttrValues}: what ibv_modify_qp does with values wider than the QP context's fields. PSNs are masked to 24
 * bits everywhere (core {@code _ib_modify_qp}); mlx5 masks {@code timeout}, {@code retry_cnt}, {@code rnr_retry} and
 * {@code min_rnr_timer} to 5, 3, 3 and 5 bits ({@code MLX5_SET}); rxe refuses a {@code timeout} above 31 and keeps the
 * other three whole ({@code rxe_qp_chk_attr}, {@code rxe_qp_from_attr}); rxe takes any {@code max_dest_rd_atomic},
 * mlx5 refuses one above {@code max_qp_rd_atom}.
 */
class QpAttrValuesTest
{
    private static QpAttr.Builder init()
    {
        return QpAttr.builder().state(QpState.INIT).pkeyIndex(0).port(1).accessFlags(EnumSet.of(Access.REMOTE_WRITE));
    }

    private static QpAttr.Builder rtr(final QueuePair remote)
    {
        return QpAttr.builder().state(QpState.RTR).av(AhAttr.toGid(remote.address().gid())).pathMtu(QpAttr.MTU_4096)
            .destQpNum(remote.qpNum()).rqPsn(remote.address().psn()).maxDestRdAtomic(4).minRnrTimer(12);
    }

    private static QpAttr.Builder rts()
    {
        return QpAttr.builder().state(QpState.RTS).timeout(14).retryCnt(7).rnrRetry(7).sqPsn(0x123).maxRdAtomic(4);
    }

    private static void modify(final QueuePair qp, final QpAttr.Builder b)
    {
        qp.modify(b.build(), b.mask());
    }

    private static QueuePair inRtr(final RuleRig rig)
    {
        modify(rig.qpA, init());
        modify(rig.qpA, rtr(rig.qpB));
        return rig.qpA;
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx5", "rxe", "connectx3"})
    void psnsAbove24BitsAreMaskedNotRefused(final String profile)
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.byName(profile));
        modify(rig.qpA, init());
        modify(rig.qpA, rtr(rig.qpB).rqPsn(0x7f123456));
        modify(rig.qpA, rts().sqPsn(0xff000042));

        final QpAttr q = rig.qpA.query();
        assertThat(q.qpState()).isEqualTo(QpState.RTS);
        assertThat(q.rqPsn()).isEqualTo(0x123456);
        assertThat(q.sqPsn()).isEqualTo(0x42);
    }

    @Test
    void mlx5KeepsTheLowBitsOfEachNarrowField()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        modify(rig.qpA, init());
        modify(rig.qpA, rtr(rig.qpB).minRnrTimer(33));
        modify(rig.qpA, rts().timeout(46).retryCnt(9).rnrRetry(15));

        final QpAttr q = rig.qpA.query();
        assertThat(q.timeout()).as("46 & 0x1f").isEqualTo(14);
        assertThat(q.retryCnt()).as("9 & 7").isEqualTo(1);
        assertThat(q.rnrRetry()).as("15 & 7: retries forever").isEqualTo(7);
        assertThat(q.minRnrTimer()).as("33 & 0x1f").isEqualTo(1);
        assertThat(((SimQp)rig.qpA).rnrRetry).isEqualTo(7);
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx5", "rxe"})
    void readAtomicDepthsAreKeptRoundedUpToAPowerOfTwo(final String profile)
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.byName(profile));
        modify(rig.qpA, init());
        modify(rig.qpA, rtr(rig.qpB).maxDestRdAtomic(3));
        modify(rig.qpA, rts().maxRdAtomic(5));

        final QpAttr q = rig.qpA.query();
        assertThat(q.maxDestRdAtomic()).isEqualTo(4);
        assertThat(q.maxRdAtomic()).isEqualTo(8);
    }

    @Test
    void rxeKeepsAResponderDepthAbove128AsZeroInItsU8Field()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.rxe());
        modify(rig.qpA, init());
        modify(rig.qpA, rtr(rig.qpB).maxDestRdAtomic(200));

        assertThat(rig.qpA.query().maxDestRdAtomic()).as("roundup_pow_of_two(200) = 256 in a u8").isZero();
        assertThat(ResponderResources.check(((SimQp)rig.qpA).attrs.maxDestRdAtomic,
            SendWr.read(1, List.of(), 0x1000, 1)))
            .as("rxe check_resource reads qp->attr.max_dest_rd_atomic").isNotNull();
    }

    @Test
    void rxeRefusesATimeoutAbove31AndChangesNothing()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.rxe());
        final QueuePair qp = inRtr(rig);

        final VerbsException e = catchThrowableOfType(VerbsException.class, () -> modify(qp, rts().timeout(32)));

        assertThat(e).isNotNull();
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.detail()).contains("timeout=32").contains("rxe_qp_chk_attr");
        assertThat(qp.state()).isEqualTo(QpState.RTR);
    }

    @Test
    void rxeKeepsRetryCountsAndTheRnrTimerWhole()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.rxe());
        modify(rig.qpA, init());
        modify(rig.qpA, rtr(rig.qpB).minRnrTimer(40));
        modify(rig.qpA, rts().retryCnt(9).rnrRetry(15));

        final QpAttr q = rig.qpA.query();
        assertThat(q.retryCnt()).isEqualTo(9);
        assertThat(q.rnrRetry()).isEqualTo(15);
        assertThat(q.minRnrTimer()).isEqualTo(40);
        final SimQp sim = (SimQp)rig.qpA;
        assertThat(sim.rnrRetry).as("15 retries, not forever: only 7 is").isEqualTo(15);
        assertThat(sim.minRnrTimer).as("the RNR NAK carries the low 5 bits").isEqualTo(40 & 0x1f);
    }

    @Test
    void rxeTakesAnyMaxDestRdAtomicButMlx5RefusesOneAboveMaxQpRdAtom()
    {
        final RuleRig rxe = RuleRig.unconnected(DeviceProfiles.rxe());
        final int rxeLimit = rxe.deviceA.profile().attributes().maxQpRdAtom();
        modify(rxe.qpA, init());
        modify(rxe.qpA, rtr(rxe.qpB).maxDestRdAtomic(rxeLimit + 1));
        assertThat(rxe.qpA.state()).isEqualTo(QpState.RTR);

        final RuleRig mlx5 = RuleRig.unconnected(DeviceProfiles.connectx5());
        final int limit = mlx5.deviceA.profile().attributes().maxQpRdAtom();
        modify(mlx5.qpA, init());
        final VerbsException e = catchThrowableOfType(VerbsException.class,
            () -> modify(mlx5.qpA, rtr(mlx5.qpB).maxDestRdAtomic(limit + 1)));
        assertThat(e).isNotNull();
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.detail()).contains("max_dest_rd_atomic");
        assertThat(mlx5.qpA.state()).isEqualTo(QpState.INIT);
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx5", "rxe"})
    void maxRdAtomicAboveTheDeviceIsRefusedEverywhere(final String profile)
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.byName(profile));
        final QueuePair qp = inRtr(rig);
        final int tooDeep = rig.deviceA.profile().attributes().maxQpInitRdAtom() + 1;

        final VerbsException e = catchThrowableOfType(VerbsException.class,
            () -> modify(qp, rts().maxRdAtomic(tooDeep)));

        assertThat(e).isNotNull();
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(qp.state()).isEqualTo(QpState.RTR);
    }

    @Test
    void thePeersResponderResourcesDoNotRaiseThisDevicesMaxRdAtomic()
    {
        // perftest #114: max_rd_atomic set to the peer's out_reads (a qedr's 32) on a ConnectX-4 that takes 16
        final RuleRig rig = RuleRig.unconnectedPair(DeviceProfiles.byName("connectx4"), DriverProfiles.qedr());
        final int peers = rig.deviceB.profile().attributes().maxQpRdAtom();
        assertThat(peers).isEqualTo(32);
        final QueuePair qp = inRtr(rig);

        final VerbsException e = catchThrowableOfType(VerbsException.class, () -> modify(qp, rts().maxRdAtomic(peers)));

        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.detail()).contains("max_rd_atomic=32 > max_qp_init_rd_atom=16")
            .contains("the smaller of this device's max_qp_init_rd_atom and the peer's max_dest_rd_atomic");
        modify(qp, rts().maxRdAtomic(16));
        assertThat(qp.state()).isEqualTo(QpState.RTS);
    }

    @Test
    void aValueOutsideTheCFieldIsRefusedOnTheJavaApi()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final QueuePair qp = inRtr(rig);

        final VerbsException e = catchThrowableOfType(VerbsException.class, () -> modify(qp, rts().retryCnt(256)));

        assertThat(e).isNotNull();
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.detail()).contains("retry_cnt=256").contains("uint8_t");
    }
}
