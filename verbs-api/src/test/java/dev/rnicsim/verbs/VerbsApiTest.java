package dev.rnicsim.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The verbs API's value types against the rdma-core numbers they mirror (libibverbs/verbs.h, errno-base.h), its
 * exceptions, work requests and device attributes, and device discovery with no provider on the class path.
 */
class VerbsApiTest
{
    // --------------------------------------------------------------------------------------------- access

    @Nested
    class AccessFlags
    {
        @Test
        void bitsEqualTheIbvAccessFlagsValues()
        {
            assertThat(Access.LOCAL_WRITE.bit()).isEqualTo(0x1);
            assertThat(Access.REMOTE_WRITE.bit()).isEqualTo(0x2);
            assertThat(Access.REMOTE_READ.bit()).isEqualTo(0x4);
            assertThat(Access.REMOTE_ATOMIC.bit()).isEqualTo(0x8);
            assertThat(Access.MW_BIND.bit()).isEqualTo(0x10);
            assertThat(Access.ZERO_BASED.bit()).isEqualTo(0x20);
            assertThat(Access.ON_DEMAND.bit()).isEqualTo(0x40);
            assertThat(Access.HUGETLB.bit()).isEqualTo(0x80);
            assertThat(Access.FLUSH_GLOBAL.bit()).isEqualTo(0x100);
            assertThat(Access.FLUSH_PERSISTENT.bit()).isEqualTo(0x200);
            assertThat(Access.RELAXED_ORDERING.bit()).isEqualTo(1 << 20);
            assertThat(Access.values()).hasSize(11);
        }

        @Test
        void toBitsOrsTheFlagsAndAnEmptySetIsZero()
        {
            assertThat(Access.toBits(EnumSet.noneOf(Access.class))).isZero();
            assertThat(Access.toBits(EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ)))
                .isEqualTo(0x7);
            assertThat(Access.toBits(EnumSet.allOf(Access.class))).isEqualTo(0x3ff | (1 << 20));
        }

        @Test
        void fromBitsOfUnknownBitsIsEinvalNamingThem()
        {
            final VerbsException e = catchThrowableOfType(VerbsException.class,
                () -> Access.fromBits(0x1 | 0x400 | (1 << 21)));

            assertThat(e.errno()).isEqualTo(22);
            assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
            assertThat(e.verb()).isEqualTo("access");
            assertThat(e.getMessage()).contains("EINVAL").contains("0x200400");
            assertThatThrownBy(() -> Access.fromBits(Integer.MIN_VALUE)).isInstanceOf(VerbsException.class);
        }

        @Test
        void remoteWriteOrAtomicWithoutLocalWriteBreaksTheDependencyRule()
        {
            for (final Access remote : List.of(Access.REMOTE_WRITE, Access.REMOTE_ATOMIC))
            {
                final VerbsException e = catchThrowableOfType(VerbsException.class,
                    () -> Access.checkDependencies(EnumSet.of(remote, Access.REMOTE_READ), "ibv_reg_mr"));

                assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
                assertThat(e.verb()).isEqualTo("ibv_reg_mr");
                assertThat(e.getMessage()).startsWith("ibv_reg_mr: EINVAL: ").contains("LOCAL_WRITE");
            }
        }

