package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AddressHandle;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.UdSendWr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.WrOpcode;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The send_ops_flags of {@code ibv_create_qp_ex} per provider, the fields of a UD receive's work completion, the
 * UD opcode check that mlx5's post leaves out, the responder's READ/atomic resources ({@code max_dest_rd_atomic}),
 * and siw's RC-only QPs. Every refused call is checked to change nothing.
 */
class QpCreationAndDatagramRulesTest
{
    private static final int QKEY = 0x11111111;

    private static VerbsException refused(final Runnable verb)
    {
        final VerbsException e = catchThrowableOfType(VerbsException.class, verb::run);
        assertThat(e).as("the verb fails").isNotNull();
        return e;
    }

    private static QpInitAttr attr(final RuleRig rig, final QpType type, final Set<WrOpcode> ops)
    {
        return new QpInitAttr(rig.cqA, rig.cqA, type, new QpCap(16, 16, 1, 1, 0), false).withSendOps(ops);
    }

    /** @return a UD QP of side a in RTS. */
    static QueuePair udInRtsOnA(final RuleRig rig)
    {
        return udInRts(rig, true);
    }

    private static QueuePair udInRts(final RuleRig rig, final boolean onA)
    {
        final QueuePair qp = (onA ? rig.pdA : rig.pdB).createQp(new QpInitAttr(onA ? rig.cqA : rig.cqB,
            onA ? rig.cqA : rig.cqB, QpType.UD, new QpCap(16, 16, 1, 1, 0), false));
        for (final QpAttr.Builder b : List.of(QpAttr.builder().state(QpState.INIT).pkeyIndex(0).port(1).qkey(QKEY),
            QpAttr.builder().state(QpState.RTR), QpAttr.builder().state(QpState.RTS).sqPsn(0)))
        {
            qp.modify(b.build(), b.mask());
        }
        return qp;
    }

    @Test
    void shouldRefuseSendOpsFlagsTheProviderHasNoBuilderForWithEopnotsuppAndCreateNothing()
    {
        // mlx5 providers/mlx5/qp.c mlx5_qp_fill_wr_pfns (MLX5_SUPPORTED_SEND_OPS_FLAGS_*); rxe providers/rxe/rxe.c
        // check_qp_init_attr (RXE_SUP_*_QP_SEND_OPS_FLAGS); rdma-core tests/test_qpex.py skips on the EOPNOTSUPP.
        final RuleRig mlx5 = RuleRig.unconnected(DeviceProfiles.connectx5());
        final int before = mlx5.deviceA.objects().qpsLive();
        final VerbsException write = refused(() -> mlx5.pdA.createQp(attr(mlx5, QpType.UD,
            EnumSet.of(WrOpcode.SEND, WrOpcode.RDMA_WRITE))));
        assertThat(write.errnoName()).isEqualTo(Errno.EOPNOTSUPP);
        assertThat(write.detail()).contains("RDMA_WRITE").contains("mlx5_qp_fill_wr_pfns");
        assertThat(refused(() -> mlx5.pdA.createQp(attr(mlx5, QpType.RC, EnumSet.of(WrOpcode.FLUSH)))).errnoName())
            .isEqualTo(Errno.EOPNOTSUPP);
        assertThat(mlx5.deviceA.objects().qpsLive()).as("nothing created").isEqualTo(before);
        assertThat(mlx5.pdA.createQp(attr(mlx5, QpType.UC, EnumSet.of(WrOpcode.LOCAL_INV))).type())
            .isEqualTo(QpType.UC);
        assertThat(mlx5.pdA.createQp(attr(mlx5, QpType.UD, EnumSet.of(WrOpcode.SEND, WrOpcode.SEND_WITH_IMM)))
            .type()).isEqualTo(QpType.UD);
        // MLX5_SUPPORTED_SEND_OPS_FLAGS_XRC is the RC table (perftest's XRC connection asks for RDMA WRITE).
        assertThat(mlx5.pdA.createQp(attr(mlx5, QpType.XRC_SEND, EnumSet.of(WrOpcode.RDMA_WRITE,
            WrOpcode.SEND_WITH_IMM, WrOpcode.ATOMIC_FETCH_AND_ADD))).type()).isEqualTo(QpType.XRC_SEND);

        final RuleRig rxe = RuleRig.unconnected(DeviceProfiles.rxe());
        assertThat(rxe.pdA.createQp(attr(rxe, QpType.RC, EnumSet.of(WrOpcode.FLUSH, WrOpcode.ATOMIC_WRITE,
            WrOpcode.RDMA_WRITE))).type()).isEqualTo(QpType.RC);
        assertThat(refused(() -> rxe.pdA.createQp(attr(rxe, QpType.UC, EnumSet.of(WrOpcode.LOCAL_INV))))
            .errnoName()).as("rxe's UC table has no LOCAL_INV, mlx5's has").isEqualTo(Errno.EOPNOTSUPP);

        final RuleRig legacy = RuleRig.unconnected(DeviceProfiles.rxeLegacy());
        assertThat(refused(() -> legacy.pdA.createQp(attr(legacy, QpType.RC, EnumSet.of(WrOpcode.FLUSH))))
            .errnoName()).as("a device without the FLUSH capability").isEqualTo(Errno.EOPNOTSUPP);
    }

