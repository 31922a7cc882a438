package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.WrOpcode;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link QpTypeOpcodes}: an opcode the QP type does not carry. mlx5 ({@code _mlx5_post_send}) and rxe (librxe
 * {@code validate_send_wr}) post it and the device (rxe: {@code rxe_requester}'s {@code next_opcode}) completes it
 * with IBV_WC_LOC_QP_OP_ERR; a provider without such a rule refuses it at post with EINVAL. rxe alone refuses BIND_MW
 * on UD at post, and fails a UC LOCAL_INV at its requester.
 */
class QpTypeOpcodesTest
{
    private static final int BYTES = 8;

    private record Uc(RuleRig rig, QueuePair a, QueuePair b, long src, MemoryRegion srcMr, long dst,
                      MemoryRegion dstMr)
    {
    }

    private static Uc uc(final String profile)
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.byName(profile));
        final QueuePair a = rig.pdA.createQp(QpInitAttr.rc(rig.cqA).withType(QpType.UC));
        final QueuePair b = rig.pdB.createQp(QpInitAttr.rc(rig.cqB).withType(QpType.UC));
        a.connect(b.address(), RuleRig.ALL_REMOTE);
        b.connect(a.address(), RuleRig.ALL_REMOTE);
        final long src = rig.bufferA(4096);
        final long dst = rig.bufferB(4096);
        return new Uc(rig, a, b, src, rig.pdA.regMr(src, 4096, RuleRig.LOCAL), dst,
            rig.pdB.regMr(dst, 4096, RuleRig.REMOTE_ALL));
    }

    private static SendWr wr(final Uc u, final WrOpcode op)
    {
        final List<Sge> sgl = List.of(new Sge(u.src, BYTES, u.srcMr.lkey()));
        return switch (op)
        {
            case RDMA_READ -> SendWr.read(1, sgl, u.dst, u.dstMr.rkey());
            case ATOMIC_FETCH_AND_ADD -> SendWr.fetchAndAdd(1, sgl.get(0), u.dst, u.dstMr.rkey(), 1);
            default -> throw new IllegalArgumentException(op.name());
        };
    }

    @ParameterizedTest
    @ValueSource(strings = {"RDMA_READ", "ATOMIC_FETCH_AND_ADD"})
    void aReadOrAtomicOnUcIsPostedAndFailsAtTheDeviceOnMlx5AndRxe(final WrOpcode op)
    {
        for (final String profile : List.of("connectx5", "rxe"))
        {
            final Uc u = uc(profile);
            u.rig.processB().write(u.dst, RuleRig.pattern(BYTES, 3));

            u.a.postSend(wr(u, op));

            assertThat(u.rig.pollA()).as(profile).extracting(WorkCompletion::status)
                .containsExactly(WcStatus.LOC_QP_OP_ERR);
            assertThat(u.a.state()).as(profile).isEqualTo(QpState.ERR);
            assertThat(u.rig.processB().read(u.dst, BYTES)).as("nothing read or changed").isEqualTo(
                RuleRig.pattern(BYTES, 3));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"RDMA_READ", "ATOMIC_FETCH_AND_ADD"})
    void aReadOrAtomicOnUcIsEinvalAtPostWhereTheProviderChecks(final WrOpcode op)
    {
        final Uc u = uc("hfi1");

        final PostException e = catchThrowableOfType(PostException.class, () -> u.a.postSend(wr(u, op)));

        assertThat(e).isNotNull();
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.detail()).contains("UC QP");
        assertThat(u.a.state()).isEqualTo(QpState.RTS);
        assertThat(u.rig.pollA()).isEmpty();
    }

    @Test
    void rxeFailsALocalInvalidateOnUcAtItsRequesterButMlx5RunsIt()
    {
        for (final String profile : List.of("connectx5", "rxe"))
        {
            final Uc u = uc(profile);
            final MemoryWindow mw = u.rig.pdA.allocMw(MwType.TYPE_2);

            u.a.postSend(List.of(SendWr.localInv(7, mw.rkey())));

            final WcStatus expected = profile.equals("rxe") ? WcStatus.LOC_QP_OP_ERR : WcStatus.SUCCESS;
            assertThat(u.rig.pollA()).as(profile).extracting(WorkCompletion::status).containsExactly(expected);
        }
    }

    @Test
    void bindMwOnUdIsEinvalAtPostOnRxeAndFailsAtTheDeviceOnMlx5()
    {
        for (final String profile : List.of("connectx5", "rxe"))
        {
            final RuleRig rig = RuleRig.unconnected(DeviceProfiles.byName(profile));
            final QueuePair ud = QpCreationAndDatagramRulesTest.udInRtsOnA(rig);
            final long buf = rig.bufferA(4096);
            final MemoryRegion mr = rig.pdA.regMr(buf, 4096, java.util.EnumSet.of(dev.rnicsim.verbs.Access.LOCAL_WRITE,
                dev.rnicsim.verbs.Access.MW_BIND));
            final MemoryWindow mw = rig.pdA.allocMw(MwType.TYPE_2);
            final SendWr bind = SendWr.bindMw(3, mw, mw.rkey() + 1, new MwBindInfo(mr, buf, 4096,
                java.util.EnumSet.of(dev.rnicsim.verbs.Access.REMOTE_READ)));
            final dev.rnicsim.verbs.UdSendWr wr = new dev.rnicsim.verbs.UdSendWr(bind,
                rig.pdA.createAh(dev.rnicsim.verbs.AhAttr.toGid(rig.deviceB.gid())), 1, 0x11);
            if (profile.equals("rxe"))
            {
                final PostException e = catchThrowableOfType(PostException.class, () -> ud.postSendUd(List.of(wr)));
                assertThat(e).isNotNull();
                assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
                assertThat(e.detail()).contains("validate_send_wr");
                assertThat(ud.state()).isEqualTo(QpState.RTS);
            }
            else
            {
                ud.postSendUd(List.of(wr));
                assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.LOC_QP_OP_ERR);
                assertThat(((SimMw)mw).isBound()).as("nothing bound").isFalse();
            }
        }
    }
}
