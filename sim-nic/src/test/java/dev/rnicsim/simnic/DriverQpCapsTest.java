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
 * What {@code ibv_create_qp} writes back on mlx4 ({@link Mlx4QueueSizes}) and irdma ({@link IrdmaQueueSizes}), and
 * what each refuses when the queues the provider sizes are past the device's bounds.
 */
class DriverQpCapsTest
{
    private static QueuePair create(final DeviceProfile profile, final QpType type, final QpCap cap)
    {
        final RuleRig rig = RuleRig.unconnected(profile);
        return rig.pdB.createQp(new QpInitAttr(rig.cqB, rig.cqB, type, cap, false));
    }

    /** Asks for a QP that must be refused with EINVAL and leave nothing behind; returns the refusal. */
    private static VerbsException refused(final DeviceProfile profile, final QpCap cap)
    {
        final RuleRig rig = RuleRig.unconnected(profile);
        final int liveBefore = rig.deviceB.objects().qpsLive();
        final long pinnedBefore = rig.deviceB.counter(SimCounter.PINNED_BYTES);
        final VerbsException e = catchThrowableOfType(VerbsException.class,
            () -> rig.pdB.createQp(new QpInitAttr(rig.cqB, rig.cqB, QpType.RC, cap, false)));
        assertThat(e).as("refused").isNotNull();
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.getMessage()).contains("nothing was created");
        assertThat(rig.deviceB.objects().qpsLive()).isEqualTo(liveBefore);
        assertThat(rig.deviceB.counter(SimCounter.PINNED_BYTES)).isEqualTo(pinnedBefore);
        return e;
    }

    @Test
    void shouldReportTheCapacitiesLibmlx4SizedItsWqesFor()
    {
        final DeviceProfile cx3 = DeviceProfiles.connectx3();
        // RC, 3 SGEs or 32 inline bytes (2 inline headers): 48 + 16 (raddr) + 16 (ctrl) = 80 -> 128-byte WQE;
        // 2048 / 128 + 1 = 17 spare, 10 + 17 -> 32 WQEs: 15 work requests; (128 - 32) / 16 = 6 SGEs,
        // 96 - 2 x 4 = 88 inline bytes; receives: 20 -> 32, 3 SGEs -> 4
        assertThat(create(cx3, QpType.RC, new QpCap(10, 20, 3, 3, 32)).cap())
            .isEqualTo(new QpCap(15, 32, 6, 4, 88));
        // RC of one SGE: an atomic's 48 bytes + 16 -> 64-byte WQE, 33 spare, 1 + 33 -> 64 WQEs: 31; 2 SGEs, 28 inline
        assertThat(create(cx3, QpType.RC, new QpCap(1, 1, 1, 1, 0)).cap()).isEqualTo(new QpCap(31, 1, 2, 1, 28));
        // UD: 16 + 48 (datagram) + 16 -> 128-byte WQE: 15 work requests, 4 SGEs, 60 inline bytes
        assertThat(create(cx3, QpType.UD, new QpCap(10, 10, 1, 1, 0)).cap()).isEqualTo(new QpCap(15, 16, 4, 1, 60));
        // 0 receive work requests and SGEs are raised to 1 by libmlx4 before the kernel rounds them
        assertThat(create(cx3, QpType.RC, new QpCap(4, 0, 1, 0, 0)).cap().maxRecvWr()).isEqualTo(1);
    }

    @Test
    void shouldRefuseAnMlx4SendWqeLargerThanTheDevicesLargestDescriptor()
    {
        final DeviceProfile cx3 = DeviceProfiles.connectx3();
        // 1000 inline bytes on RC take a 2048-byte WQE (ilog2 11 > 10); 928 fill a 1024-byte WQE exactly
        final VerbsException e = refused(cx3, new QpCap(16, 16, 1, 1, 1000));
        assertThat(e.getMessage()).contains("max_inline_data=1000", "send WQE of 2048 bytes", "1024 bytes",
            "mlx4_calc_sq_wqe_size", "set_user_sq_size", "ask for at most 928 inline bytes");
        assertThat(create(cx3, QpType.RC, new QpCap(16, 16, 1, 1, 928)).cap().maxInlineDataBytes()).isEqualTo(928);
        assertThat(refused(cx3, new QpCap(16, 16, 1, 1, 929)).getMessage()).contains("2048 bytes");
    }

    @Test
    void shouldReportTheWorkRequestsLibirdmaQueuesHold()
    {
        final DeviceProfile e810 = DeviceProfiles.e810();
        // send: 3 SGEs + 1 and 32 inline bytes -> 4-quanta WQEs; 40 + 258 -> 512 quanta: (512 - 258) >> 2 = 63;
        // receive: 3 SGEs -> 2 quanta; 40 + 1 -> 64: 63 >> 1 = 31; SGEs and inline bytes as asked
        assertThat(create(e810, QpType.RC, new QpCap(10, 20, 3, 3, 32)).cap())
            .isEqualTo(new QpCap(63, 31, 3, 3, 32));
        // one SGE: 2-quanta send WQEs (2 + 258 -> 512: 127); receives of 1 quantum, at least 8: 7
        assertThat(create(e810, QpType.RC, new QpCap(1, 1, 1, 1, 0)).cap()).isEqualTo(new QpCap(127, 7, 1, 1, 0));
        // the quanta bound, not max_qp_wr (8127): 9000 one-SGE work requests fit 32768 quanta
        assertThat(create(e810, QpType.RC, new QpCap(9000, 1, 1, 1, 0)).cap().maxSendWr()).isEqualTo(16255);
        assertThat(create(DriverProfiles.e810Iwarp(), QpType.RC, new QpCap(10, 20, 3, 3, 32)).cap().maxSendWr())
            .isEqualTo(63);
    }

    @Test
    void shouldRefuseAnIrdmaQueuePastTheHardwaresQuanta()
    {
        final DeviceProfile e810 = DeviceProfiles.e810();
        assertThat(refused(e810, new QpCap(40000, 16, 1, 1, 0)).getMessage())
            .contains("max_send_wr=40000", "32768 quanta", "irdma_ucreate_qp");
        assertThat(refused(e810, new QpCap(-1, 16, 1, 1, 0)).getMessage()).contains("max_send_wr=4294967295");
        assertThat(refused(e810, new QpCap(20000, 16, 1, 1, 0)).getMessage())
            .contains("65536 quanta", "irdma_get_sqdepth", "ask for at most 16255");
        assertThat(refused(e810, new QpCap(16, 20000, 1, 6, 0)).getMessage())
            .contains("max_recv_wr=20000", "irdma_get_rqdepth", "ask for at most 8191");
        assertThat(create(e810, QpType.RC, new QpCap(16255, 8191, 1, 6, 0)).cap())
            .isEqualTo(new QpCap(16255, 8191, 1, 6, 0));
    }

    @Test
    void shouldKeepTheCapacitiesAskedForOnTheDriversNotSized()
    {
        for (final DeviceProfile p : java.util.List.of(DriverProfiles.bnxtRe(), DriverProfiles.hns(),
            DriverProfiles.cxgb4(), DriverProfiles.qedr(), DriverProfiles.siw()))
        {
            final QpCap asked = new QpCap(10, 20, 1, 1, 16);
            assertThat(create(p, QpType.RC, asked).cap()).as(p.name()).isEqualTo(asked);
        }
    }
}
