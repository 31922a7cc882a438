package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WrOpcode;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The rules rdma-core's own tests check of CQ creation, QP creation flags, data-in-order queries and SRQ sizes
 * (tests/test_cq.py, test_cqex.py, test_qp.py, test_mlx5_huge_page.py), where providers differ per profile.
 */
class RdmaCoreQueryRulesTest
{
    private static VerbsException refused(final Runnable verb)
    {
        final VerbsException e = catchThrowableOfType(VerbsException.class, verb::run);
        assertThat(e).as("the verb fails").isNotNull();
        return e;
    }

    @Test
    void shouldRefuseACompletionVectorAtOrAboveNumCompVectorsWithEinvalAndCreateNoCq()
    {
        // ib_uverbs_create_cq: comp_vector >= num_comp_vectors is EINVAL before the driver sees the CQ
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.rxe());
        final int vectors = rig.ctxA.numCompVectors();
        assertThat(vectors).isEqualTo(DeviceProfile.SIMULATED_HOST_CPUS);
        final int before = rig.deviceA.objects().cqsLive();
        final VerbsException e = refused(() -> rig.ctxA.createCq(16, vectors));
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.getMessage()).contains("comp_vector=" + vectors).contains("num_comp_vectors=" + vectors);
        assertThat(refused(() -> rig.ctxA.createCq(16, -1)).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(rig.deviceA.objects().cqsLive()).as("nothing created").isEqualTo(before);
        assertThat(rig.ctxA.createCq(16, vectors - 1).cqe()).isGreaterThanOrEqualTo(16);
    }

    @Test
    void shouldAnswerDataInOrderOnlyFromMlx5AndOnlyInRts()
    {
        // mlx5_query_qp_data_in_order reads the QP context in RTS; rxe has no query_qp_data_in_order (0)
        final RuleRig mlx5 = RuleRig.unconnected(DeviceProfiles.connectx5());
        final QueuePair qp = ud(mlx5);
        assertThat(qp.dataInOrder(WrOpcode.SEND)).as("RESET").isFalse();
        toRts(qp);
        assertThat(qp.dataInOrder(WrOpcode.SEND)).as("RTS").isTrue();
        assertThat(qp.dataInOrder(WrOpcode.RDMA_WRITE)).isTrue();
        final RuleRig rxe = RuleRig.unconnected(DeviceProfiles.rxe());
        final QueuePair soft = ud(rxe);
        toRts(soft);
        assertThat(soft.dataInOrder(WrOpcode.SEND)).isFalse();
    }

    @Test
    void shouldTakeBlockSelfMulticastLoopbackOnMlx5AndRefuseItOnRxeAndUnknownBitsEverywhere()
    {
        QpCreateFlags.check(DeviceProfiles.connectx5(), QpType.UD, QpCreateFlags.BLOCK_SELF_MCAST_LB);
        QpCreateFlags.check(DeviceProfiles.rxe(), QpType.RC, 0);
        final VerbsException rxe = refused(() -> QpCreateFlags.check(DeviceProfiles.rxe(), QpType.UD,
            QpCreateFlags.BLOCK_SELF_MCAST_LB));
        assertThat(rxe.errnoName()).isEqualTo(Errno.EOPNOTSUPP);
        assertThat(rxe.getMessage()).contains("0x2").contains("rxe");
        assertThat(refused(() -> QpCreateFlags.check(DeviceProfiles.connectx5(), QpType.UD, 1L << 8)).errnoName())
            .as("scatter FCS: a raw packet QP's flag").isEqualTo(Errno.EOPNOTSUPP);
        assertThat(refused(() -> QpCreateFlags.check(DeviceProfiles.connectx5(), QpType.RC, 1L << 30)).errnoName())
            .isEqualTo(Errno.EINVAL);
    }

    @Test
    void shouldTakeAnSrqOfZeroWorkRequestsOnMlx5AndRefuseItOnRxe()
    {
        // mlx5_create_srq sizes max_wr + 1 and checks only the upper limits; rxe_srq_chk_init refuses max_wr 0
        final RuleRig mlx5 = RuleRig.unconnected(DeviceProfiles.connectx5());
        assertThat(mlx5.pdA.createSrq(new SrqAttr(0, 0, 0)).query().maxWr()).isZero();
        final RuleRig rxe = RuleRig.unconnected(DeviceProfiles.rxe());
        final VerbsException e = refused(() -> rxe.pdA.createSrq(new SrqAttr(0, 1, 0)));
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.getMessage()).contains("max_wr=0").contains("rxe_srq_chk_init");
    }

    @Test
    void shouldTakeTheRcSendOpsOnAnMlx5XrcSendQp()
    {
        // MLX5_SUPPORTED_SEND_OPS_FLAGS_XRC is MLX5_SUPPORTED_SEND_OPS_FLAGS_RC (perftest -c XRC asks RDMA WRITE)
        final RuleRig mlx5 = RuleRig.unconnected(DeviceProfiles.connectx5());
        final QueuePair qp = mlx5.pdA.createQp(new QpInitAttr(mlx5.cqA, mlx5.cqA, QpType.XRC_SEND,
            new QpCap(16, 0, 1, 0, 0), false).withSendOps(java.util.EnumSet.of(WrOpcode.SEND, WrOpcode.RDMA_WRITE,
            WrOpcode.RDMA_READ, WrOpcode.ATOMIC_FETCH_AND_ADD)));
        assertThat(qp.type()).isEqualTo(QpType.XRC_SEND);
        assertThat(refused(() -> mlx5.pdA.createQp(new QpInitAttr(mlx5.cqA, mlx5.cqA, QpType.XRC_SEND,
            new QpCap(16, 0, 1, 0, 0), false).withSendOps(java.util.EnumSet.of(WrOpcode.ATOMIC_WRITE)))).errnoName())
            .isEqualTo(Errno.EOPNOTSUPP);
    }

    @Test
    void shouldReportTheLinkLayerTheKernelGivesEachDriversPort()
    {
        // rdma_port_get_link_layer: bnxt_re_get_link_layer Ethernet, an iWARP node (siw) Ethernet, efa_port_link_layer
        // unspecified; tests/test_addr.py test_create_ah_roce runs only on an Ethernet port
        assertThat(DeviceProfiles.byName("bnxt_re").portAttributes().linkLayer())
            .isEqualTo(dev.rnicsim.verbs.PortAttributes.LINK_LAYER_ETHERNET);
        assertThat(DeviceProfiles.byName("siw").portAttributes().linkLayer())
            .isEqualTo(dev.rnicsim.verbs.PortAttributes.LINK_LAYER_ETHERNET);
        assertThat(DeviceProfiles.byName("efa").portAttributes().linkLayer())
            .isEqualTo(dev.rnicsim.verbs.PortAttributes.LINK_LAYER_UNSPECIFIED);
        assertThat(DeviceProfiles.connectx5().portAttributes().linkLayer())
            .isEqualTo(dev.rnicsim.verbs.PortAttributes.LINK_LAYER_INFINIBAND);
    }

    private static QueuePair ud(final RuleRig rig)
    {
        return rig.pdA.createQp(new QpInitAttr(rig.cqA, rig.cqA, QpType.UD, new QpCap(16, 16, 1, 1, 0), false));
    }

    private static void toRts(final QueuePair qp)
    {
        for (final QpAttr.Builder b : List.of(QpAttr.builder().state(QpState.INIT).pkeyIndex(0).port(1).qkey(0x11),
            QpAttr.builder().state(QpState.RTR), QpAttr.builder().state(QpState.RTS).sqPsn(0)))
        {
            qp.modify(b.build(), b.mask());
        }
    }
}