        @Test
        void theDependencyRuleAcceptsLocalWriteWithRemoteRightsAndRemoteReadAlone()
        {
            assertThatNoException().isThrownBy(() ->
            {
                Access.checkDependencies(EnumSet.noneOf(Access.class), "ibv_reg_mr");
                Access.checkDependencies(EnumSet.of(Access.REMOTE_READ), "ibv_reg_mr");
                Access.checkDependencies(EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC),
                    "ibv_reg_mr");
                Access.checkDependencies(EnumSet.of(Access.LOCAL_WRITE), "ibv_reg_mr");
            });
        }
    }

    // --------------------------------------------------------------------------------------------- completions

    @Nested
    class Completions
    {
        @Test
        void wcStatusNumbersAreThoseOfIbvWcStatus()
        {
            final List<WcStatus> inOrder = List.of(WcStatus.SUCCESS, WcStatus.LOC_LEN_ERR, WcStatus.LOC_QP_OP_ERR,
                WcStatus.LOC_EEC_OP_ERR, WcStatus.LOC_PROT_ERR, WcStatus.WR_FLUSH_ERR, WcStatus.MW_BIND_ERR,
                WcStatus.BAD_RESP_ERR, WcStatus.LOC_ACCESS_ERR, WcStatus.REM_INV_REQ_ERR, WcStatus.REM_ACCESS_ERR,
                WcStatus.REM_OP_ERR, WcStatus.RETRY_EXC_ERR, WcStatus.RNR_RETRY_EXC_ERR, WcStatus.LOC_RDD_VIOL_ERR,
                WcStatus.REM_INV_RD_REQ_ERR, WcStatus.REM_ABORT_ERR, WcStatus.INV_EECN_ERR,
                WcStatus.INV_EEC_STATE_ERR, WcStatus.FATAL_ERR, WcStatus.RESP_TIMEOUT_ERR, WcStatus.GENERAL_ERR,
                WcStatus.TM_ERR, WcStatus.TM_RNDV_INCOMPLETE);

            for (int code = 0; code < inOrder.size(); code++)
            {
                assertThat(inOrder.get(code).code()).isEqualTo(code);
                assertThat(WcStatus.of(code)).isSameAs(inOrder.get(code));
            }
            assertThat(WcStatus.REM_ACCESS_ERR.code()).isEqualTo(10);
            assertThat(WcStatus.WR_FLUSH_ERR.code()).isEqualTo(5);
            assertThat(WcStatus.RNR_RETRY_EXC_ERR.code()).isEqualTo(13);
            assertThat(WcStatus.UNKNOWN.code()).isEqualTo(-1);
        }

        @Test
        void unknownWcStatusNumbersMapToUnknown()
        {
            assertThat(WcStatus.of(24)).isEqualTo(WcStatus.UNKNOWN);
            assertThat(WcStatus.of(-1)).isEqualTo(WcStatus.UNKNOWN);
            assertThat(WcStatus.of(Integer.MAX_VALUE)).isEqualTo(WcStatus.UNKNOWN);
            assertThat(WcStatus.of(Integer.MIN_VALUE)).isEqualTo(WcStatus.UNKNOWN);
        }

        @Test
        void cNameIsTheIbvWcConstant()
        {
            assertThat(WcStatus.REM_ACCESS_ERR.cName()).isEqualTo("IBV_WC_REM_ACCESS_ERR");
            assertThat(WcStatus.SUCCESS.cName()).isEqualTo("IBV_WC_SUCCESS");
            assertThat(WcStatus.TM_RNDV_INCOMPLETE.cName()).isEqualTo("IBV_WC_TM_RNDV_INCOMPLETE");
        }

        @Test
        void wcOpcodeNumbersAreThoseOfIbvWcOpcode()
        {
            assertThat(Arrays.stream(WcOpcode.values()).mapToInt(WcOpcode::code).toArray())
                .containsExactly(0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 128, 129);
            assertThat(WcOpcode.FLUSH.code()).isEqualTo(8);
            assertThat(WcOpcode.ATOMIC_WRITE.code()).isEqualTo(9);
            assertThat(WcOpcode.RECV.code()).isEqualTo(128);
            assertThat(WcOpcode.RECV_RDMA_WITH_IMM.code()).isEqualTo(129);
        }

        @Test
        void wrOpcodeNumbersAreThoseOfIbvWrOpcodeWithTheirCompletionOpcode()
        {
            assertThat(Arrays.stream(WrOpcode.values()).mapToInt(WrOpcode::code).toArray())
                .containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 14, 15, 0x20);
            assertThat(WrOpcode.FLUSH.completion()).isEqualTo(WcOpcode.FLUSH);
            assertThat(WrOpcode.ATOMIC_WRITE.completion()).isEqualTo(WcOpcode.ATOMIC_WRITE);
            assertThat(WrOpcode.RDMA_WRITE.code()).isZero();
            assertThat(WrOpcode.SEND_WITH_INV.code()).isEqualTo(9);
            assertThat(WrOpcode.RDMA_WRITE_WITH_IMM.completion()).isEqualTo(WcOpcode.RDMA_WRITE);
            assertThat(WrOpcode.SEND_WITH_INV.completion()).isEqualTo(WcOpcode.SEND);
            assertThat(WrOpcode.RDMA_READ.completion()).isEqualTo(WcOpcode.RDMA_READ);
            assertThat(WrOpcode.ATOMIC_CMP_AND_SWP.completion()).isEqualTo(WcOpcode.COMP_SWAP);
            assertThat(WrOpcode.ATOMIC_FETCH_AND_ADD.completion()).isEqualTo(WcOpcode.FETCH_ADD);
        }

        @Test
        void onlyTheTwoAtomicsAreAtomicAndOnlyOperationsWithAnRkeyAreRdma()
        {
            assertThat(Arrays.stream(WrOpcode.values()).filter(WrOpcode::isAtomic))
                .containsExactly(WrOpcode.ATOMIC_CMP_AND_SWP, WrOpcode.ATOMIC_FETCH_AND_ADD);
            assertThat(Arrays.stream(WrOpcode.values()).filter(WrOpcode::isRdma))
                .containsExactly(WrOpcode.RDMA_WRITE, WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.RDMA_READ,
                    WrOpcode.ATOMIC_CMP_AND_SWP, WrOpcode.ATOMIC_FETCH_AND_ADD, WrOpcode.FLUSH, WrOpcode.ATOMIC_WRITE);
        }
    }

    // --------------------------------------------------------------------------------------------- errors

    @Nested
    class Errors
    {
        @Test
        void errnoOfKnowsTheLinuxNumbers()
        {
            assertThat(Errno.of(1)).isEqualTo(Errno.EPERM);
            assertThat(Errno.of(2)).isEqualTo(Errno.ENOENT);
            assertThat(Errno.of(11)).isEqualTo(Errno.EAGAIN);
            assertThat(Errno.of(12)).isEqualTo(Errno.ENOMEM);
            assertThat(Errno.of(13)).isEqualTo(Errno.EACCES);
            assertThat(Errno.of(14)).isEqualTo(Errno.EFAULT);
            assertThat(Errno.of(16)).isEqualTo(Errno.EBUSY);
            assertThat(Errno.of(19)).isEqualTo(Errno.ENODEV);
            assertThat(Errno.of(22)).isEqualTo(Errno.EINVAL);
            assertThat(Errno.of(38)).isEqualTo(Errno.ENOSYS);
            assertThat(Errno.of(95)).isEqualTo(Errno.EOPNOTSUPP);
            for (final Errno e : Errno.values())
            {
                assertThat(Errno.of(e.code())).isSameAs(e);
            }
        }

        @Test
        void errnoOfAnUnknownNumberIsUnknown()
        {
            assertThat(Errno.of(0)).isEqualTo(Errno.UNKNOWN);
            assertThat(Errno.of(3)).isEqualTo(Errno.UNKNOWN);
            assertThat(Errno.of(10_000)).isEqualTo(Errno.UNKNOWN);
        }

        @Test
        void verbsExceptionNamesTheVerbAndTheErrno()
        {
            final VerbsException e = new VerbsException("ibv_reg_mr", 12, "lengthBytes=10 > maxMrSizeBytes=4");

            assertThat(e.getMessage()).isEqualTo("ibv_reg_mr: ENOMEM: lengthBytes=10 > maxMrSizeBytes=4");
            assertThat(e.verb()).isEqualTo("ibv_reg_mr");
            assertThat(e.errno()).isEqualTo(12);
            assertThat(e.errnoName()).isEqualTo(Errno.ENOMEM);
        }

        @Test
        void verbsExceptionKeepsARawErrnoWithoutAConstantAndItsCause()
        {
            final IllegalStateException cause = new IllegalStateException("low level");

            final VerbsException e = new VerbsException("ibv_post_send", 121, "driver says no", cause);

            assertThat(e.errno()).isEqualTo(121);
            assertThat(e.errnoName()).isEqualTo(Errno.UNKNOWN);
            assertThat(e.getMessage()).contains("ibv_post_send").contains("UNKNOWN");
            assertThat(e.getCause()).isSameAs(cause);
        }

        @Test
        void postExceptionCarriesTheIndexOfTheFirstWorkRequestNotPosted()
        {
            final PostException e = new PostException("ibv_post_send", 12, 3, "send queue full");

            assertThat(e.badWrIndex()).isEqualTo(3);
            assertThat(e).isInstanceOf(VerbsException.class);
            assertThat(e.errnoName()).isEqualTo(Errno.ENOMEM);
            assertThat(e.verb()).isEqualTo("ibv_post_send");
            assertThat(e.getMessage()).isEqualTo("ibv_post_send: ENOMEM: wr[3]: send queue full");
        }
    }

    // --------------------------------------------------------------------------------------------- work requests

    @Nested
    class WorkRequests
    {
        private final Sge a = new Sge(0x1000, 100, 7);
        private final Sge b = new Sge(0x3000, 28, 8);

        @Test
        void sgeLengthMustFitUint32()
        {
            assertThat(new Sge(0, 0, 1).lengthBytes()).isZero();
            assertThat(new Sge(0, 0xffff_ffffL, 1).lengthBytes()).isEqualTo(0xffff_ffffL);
            assertThatThrownBy(() -> new Sge(0, 1L << 32, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("4294967296");
            assertThatThrownBy(() -> new Sge(0, -1, 1)).isInstanceOf(IllegalArgumentException.class);
        }

        @Test
        void sgeOfAnMrStartsAtItsIovaWithItsLkey()
        {
            final MemoryRegion mr = new FixedMr(0x7f00_0000_1234L, 0x234, 0x0102_0304);

            final Sge sge = Sge.of(mr, 100, 50);

            assertThat(sge).isEqualTo(new Sge(0x234 + 100, 50, 0x0102_0304));
        }

        @Test
        void writeAndReadFactoriesSetSignaledAndTheRemoteFields()
        {
            final SendWr w = SendWr.write(1, List.of(a, b), 0xabc, 42);
            final SendWr r = SendWr.read(2, List.of(a), 0xdef, 43);
            final SendWr wi = SendWr.writeWithImm(3, List.of(b), 0x10, 44, 0x5555);

            assertThat(w).isEqualTo(new SendWr(1, WrOpcode.RDMA_WRITE, List.of(a, b), Set.of(SendFlag.SIGNALED),
                0xabc, 42, 0, 0, 0, 0));
            assertThat(r).isEqualTo(new SendWr(2, WrOpcode.RDMA_READ, List.of(a), Set.of(SendFlag.SIGNALED), 0xdef,
                43, 0, 0, 0, 0));
            assertThat(wi).isEqualTo(new SendWr(3, WrOpcode.RDMA_WRITE_WITH_IMM, List.of(b),
                Set.of(SendFlag.SIGNALED), 0x10, 44, 0x5555, 0, 0, 0));
            assertThat(w.totalBytes()).isEqualTo(128);
        }

        @Test
        void sendFactoriesSetSignaledAndNoRemoteFields()
        {
            final SendWr s = SendWr.send(4, List.of(a, b));
            final SendWr si = SendWr.sendWithImm(5, List.of(), 9);

            assertThat(s.opcode()).isEqualTo(WrOpcode.SEND);
            assertThat(s.flags()).containsExactly(SendFlag.SIGNALED);
            assertThat(s.remoteAddr()).isZero();
            assertThat(s.rkey()).isZero();
            assertThat(s.totalBytes()).isEqualTo(128);
            assertThat(si).isEqualTo(new SendWr(5, WrOpcode.SEND_WITH_IMM, List.of(), Set.of(SendFlag.SIGNALED), 0, 0,
                9, 0, 0, 0));
            assertThat(si.totalBytes()).isZero();
        }

        @Test
        void atomicFactoriesPutTheResultSgeAndTheOperands()
        {
            final Sge result = new Sge(0x2000, 8, 11);

            final SendWr cas = SendWr.compareAndSwap(6, result, 0x40, 12, 1, 2);
            final SendWr faa = SendWr.fetchAndAdd(7, result, 0x48, 13, -5);

            assertThat(cas).isEqualTo(new SendWr(6, WrOpcode.ATOMIC_CMP_AND_SWP, List.of(result),
                Set.of(SendFlag.SIGNALED), 0x40, 12, 0, 1, 2, 0));
            assertThat(faa).isEqualTo(new SendWr(7, WrOpcode.ATOMIC_FETCH_AND_ADD, List.of(result),
                Set.of(SendFlag.SIGNALED), 0x48, 13, 0, -5, 0, 0));
            assertThat(cas.totalBytes()).isEqualTo(8);
        }

        @Test
        void placementFactoriesCarryTheirOperandsAndNoGatherList()
        {
            // ibv_wr_flush(qpx, rkey, remote_addr, len, type, level) and ibv_wr_atomic_write(qpx, rkey, remote_addr,
            // atomic_wr): no DATA setter (ibv_wr_post(3)).
            final SendWr flush = SendWr.flush(8, 0x1000, 14, 4096, FlushPlacement.PERSISTENT, FlushSelectivity.MR);
            final SendWr atomicWrite = SendWr.atomicWrite(9, 0x1008, 15, 0x0102030405060708L);

            assertThat(flush.opcode()).isEqualTo(WrOpcode.FLUSH);
            assertThat(flush.localOp()).isEqualTo(new SendWr.Flush(4096, FlushPlacement.PERSISTENT,
                FlushSelectivity.MR));
            assertThat(flush.sgList()).isEmpty();
            assertThat(atomicWrite).isEqualTo(new SendWr(9, WrOpcode.ATOMIC_WRITE, List.of(), Set.of(SendFlag.SIGNALED),
                0x1008, 15, 0, 0x0102030405060708L, 0, 0));
            assertThat(FlushPlacement.GLOBAL.code()).isEqualTo(1);
            assertThat(FlushPlacement.PERSISTENT.right()).isEqualTo(Access.FLUSH_PERSISTENT);
            assertThat(FlushSelectivity.MR.code()).isEqualTo(1);
            assertThatThrownBy(() -> new SendWr.Flush(1L << 32, FlushPlacement.GLOBAL, FlushSelectivity.RANGE))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("RETH");
        }

        @Test
        void withFlagsReplacesTheFlagsOnly()
        {
            final SendWr w = SendWr.write(1, List.of(a), 0xabc, 42);

            final SendWr inline = w.withFlags(EnumSet.of(SendFlag.INLINE, SendFlag.FENCE));
            final SendWr unsignaled = w.withFlags(Set.of());

            assertThat(inline.flags()).containsExactlyInAnyOrder(SendFlag.INLINE, SendFlag.FENCE);
            assertThat(unsignaled.flags()).isEmpty();
            assertThat(inline).isEqualTo(new SendWr(1, WrOpcode.RDMA_WRITE, List.of(a),
                Set.of(SendFlag.FENCE, SendFlag.INLINE), 0xabc, 42, 0, 0, 0, 0));
            assertThat(w.flags()).containsExactly(SendFlag.SIGNALED);
        }

        @Test
        void aWorkRequestCopiesItsListsAndRefusesNulls()
        {
            final java.util.ArrayList<Sge> sgl = new java.util.ArrayList<>(List.of(a));
            final SendWr w = SendWr.send(1, sgl);
            sgl.add(b);

            assertThat(w.sgList()).containsExactly(a);
            assertThatThrownBy(() -> w.sgList().add(b)).isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> SendWr.send(1, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("sgList is null; give the SGEs (an empty list for no payload)");
            assertThatThrownBy(() -> new SendWr(1, null, List.of(), Set.of(), 0, 0, 0, 0, 0, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("opcode is null; ");
            assertThatThrownBy(() -> new RecvWr(1, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("sgList is null; ");
            final java.util.ArrayList<Sge> holed = new java.util.ArrayList<>(List.of(a));
            holed.add(null);
            assertThatThrownBy(() -> SendWr.send(1, holed)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("sgList holds null at position 1; ");
            assertThatThrownBy(() -> new RecvWr(1, holed)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("sgList holds null at position 1; ");
            assertThatThrownBy(() -> new SendWr(1, WrOpcode.SEND, List.of(), null, 0, 0, 0, 0, 0, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("flags is null; ");
            assertThatThrownBy(() -> QpInitAttr.rc(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("sendCq is null; give the CQ its send completions go to (Context.createCq)");
            assertThatThrownBy(() -> new MwBindInfo(null, 0, 0, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("access is null; ");
        }

        @Test
        void sendFlagValuesAreThoseOfIbvSendFlags()
        {
            assertThat(SendFlag.FENCE.bit()).isEqualTo(1);
            assertThat(SendFlag.SIGNALED.bit()).isEqualTo(2);
            assertThat(SendFlag.SOLICITED.bit()).isEqualTo(4);
            assertThat(SendFlag.INLINE.bit()).isEqualTo(8);
        }

        @Test
        void recvWrTotalBytesSumsItsBuffers()
        {
            assertThat(RecvWr.of(9, a, b).totalBytes()).isEqualTo(128);
            assertThat(RecvWr.of(9).totalBytes()).isZero();
            assertThat(new RecvWr(9, List.of(new Sge(0, 0xffff_ffffL, 1), new Sge(0, 0xffff_ffffL, 1))).totalBytes())
                .isEqualTo(2 * 0xffff_ffffL);
            assertThat(RecvWr.of(9, a, b).sgList()).containsExactly(a, b);
        }
    }

    // --------------------------------------------------------------------------------------------- device

    @Nested
    class DeviceAttributesAndCaps
    {
        @Test
        void deviceCapFromBitsNamesTheSetFlags()
        {
            assertThat(DeviceCap.fromBits(0x01221000L)).containsExactlyInAnyOrder(DeviceCap.RC_RNR_NAK_GEN,
                DeviceCap.MEM_WINDOW, DeviceCap.MEM_MGT_EXTENSIONS, DeviceCap.MEM_WINDOW_TYPE_2B);
            assertThat(DeviceCap.fromBits(0)).isEmpty();
            assertThat(DeviceCap.fromBits(1L << 15 | 1L << 16 | 1L << 45)).as("bits without a name").isEmpty();
            assertThat(DeviceCap.fromBits(1L << 38 | 1L << 40)).as("device_cap_flags_ex bits")
                .containsExactlyInAnyOrder(DeviceCap.FLUSH_GLOBAL, DeviceCap.ATOMIC_WRITE);
        }

        @Test
        void deviceCapBitsAreThoseOfIbvDeviceCapFlags()
        {
            assertThat(DeviceCap.RESIZE_MAX_WR.bit()).isEqualTo(1L);
            assertThat(DeviceCap.RC_RNR_NAK_GEN.bit()).isEqualTo(1L << 12);
            assertThat(DeviceCap.MEM_WINDOW.bit()).isEqualTo(1L << 17);
            assertThat(DeviceCap.XRC.bit()).isEqualTo(1L << 20);
            assertThat(DeviceCap.MEM_MGT_EXTENSIONS.bit()).isEqualTo(1L << 21);
            assertThat(DeviceCap.MEM_WINDOW_TYPE_2A.bit()).isEqualTo(1L << 23);
            assertThat(DeviceCap.MEM_WINDOW_TYPE_2B.bit()).isEqualTo(1L << 24);
            assertThat(DeviceCap.MANAGED_FLOW_STEERING.bit()).isEqualTo(1L << 29);
        }

        private DeviceAttributes connectX()
        {
            return DeviceAttributes.builder().fwVer("16.35.2000").nodeGuid(0x0c42a10300ab_cdefL)
                .sysImageGuid(0x0c42a10300ab_cdeeL).vendorId(0x02c9).vendorPartId(4119).hwVer(0).physPortCnt(1)
                .maxMrSizeBytes(-1L).pageSizeCap(0xfffffffffffff000L).maxQp(262_144).maxQpWr(32_768)
                .deviceCapFlags(0x01221000L).maxSge(30).maxSgeRd(30).maxCq(16_777_216).maxCqe(4_194_303)
                .maxMr(16_777_216).maxPd(16_777_216).maxQpRdAtom(16).maxQpInitRdAtom(16).maxResRdAtom(4_194_304)
                .maxMw(16_777_216).atomicCap(AtomicCap.HCA).maxSrq(8_388_608).maxPkeys(128).localCaAckDelay(16)
                .odpCaps(new OdpCaps(OdpCaps.SUPPORT | OdpCaps.SUPPORT_IMPLICIT, 0x3f, 0, 0x3, 0)).build();
        }

        @Test
        void theBuilderSetsEveryField()
        {
            final DeviceAttributes d = connectX();

            assertThat(d).isEqualTo(new DeviceAttributes("16.35.2000", 0x0c42a10300ab_cdefL, 0x0c42a10300ab_cdeeL,
                0x02c9, 4119, 0, 1, -1L, 0xfffffffffffff000L, 262_144, 32_768, 0x01221000L, 30, 30, 16_777_216,
                4_194_303, 16_777_216, 16_777_216, 16, 16, 4_194_304, 16_777_216, AtomicCap.HCA, 8_388_608, 128,
                16, new OdpCaps(3, 0x3f, 0, 0x3, 0)));
            assertThat(d.odpCaps().supported()).isTrue();
            assertThat(d.odpCaps().implicitSupported()).isTrue();
        }

        @Test
        void toBuilderRoundTripsAndChangesOnlyWhatIsSet()
        {
            final DeviceAttributes d = connectX();

            final DeviceAttributes same = d.toBuilder().build();
            final DeviceAttributes fewerMrs = d.toBuilder().maxMr(1024).build();

            assertThat(same).isEqualTo(d);
            assertThat(fewerMrs.maxMr()).isEqualTo(1024);
            assertThat(fewerMrs.toBuilder().maxMr(d.maxMr()).build()).isEqualTo(d);
        }

        @Test
        void anEmptyBuilderHasZerosNoAtomicsAndNoOdp()
        {
            final DeviceAttributes d = DeviceAttributes.builder().build();

            assertThat(d.fwVer()).isEmpty();
            assertThat(d.maxMr()).isZero();
            assertThat(d.atomicCap()).isEqualTo(AtomicCap.NONE);
            assertThat(d.odpCaps()).isEqualTo(OdpCaps.NONE);
            assertThat(d.odpCaps().supported()).isFalse();
            assertThatThrownBy(() -> DeviceAttributes.builder().atomicCap(null).build())
                .isInstanceOf(NullPointerException.class);
        }

        @Test
        void hasReadsDeviceCapFlags()
        {
            final DeviceAttributes d = connectX();

            assertThat(d.has(DeviceCap.MEM_MGT_EXTENSIONS)).isTrue();
            assertThat(d.has(DeviceCap.MEM_WINDOW_TYPE_2B)).isTrue();
            assertThat(d.has(DeviceCap.XRC)).isFalse();
            assertThat(d.has(DeviceCap.MEM_WINDOW_TYPE_2A)).isFalse();
        }

        @Test
        void supportsPageSizeNeedsAPowerOfTwoInPageSizeCap()
        {
            final DeviceAttributes cx3 = connectX().toBuilder().pageSizeCap(0xfffffe00L).build();
            final DeviceAttributes e810 = connectX().toBuilder().pageSizeCap(0x40201000L).build();

            assertThat(cx3.supportsPageSize(512)).isTrue();
            assertThat(cx3.supportsPageSize(256)).isFalse();
            assertThat(cx3.supportsPageSize(1L << 31)).isTrue();
            assertThat(cx3.supportsPageSize(1L << 32)).isFalse();
            assertThat(e810.supportsPageSize(4096)).isTrue();
            assertThat(e810.supportsPageSize(2L << 20)).isTrue();
            assertThat(e810.supportsPageSize(1L << 30)).isTrue();
            assertThat(e810.supportsPageSize(8192)).isFalse();
            assertThat(e810.supportsPageSize(4096 | (2L << 20))).as("not a power of two").isFalse();
            assertThat(e810.supportsPageSize(0)).isFalse();
            assertThat(connectX().supportsPageSize(1L << 62)).isTrue();
        }

        @Test
        void atomicCapNumbersAreThoseOfIbvAtomicCap()
        {
            assertThat(AtomicCap.of(0)).isEqualTo(AtomicCap.NONE);
            assertThat(AtomicCap.of(1)).isEqualTo(AtomicCap.HCA);
            assertThat(AtomicCap.of(2)).isEqualTo(AtomicCap.GLOB);
            assertThatThrownBy(() -> AtomicCap.of(3)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    // --------------------------------------------------------------------------------------------- host memory

    @Nested
    class HostMemoryDefaults
    {
        private final ArrayMemory memory = new ArrayMemory(64);

        @Test
        void writeLongStoresLittleEndian()
        {
            memory.writeLong(8, 0x0102030405060708L);

            assertThat(memory.read(8, 8)).containsExactly(8, 7, 6, 5, 4, 3, 2, 1);
        }

        @Test
        void readLongLoadsLittleEndian()
        {
            memory.write(16, new byte[] {(byte)0xef, (byte)0xcd, (byte)0xab, (byte)0x89, 0x67, 0x45, 0x23, 0x01});

            assertThat(memory.readLong(16)).isEqualTo(0x0123456789abcdefL);
        }

        @Test
        void readLongAndWriteLongRoundTripAtUnalignedAddressesAndExtremes()
        {
            for (final long v : new long[] {0, -1, Long.MIN_VALUE, Long.MAX_VALUE, 0x80, 0xff00ff00ff00ff00L})
            {
                memory.writeLong(3, v);

                assertThat(memory.readLong(3)).isEqualTo(v);
            }
            assertThat(memory.read(0, 3)).containsExactly(0, 0, 0);
            assertThat(memory.read(11, 1)).containsExactly(0);
        }
    }

    // --------------------------------------------------------------------------------------------- discovery

    @Nested
    class Discovery
    {
        @Test
        void withoutAProviderOnTheClassPathThereIsNoDevice()
        {
            assertThat(Verbs.devices()).isEmpty();
        }

        @Test
        void aDeviceThatDoesNotExistIsEnodev()
        {
            final VerbsException e = catchThrowableOfType(VerbsException.class, () -> Verbs.device("x"));

            assertThat(e.errno()).isEqualTo(19);
            assertThat(e.errnoName()).isEqualTo(Errno.ENODEV);
            assertThat(e.verb()).isEqualTo("ibv_get_device_list");
            assertThat(e.getMessage()).contains("ENODEV").contains("'x'").contains("devices: []");
        }
    }

    // --------------------------------------------------------------------------------------------- test doubles

    /** A HostMemory over a byte array, addresses 0 to its size: only read and write, for the default methods. */
    private static final class ArrayMemory implements HostMemory
    {
        private final byte[] bytes;

        ArrayMemory(final int size)
        {
            this.bytes = new byte[size];
        }

        @Override
        public long allocate(final long lengthBytes, final Backing backing)
        {
            throw new UnsupportedOperationException("allocate");
        }

        @Override
        public void free(final long address, final long lengthBytes)
        {
            throw new UnsupportedOperationException("free");
        }

        @Override
        public void write(final long address, final byte[] data)
        {
            System.arraycopy(data, 0, bytes, (int)address, data.length);
        }

        @Override
        public byte[] read(final long address, final int lengthBytes)
        {
            return Arrays.copyOfRange(bytes, (int)address, (int)address + lengthBytes);
        }
    }

    /** An MR that only knows its addresses and key, for {@link Sge#of}. */
    private record FixedMr(long addr, long iova, int lkey) implements MemoryRegion
    {
        @Override
        public ProtectionDomain pd()
        {
            throw new UnsupportedOperationException("pd");
        }

        @Override
        public long lengthBytes()
        {
            return 4096;
        }

        @Override
        public int rkey()
        {
            return lkey;
        }

        @Override
        public EnumSet<Access> access()
        {
            return EnumSet.of(Access.LOCAL_WRITE, Access.ZERO_BASED);
        }

        @Override
        public void rereg(final java.util.Set<ReregFlag> flags, final ProtectionDomain pd, final long newAddr,
            final long lengthBytes, final java.util.Set<Access> access)
        {
            throw new UnsupportedOperationException("rereg");
        }

        @Override
        public boolean isClosed()
        {
            return false;
        }

        @Override
        public void close()
        {
        }
    }
}
