package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link QpContextFields}: a {@code dest_qp_num} of 2^24 or more is never refused; mlx5 keeps its low 24 bits
 * ({@code MLX5_SET(qpc, qpc, remote_qpn, ...)}), rxe keeps it whole ({@code rxe_qp_from_attr}) and both send to the
 * QP the low 24 bits name ({@code bth_init}); a {@code max_dest_rd_atomic} or {@code max_rd_atomic} of 0 is one
 * resource on mlx5 and mlx4 (the QP context's log field left at 0) and none on rxe.
 */
class QpContextFieldsTest
{
    private static final Set<Access> ALL = EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC);

    /** Brings both QPs to RTS; a's dest_qp_num is {@code highBits | b's number}, b's max_dest_rd_atomic as given. */
    private static RuleRig connect(final String profile, final int highBits, final int responderDepth)
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.byName(profile));
        for (final QueuePair qp : List.of(rig.qpA, rig.qpB))
        {
            final QueuePair other = qp == rig.qpA ? rig.qpB : rig.qpA;
            for (final QpAttr.Builder b : List.of(
                QpAttr.builder().state(QpState.INIT).pkeyIndex(0).port(1).accessFlags(ALL),
                QpAttr.builder().state(QpState.RTR).av(AhAttr.toGid(other.address().gid())).pathMtu(QpAttr.MTU_4096)
                    .destQpNum(qp == rig.qpA ? highBits | other.qpNum() : other.qpNum()).rqPsn(other.address().psn())
                    .maxDestRdAtomic(qp == rig.qpB ? responderDepth : 4).minRnrTimer(12),
                QpAttr.builder().state(QpState.RTS).timeout(14).retryCnt(7).rnrRetry(7).sqPsn(qp.address().psn())
                    .maxRdAtomic(qp == rig.qpA ? 4 : 0)))
            {
                qp.modify(b.build(), b.mask());
            }
        }
        return rig;
    }

    /** Reads 8 bytes of b's memory from a; returns the completion status, checking the bytes on success. */
    private static WcStatus read(final RuleRig rig)
    {
        final long target = rig.bufferB(4096);
        rig.processB().write(target, RuleRig.pattern(8, 5));
        final MemoryRegion mr = rig.pdB.regMr(target, 4096, RuleRig.REMOTE_ALL);
        final long local = rig.bufferA(4096);
        final MemoryRegion localMr = rig.pdA.regMr(local, 4096, RuleRig.REMOTE_ALL);
        rig.qpA.postSend(SendWr.read(7, List.of(new Sge(local, 8, localMr.lkey())), target, mr.rkey()));
        final List<WorkCompletion> wcs = rig.pollA();
        assertThat(wcs).hasSize(1);
        if (wcs.getFirst().status() == WcStatus.SUCCESS)
        {
            assertThat(rig.processA().read(local, 8)).isEqualTo(RuleRig.pattern(8, 5));
        }
        return wcs.getFirst().status();
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx5", "connectx3", "bnxt_re"})
    void aDestQpNumAbove24BitsIsKeptInTheQpContextsTwentyFourBits(final String profile)
    {
        final RuleRig rig = connect(profile, 0x5a000000, 4);

        assertThat(rig.qpA.state()).isEqualTo(QpState.RTS);
        assertThat(rig.qpA.query().destQpNum()).as("MLX5_GET(qpc, qpc, remote_qpn)").isEqualTo(rig.qpB.qpNum());
        assertThat(read(rig)).as("packets go to the QP of the low 24 bits").isEqualTo(WcStatus.SUCCESS);
    }

    @ParameterizedTest
    @ValueSource(strings = {"rxe", "rxe-legacy"})
    void rxeKeepsADestQpNumAbove24BitsWholeAndSendsToItsLow24Bits(final String profile)
    {
        final RuleRig rig = connect(profile, 0x5a000000, 4);

        assertThat(rig.qpA.query().destQpNum()).as("rxe_qp_to_attr answers qp->attr").isEqualTo(
            0x5a000000 | rig.qpB.qpNum());
        assertThat(read(rig)).as("bth_init: qpn & BTH_QPN_MASK").isEqualTo(WcStatus.SUCCESS);
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx5", "connectx3", "connectx6lx"})
    void mlxKeepsADepthOfZeroAsOneResourceSoTheResponderAnswersARead(final String profile)
    {
        final RuleRig rig = connect(profile, 0, 0);

        assertThat(rig.qpB.query().maxDestRdAtomic()).as("1 << log_rra_max, left at 0").isEqualTo(1);
        assertThat(rig.qpB.query().maxRdAtomic()).as("1 << log_sra_max, left at 0").isEqualTo(1);
        assertThat(read(rig)).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.qpB.state()).isEqualTo(QpState.RTS);
    }

    @ParameterizedTest
    @ValueSource(strings = {"rxe", "e810"})
    void elsewhereADepthOfZeroIsKeptAndTheResponderNaksARead(final String profile)
    {
        final RuleRig rig = connect(profile, 0, 0);

        assertThat(rig.qpB.query().maxDestRdAtomic()).isZero();
        assertThat(read(rig)).as("rxe check_resource: NAK invalid request").isEqualTo(WcStatus.REM_INV_REQ_ERR);
        assertThat(rig.qpB.state()).isEqualTo(QpState.ERR);
    }
}
