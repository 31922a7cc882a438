package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RuleRig.pattern;
import static dev.rnicsim.simnic.RuleRig.sge;
import static dev.rnicsim.simnic.RuleRig.sgl;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.FlushPlacement;
import dev.rnicsim.verbs.FlushSelectivity;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * FLUSH and ATOMIC_WRITE work requests (ibv_wr_flush, ibv_wr_atomic_write; IBTA 1.6 annex A19) and rxe's responder
 * length check and copy errors, one example per rule, each naming its source.
 */
class PlacementOpsTest
{
    private static final long PAGE = 4096;
    /** What rdma-core's tests/test_qpex.py create_qp_ex grants an RC QP. */
    private static final Set<Access> QPEX_ACCESS = EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ,
        Access.REMOTE_ATOMIC, Access.FLUSH_GLOBAL, Access.FLUSH_PERSISTENT);
    private static final Set<Access> FLUSH_TARGET = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
        Access.FLUSH_GLOBAL);

    private static WorkCompletion only(final List<WorkCompletion> wcs)
    {
        assertThat(wcs).hasSize(1);
        return wcs.get(0);
    }

    private static long readLong(final RuleRig rig, final long addr)
    {
        return ByteBuffer.wrap(rig.ctxB.memory().read(addr, 8)).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    // ------------------------------------------------------------------ FLUSH

    @Test
    void shouldFlushARangeAndTheWholeMrAfterAWriteOnRxe()
    {
        // rdma-core tests/test_qpex.py test_qp_ex_rc_flush: an MR with FLUSH_GLOBAL | REMOTE_WRITE, a QP granting
        // FLUSH_GLOBAL | FLUSH_PERSISTENT; FLUSH of a range, then of the whole MR, both IBV_WC_SUCCESS with
        // IBV_WC_FLUSH (rxe process_flush; rxe_comp.c wr_to_wc_opcode).
        final RuleRig rig = RuleRig.connected(DeviceProfiles.rxe(), QPEX_ACCESS);
        final long dst = rig.bufferB(PAGE);
        final MemoryRegion target = rig.pdB.regMr(dst, PAGE, FLUSH_TARGET);
        final long src = rig.bufferA(PAGE);
        rig.ctxA.memory().write(src, pattern(64, 1));
        final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.write(1, sgl(sge(srcMr, src, 64)), dst, target.rkey()));

        rig.qpA.postSend(SendWr.flush(2, dst, target.rkey(), 64, FlushPlacement.GLOBAL, FlushSelectivity.RANGE));
        rig.qpA.postSend(SendWr.flush(3, dst + 8 * PAGE, target.rkey(), 0, FlushPlacement.GLOBAL,
            FlushSelectivity.MR));

        final List<WorkCompletion> wcs = rig.pollA();
        assertThat(wcs).extracting(WorkCompletion::status).containsOnly(WcStatus.SUCCESS);
        assertThat(wcs).extracting(WorkCompletion::opcode).containsExactly(WcOpcode.RDMA_WRITE, WcOpcode.FLUSH,
            WcOpcode.FLUSH);
        assertThat(rig.ctxB.memory().read(dst, 64)).isEqualTo(pattern(64, 1));
        assertThat(rig.qpB.state()).isEqualTo(QpState.RTS);
    }

    @Test
    void shouldAnswerRemAccessErrForAPlacementTypeTheMrDoesNotGrant()
    {
        // rdma-core tests/test_qpex.py test_qp_ex_rc_flush_type_violate: FLUSH_PERSISTENT to an MR registered with
        // FLUSH_GLOBAL only is IBV_WC_REM_ACCESS_ERR (rxe check_rkey: lookup_mr with IB_ACCESS_FLUSH_PERSISTENT,
        // RESPST_ERR_RKEY_VIOLATION); the responder QP goes to the error state.
        final RuleRig rig = RuleRig.connected(DeviceProfiles.rxe(), QPEX_ACCESS);
        final long dst = rig.bufferB(PAGE);
        final MemoryRegion target = rig.pdB.regMr(dst, PAGE, FLUSH_TARGET);

        rig.qpA.postSend(SendWr.flush(1, dst, target.rkey(), 64, FlushPlacement.PERSISTENT,
            FlushSelectivity.RANGE));

        final WorkCompletion wc = only(rig.pollA());
        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.diagnosis().summary()).contains("FLUSH_PERSISTENT");
        assertThat(rig.qpB.state()).isEqualTo(QpState.ERR);
    }

    @Test
    void shouldAnswerRemInvReqErrWhenTheResponderQpLacksTheFlushRight()
    {
        // rxe_resp.c check_qp_attr_access: a FLUSH needs the placement type's right in the responder QP's
        // qp_access_flags, else RESPST_ERR_UNSUPPORTED_OPCODE: NAK invalid request, IBV_WC_REM_INV_REQ_ERR.
        final RuleRig rig = RuleRig.connected(DeviceProfiles.rxe(), RuleRig.ALL_REMOTE);
        final long dst = rig.bufferB(PAGE);
        final MemoryRegion target = rig.pdB.regMr(dst, PAGE, FLUSH_TARGET);

        rig.qpA.postSend(SendWr.flush(1, dst, target.rkey(), 64, FlushPlacement.GLOBAL, FlushSelectivity.RANGE));

        final WorkCompletion wc = only(rig.pollA());
        assertThat(wc.status()).isEqualTo(WcStatus.REM_INV_REQ_ERR);
        assertThat(wc.diagnosis().summary()).contains("qp_access_flags");
    }

    @Test
    void shouldCheckTheRangeOfARangeFlushButNotOfAnMrFlush()
    {
        // rxe_resp.c check_rkey: mr_check_range for IB_FLUSH_RANGE (RESPST_ERR_RKEY_VIOLATION), skipped for
        // IB_FLUSH_MR, which flushes the whole MR whatever the address.
        final RuleRig rig = RuleRig.connected(DeviceProfiles.rxe(), QPEX_ACCESS);
        final long dst = rig.bufferB(2 * PAGE);
        final MemoryRegion target = rig.pdB.regMr(dst, PAGE, FLUSH_TARGET);

        rig.qpA.postSend(SendWr.flush(1, dst + PAGE - 8, target.rkey(), 64, FlushPlacement.GLOBAL,
            FlushSelectivity.MR));
        assertThat(only(rig.pollA()).status()).isEqualTo(WcStatus.SUCCESS);
        rig.qpA.postSend(SendWr.flush(2, dst + PAGE - 8, target.rkey(), 64, FlushPlacement.GLOBAL,
            FlushSelectivity.RANGE));
        final WorkCompletion wc = only(rig.pollA());
        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.diagnosis().summary()).contains("(64 bytes), registered [");
    }

    @Test
    void shouldRefuseAFlushLongerThanTwoGibAtTheResponder()
    {
        // rxe_resp.c rxe_resp_check_length (IBA C9-94): a RETH DMA length above 2^31 is RESPST_ERR_LENGTH, a NAK
        // invalid request: IBV_WC_REM_INV_REQ_ERR, before the rkey is looked at.
        final RuleRig rig = RuleRig.connected(DeviceProfiles.rxe(), QPEX_ACCESS);

        rig.qpA.postSend(SendWr.flush(1, 0x1000, 0x1234, (1L << 31) + 1, FlushPlacement.GLOBAL,
            FlushSelectivity.RANGE));

        final WorkCompletion wc = only(rig.pollA());
        assertThat(wc.status()).isEqualTo(WcStatus.REM_INV_REQ_ERR);
        assertThat(wc.diagnosis().summary()).contains("2^31");
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx5", "connectx7", "rxe-legacy", "siw"})
    void shouldRefuseFlushAndAtomicWriteAtPostOnADeviceWithoutTheCapability(final String profile)
    {
        // ibv_wr_post(3): the operations are posted through a QP created with IBV_QP_EX_WITH_FLUSH or
        // IBV_QP_EX_WITH_ATOMIC_WRITE, and ibv_create_qp_ex fails with EOPNOTSUPP where the provider lacks them
        // (tests/test_qpex.py skips on it); the device caps are IB_UVERBS_DEVICE_FLUSH_* and _ATOMIC_WRITE.
        final RuleRig rig = RuleRig.connected(DeviceProfiles.byName(profile), RuleRig.ALL_REMOTE);

        final PostException flush = catchThrowableOfType(PostException.class, () -> rig.qpA.postSend(
            SendWr.flush(1, 0x1000, 0x1234, 64, FlushPlacement.GLOBAL, FlushSelectivity.RANGE)));
        final PostException write = catchThrowableOfType(PostException.class, () -> rig.qpA.postSend(
            SendWr.atomicWrite(2, 0x1000, 0x1234, 7)));

        assertThat(flush.errnoName()).isEqualTo(Errno.EOPNOTSUPP);
        assertThat(flush.detail()).contains("FLUSH_GLOBAL");
        assertThat(write.errnoName()).isEqualTo(Errno.EOPNOTSUPP);
        assertThat(write.detail()).contains("ATOMIC_WRITE");
        assertThat(((SimQp)rig.qpA).sendsWaiting()).isZero();
        assertThat(rig.pollA()).isEmpty();
    }

    @Test
    void shouldRefuseFlushAccessWithEinvalOnAKernelThatPredatesIt()
    {
        // ib_check_mr_access: bits outside IB_ACCESS_SUPPORTED are EINVAL; the FLUSH bits joined it in Linux 6.2,
        // after the kernel of the rxe-legacy dump (rdma-core tests/test_qpex.py skips on this EINVAL).
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.rxeLegacy());
        final long inUse = rig.deviceB.tables().mpt().inUse();

        final dev.rnicsim.verbs.VerbsException e = catchThrowableOfType(dev.rnicsim.verbs.VerbsException.class,
            () -> rig.pdB.regMr(rig.bufferB(PAGE), PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.FLUSH_GLOBAL)));

        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.detail()).contains("IB_ACCESS_SUPPORTED");
        assertThat(rig.deviceB.tables().mpt().inUse()).isEqualTo(inUse);
    }

    // ------------------------------------------------------------------ ATOMIC_WRITE

    @Test
    void shouldStoreTheEightBytesOfAnAtomicWrite()
    {
        // rdma-core tests/test_qpex.py test_qp_ex_rc_atomic_write: the 8 bytes land at the responder
        // (rxe_mr_do_atomic_write), the completion is IBV_WC_ATOMIC_WRITE.
        final RuleRig rig = RuleRig.connected(DeviceProfiles.rxe(), RuleRig.ALL_REMOTE);
        final long dst = rig.bufferB(PAGE);
        final MemoryRegion target = rig.pdB.regMr(dst, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));

        rig.qpA.postSend(SendWr.atomicWrite(1, dst + 16, target.rkey(), 0x1122_3344_5566_7788L));

        final WorkCompletion wc = only(rig.pollA());
        assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(wc.opcode()).isEqualTo(WcOpcode.ATOMIC_WRITE);
        assertThat(readLong(rig, dst + 16)).isEqualTo(0x1122_3344_5566_7788L);
        assertThat(readLong(rig, dst + 8)).isZero();
    }

    @Test
    void shouldRefuseAMisalignedAtomicWriteAtTheResponderAndChangeNothing()
    {
        // rxe_mr.c rxe_mr_do_atomic_write (IBA A19.4.2): an address not 8-byte aligned is
        // RESPST_ERR_MISALIGNED_ATOMIC, NAK invalid request: IBV_WC_REM_INV_REQ_ERR; rxe's post-time alignment check
        // covers the fetching atomics only (WR_ATOMIC_MASK), so the request is posted.
        final RuleRig rig = RuleRig.connected(DeviceProfiles.rxe(), RuleRig.ALL_REMOTE);
        final long dst = rig.bufferB(PAGE);
        final MemoryRegion target = rig.pdB.regMr(dst, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));

        rig.qpA.postSend(SendWr.atomicWrite(1, dst + 4, target.rkey(), -1L));

        final WorkCompletion wc = only(rig.pollA());
        assertThat(wc.status()).isEqualTo(WcStatus.REM_INV_REQ_ERR);
        assertThat(wc.diagnosis().summary()).contains("8-byte aligned");
        assertThat(rig.ctxB.memory().read(dst, 16)).containsOnly(0);
        assertThat(rig.qpB.state()).isEqualTo(QpState.ERR);
    }

    @Test
    void shouldNeedRemoteWriteOnTheMrAndOnTheResponderQpForAnAtomicWrite()
    {
        // rxe_resp.c: check_qp_attr_access wants REMOTE_WRITE on the QP for RXE_ATOMIC_WRITE_MASK
        // (IBV_WC_REM_INV_REQ_ERR); check_rkey asks the MR for IB_ACCESS_REMOTE_WRITE (IBV_WC_REM_ACCESS_ERR).
        final RuleRig noQpRight = RuleRig.connected(DeviceProfiles.rxe(), EnumSet.of(Access.REMOTE_READ));
        final long dst = noQpRight.bufferB(PAGE);
        final MemoryRegion writable = noQpRight.pdB.regMr(dst, PAGE, EnumSet.of(Access.LOCAL_WRITE,
            Access.REMOTE_WRITE));
        noQpRight.qpA.postSend(SendWr.atomicWrite(1, dst, writable.rkey(), 5));
        assertThat(only(noQpRight.pollA()).status()).isEqualTo(WcStatus.REM_INV_REQ_ERR);

        final RuleRig noMrRight = RuleRig.connected(DeviceProfiles.rxe(), RuleRig.ALL_REMOTE);
        final long dst2 = noMrRight.bufferB(PAGE);
        final MemoryRegion readable = noMrRight.pdB.regMr(dst2, PAGE, EnumSet.of(Access.LOCAL_WRITE,
            Access.REMOTE_READ));
        noMrRight.qpA.postSend(SendWr.atomicWrite(1, dst2, readable.rkey(), 5));
        final WorkCompletion wc = only(noMrRight.pollA());
        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.diagnosis().summary()).contains("lacks [REMOTE_WRITE]");
        assertThat(readLong(noMrRight, dst2)).isZero();
    }

    @Test
    void shouldRefuseAGatherListOnAnAtomicWriteAtPost()
    {
        // ibv_wr_post(3): ibv_wr_atomic_write takes its 8 bytes as an argument and no DATA setter; a FLUSH has no
        // payload (IBTA A19, oA19-2). A gather list is a mistake: EINVAL, nothing queued.
        final RuleRig rig = RuleRig.connected(DeviceProfiles.rxe(), RuleRig.ALL_REMOTE);
        final long src = rig.bufferA(PAGE);
        final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, RuleRig.LOCAL);
        final SendWr withSgl = new SendWr(1, dev.rnicsim.verbs.WrOpcode.ATOMIC_WRITE, sgl(sge(srcMr, src, 8)),
            EnumSet.of(dev.rnicsim.verbs.SendFlag.SIGNALED), 0x1000, 0x1234, 0, 9, 0, 0);

        final PostException e = catchThrowableOfType(PostException.class, () -> rig.qpA.postSend(withSgl));

        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(((SimQp)rig.qpA).sendsWaiting()).isZero();
    }

    @Test
    void shouldPriceAFlushAndAnAtomicWriteAsOneRoundTrip()
    {
        // IBTA A19: both are answered with an RDMA READ response (rxe_comp.c check_ack takes one for a FLUSH), so
        // each costs the cost model's operation base latency; a FLUSH carries no payload, an ATOMIC WRITE 8 bytes.
        final RuleRig rig = RuleRig.connected(DeviceProfiles.rxe(), QPEX_ACCESS);
        final long dst = rig.bufferB(PAGE);
        final MemoryRegion target = rig.pdB.regMr(dst, PAGE, FLUSH_TARGET);
        final CostModel costs = rig.fabric.costModel();

        final long t0 = rig.fabric.clock().nowNs();
        rig.qpA.postSend(SendWr.flush(1, dst, target.rkey(), PAGE, FlushPlacement.GLOBAL, FlushSelectivity.RANGE));
        final WorkCompletion flush = only(rig.pollA());
        final long flushNs = rig.fabric.clock().nowNs() - t0;
        final long t1 = rig.fabric.clock().nowNs();
        rig.qpA.postSend(SendWr.atomicWrite(2, dst, target.rkey(), 1));
        final WorkCompletion atomicWrite = only(rig.pollA());
        final long atomicWriteNs = rig.fabric.clock().nowNs() - t1;

        assertThat(flushNs).isGreaterThanOrEqualTo(costs.opBaseLatencyNs())
            .isLessThan(costs.opBaseLatencyNs() + 4 * costs.cacheMissNs() + 1);
        assertThat(atomicWriteNs).isGreaterThanOrEqualTo(costs.opBaseLatencyNs())
            .isLessThan(costs.opBaseLatencyNs() + 4 * costs.cacheMissNs() + 1);
        assertThat(List.of(flush.status(), atomicWrite.status())).containsOnly(WcStatus.SUCCESS);
    }

    // ------------------------------------------------------------------ rxe's length check and copy errors

    @ParameterizedTest
    @ValueSource(strings = {"rxe", "connectx5"})
    void shouldAnswerAReadLongerThanTwoGibAsTheProviderDoes(final String profile)
    {
        // rxe: a user QP's post does not check the length; the responder's rxe_resp_check_length refuses a RETH DMA
        // length above 2^31 (RESPST_ERR_LENGTH): IBV_WC_REM_INV_REQ_ERR, responder QP in error. Without that rule the
        // requester refuses a message above max_msg_sz itself: IBV_WC_LOC_LEN_ERR, the responder untouched.
        final boolean rxe = profile.equals("rxe");
        final RuleRig rig = RuleRig.connected(DeviceProfiles.byName(profile), RuleRig.ALL_REMOTE);
        final long length = (1L << 31) + PAGE;
        final long dst = rig.ctxA.memory().allocate(length, Backing.BASE_PAGES);
        final MemoryRegion dstMr = rig.pdA.regMr(dst, length, EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND));
        final long src = rig.bufferB(PAGE);
        final MemoryRegion source = rig.pdB.regMr(src, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));

        rig.qpA.postSend(SendWr.read(1, List.of(new Sge(dst, length, dstMr.lkey())), src, source.rkey()));

        final WorkCompletion wc = only(rig.pollA());
        assertThat(wc.status()).isEqualTo(rxe ? WcStatus.REM_INV_REQ_ERR : WcStatus.LOC_LEN_ERR);
        assertThat(rig.qpB.state()).isEqualTo(rxe ? QpState.ERR : QpState.RTS);
    }

    @Test
    void shouldRefuseAMessageLongerThanThePortsMaxMsgSzAtTheRequesterOnMlx5()
    {
        // ibv_query_port(3) max_msg_sz: ConnectX ports report 2^30; a longer message completes with
        // IBV_WC_LOC_LEN_ERR at the requester and nothing reaches the responder.
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final long length = (1L << 30) + PAGE;
        final long src = rig.ctxA.memory().allocate(length, Backing.BASE_PAGES);
        final MemoryRegion srcMr = rig.pdA.regMr(src, length, EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND));
        final long dst = rig.bufferB(PAGE);
        final MemoryRegion target = rig.pdB.regMr(dst, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));

        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(src, length, srcMr.lkey())), dst, target.rkey()));

        final WorkCompletion wc = only(rig.pollA());
        assertThat(wc.status()).isEqualTo(WcStatus.LOC_LEN_ERR);
        assertThat(wc.diagnosis().summary()).contains("max_msg_sz=1073741824");
        assertThat(rig.qpB.state()).isEqualTo(QpState.RTS);
    }

    @Test
    void shouldRefuseAWriteLongerThanTwoGibAtTheResponderOnRxe()
    {
        // rxe: the requester sends the first packet of the WRITE (its lkey checks pass), the responder refuses the
        // RETH DMA length (rxe_resp_check_length): IBV_WC_REM_INV_REQ_ERR; nothing is placed.
        final RuleRig rig = RuleRig.connected(DeviceProfiles.rxe(), RuleRig.ALL_REMOTE);
        final long length = (1L << 31) + PAGE;
        final long src = rig.ctxA.memory().allocate(length, Backing.BASE_PAGES);
        final MemoryRegion srcMr = rig.pdA.regMr(src, length, EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND));
        final long dst = rig.bufferB(PAGE);
        final MemoryRegion target = rig.pdB.regMr(dst, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));

        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(src, length, srcMr.lkey())), dst, target.rkey()));

        final WorkCompletion wc = only(rig.pollA());
        assertThat(wc.status()).isEqualTo(WcStatus.REM_INV_REQ_ERR);
        assertThat(wc.diagnosis().summary()).contains("RETH DMA length");
        assertThat(rig.qpB.state()).isEqualTo(QpState.ERR);
        assertThat(rig.ctxB.memory().read(dst, 16)).containsOnly(0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"rxe", "rxe-legacy", "connectx5"})
    void shouldCompleteAGatherOutsideItsMrAsTheProviderDoes(final String profile)
    {
        // rxe_req.c maps a copy error of finish_packet: -EFAULT to IBV_WC_LOC_PROT_ERR, others to LOC_QP_OP_ERR;
        // rxe_mr.c mr_check_range answers -EINVAL in current kernels (-EFAULT in older ones, as rxe-legacy). mlx5:
        // IBV_WC_LOC_PROT_ERR.
        final RuleRig rig = RuleRig.connected(DeviceProfiles.byName(profile), RuleRig.ALL_REMOTE);
        final long src = rig.bufferA(2 * PAGE);
        final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, RuleRig.LOCAL);
        final long dst = rig.bufferB(PAGE);
        final MemoryRegion target = rig.pdB.regMr(dst, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));

        rig.qpA.postSend(SendWr.write(1, sgl(sge(srcMr, src + PAGE - 8, 64)), dst, target.rkey()));

        assertThat(only(rig.pollA()).status()).isEqualTo(profile.equals("rxe") ? WcStatus.LOC_QP_OP_ERR
            : WcStatus.LOC_PROT_ERR);
        assertThat(rig.ctxB.memory().read(dst, 64)).containsOnly(0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"rxe", "rxe-legacy", "connectx5"})
    void shouldCompleteAGatherThroughAnMrOfAnotherPdAsTheProviderDoes(final String profile)
    {
        // rxe copy_data: lookup_mr fails for an MR of another PD (-EINVAL), so IBV_WC_LOC_QP_OP_ERR in every rxe;
        // mlx5: IBV_WC_LOC_PROT_ERR (the mlx5 memcpy bad-flow tests of rdma-core use a foreign PD).
        final RuleRig rig = RuleRig.connected(DeviceProfiles.byName(profile), RuleRig.ALL_REMOTE);
        final long src = rig.bufferA(PAGE);
        final MemoryRegion foreign = rig.ctxA.allocPd().regMr(src, PAGE, RuleRig.LOCAL);
        final long dst = rig.bufferB(PAGE);
        final MemoryRegion target = rig.pdB.regMr(dst, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));

        rig.qpA.postSend(SendWr.write(1, sgl(sge(foreign, src, 64)), dst, target.rkey()));

        assertThat(only(rig.pollA()).status()).isEqualTo(profile.startsWith("rxe") ? WcStatus.LOC_QP_OP_ERR
            : WcStatus.LOC_PROT_ERR);
    }
}