    @Test
    void shouldRefuseASendWithTooManySgesWithEnomemOnMlx5AndEinvalOnRxe()
    {
        // mlx5 _mlx5_post_send: num_sge > max_gs is ENOMEM, mlx5_post_recv's EINVAL; rxe validate_send_wr: EINVAL.
        for (final DeviceProfile p : List.of(DeviceProfiles.connectx5(), DeviceProfiles.rxe()))
        {
            final RuleRig rig = RuleRig.connected(p, RuleRig.ALL_REMOTE);
            final long buf = rig.bufferA(4096);
            final MemoryRegion mr = rig.pdA.regMr(buf, 4096, RuleRig.LOCAL);
            final List<Sge> many = java.util.Collections.nCopies(5, new Sge(buf, 8, mr.lkey()));
            final VerbsException send = refused(() -> rig.qpA.postSend(SendWr.send(1, many)));
            assertThat(send.errnoName()).as(p.name()).isEqualTo(p.follows(ProviderRule.SEND_SGE_OVERFLOW_ENOMEM)
                ? Errno.ENOMEM : Errno.EINVAL);
            assertThat(refused(() -> rig.qpA.postRecv(new RecvWr(2, many))).errnoName()).as(p.name())
                .isEqualTo(Errno.EINVAL);
            assertThat(rig.pollA()).as("nothing posted").isEmpty();
        }
    }

    @Test
    void shouldRefuseAnUdQpOnSiwWithEopnotsupp()
    {
        // siw_verbs.c siw_create_qp: "only RC QP's supported", -EOPNOTSUPP.
        final RuleRig siw = RuleRig.unconnected(DriverProfiles.siw());
        final int before = siw.deviceA.objects().qpsLive();
        assertThat(refused(() -> siw.pdA.createQp(attr(siw, QpType.UD, null))).errnoName())
            .isEqualTo(Errno.EOPNOTSUPP);
        assertThat(siw.deviceA.objects().qpsLive()).isEqualTo(before);
    }

    @Test
    void shouldGiveAUdReceiveTheSendersQpNumberAndTheGrhFlag()
    {
        // ibv_poll_cq(3): src_qp and IBV_WC_GRH for a UD receive; an RC receive has neither.
        final RuleRig rig = RuleRig.connected(DeviceProfiles.rxe(), RuleRig.ALL_REMOTE);
        final QueuePair a = udInRts(rig, true);
        final QueuePair b = udInRts(rig, false);
        final long src = rig.bufferA(4096);
        final long dst = rig.bufferB(4096);
        final MemoryRegion srcMr = rig.pdA.regMr(src, 4096, RuleRig.LOCAL);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, 4096, RuleRig.LOCAL);
        final AddressHandle ah = rig.pdA.createAh(AhAttr.toGid(rig.deviceB.gid()));
        b.postRecv(RecvWr.of(1, new Sge(dst, 4096, dstMr.lkey())));
        a.postSendUd(List.of(new UdSendWr(SendWr.sendWithImm(2, List.of(new Sge(src, 64, srcMr.lkey())), 9), ah,
            b.qpNum(), QKEY)));
        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        final WorkCompletion ud = rig.pollB().get(0);
        assertThat(ud.srcQp()).isEqualTo(a.qpNum());
        assertThat(ud.withGrh()).isTrue();
        assertThat(ud.wcFlags()).as("IBV_WC_GRH | IBV_WC_WITH_IMM").isEqualTo(3);
        assertThat(ud.slid()).as("RoCE: no LIDs").isZero();

