package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.VerbsException;
import org.junit.jupiter.api.Test;

/**
 * The most inline data each driver's {@code create_qp} takes ({@link InlineDataLimits}): the bound itself succeeds,
 * one byte more is EINVAL with nothing created.
 */
class InlineDataLimitsTest
{
    private static QueuePair create(final RuleRig rig, final int inlineBytes)
    {
        // EFA takes UD (and SRD) only
        final QpType type = rig.deviceB.profile().traits().acceptsQpType(QpType.RC) ? QpType.RC : QpType.UD;
        return rig.pdB.createQp(new QpInitAttr(rig.cqB, rig.cqB, type, new QpCap(16, 16, 1, 1, inlineBytes),
            false));
    }

    /** Creates a QP with the bound, then one with a byte more, which must fail with nothing created. */
    private static VerbsException boundThenOneMore(final DeviceProfile profile, final int bound)
    {
        final RuleRig rig = RuleRig.unconnected(profile);
        assertThat(create(rig, bound)).as(profile.name()).isNotNull();
        final int live = rig.deviceB.objects().qpsLive();
        final VerbsException e = catchThrowableOfType(VerbsException.class, () -> create(rig, bound + 1));
        assertThat(e).as(profile.name()).isNotNull();
        assertThat(e.errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(rig.deviceB.objects().qpsLive()).as("nothing created").isEqualTo(live);
        return e;
    }

    @Test
    void shouldTakeEachDriversOwnInlineBoundAndRefuseOneByteMore()
    {
        // rxe_param.h RXE_MAX_INLINE_DATA (512 today, 400 in older kernels), irdma IRDMA_MAX_INLINE_DATA_SIZE,
        // siw.h SIW_MAX_INLINE, qed ROCE_REQ_MAX_INLINE_DATA_SIZE.
        assertThat(boundThenOneMore(DeviceProfiles.rxe(), 512).getMessage())
            .contains("max_inline_data=513 > 512 bytes, the most the rxe driver takes")
            .contains("rxe_qp_chk_cap").contains("nothing was created");
        assertThat(boundThenOneMore(DeviceProfiles.rxeLegacy(), 400).getMessage()).contains("> 400 bytes");
        assertThat(boundThenOneMore(DeviceProfiles.e810(), 101).getMessage())
            .contains("irdma_validate_qp_attrs");
        assertThat(boundThenOneMore(DriverProfiles.e810Iwarp(), 101).getMessage()).contains("> 101 bytes");
        assertThat(boundThenOneMore(DriverProfiles.siw(), 80).getMessage()).contains("SIW_MAX_INLINE");
        assertThat(boundThenOneMore(DriverProfiles.qedr(), 256).getMessage()).contains("qedr_check_qp_attrs");
        assertThat(boundThenOneMore(DeviceProfiles.connectx5(), 1024).getMessage())
            .contains("Ask for at most 1024 inline bytes");
    }

    @Test
    void efaTakesItsDevicesInlineBufSizeAndRefusesOneByteMore()
    {
        // efa_verbs.c efa_qp_validate_cap: max_inline_data above the device's inline_buf_size is EINVAL
        for (final DeviceProfile efa : new DeviceProfile[] {DriverProfiles.efaGen1(), DriverProfiles.efa(),
            DriverProfiles.efaGen3()})
        {
            assertThat(boundThenOneMore(efa, 32).getMessage()).contains("max_inline_data=33 > 32 bytes")
                .contains("efa_qp_validate_cap: the device's inline_buf_size");
        }
    }

    @Test
    void theBoundIsAPropertyOfTheProfileNotOfTheDriversName()
    {
        final DeviceProfile cx5 = DeviceProfiles.connectx5();
        final DeviceProfile small = cx5.withTraits(cx5.traits().withInlineLimit(new InlineLimit(100, "a test's bound")))
            .withName("cx5-small-inline");

        assertThat(boundThenOneMore(small, 100).getMessage()).contains("> 100 bytes").contains("a test's bound");
    }

    @Test
    void shouldRefuseANegativeInlineSizeEverywhere()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final VerbsException e = catchThrowableOfType(VerbsException.class, () -> create(rig, -1));
        assertThat(e.errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(e.getMessage()).contains("max_inline_data=-1");
    }
}
