package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WrOpcode;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What {@code ibv_create_qp} writes back into {@code cap} on each provider ({@link QpCaps}), that the queues hold
 * exactly that, and which receive capacities a QP on an SRQ has checked ({@link RecvCapsOnSrq}).
 */
class QpCapsReportedTest
{
    private static QueuePair create(final DeviceProfile profile, final QpType type, final QpCap cap)
    {
        final RuleRig rig = RuleRig.unconnected(profile);
        return rig.pdB.createQp(new QpInitAttr(rig.cqB, rig.cqB, type, cap, false));
    }

    @Test
    void shouldReportTheCapacitiesLibmlx5SizedItsWqesFor()
    {
        // RC without send_ops_flags: 192 bytes of segments (control + UMR for BIND_MW/LOCAL_INV); 4 SGEs = 256,
        // 64 inline bytes = 192 + 80 = 272, so a WQE of 320 bytes: 124 inline bytes, 32 KiB / 320 = 102 WQEs
        assertThat(create(DeviceProfiles.connectx5(), QpType.RC, new QpCap(64, 64, 4, 4, 64)).cap())
            .isEqualTo(new QpCap(102, 64, 4, 4, 124));
        // 1 SGE: a WQE of 256 bytes, 60 inline bytes; one receive of 16 bytes in a queue of at least 64: 4 receives
        assertThat(create(DeviceProfiles.connectx5(), QpType.RC, new QpCap(1, 1, 1, 1, 0)).cap())
            .isEqualTo(new QpCap(1, 4, 1, 1, 60));
        // UD: control + datagram segment = 64 bytes; 1 SGE = 80 -> 128-byte WQE, 60 inline, 2 KiB / 128 = 16 WQEs
        assertThat(create(DeviceProfiles.connectx5(), QpType.UD, new QpCap(10, 10, 1, 1, 0)).cap())
            .isEqualTo(new QpCap(16, 16, 1, 1, 60));
        // receives of 3 SGEs take 64-byte WQEs of 4 SGEs
        assertThat(create(DeviceProfiles.connectx5(), QpType.RC, new QpCap(4, 5, 1, 3, 0)).cap().maxRecvSge())
            .isEqualTo(4);
    }

    @Test
    void shouldReportLibmlx5sMinusFourInlineBytesForASendWqeOfItsSegmentsAlone()
    {
        // mlx5_calc_sq_size: max_inline_data = WQE - sq_overhead - 4; RC (192 bytes of segments) and UD (64) of no SGE
        // and no inline data take a WQE of the segments alone: -4, 4294967292 in attr->cap
        assertThat(create(DeviceProfiles.connectx5(), QpType.RC, new QpCap(4, 4, 0, 1, 0)).cap().maxInlineDataBytes())
            .isEqualTo(-4);
        assertThat(create(DeviceProfiles.connectx5(), QpType.UD, new QpCap(4, 4, 0, 1, 0)).cap().maxInlineDataBytes())
            .isEqualTo(-4);
        // a SEND-only QP's 16 bytes of segments round up to 64: 44 inline bytes
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        assertThat(rig.pdB.createQp(new QpInitAttr(rig.cqB, rig.cqB, QpType.RC, new QpCap(4, 4, 0, 1, 0), false)
            .withSendOps(Set.of(WrOpcode.SEND))).cap().maxInlineDataBytes()).isEqualTo(44);
    }

