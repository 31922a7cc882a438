package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Where drivers or parts differ, the difference is a property of the device profile: device memory (MEMIC) by part,
 * the provider's reading of MLX_*_ALLOC_TYPE by driver, shared receive queues by driver, create_qp_ex by provider.
 */
class ProfilePropertiesTest
{
    @ParameterizedTest
    @ValueSource(strings = {"connectx4", "connectx4lx", "connectx4-forced-ro"})
    void connectx4PartsHaveNoDeviceMemory(final String name)
    {
        // ConnectX-4 and -4 Lx report no memic capability: max_dm_size 0, and ibv_alloc_dm is EOPNOTSUPP.
        final DeviceProfile p = DeviceProfiles.byName(name);
        assertThat(p.follows(ProviderRule.DEVICE_MEMORY)).isFalse();
        assertThat(p.maxDmSizeBytes()).isZero();
        final RuleRig rig = RuleRig.unconnected(p);
        final VerbsException e = catchThrowableOfType(VerbsException.class, () -> rig.ctxB.allocDm(4096));
        assertThat(e.errnoName()).as(e.getMessage()).isEqualTo(Errno.EOPNOTSUPP);
        // Every other rule of the ConnectX-5 stays but tag matching (a ConnectX-5 feature): it is the same driver.
        assertThat(p.follows(ProviderRule.TAG_MATCHING)).isFalse();
        final java.util.Set<ProviderRule> others = java.util.EnumSet.copyOf(DeviceProfiles.connectx5().providerRules());
        others.remove(ProviderRule.DEVICE_MEMORY);
        others.remove(ProviderRule.TAG_MATCHING);
        assertThat(p.providerRules()).containsAll(others);
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx5", "connectx5ex", "connectx6", "connectx6dx", "connectx6lx", "connectx7",
        "bluefield2", "bluefield3"})
    void connectx5AndLaterHaveDeviceMemory(final String name)
    {
        final DeviceProfile p = DeviceProfiles.byName(name);
        assertThat(p.maxDmSizeBytes()).isEqualTo(DeviceProfile.MLX5_MAX_DM_BYTES);
        RuleRig.unconnected(p).ctxB.allocDm(4096).close();
    }

    @org.junit.jupiter.api.Test
    void onlyMlx5ProvidersReadTheQueueAllocTypeVariables()
    {
        // mlx5_get_alloc_type (providers/mlx5/buf.c) reads MLX_QP/CQ/SRQ_ALLOC_TYPE; no other provider does.
        for (final DeviceProfile p : DeviceProfiles.builtIn().values())
        {
            assertThat(p.follows(ProviderRule.QUEUE_ALLOC_TYPE_FROM_ENV)).as(p.name())
                .isEqualTo(p.driver().equals("mlx5"));
        }
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"hns, 1048576", "qedr, 32768", "hfi1, 1024", "cxgb4, 128", "siw, 102400",
        "bnxt_re, 65536"})
    void theDriversWithSharedReceiveQueuesReportThemAndCreateOne(final String name, final int maxSrq)
    {
        // HNS_ROCE_V2_MAX_SRQ, QED_RDMA_MAX_SRQS, hfi1's max_srqs module parameter, the T6 firmware's tp_srq (cxgb4),
        // SIW_MAX_SRQ, BNXT_RE_MAX_SRQC_COUNT; libhns, libqedr, libhfi1verbs, libcxgb4, libsiw and libbnxt_re create
        // SRQs (ibv_cmd_create_srq_ex / ibv_cmd_create_srq).
        final DeviceProfile p = DeviceProfiles.byName(name);
        assertThat(p.attributes().maxSrq()).isEqualTo(maxSrq);
        final RuleRig rig = RuleRig.unconnected(p);
        assertThat(rig.pdA.createSrq(new dev.rnicsim.verbs.SrqAttr(16, 1, 0))).isNotNull();
    }

    @org.junit.jupiter.params.ParameterizedTest
    @ValueSource(strings = {"bnxt_re", "siw", "cxgb4", "erdma", "hfi1", "e810", "e810-iwarp"})
    void aProviderWithoutCreateQpExRefusesSendOpsFlagsAndCreatesNothing(final String name)
    {
        // rdma-core 44: these providers create QPs with ibv_cmd_create_qp only and set no create_qp_ex, so
        // libibverbs' stand-in answers ibv_create_qp_ex with send_ops_flags: EOPNOTSUPP.
        final DeviceProfile p = DeviceProfiles.byName(name);
        assertThat(p.follows(ProviderRule.CREATE_QP_EX_UNSUPPORTED)).isTrue();
        final RuleRig rig = RuleRig.unconnected(p);
        final int qps = rig.deviceA.objects().qpsLive();
        final VerbsException e = catchThrowableOfType(VerbsException.class, () -> rig.pdA.createQp(
            dev.rnicsim.verbs.QpInitAttr.rc(rig.cqA).withSendOps(java.util.EnumSet.of(dev.rnicsim.verbs.WrOpcode.SEND))));
        assertThat(e.errnoName()).as(e.getMessage()).isEqualTo(Errno.EOPNOTSUPP);
        assertThat(e.getMessage()).contains("no create_qp_ex");
        assertThat(rig.deviceA.objects().qpsLive()).as("nothing created").isEqualTo(qps);
        // A QP without send_ops_flags is ibv_create_qp's: created.
        assertThat(rig.pdA.createQp(dev.rnicsim.verbs.QpInitAttr.rc(rig.cqA))).isNotNull();
    }

    @org.junit.jupiter.params.ParameterizedTest
    @ValueSource(strings = {"connectx5", "rxe", "hns"})
    void aProviderWithCreateQpExBuildsTheSendFunctions(final String name)
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.byName(name));
        assertThat(rig.pdA.createQp(dev.rnicsim.verbs.QpInitAttr.rc(rig.cqA)
            .withSendOps(java.util.EnumSet.of(dev.rnicsim.verbs.WrOpcode.SEND)))).isNotNull();
    }

    @org.junit.jupiter.api.Test
    void hnsBuildsItsOwnSendFunctionsOnly()
    {
        // libhns fill_send_wr_ops: RC/XRC without LOCAL_INV and BIND_MW, UD SEND and SEND_WITH_IMM, no UC.
        final DeviceProfile hns = DeviceProfiles.byName("hns");
        assertThat(SendOps.supported(hns, dev.rnicsim.verbs.QpType.RC)).contains(dev.rnicsim.verbs.WrOpcode.RDMA_READ,
            dev.rnicsim.verbs.WrOpcode.ATOMIC_FETCH_AND_ADD).doesNotContain(dev.rnicsim.verbs.WrOpcode.BIND_MW,
            dev.rnicsim.verbs.WrOpcode.LOCAL_INV);
        assertThat(SendOps.supported(hns, dev.rnicsim.verbs.QpType.UC)).isEmpty();
        final RuleRig rig = RuleRig.unconnected(hns);
        final VerbsException e = catchThrowableOfType(VerbsException.class, () -> rig.pdA.createQp(
            dev.rnicsim.verbs.QpInitAttr.rc(rig.cqA).withSendOps(java.util.EnumSet.of(dev.rnicsim.verbs.WrOpcode.SEND,
                dev.rnicsim.verbs.WrOpcode.BIND_MW))));
        assertThat(e.errnoName()).isEqualTo(Errno.EOPNOTSUPP);
        assertThat(e.getMessage()).contains("fill_send_wr_ops");
    }

    @org.junit.jupiter.api.Test
    void cxgb4SharedReceiveQueuesTakeTheQueueDepthAndFourSges()
    {
        // c4iw_query_device: max_srq_wr is the QP depth (t4_max_qp_depth: t4_max_rq_size, 8190), max_srq_sge
        // T4_MAX_RECV_SGE (4); c4iw_create_srq answers E2BIG past them.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.byName("cxgb4"));
        final int depth = rig.deviceA.profile().attributes().maxSrqWr();
        assertThat(depth).isEqualTo(8190);
        assertThat(rig.pdA.createSrq(new dev.rnicsim.verbs.SrqAttr(depth, 4, 0))).isNotNull();
        assertThat(catchThrowableOfType(VerbsException.class,
            () -> rig.pdA.createSrq(new dev.rnicsim.verbs.SrqAttr(16, 5, 0))).errnoName()).as("a fifth SGE")
            .isEqualTo(Errno.E2BIG);
    }

    @org.junit.jupiter.api.Test
    void mlx4CreatesNoQpWithSendOpsFlagsButTakesTheOtherExtendedAttributes()
    {
        // rdma-core 44 libmlx4 create_qp_ex: comp_mask outside PD | XRCD | CREATE_FLAGS | MAX_TSO_HEADER is ENOTSUP,
        // whatever send_ops_flags holds, even none.
        final DeviceProfile p = DeviceProfiles.byName("connectx3");
        assertThat(p.follows(ProviderRule.CREATE_QP_EX_WITHOUT_SEND_OPS)).isTrue();
        assertThat(p.follows(ProviderRule.CREATE_QP_EX_UNSUPPORTED)).isFalse();
        final RuleRig rig = RuleRig.unconnected(p);
        final int qps = rig.deviceA.objects().qpsLive();
        for (final java.util.Set<dev.rnicsim.verbs.WrOpcode> ops : java.util.List.of(
            java.util.EnumSet.of(dev.rnicsim.verbs.WrOpcode.SEND),
            java.util.EnumSet.noneOf(dev.rnicsim.verbs.WrOpcode.class)))
        {
            final VerbsException e = catchThrowableOfType(VerbsException.class,
                () -> rig.pdA.createQp(dev.rnicsim.verbs.QpInitAttr.rc(rig.cqA).withSendOps(ops)));
            assertThat(e.errnoName()).as(e.getMessage()).isEqualTo(Errno.EOPNOTSUPP);
            assertThat(e.getMessage()).contains("MLX4_CREATE_QP_SUP_COMP_MASK");
        }
        assertThat(rig.deviceA.objects().qpsLive()).as("nothing created").isEqualTo(qps);
        // its queue sizes are checked first: too many work requests is EINVAL even with send_ops_flags
        final VerbsException big = catchThrowableOfType(VerbsException.class, () -> rig.pdA.createQp(
            new dev.rnicsim.verbs.QpInitAttr(rig.cqA, rig.cqA, dev.rnicsim.verbs.QpType.RC,
                new dev.rnicsim.verbs.QpCap(p.attributes().maxQpWr() + 1, 1, 1, 1, 0), false)
                .withSendOps(java.util.EnumSet.of(dev.rnicsim.verbs.WrOpcode.SEND))));
        assertThat(big.errnoName()).as(big.getMessage()).isEqualTo(Errno.EINVAL);
        assertThat(rig.pdA.createQp(dev.rnicsim.verbs.QpInitAttr.rc(rig.cqA))).isNotNull();
    }

    @org.junit.jupiter.api.Test
    void threadAndParentDomainsAreMlx5sOnlyAsRdmaCore44Ships()
    {
        // rdma-core 44's libhns sets no alloc_td, dealloc_td or alloc_parent_domain (its verbs_context_ops tables in
        // Debian's 44.0-2 libhns-rdmav34.so leave those slots empty; libhns gained them in a later release).
        for (final DeviceProfile p : DeviceProfiles.builtIn().values())
        {
            assertThat(ExtendedCqs.of(p).domains()).as(p.name()).isEqualTo(p.driver().equals("mlx5"));
        }
    }

    @org.junit.jupiter.api.Test
    void qedrOpensXrcDomainsOnItsRocePort()
    {
        // qedr_query_device: IB_DEVICE_XRC unless the port is iWARP; libqedr 44 imports ibv_cmd_open_xrcd.
        final DeviceProfile p = DeviceProfiles.byName("qedr");
        assertThat(p.attributes().has(dev.rnicsim.verbs.DeviceCap.XRC)).isTrue();
        assertThat(RuleRig.unconnected(p).ctxA.openXrcd()).isNotNull();
    }
}