        rig.qpB.postRecv(RecvWr.of(3, new Sge(dst, 4096, dstMr.lkey())));
        rig.qpA.postSend(SendWr.send(4, List.of(new Sge(src, 64, srcMr.lkey()))));
        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        final WorkCompletion rc = rig.pollB().get(0);
        assertThat(rc.srcQp()).isZero();
        assertThat(rc.withGrh()).isFalse();
    }

    @Test
    void shouldPostAnRdmaWriteOnUdOnMlx5AndRxeAndCompleteItInErrorButRefuseItAtPostElsewhere()
    {
        // mlx5 _mlx5_post_send and librxe validate_send_wr check no opcode for a UD QP (rxe_requester's next_opcode
        // fails it); a provider without such a rule refuses it at post.
        for (final DeviceProfile p : List.of(DeviceProfiles.connectx5(), DeviceProfiles.rxe(),
            DeviceProfiles.byName("bnxt_re")))
        {
            final RuleRig rig = RuleRig.unconnected(p);
            final QueuePair a = udInRts(rig, true);
            final QueuePair b = udInRts(rig, false);
            final long src = rig.bufferA(4096);
            final long dst = rig.bufferB(4096);
            final MemoryRegion srcMr = rig.pdA.regMr(src, 4096, RuleRig.LOCAL);
            final MemoryRegion dstMr = rig.pdB.regMr(dst, 4096, EnumSet.of(Access.LOCAL_WRITE,
                Access.REMOTE_WRITE));
            rig.processA().write(src, RuleRig.pattern(16, 1));
            final AddressHandle ah = rig.pdA.createAh(AhAttr.toGid(rig.deviceB.gid()));
            final UdSendWr write = new UdSendWr(SendWr.write(5, List.of(new Sge(src, 16, srcMr.lkey())), dst,
                dstMr.rkey()), ah, b.qpNum(), QKEY);
            if (!p.name().equals("bnxt_re"))
            {
                a.postSendUd(List.of(write));
                final List<WorkCompletion> wcs = rig.pollA();
                assertThat(wcs).extracting(WorkCompletion::status).containsExactly(WcStatus.LOC_QP_OP_ERR);
                assertThat(a.state()).isEqualTo(QpState.ERR);
            }
            else
            {
                assertThat(refused(() -> a.postSendUd(List.of(write))).errnoName()).isEqualTo(Errno.EINVAL);
                assertThat(rig.pollA()).as("nothing posted").isEmpty();
                assertThat(a.state()).isEqualTo(QpState.RTS);
            }
            assertThat(rig.processB().read(dst, 16)).as("nothing written").containsOnly(0);
        }
    }

    @Test
    void shouldNakAReadAndAnAtomicToAResponderWithoutResponderResources()
    {
        // rxe_resp.c check_resource: max_dest_rd_atomic 0 is RESPST_ERR_TOO_MANY_RDMA_ATM_REQ, a class C error:
        // NAK invalid request (IBV_WC_REM_INV_REQ_ERR), nothing read or changed, the responder QP to error. (mlx5 and
        // mlx4 keep a depth of 0 as one resource: QpContextFieldsTest.)
        for (final DeviceProfile p : List.of(DeviceProfiles.rxe(), DeviceProfiles.rxeLegacy()))
        {
            for (final WrOpcode op : List.of(WrOpcode.RDMA_READ, WrOpcode.ATOMIC_FETCH_AND_ADD))
            {
                final RuleRig rig = RuleRig.unconnected(p);
                final Set<Access> all = EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC);
                for (final QueuePair qp : List.of(rig.qpA, rig.qpB))
                {
                    final QueuePair other = qp == rig.qpA ? rig.qpB : rig.qpA;
                    for (final QpAttr.Builder b : List.of(
                        QpAttr.builder().state(QpState.INIT).pkeyIndex(0).port(1).accessFlags(all),
                        QpAttr.builder().state(QpState.RTR).av(AhAttr.toGid(other.address().gid()))
                            .pathMtu(QpAttr.MTU_4096).destQpNum(other.qpNum()).rqPsn(other.address().psn())
                            .maxDestRdAtomic(qp == rig.qpB ? 0 : 4).minRnrTimer(12),
                        QpAttr.builder().state(QpState.RTS).timeout(14).retryCnt(7).rnrRetry(7)
                            .sqPsn(qp.address().psn()).maxRdAtomic(4)))
                    {
                        qp.modify(b.build(), b.mask());
                    }
                }
                final long target = rig.bufferB(4096);
                rig.processB().write(target, RuleRig.pattern(8, 3));
                final MemoryRegion mr = rig.pdB.regMr(target, 4096, RuleRig.REMOTE_ALL);
                final long local = rig.bufferA(4096);
                final MemoryRegion localMr = rig.pdA.regMr(local, 4096, RuleRig.LOCAL);
                final Sge sge = new Sge(local, 8, localMr.lkey());
                rig.qpA.postSend(op == WrOpcode.RDMA_READ ? SendWr.read(1, List.of(sge), target, mr.rkey())
                    : SendWr.fetchAndAdd(1, sge, target, mr.rkey(), 1));
                assertThat(rig.pollA()).as(p.name() + " " + op).extracting(WorkCompletion::status)
                    .containsExactly(WcStatus.REM_INV_REQ_ERR);
                assertThat(rig.processA().read(local, 8)).as("nothing read").containsOnly(0);
                assertThat(rig.processB().read(target, 8)).as("nothing changed").isEqualTo(RuleRig.pattern(8, 3));
                assertThat(rig.qpB.state()).isEqualTo(QpState.ERR);
            }
        }
    }
}