    @Test
    void shouldRefuseAnMlx5SendQueueOfMoreBasicBlocksThanMaxSendWqebb()
    {
        final DeviceProfile cx5 = DeviceProfiles.connectx5();
        final int maxQpWr = cx5.attributes().maxQpWr();
        // RC of one SGE: 256-byte WQEs, four basic blocks each: maxQpWr / 4 fill the queue, one more doubles it
        final RuleRig rig = RuleRig.unconnected(cx5);
        final int liveBefore = rig.deviceB.objects().qpsLive();
        final VerbsException e = catchThrowableOfType(VerbsException.class, () -> rig.pdB.createQp(
            new QpInitAttr(rig.cqB, rig.cqB, QpType.RC, new QpCap(maxQpWr / 4 + 1, 1, 1, 1, 0), false)));

        assertThat(e.errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(e.getMessage()).contains("max_send_wqebb=" + maxQpWr, "mlx5_calc_sq_size",
            "ask for at most " + maxQpWr / 4, "nothing was created");
        assertThat(rig.deviceB.objects().qpsLive()).isEqualTo(liveBefore);
        assertThat(create(cx5, QpType.RC, new QpCap(maxQpWr / 4, 1, 1, 1, 0)).cap().maxSendWr())
            .isEqualTo(maxQpWr / 4);
        // rxe sizes its queues otherwise: the same request is taken
        assertThat(create(DeviceProfiles.rxe(), QpType.RC, new QpCap(maxQpWr / 4 + 1, 1, 1, 1, 0)).cap().maxSendWr())
            .isGreaterThan(maxQpWr / 4);
    }

    @Test
    void shouldSizeAnMlx5SendWqeFromItsSendOpsFlags()
    {
        assertThat(QpCaps.mlx5SendOverheadBytes(QpType.RC, null)).isEqualTo(192);
        assertThat(QpCaps.mlx5SendOverheadBytes(QpType.RC, Set.of(WrOpcode.SEND))).isEqualTo(16);
        assertThat(QpCaps.mlx5SendOverheadBytes(QpType.RC, Set.of(WrOpcode.SEND, WrOpcode.RDMA_WRITE))).isEqualTo(32);
        assertThat(QpCaps.mlx5SendOverheadBytes(QpType.RC, Set.of(WrOpcode.ATOMIC_FETCH_AND_ADD))).isEqualTo(48);
        assertThat(QpCaps.mlx5SendOverheadBytes(QpType.UD, null)).isEqualTo(64);
        // a SEND-only RC QP: 16 + 16 = 32 -> one 64-byte block, 44 inline bytes, 4 KiB / 64 = 64 WQEs
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final QueuePair qp = rig.pdB.createQp(new QpInitAttr(rig.cqB, rig.cqB, QpType.RC,
            new QpCap(64, 1, 1, 1, 0), false).withSendOps(EnumSet.of(WrOpcode.SEND)));
        assertThat(qp.cap()).isEqualTo(new QpCap(64, 4, 1, 1, 44));
    }

    @Test
    void shouldReportRxesSendWqeRoomAsBothSgesAndInlineBytesAndItsQueueDepths()
    {
        // rxe_init_sq: room = max(16 x max_send_sge, max_inline_data); rxe_queue_init: 2^k - 1 slots
        assertThat(create(DeviceProfiles.rxe(), QpType.RC, new QpCap(64, 64, 4, 4, 64)).cap())
            .isEqualTo(new QpCap(127, 127, 4, 4, 64));
        assertThat(create(DeviceProfiles.rxe(), QpType.RC, new QpCap(10, 10, 1, 1, 100)).cap())
            .isEqualTo(new QpCap(15, 15, 6, 1, 100));
        // the older kernel wrote back the SGEs and inline bytes only
        assertThat(create(DeviceProfiles.rxeLegacy(), QpType.RC, new QpCap(10, 10, 1, 1, 100)).cap())
            .isEqualTo(new QpCap(10, 10, 6, 1, 100));
        // drivers whose sizing is not modelled report what was asked
        assertThat(create(DriverProfiles.bnxtRe(), QpType.RC, new QpCap(10, 10, 1, 1, 100)).cap())
            .isEqualTo(new QpCap(10, 10, 1, 1, 100));
    }

    @Test
    void shouldHoldTheReceivesItReportedAndRefuseTheNextWithEnomem()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.rxe());
        final QueuePair qp = rig.pdB.createQp(new QpInitAttr(rig.cqB, rig.cqB, QpType.RC, new QpCap(4, 10, 1, 1, 0),
            false));
        qp.modifyToInit(Set.of(Access.LOCAL_WRITE));
        final int granted = qp.cap().maxRecvWr();
        assertThat(granted).isEqualTo(15);
        for (int i = 0; i < granted; i++)
        {
            qp.postRecv(RecvWr.of(i));
        }
        final PostException full = catchThrowableOfType(PostException.class, () -> qp.postRecv(RecvWr.of(99)));
        assertThat(full.errno()).isEqualTo(Errno.ENOMEM.code());
        assertThat(full).hasMessageContaining("max_recv_wr=15");
    }

    @Test
    void shouldIgnoreTheReceiveCapsOfAQpOnAnSrqOnRxeAndReportThemAsGiven()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.rxe());
        final int maxQpWr = rig.deviceB.profile().attributes().maxQpWr();
        final int maxSge = rig.deviceB.profile().attributes().maxSge();
        final var srq = rig.pdB.createSrq(new SrqAttr(16, 1, 0));
        final QpCap asked = new QpCap(4, maxQpWr + 1, 1, maxSge + 1, 0);
        final QueuePair qp = rig.pdB.createQp(new QpInitAttr(rig.cqB, rig.cqB, QpType.RC, asked, false).withSrq(srq));
        assertThat(qp.cap().maxRecvWr()).isEqualTo(maxQpWr + 1);
        assertThat(qp.cap().maxRecvSge()).isEqualTo(maxSge + 1);
    }

    @Test
    void shouldCheckOnlyMaxRecvWrOfAQpOnAnSrqOnMlx5AndReportBothAsZero()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final int maxQpWr = rig.deviceB.profile().attributes().maxQpWr();
        final int maxSge = rig.deviceB.profile().attributes().maxSge();
        final var srq = rig.pdB.createSrq(new SrqAttr(16, 1, 0));
        final int qpsBefore = rig.deviceB.objects().qpsLive();
        final long pinnedBefore = rig.deviceB.counter(SimCounter.PINNED_BYTES);
        final VerbsException wr = catchThrowableOfType(VerbsException.class, () -> rig.pdB.createQp(
            new QpInitAttr(rig.cqB, rig.cqB, QpType.RC, new QpCap(4, maxQpWr + 1, 1, 1, 0), false).withSrq(srq)));
        assertThat(wr.errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(wr).hasMessageContaining("mlx5_calc_rq_size").hasMessageContaining("SRQ")
            .hasMessageContaining("nothing was created");
        assertThat(rig.deviceB.objects().qpsLive()).isEqualTo(qpsBefore);
        assertThat(rig.deviceB.counter(SimCounter.PINNED_BYTES)).isEqualTo(pinnedBefore);
        final QueuePair qp = rig.pdB.createQp(new QpInitAttr(rig.cqB, rig.cqB, QpType.RC,
            new QpCap(4, 8, 1, maxSge + 1, 0), false).withSrq(srq));
        assertThat(qp.cap().maxRecvWr()).isZero();
        assertThat(qp.cap().maxRecvSge()).isZero();
    }

    @Test
    void shouldCheckBothReceiveCapsOfAQpOnAnSrqOnMlx4AndReportBothAsZero()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx3());
        final int maxSge = rig.deviceB.profile().attributes().maxSge();
        final var srq = rig.pdB.createSrq(new SrqAttr(16, 1, 0));
        final int qpsBefore = rig.deviceB.objects().qpsLive();
        final VerbsException sge = catchThrowableOfType(VerbsException.class, () -> rig.pdB.createQp(
            new QpInitAttr(rig.cqB, rig.cqB, QpType.RC, new QpCap(4, 8, 1, maxSge + 1, 0), false).withSrq(srq)));
        assertThat(sge.errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(sge).hasMessageContaining("mlx4_create_qp_ex").hasMessageContaining("max_recv_sge");
        assertThat(rig.deviceB.objects().qpsLive()).isEqualTo(qpsBefore);
        final QueuePair qp = rig.pdB.createQp(new QpInitAttr(rig.cqB, rig.cqB, QpType.RC, new QpCap(4, 8, 1, 2, 0),
            false).withSrq(srq));
        assertThat(List.of(qp.cap().maxRecvWr(), qp.cap().maxRecvSge())).containsExactly(0, 0);
        // libmlx4's send side as ever: a 64-byte WQE and 33 spare, 4 + 33 -> 64 WQEs (Mlx4QueueSizes)
        assertThat(qp.cap().maxSendWr()).isEqualTo(31);
    }

    @Test
    void shouldReportAnSrqsSgesAsLibmlx5SizedItsWqeAndTakeThatMany()
    {
        // mlx5_alloc_srq_buf: 16-byte next segment + 16 an SGE, at least 32, a power of two: 2 SGEs -> 64 bytes, 3
        assertThat(RuleRig.unconnected(DeviceProfiles.connectx5()).pdB.createSrq(new SrqAttr(16, 2, 0)).query()
            .maxSge()).isEqualTo(3);
        assertThat(QpCaps.srqSge(DeviceProfiles.connectx5(), 1)).isEqualTo(1);
        assertThat(QpCaps.srqSge(DeviceProfiles.connectx5(), 4)).isEqualTo(7);
        assertThat(QpCaps.srqSge(DeviceProfiles.connectx5(), 31)).isEqualTo(31);
        assertThat(RuleRig.unconnected(DeviceProfiles.rxe()).pdB.createSrq(new SrqAttr(16, 2, 0)).query().maxSge())
            .isEqualTo(2);
    }
}
