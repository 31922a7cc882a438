package dev.rnicsim.conformance;

import static dev.rnicsim.conformance.Rig.LOCAL;
import static dev.rnicsim.conformance.Rig.PAGE;
import static dev.rnicsim.conformance.Rig.REMOTE_ALL;
import static dev.rnicsim.conformance.Rig.pattern;
import static dev.rnicsim.conformance.Rig.sge;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AddressHandle;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.UdSendWr;
import dev.rnicsim.verbs.AtomicCap;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MrAdvice;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.OdpCaps;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.Verbs;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.WrOpcode;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The cases of rdma-core's own test suite ({@code tests/} in linux-rdma/rdma-core) that concern memory registration,
 * memory windows, on-demand paging, atomics and the device, re-expressed against verbs-api: one nested class per
 * upstream file, one test per upstream case (named after it), run on every simulated device and on each rdma-core
 * device present. The upstream code is read for what each case checks, not copied. A case skips where the upstream
 * one skips (the device lacks the capability). The cases of those files that verbs-api cannot express yet are
 * listed in docs/conformance.md with the reason.
 */
class RdmaCoreTestsPortTest
{
    private static final long ONES = 0x0101_0101_0101_0101L;

    static List<String> devices()
    {
        return ConformanceDevices.names();
    }

    private static VerbsException refused(final Runnable verb)
    {
        final VerbsException e = catchThrowableOfType(VerbsException.class, verb::run);
        assertThat(e).as("the verb fails").isNotNull();
        return e;
    }

    private static void assumeWindows(final Rig rig, final MwType type)
    {
        final DeviceAttributes a = rig.attributes;
        assumeTrue(a.has(DeviceCap.MEM_WINDOW) && a.maxMw() > 0, rig.device.name() + " has no memory windows");
        assumeTrue(type == MwType.TYPE_1 || a.has(DeviceCap.MEM_WINDOW_TYPE_2A) || a.has(DeviceCap.MEM_WINDOW_TYPE_2B),
            rig.device.name() + " has no type 2 windows");
    }

    /** Nothing to restate: the QPs are still in RTS (the window was freed, no work request failed). */
    private static void assertStillInRts(final Rig rig)
    {
        assertThat(rig.qpA.state()).isEqualTo(QpState.RTS);
        assertThat(rig.qpB.state()).isEqualTo(QpState.RTS);
    }

    /** The Q_Key of the suite's UD QPs (pyverbs' default). */
    private static final int UD_QKEY = 0x11111111;

    /** A UD QP in RTS (RESET→INIT with P_Key index, port and Q_Key; RTR; RTS with its SQ PSN). */
    /** Skips where the backend answers EOPNOTSUPP for the verb itself (an FFM binding not written yet). */
    private static void assumeBound(final Runnable verb)
    {
        try
        {
            verb.run();
        }
        catch (final VerbsException e)
        {
            assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, "this backend does not bind the verb: " + e.detail());
        }
    }

    private static QueuePair udQp(final ProtectionDomain pd, final CompletionQueue cq)
    {
        final QueuePair qp;
        try
        {
            qp = pd.createQp(new QpInitAttr(cq, cq, QpType.UD, new QpCap(16, 16, 1, 1, 0), false));
        }
        catch (final VerbsException e)
        {
            // Upstream's create_players skips where the provider refuses the QP type (siw: RC only).
            assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, "no UD QPs here: " + e.detail());
            throw e;
        }
        for (final QpAttr.Builder b : List.of(QpAttr.builder().state(QpState.INIT).pkeyIndex(0).port(1).qkey(UD_QKEY),
            QpAttr.builder().state(QpState.RTR), QpAttr.builder().state(QpState.RTS).sqPsn(0)))
        {
            qp.modify(b.build(), b.mask());
        }
        return qp;
    }

    private static void assumeOdp(final Rig rig, final int rcCaps)
    {
        final OdpCaps caps = rig.attributes.odpCaps();
        assumeTrue(caps.supported() && (caps.rcOdpCaps() & rcCaps) == rcCaps, rig.device.name()
            + " lacks ODP for RC (caps 0x" + Integer.toHexString(caps.rcOdpCaps()) + ")");
    }

    /** A WRITE of {@code length} pattern bytes from a fresh MR on a to {@code remote} under {@code rkey}. */
    private static WcStatus write(final Rig rig, final long remote, final int rkey, final int length, final int seed)
    {
        final long src = rig.bufferA(PAGE);
        rig.memA.write(src, pattern(length, seed));
        final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, LOCAL);
        rig.qpA.postSend(SendWr.write(seed, List.of(sge(srcMr, src, length)), remote, rkey));
        return rig.awaitA().status();
    }

    // ================================================================== tests/test_mr.py (MRTest)

    /** tests/test_mr.py, class MRTest. */
    @Nested
    class TestMr
    {
        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testRegMr(final String name)
        {
            // Every combination of the flags the device takes registers (the upstream test draws random legal sets).
            try (Rig rig = Rig.unconnected(name))
            {
                final long buf = rig.bufferB(2 * PAGE);
                for (final Set<Access> access : legalSets(rig.attributes))
                {
                    final MemoryRegion mr = rig.pdB.regMr(buf, 2 * PAGE, access);
                    assertThat(mr.lengthBytes()).isEqualTo(2 * PAGE);
                    mr.close();
                }
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testDeregMrTwice(final String name)
        {
            // Closing an MR twice is harmless (pyverbs' close is idempotent).
            try (Rig rig = Rig.unconnected(name))
            {
                final MemoryRegion mr = rig.pdB.regMr(rig.bufferB(PAGE), PAGE, LOCAL);
                mr.close();
                mr.close();
                assertThat(mr.isClosed()).isTrue();
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testRegMrBadFlags(final String name)
        {
            try (Rig rig = Rig.unconnected(name))
            {
                final long buf = rig.bufferB(PAGE);
                assertThat(refused(() -> rig.pdB.regMr(buf, PAGE, EnumSet.of(Access.REMOTE_WRITE))).errnoName())
                    .isEqualTo(Errno.EINVAL);
                assertThat(refused(() -> rig.pdB.regMr(buf, PAGE, EnumSet.of(Access.REMOTE_ATOMIC))).errnoName())
                    .isEqualTo(Errno.EINVAL);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testLkeyAndRkey(final String name)
        {
            // The keys of live MRs differ; an MR with a remote right has a non-zero rkey.
            try (Rig rig = Rig.unconnected(name))
            {
                final long buf = rig.bufferB(PAGE);
                final MemoryRegion a = rig.pdB.regMr(buf, PAGE, REMOTE_ALL);
                final MemoryRegion b = rig.pdB.regMr(buf, PAGE, REMOTE_ALL);
                assertThat(a.lkey()).isNotEqualTo(b.lkey());
                assertThat(a.rkey()).isNotZero().isNotEqualTo(b.rkey());
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testMrReregAccess(final String name)
        {
            try (Rig rig = Rig.connected(name))
            {
                final long dst = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(dst, PAGE, LOCAL);
                reregOrSkip(mr, EnumSet.of(dev.rnicsim.verbs.ReregFlag.CHANGE_ACCESS), null, 0, 0, REMOTE_ALL);
                assertThat(write(rig, dst, mr.rkey(), 32, 4)).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.read(dst, 32)).isEqualTo(pattern(32, 4));
            }
        }

        /** A SEND of 64 pattern bytes from a's MR into b's receive of recvMr at recv; returns both statuses. */
        private static WcStatus[] sendInto(final Rig rig, final MemoryRegion recvMr, final long recv, final int seed)
        {
            rig.qpB.postRecv(RecvWr.of(seed, sge(recvMr, recv, 64)));
            final long src = rig.bufferA(PAGE);
            rig.memA.write(src, pattern(64, seed));
            final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, LOCAL);
            rig.qpA.postSend(SendWr.send(seed, List.of(sge(srcMr, src, 64))));
            return new WcStatus[] {rig.awaitA().status(), rig.awaitB().status()};
        }

        /** upstream's restate_qps: both QPs to RESET, then INIT, RTR and RTS again with each other. */
        private static void restate(final Rig rig)
        {
            for (final QueuePair qp : List.of(rig.qpA, rig.qpB))
            {
                final QpAttr.Builder reset = QpAttr.builder().state(QpState.RESET);
                qp.modify(reset.build(), reset.mask());
            }
            rig.qpA.connect(rig.qpB.address(), Rig.ALL_REMOTE);
            rig.qpB.connect(rig.qpA.address(), Rig.ALL_REMOTE);
        }

        private static void reregOrSkip(final MemoryRegion mr, final Set<dev.rnicsim.verbs.ReregFlag> flags,
            final ProtectionDomain pd, final long addr, final long length, final Set<Access> access)
        {
            try
            {
                mr.rereg(flags, pd, addr, length, access);
            }
            catch (final VerbsException e)
            {
                assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, "Rereg MR is not supported: " + e.detail());
                throw e;
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testMrReregAccessBadFlow(final String name)
        {
            // Remote writes work, then the MR is re-registered with LOCAL_WRITE only: the next write is
            // IBV_WC_REM_ACCESS_ERR and changes nothing.
            try (Rig rig = Rig.connected(name))
            {
                final long dst = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(dst, PAGE, EnumSet.of(Access.LOCAL_WRITE,
                    Access.REMOTE_WRITE));
                assertThat(write(rig, dst, mr.rkey(), 32, 30)).isEqualTo(WcStatus.SUCCESS);
                reregOrSkip(mr, EnumSet.of(dev.rnicsim.verbs.ReregFlag.CHANGE_ACCESS), null, 0, 0, LOCAL);
                assertThat(write(rig, dst, mr.rkey(), 32, 31)).isEqualTo(WcStatus.REM_ACCESS_ERR);
                assertThat(rig.memB.read(dst, 32)).isEqualTo(pattern(32, 30));
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testMrReregPd(final String name)
        {
            // The receive MR moved to another PD: the SEND fails at the responder (the sender sees
            // IBV_WC_REM_OP_ERR, upstream's "Remote operation error"); moved back and the QPs restated, it works.
            try (Rig rig = Rig.connected(name))
            {
                final long recv = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(recv, PAGE, LOCAL);
                assertThat(sendInto(rig, mr, recv, 32)).containsExactly(WcStatus.SUCCESS, WcStatus.SUCCESS);
                final ProtectionDomain other = rig.ctxB.allocPd();
                reregOrSkip(mr, EnumSet.of(dev.rnicsim.verbs.ReregFlag.CHANGE_PD), other, 0, 0, null);
                final WcStatus[] moved = sendInto(rig, mr, recv, 33);
                assertThat(moved[0]).isEqualTo(WcStatus.REM_OP_ERR);
                assertThat(rig.memB.read(recv, 64)).isEqualTo(pattern(64, 32));
                restate(rig);
                reregOrSkip(mr, EnumSet.of(dev.rnicsim.verbs.ReregFlag.CHANGE_PD), rig.pdB, 0, 0, null);
                assertThat(sendInto(rig, mr, recv, 34)).containsExactly(WcStatus.SUCCESS, WcStatus.SUCCESS);
                assertThat(rig.memB.read(recv, 64)).isEqualTo(pattern(64, 34));
                // Moved to the other PD once more: that PD is then freed with a re-registered MR in it closed first.
                reregOrSkip(mr, EnumSet.of(dev.rnicsim.verbs.ReregFlag.CHANGE_PD), other, 0, 0, null);
                mr.close();
                other.dealloc();
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testMrReregAddr(final String name)
        {
            // A receive posted with the MR's old address, then the MR re-registered over a new buffer: the SEND
            // fails at the responder (IBV_WC_REM_OP_ERR); restated, traffic into the new address works.
            try (Rig rig = Rig.connected(name))
            {
                final long old = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(old, PAGE, LOCAL);
                rig.qpB.postRecv(RecvWr.of(40, sge(mr, old, 64)));
                final long fresh = rig.bufferB(PAGE);
                reregOrSkip(mr, EnumSet.of(dev.rnicsim.verbs.ReregFlag.CHANGE_TRANSLATION), null, fresh, PAGE, null);
                final long src = rig.bufferA(PAGE);
                final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, LOCAL);
                rig.qpA.postSend(SendWr.send(41, List.of(sge(srcMr, src, 64))));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.REM_OP_ERR);
                assertThat(rig.awaitB().status()).as("the receive of the old address").isNotEqualTo(
                    WcStatus.SUCCESS);
                restate(rig);
                assertThat(sendInto(rig, mr, fresh, 42)).containsExactly(WcStatus.SUCCESS, WcStatus.SUCCESS);
                assertThat(rig.memB.read(fresh, 64)).isEqualTo(pattern(64, 42));
            }
        }

        private static dev.rnicsim.verbs.DeviceMemory dmOrSkip(final dev.rnicsim.verbs.Context ctx, final long length,
            final String name)
        {
            try
            {
                return ctx.allocDm(length);
            }
            catch (final VerbsException e)
            {
                assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, name + " has no device memory: " + e.detail());
                throw e;
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testDmBadAccess(final String name)
        {
            // DeviceMemoryAPITest.test_dm_bad_access: copies at an offset or of a length not a multiple of 4, or past
            // the 100 bytes allocated, fail both ways (mlx5_access_dm: EFAULT for the range first, then EINVAL).
            try (Rig rig = Rig.unconnected(name))
            {
                final dev.rnicsim.verbs.DeviceMemory dm = dmOrSkip(rig.ctxB, 100, name);
                rig.pdB.regDmMr(dm, 0, 100, EnumSet.of(Access.ZERO_BASED, Access.LOCAL_WRITE));
                final long[][] cases = {{3, 4, 0}, {4, 3, 0}, {104, 4, 1}, {0, 104, 1}};
                for (final long[] c : cases)
                {
                    final Errno expected = c[2] == 1 ? Errno.EFAULT : Errno.EINVAL;
                    assertThat(refused(() -> dm.memcpyFrom(c[0], (int)c[1])).errnoName()).as("read %s", c)
                        .isEqualTo(expected);
                    assertThat(refused(() -> dm.memcpyTo(c[0], new byte[(int)c[1]])).errnoName()).as("write %s", c)
                        .isEqualTo(expected);
                }
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testDmBadRegistration(final String name)
        {
            // DeviceMemoryAPITest.test_dm_bad_registration: an MR longer than the device memory fails.
            try (Rig rig = Rig.unconnected(name))
            {
                final dev.rnicsim.verbs.DeviceMemory dm = dmOrSkip(rig.ctxB, 100, name);
                assertThat(refused(() -> rig.pdB.regDmMr(dm, 0, 104, EnumSet.of(Access.ZERO_BASED,
                    Access.LOCAL_WRITE))).errnoName()).isEqualTo(Errno.EINVAL);
                dm.close();
                assertThat(dm.isClosed()).as("the refused MR kept no reference").isTrue();
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testDmTraffic(final String name)
        {
            // DeviceMemoryTest.test_dm_traffic: SENDs between zero-based MRs over device memory on both sides.
            try (Rig rig = Rig.connected(name))
            {
                final dev.rnicsim.verbs.DeviceMemory dmA = dmOrSkip(rig.ctxA, 1024, name);
                final dev.rnicsim.verbs.DeviceMemory dmB = dmOrSkip(rig.ctxB, 1024, name);
                final Set<Access> access = EnumSet.of(Access.ZERO_BASED, Access.LOCAL_WRITE);
                final MemoryRegion mrA = rig.pdA.regDmMr(dmA, 0, 1024, access);
                final MemoryRegion mrB = rig.pdB.regDmMr(dmB, 0, 1024, access);
                for (int i = 0; i < 3; i++)
                {
                    dmA.memcpyTo(0, pattern(1024, 50 + i));
                    rig.qpB.postRecv(RecvWr.of(i, sge(mrB, 0, 1024)));
                    rig.qpA.postSend(SendWr.send(i, List.of(sge(mrA, 0, 1024))));
                    assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                    assertThat(rig.awaitB().status()).isEqualTo(WcStatus.SUCCESS);
                    assertThat(dmB.memcpyFrom(0, 1024)).isEqualTo(pattern(1024, 50 + i));
                }
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testDmRemoteTraffic(final String name)
        {
            // DeviceMemoryTest.test_dm_remote_traffic: RDMA WRITEs into a remote zero-based MR over device memory.
            try (Rig rig = Rig.connected(name))
            {
                final dev.rnicsim.verbs.DeviceMemory dm = dmOrSkip(rig.ctxB, 1024, name);
                final MemoryRegion mr = rig.pdB.regDmMr(dm, 0, 1024, EnumSet.of(Access.ZERO_BASED,
                    Access.LOCAL_WRITE, Access.REMOTE_WRITE));
                assertThat(write(rig, 0, mr.rkey(), 1024, 60)).isEqualTo(WcStatus.SUCCESS);
                assertThat(dm.memcpyFrom(0, 1024)).isEqualTo(pattern(1024, 60));
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testRegMrIova(final String name)
        {
            try (Rig rig = Rig.connected(name))
            {
                final long dst = rig.bufferB(2 * PAGE);
                final long iova = 0x7_0000_0000L + (dst & 0xfff);
                final MemoryRegion mr = rig.pdB.regMr(dst, 2 * PAGE, iova, REMOTE_ALL);
                assertThat(write(rig, iova + PAGE, mr.rkey(), 64, 5)).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.read(dst + PAGE, 64)).isEqualTo(pattern(64, 5));
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testWriteReadAndBuffer(final String name)
        {
            // test_write, test_read, test_buffer: the MR's buffer is the registered memory, written and read by the
            // CPU.
            try (Rig rig = Rig.unconnected(name))
            {
                final long buf = rig.bufferB(2 * PAGE);
                final MemoryRegion mr = rig.pdB.regMr(buf, 2 * PAGE, REMOTE_ALL);
                assertThat(mr.addr()).isEqualTo(buf);
                rig.memB.write(mr.addr() + 100, pattern(500, 24));
                assertThat(rig.memB.read(mr.addr() + 300, 100)).isEqualTo(java.util.Arrays.copyOfRange(
                    pattern(500, 24), 200, 300));
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testCreateAndDestroyDmMr(final String name)
        {
            // DMMRTest: ibv_reg_dm_mr with IBV_ACCESS_ZERO_BASED alone, at an offset inside the device memory.
            try (Rig rig = Rig.unconnected(name))
            {
                final dev.rnicsim.verbs.DeviceMemory dm;
                try
                {
                    dm = rig.ctxB.allocDm(8192);
                }
                catch (final VerbsException e)
                {
                    assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, name + " has no device memory");
                    throw e;
                }
                final MemoryRegion mr = rig.pdB.regDmMr(dm, 1000, 5000, EnumSet.of(Access.ZERO_BASED));
                assertThat(mr.lengthBytes()).isEqualTo(5000);
                mr.close();
                dm.close();
                assertThat(dm.isClosed()).isTrue();
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testRegMrEx(final String name)
        {
            // ibv_reg_mr_ex in address mode with an iova, and a comp_mask with both modes (EINVAL).
            try (Rig rig = Rig.connected(name))
            {
                final long dst = rig.bufferB(PAGE);
                final long iova = 0x6_0000_0000L;
                final MemoryRegion mr = rig.pdB.regMrEx(dev.rnicsim.verbs.MrInitAttr.address(dst, PAGE, REMOTE_ALL)
                    .withIova(iova));
                assertThat(write(rig, iova + 8, mr.rkey(), 16, 21)).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.read(dst + 8, 16)).isEqualTo(pattern(16, 21));
                assertThat(refused(() -> rig.pdB.regMrEx(new dev.rnicsim.verbs.MrInitAttr(
                    dev.rnicsim.verbs.MrInitAttr.MASK_ADDR | dev.rnicsim.verbs.MrInitAttr.MASK_FD, dst, PAGE, 0, 3, 0,
                    LOCAL))).errnoName()).isEqualTo(Errno.EINVAL);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testNullMr(final String name)
        {
            // A null MR discards writes and reads zeros (ibv_alloc_null_mr(3)); skipped where the provider has none.
            try (Rig rig = Rig.connected(name))
            {
                final MemoryRegion nullMr;
                try
                {
                    nullMr = rig.pdA.allocNullMr();
                }
                catch (final VerbsException e)
                {
                    assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, name + " has no null MRs");
                    throw e;
                }
                final long dst = rig.bufferB(PAGE);
                rig.memB.write(dst, pattern(32, 22));
                final MemoryRegion mr = rig.pdB.regMr(dst, PAGE, REMOTE_ALL);
                rig.qpA.postSend(SendWr.write(23, List.of(sge(nullMr, 0x1000, 32)), dst, mr.rkey()));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.read(dst, 32)).isEqualTo(new byte[32]);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testDeallocPdWithMrIsBusy(final String name)
        {
            // tests/test_pd.py and test_mr.py rely on ibv_dealloc_pd failing while the PD has users (EBUSY).
            try (Rig rig = Rig.unconnected(name))
            {
                final var pd = rig.ctxB.allocPd();
                final MemoryRegion mr = pd.regMr(rig.bufferB(PAGE), PAGE, LOCAL);
                assertThat(refused(pd::dealloc).errnoName()).isEqualTo(Errno.EBUSY);
                assertThat(pd.isClosed()).isFalse();
                mr.close();
                pd.dealloc();
                assertThat(pd.isClosed()).isTrue();
            }
        }

        private static List<Set<Access>> legalSets(final DeviceAttributes a)
        {
            final List<Set<Access>> out = new ArrayList<>();
            final Access[] optional = {Access.REMOTE_READ, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC, Access.MW_BIND};
            for (int bits = 0; bits < 1 << optional.length; bits++)
            {
                final EnumSet<Access> s = EnumSet.of(Access.LOCAL_WRITE);
                for (int i = 0; i < optional.length; i++)
                {
                    if ((bits & (1 << i)) != 0)
                    {
                        s.add(optional[i]);
                    }
                }
                // tests/utils.py get_access_flags: MW_BIND only on a device with memory windows, REMOTE_ATOMIC
                // only on one with atomics.
                if (s.contains(Access.MW_BIND) && !a.has(DeviceCap.MEM_WINDOW)
                    || s.contains(Access.REMOTE_ATOMIC) && a.atomicCap() == AtomicCap.NONE)
                {
                    continue;
                }
                out.add(s);
            }
            return out;
        }
    }

    // ================================================================== tests/test_mr.py (MWTest)

    /** tests/test_mr.py, class MWTest. */
    @Nested
    class TestMw
    {
        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testRegMwType1(final String name)
        {
            try (Rig rig = Rig.unconnected(name))
            {
                assumeWindows(rig, MwType.TYPE_1);
                final MemoryWindow mw = rig.pdB.allocMw(MwType.TYPE_1);
                assertThat(mw.rkey()).isNotZero();
                mw.close();
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testRegMwType2(final String name)
        {
            try (Rig rig = Rig.unconnected(name))
            {
                assumeWindows(rig, MwType.TYPE_2);
                final MemoryWindow mw = rig.pdB.allocMw(MwType.TYPE_2);
                assertThat(mw.rkey()).isNotZero();
                mw.close();
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testRegMwWrongType(final String name)
        {
            try (Rig rig = Rig.unconnected(name))
            {
                assumeWindows(rig, MwType.TYPE_1);
                assertThat(refused(() -> rig.pdB.allocMw(3)).errnoName()).isEqualTo(Errno.EINVAL);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testMwType1Traffic(final String name)
        {
            // Bind with REMOTE_WRITE | LOCAL_WRITE (LOCAL_WRITE accepted, ignored), then RDMA WRITE through it.
            try (Rig rig = Rig.connected(name))
            {
                assumeWindows(rig, MwType.TYPE_1);
                final long dst = rig.bufferB(2 * PAGE);
                final MemoryRegion mr = rig.pdB.regMr(dst, 2 * PAGE, EnumSet.of(Access.LOCAL_WRITE,
                    Access.REMOTE_WRITE, Access.MW_BIND));
                final MemoryWindow mw = rig.pdB.allocMw(MwType.TYPE_1);
                final int rkey = rig.qpB.bindMw(mw, 7, EnumSet.of(SendFlag.SIGNALED), new MwBindInfo(mr, dst, PAGE,
                    EnumSet.of(Access.REMOTE_WRITE, Access.LOCAL_WRITE)));
                assertThat(rig.awaitB().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(write(rig, dst + 16, rkey, 32, 6)).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.read(dst + 16, 32)).isEqualTo(pattern(32, 6));
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testMwType2Traffic(final String name)
        {
            try (Rig rig = Rig.connected(name))
            {
                assumeWindows(rig, MwType.TYPE_2);
                final long dst = rig.bufferB(2 * PAGE);
                final MemoryRegion mr = rig.pdB.regMr(dst, 2 * PAGE, EnumSet.of(Access.LOCAL_WRITE,
                    Access.REMOTE_WRITE, Access.MW_BIND));
                final MemoryWindow mw = rig.pdB.allocMw(MwType.TYPE_2);
                // A type 2 window answers the QP it is bound to: bind it on the responder's QP.
                rig.qpB.postSend(SendWr.bindMw(8, mw, SendWr.incRkey(mw.rkey()), new MwBindInfo(mr, dst, PAGE,
                    EnumSet.of(Access.REMOTE_WRITE, Access.LOCAL_WRITE))));
                assertThat(rig.awaitB().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(write(rig, dst, mw.rkey(), 48, 7)).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.read(dst, 48)).isEqualTo(pattern(48, 7));
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testInvalidateMwType1(final String name)
        {
            // LOCAL_INV of a type 1 window fails: only type 2 windows are invalidated by a work request.
            try (Rig rig = Rig.connected(name))
            {
                assumeWindows(rig, MwType.TYPE_1);
                final long dst = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(dst, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                    Access.MW_BIND));
                final MemoryWindow mw = rig.pdB.allocMw(MwType.TYPE_1);
                final int rkey = rig.qpB.bindMw(mw, 9, EnumSet.of(SendFlag.SIGNALED), new MwBindInfo(mr, dst, PAGE,
                    EnumSet.of(Access.REMOTE_WRITE)));
                assertThat(rig.awaitB().status()).isEqualTo(WcStatus.SUCCESS);
                rig.qpB.postSend(SendWr.localInv(10, rkey));
                assertThat(rig.awaitB().status()).isNotEqualTo(WcStatus.SUCCESS);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testInvalidateMwType2Local(final String name)
        {
            try (Rig rig = Rig.connected(name))
            {
                assumeWindows(rig, MwType.TYPE_2);
                final long dst = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(dst, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                    Access.MW_BIND));
                final MemoryWindow mw = rig.pdB.allocMw(MwType.TYPE_2);
                rig.qpB.postSend(SendWr.bindMw(11, mw, SendWr.incRkey(mw.rkey()), new MwBindInfo(mr, dst, PAGE,
                    EnumSet.of(Access.REMOTE_WRITE))));
                assertThat(rig.awaitB().status()).isEqualTo(WcStatus.SUCCESS);
                rig.qpB.postSend(SendWr.localInv(12, mw.rkey()));
                assertThat(rig.awaitB().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(write(rig, dst, mw.rkey(), 8, 8)).isEqualTo(WcStatus.REM_ACCESS_ERR);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testMwType2InvalidateDealloc(final String name)
        {
            // test_mw_type2_invalidate_dealloc: a bound type 2 window freed with ibv_dealloc_mw; its rkey no longer
            // reaches the MR (IBV_WC_REM_ACCESS_ERR), the memory stays as it was.
            try (Rig rig = Rig.connected(name))
            {
                assumeWindows(rig, MwType.TYPE_2);
                final long dst = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(dst, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                    Access.MW_BIND));
                final MemoryWindow mw = rig.pdB.allocMw(MwType.TYPE_2);
                rig.qpB.postSend(SendWr.bindMw(13, mw, SendWr.incRkey(mw.rkey()), new MwBindInfo(mr, dst, PAGE,
                    EnumSet.of(Access.REMOTE_WRITE))));
                assertThat(rig.awaitB().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(write(rig, dst, mw.rkey(), 8, 35)).isEqualTo(WcStatus.SUCCESS);
                final int rkey = mw.rkey();
                mw.close();
                assertStillInRts(rig);
                assertThat(write(rig, dst + 64, rkey, 8, 36)).isEqualTo(WcStatus.REM_ACCESS_ERR);
                assertThat(rig.memB.read(dst + 64, 8)).containsOnly(0);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testInvalidateMwType2Remote(final String name)
        {
            // SEND_WITH_INV from the peer invalidates the window; the receive completion carries its rkey.
            try (Rig rig = Rig.connected(name))
            {
                assumeWindows(rig, MwType.TYPE_2);
                final long dst = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(dst, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                    Access.MW_BIND));
                final MemoryWindow mw = rig.pdB.allocMw(MwType.TYPE_2);
                rig.qpB.postSend(SendWr.bindMw(13, mw, SendWr.incRkey(mw.rkey()), new MwBindInfo(mr, dst, PAGE,
                    EnumSet.of(Access.REMOTE_WRITE))));
                assertThat(rig.awaitB().status()).isEqualTo(WcStatus.SUCCESS);
                final long recv = rig.bufferB(PAGE);
                final MemoryRegion recvMr = rig.pdB.regMr(recv, PAGE, LOCAL);
                rig.qpB.postRecv(RecvWr.of(14, sge(recvMr, recv, 64)));
                final long src = rig.bufferA(PAGE);
                final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, LOCAL);
                rig.qpA.postSend(SendWr.sendWithInv(15, List.of(sge(srcMr, src, 16)), mw.rkey()));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                final WorkCompletion wc = rig.awaitB();
                assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(write(rig, dst, mw.rkey(), 8, 9)).isEqualTo(WcStatus.REM_ACCESS_ERR);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testDeregMrWithBoundMw(final String name)
        {
            try (Rig rig = Rig.connected(name))
            {
                assumeWindows(rig, MwType.TYPE_1);
                final long dst = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(dst, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                    Access.MW_BIND));
                final MemoryWindow mw = rig.pdB.allocMw(MwType.TYPE_1);
                rig.qpB.bindMw(mw, 16, EnumSet.of(SendFlag.SIGNALED), new MwBindInfo(mr, dst, PAGE,
                    EnumSet.of(Access.REMOTE_WRITE)));
                assertThat(rig.awaitB().status()).isEqualTo(WcStatus.SUCCESS);
                final boolean sim = rig.device instanceof dev.rnicsim.simnic.SimDevice;
                final boolean mlx5 = sim && ((dev.rnicsim.simnic.SimDevice)rig.device).profile().follows(
                    dev.rnicsim.simnic.ProviderRule.DEREG_MR_INVALIDATES_BOUND_WINDOWS);
                final VerbsException e = catchThrowableOfType(VerbsException.class, mr::close);
                if (e == null)
                {
                    // mlx5_ib_dereg_mr counts no windows: the MR goes, the window translates nothing
                    assertThat(!sim || mlx5).as("a profile that refuses let the MR go").isTrue();
                    assertThat(mr.isClosed()).isTrue();
                    assertThat(write(rig, dst, mw.rkey(), 8, 4)).isEqualTo(WcStatus.REM_ACCESS_ERR);
                    return;
                }
                assertThat(mlx5).as("an mlx5 profile refused").isFalse();
                assertThat(e.errnoName()).isIn(Errno.EBUSY, Errno.EINVAL);
                assertThat(mr.isClosed()).isFalse();
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testDeallocPdWithMwIsBusy(final String name)
        {
            try (Rig rig = Rig.unconnected(name))
            {
                assumeWindows(rig, MwType.TYPE_1);
                final var pd = rig.ctxB.allocPd();
                final MemoryWindow mw = pd.allocMw(MwType.TYPE_1);
                assertThat(refused(pd::dealloc).errnoName()).isEqualTo(Errno.EBUSY);
                mw.close();
                pd.dealloc();
            }
        }
    }

    // ================================================================== tests/test_odp.py

    /** tests/test_odp.py, class OdpTestCase (RC and UD cases). */
    @Nested
    class TestOdp
    {
        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testOdpRcTraffic(final String name)
        {
            // SEND from an ODP MR into an ODP receive buffer.
            try (Rig rig = Rig.connected(name))
            {
                assumeOdp(rig, OdpCaps.SEND | OdpCaps.RECV);
                final EnumSet<Access> odp = EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND);
                final long src = rig.bufferA(PAGE);
                rig.memA.write(src, pattern(100, 10));
                final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, odp);
                final long dst = rig.bufferB(PAGE);
                final MemoryRegion dstMr = rig.pdB.regMr(dst, PAGE, odp);
                rig.qpB.postRecv(RecvWr.of(1, sge(dstMr, dst, 100)));
                rig.qpA.postSend(SendWr.send(2, List.of(sge(srcMr, src, 100))));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.awaitB().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.read(dst, 100)).isEqualTo(pattern(100, 10));
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testOdpUdTraffic(final String name)
        {
            // Datagrams from an ODP send MR into a pinned receive MR, each receive holding the 40-byte GRH before the
            // payload; upstream asks the UD ODP caps for SEND.
            try (Rig rig = Rig.connected(name))
            {
                final OdpCaps caps = rig.attributes.odpCaps();
                assumeTrue(caps.supported() && (caps.udOdpCaps() & OdpCaps.SEND) != 0, rig.device.name()
                    + " lacks ODP SEND for UD (caps 0x" + Integer.toHexString(caps.udOdpCaps()) + ")");
                final AddressHandle ah;
                try
                {
                    ah = rig.pdA.createAh(AhAttr.toGid(rig.qpB.address().gid()));
                }
                catch (final VerbsException e)
                {
                    assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, "this backend has no address handles: " + e);
                    throw e;
                }
                final QueuePair client = udQp(rig.pdA, rig.cqA);
                final QueuePair server = udQp(rig.pdB, rig.cqB);
                final int msg = 1024;
                final long send = rig.bufferA(PAGE);
                final MemoryRegion sendMr = rig.pdA.regMr(send, PAGE, EnumSet.of(Access.LOCAL_WRITE,
                    Access.ON_DEMAND));
                final long recv = rig.bufferB(PAGE);
                final MemoryRegion recvMr = rig.pdB.regMr(recv, PAGE, LOCAL);
                for (int i = 0; i < 10; i++)
                {
                    rig.memA.write(send + 40, pattern(msg, i));
                    server.postRecv(RecvWr.of(i, sge(recvMr, recv, msg + 40)));
                    client.postSendUd(List.of(new UdSendWr(SendWr.send(i, List.of(sge(sendMr, send + 40, msg))), ah,
                        server.qpNum(), UD_QKEY)));
                    assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                    final WorkCompletion wc = rig.awaitB();
                    assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
                    assertThat(wc.byteLen()).isEqualTo(msg + 40);
                    assertThat(rig.memB.read(recv + 40, msg)).isEqualTo(pattern(msg, i));
                }
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testOdpXrcTraffic(final String name)
        {
            // xrc_traffic over ODP MRs; upstream asks the XRC ODP caps for SEND and SRQ_RECV.
            try (Rig rig = Rig.unconnected(name))
            {
                final OdpCaps caps = rig.attributes.odpCaps();
                final int need = OdpCaps.SEND | OdpCaps.SRQ_RECV;
                assumeTrue(caps.supported() && (caps.xrcOdpCaps() & need) == need, rig.device.name()
                    + " lacks ODP SEND and SRQ_RECV for XRC (caps 0x" + Integer.toHexString(caps.xrcOdpCaps()) + ")");
                new XrcPlayers(rig, 1024, EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND), 10)
                    .traffic(10, SendWr::send);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testOdpRcRdmaWrite(final String name)
        {
            try (Rig rig = Rig.connected(name))
            {
                assumeOdp(rig, OdpCaps.WRITE);
                final long dst = rig.bufferB(4 * PAGE);
                final MemoryRegion mr = rig.pdB.regMr(dst, 4 * PAGE, EnumSet.of(Access.LOCAL_WRITE,
                    Access.REMOTE_WRITE, Access.ON_DEMAND));
                assertThat(write(rig, dst + 3 * PAGE, mr.rkey(), 128, 11)).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.read(dst + 3 * PAGE, 128)).isEqualTo(pattern(128, 11));
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testOdpRcRdmaRead(final String name)
        {
            try (Rig rig = Rig.connected(name))
            {
                assumeOdp(rig, OdpCaps.READ);
                final long src = rig.bufferB(PAGE);
                rig.memB.write(src, pattern(64, 12));
                final MemoryRegion mr = rig.pdB.regMr(src, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ,
                    Access.ON_DEMAND));
                final long dst = rig.bufferA(PAGE);
                final MemoryRegion dstMr = rig.pdA.regMr(dst, PAGE, LOCAL);
                rig.qpA.postSend(SendWr.read(3, List.of(sge(dstMr, dst, 64)), src, mr.rkey()));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memA.read(dst, 64)).isEqualTo(pattern(64, 12));
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testOdpRcAtomicFetchAndAdd(final String name)
        {
            try (Rig rig = Rig.connected(name))
            {
                assumeOdp(rig, OdpCaps.ATOMIC);
                assumeTrue(rig.attributes.atomicCap() != AtomicCap.NONE, "no atomics");
                final long target = rig.bufferB(PAGE);
                rig.memB.writeLong(target, 5);
                final MemoryRegion mr = rig.pdB.regMr(target, PAGE, EnumSet.of(Access.LOCAL_WRITE,
                    Access.REMOTE_ATOMIC, Access.ON_DEMAND));
                final long result = rig.bufferA(PAGE);
                final MemoryRegion resultMr = rig.pdA.regMr(result, PAGE, LOCAL);
                rig.qpA.postSend(SendWr.fetchAndAdd(4, sge(resultMr, result, 8), target, mr.rkey(), 2));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memA.readLong(result)).isEqualTo(5);
                assertThat(rig.memB.readLong(target)).isEqualTo(7);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testOdpImplicitRcTraffic(final String name)
        {
            try (Rig rig = Rig.connected(name))
            {
                assumeOdp(rig, OdpCaps.WRITE);
                final EnumSet<Access> access = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.ON_DEMAND);
                if (!rig.attributes.odpCaps().implicitSupported())
                {
                    // Without IBV_ODP_SUPPORT_IMPLICIT the upstream test skips; the registration is EINVAL.
                    assertThat(refused(() -> rig.pdB.regMr(0, -1L, access)).errnoName()).isEqualTo(Errno.EINVAL);
                    return;
                }
                final MemoryRegion implicit = rig.pdB.regMr(0, -1L, access);
                final long dst = rig.bufferB(PAGE);
                assertThat(write(rig, dst, implicit.rkey(), 40, 13)).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.read(dst, 40)).isEqualTo(pattern(40, 13));
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testOdpPrefetchRcTraffic(final String name)
        {
            try (Rig rig = Rig.connected(name))
            {
                assumeOdp(rig, OdpCaps.WRITE);
                final long dst = rig.bufferB(4 * PAGE);
                final MemoryRegion mr = rig.pdB.regMr(dst, 4 * PAGE, EnumSet.of(Access.LOCAL_WRITE,
                    Access.REMOTE_WRITE, Access.ON_DEMAND));
                rig.pdB.adviseMr(MrAdvice.PREFETCH_WRITE, MrAdvice.FLAG_FLUSH, List.of(sge(mr, dst, 4 * PAGE)));
                assertThat(write(rig, dst + PAGE, mr.rkey(), 64, 14)).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.read(dst + PAGE, 64)).isEqualTo(pattern(64, 14));
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testOdpAsyncPrefetchRcTraffic(final String name)
        {
            try (Rig rig = Rig.connected(name))
            {
                assumeOdp(rig, OdpCaps.WRITE);
                final long dst = rig.bufferB(4 * PAGE);
                final MemoryRegion mr = rig.pdB.regMr(dst, 4 * PAGE, EnumSet.of(Access.LOCAL_WRITE,
                    Access.REMOTE_WRITE, Access.ON_DEMAND));
                rig.pdB.adviseMr(MrAdvice.PREFETCH, 0, List.of(sge(mr, dst, 4 * PAGE)));
                assertThat(write(rig, dst, mr.rkey(), 64, 15)).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.read(dst, 64)).isEqualTo(pattern(64, 15));
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testOdpPrefetchSyncNoPageFaultRcTraffic(final String name)
        {
            try (Rig rig = Rig.connected(name))
            {
                assumeOdp(rig, OdpCaps.WRITE);
                final long dst = rig.bufferB(4 * PAGE);
                rig.memB.write(dst, new byte[(int)(4 * PAGE)]);
                final MemoryRegion mr = rig.pdB.regMr(dst, 4 * PAGE, EnumSet.of(Access.LOCAL_WRITE,
                    Access.REMOTE_WRITE, Access.ON_DEMAND));
                rig.pdB.adviseMr(MrAdvice.PREFETCH_NO_FAULT, MrAdvice.FLAG_FLUSH, List.of(sge(mr, dst, 4 * PAGE)));
                assertThat(write(rig, dst + 2 * PAGE, mr.rkey(), 64, 16)).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.read(dst + 2 * PAGE, 64)).isEqualTo(pattern(64, 16));
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testOdpPrefetchAsyncNoPageFaultRcTraffic(final String name)
        {
            // PREFETCH_NO_FAULT without IBV_ADVISE_MR_FLAG_FLUSH: the advice returns at once, traffic works.
            try (Rig rig = Rig.connected(name))
            {
                assumeOdp(rig, OdpCaps.WRITE);
                final long dst = rig.bufferB(4 * PAGE);
                rig.memB.write(dst, new byte[(int)(4 * PAGE)]);
                final MemoryRegion mr = rig.pdB.regMr(dst, 4 * PAGE, EnumSet.of(Access.LOCAL_WRITE,
                    Access.REMOTE_WRITE, Access.ON_DEMAND));
                rig.pdB.adviseMr(MrAdvice.PREFETCH_NO_FAULT, 0, List.of(sge(mr, dst, 4 * PAGE)));
                assertThat(write(rig, dst + 3 * PAGE, mr.rkey(), 64, 26)).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.read(dst + 3 * PAGE, 64)).isEqualTo(pattern(64, 26));
            }
        }

        /** test_odp_implicit_sync_prefetch_rc_traffic and its async twin: prefetch through an implicit ODP MR. */
        private void implicitPrefetchTraffic(final String name, final int flags, final int seed)
        {
            try (Rig rig = Rig.connected(name))
            {
                assumeOdp(rig, OdpCaps.WRITE);
                final EnumSet<Access> access = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.ON_DEMAND);
                if (!rig.attributes.odpCaps().implicitSupported())
                {
                    assertThat(refused(() -> rig.pdB.regMr(0, -1L, access)).errnoName()).isEqualTo(Errno.EINVAL);
                    return;
                }
                final MemoryRegion implicit = rig.pdB.regMr(0, -1L, access);
                final long dst = rig.bufferB(2 * PAGE);
                rig.pdB.adviseMr(MrAdvice.PREFETCH_WRITE, flags, List.of(sge(implicit, dst, 2 * PAGE)));
                assertThat(write(rig, dst + PAGE, implicit.rkey(), 128, seed)).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.read(dst + PAGE, 128)).isEqualTo(pattern(128, seed));
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testOdpImplicitSyncPrefetchRcTraffic(final String name)
        {
            implicitPrefetchTraffic(name, MrAdvice.FLAG_FLUSH, 27);
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testOdpImplicitAsyncPrefetchRcTraffic(final String name)
        {
            implicitPrefetchTraffic(name, 0, 28);
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testOdpRcAtomicCmpAndSwp(final String name)
        {
            // Two compare-and-swaps into an ODP MR: one whose compare value matches (swapped), one whose does not.
            try (Rig rig = Rig.connected(name))
            {
                assumeOdp(rig, OdpCaps.ATOMIC);
                assumeTrue(rig.attributes.atomicCap() != AtomicCap.NONE, "no atomics");
                final long target = rig.bufferB(PAGE);
                rig.memB.writeLong(target, 0);
                final MemoryRegion mr = rig.pdB.regMr(target, PAGE, EnumSet.of(Access.LOCAL_WRITE,
                    Access.REMOTE_ATOMIC, Access.ON_DEMAND));
                final long result = rig.bufferA(PAGE);
                final MemoryRegion resultMr = rig.pdA.regMr(result, PAGE, LOCAL);
                rig.qpA.postSend(SendWr.compareAndSwap(1, sge(resultMr, result, 8), target, mr.rkey(), 0, 1));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.readLong(target)).isEqualTo(1);
                rig.qpA.postSend(SendWr.compareAndSwap(2, sge(resultMr, result, 8), target, mr.rkey(), 5, 9));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memA.readLong(result)).as("the old value").isEqualTo(1);
                assertThat(rig.memB.readLong(target)).as("no match, no swap").isEqualTo(1);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testOdpRcHugeTraffic(final String name)
        {
            // test_odp_rc_huge_traffic, test_odp_rc_huge_user_addr_traffic: an ODP MR with IBV_ACCESS_HUGETLB over
            // 2 MiB hugetlbfs pages carries traffic.
            try (Rig rig = Rig.connected(name))
            {
                assumeOdp(rig, OdpCaps.SEND | OdpCaps.RECV);
                final long huge;
                try
                {
                    huge = rig.memB.allocate(2L << 20, dev.rnicsim.verbs.Backing.HUGETLB_2M);
                }
                catch (final VerbsException e)
                {
                    assumeTrue(false, "no 2 MiB huge pages on this host: " + e.getMessage());
                    return;
                }
                final EnumSet<Access> access = EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND, Access.HUGETLB);
                final MemoryRegion dstMr;
                try
                {
                    dstMr = rig.pdB.regMr(huge, 2L << 20, access);
                }
                catch (final VerbsException e)
                {
                    // Upstream skips when the MR cannot be registered with this access (rxe: no HUGETLB).
                    assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, name + " refuses HUGETLB ODP MRs");
                    throw e;
                }
                final long src = rig.bufferA(PAGE);
                rig.memA.write(src, pattern(256, 25));
                final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, LOCAL);
                rig.qpB.postRecv(RecvWr.of(30, sge(dstMr, huge + (1L << 20), 256)));
                rig.qpA.postSend(SendWr.send(31, List.of(sge(srcMr, src, 256))));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.awaitB().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.read(huge + (1L << 20), 256)).isEqualTo(pattern(256, 25));
                rig.memB.free(huge, 2L << 20);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testOdpRcMixedMr(final String name)
        {
            // An ODP send buffer and a pinned receive buffer in one transfer.
            try (Rig rig = Rig.connected(name))
            {
                assumeOdp(rig, OdpCaps.SEND);
                final long src = rig.bufferA(PAGE);
                rig.memA.write(src, pattern(80, 17));
                final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND));
                final long dst = rig.bufferB(PAGE);
                final MemoryRegion dstMr = rig.pdB.regMr(dst, PAGE, LOCAL);
                rig.qpB.postRecv(RecvWr.of(5, sge(dstMr, dst, 80)));
                rig.qpA.postSend(SendWr.send(6, List.of(sge(srcMr, src, 80))));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.awaitB().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.read(dst, 80)).isEqualTo(pattern(80, 17));
            }
        }
    }

    // ================================================================== tests/test_atomic.py

    /** tests/test_atomic.py, class AtomicTest (RC cases). */
    @Nested
    class TestAtomic
    {
        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testAtomicCmpAndSwap(final String name)
        {
            try (Rig rig = Rig.connected(name))
            {
                assumeTrue(rig.attributes.atomicCap() != AtomicCap.NONE, "no atomics");
                final long target = rig.bufferB(PAGE);
                rig.memB.writeLong(target, ONES);
                final MemoryRegion mr = rig.pdB.regMr(target, PAGE, REMOTE_ALL);
                final long result = rig.bufferA(PAGE);
                final MemoryRegion resultMr = rig.pdA.regMr(result, PAGE, LOCAL);
                rig.qpA.postSend(SendWr.compareAndSwap(1, sge(resultMr, result, 8), target, mr.rkey(), ONES, 2));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memA.readLong(result)).isEqualTo(ONES);
                assertThat(rig.memB.readLong(target)).isEqualTo(2);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testAtomicFetchAndAdd(final String name)
        {
            try (Rig rig = Rig.connected(name))
            {
                assumeTrue(rig.attributes.atomicCap() != AtomicCap.NONE, "no atomics");
                final long target = rig.bufferB(PAGE);
                rig.memB.writeLong(target + 8, 40);
                final MemoryRegion mr = rig.pdB.regMr(target, PAGE, REMOTE_ALL);
                final long result = rig.bufferA(PAGE);
                final MemoryRegion resultMr = rig.pdA.regMr(result, PAGE, LOCAL);
                rig.qpA.postSend(SendWr.fetchAndAdd(2, sge(resultMr, result, 8), target + 8, mr.rkey(), 2));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memA.readLong(result)).isEqualTo(40);
                assertThat(rig.memB.readLong(target + 8)).isEqualTo(42);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testXrcAtomicFetchAndAdd(final String name)
        {
            // FETCH_AND_ADD from an XRC_SEND QP (qp_access_flags 0) through the target's XRC SRQ to its MR.
            try (Rig rig = Rig.unconnected(name))
            {
                assumeTrue(rig.attributes.atomicCap() != AtomicCap.NONE, "Atomic operations are not supported");
                new XrcPlayers(rig, 8, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_ATOMIC), 1)
                    .atomicTraffic(10, false, 1, 2);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testXrcAtomicCmpAndSwap(final String name)
        {
            // CMP_AND_SWP on XRC: a compare that differs leaves the target; one that matches swaps in 0.
            try (Rig rig = Rig.unconnected(name))
            {
                assumeTrue(rig.attributes.atomicCap() != AtomicCap.NONE, "Atomic operations are not supported");
                final XrcPlayers players = new XrcPlayers(rig, 8, EnumSet.of(Access.LOCAL_WRITE,
                    Access.REMOTE_ATOMIC), 1);
                players.atomicTraffic(10, true, 1, 2);
                players.atomicTraffic(10, true, 1, 1);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testAtomicNonAlignedAddr(final String name)
        {
            // A misaligned atomic fails: at post (rxe, EINVAL) or at the responder (IBV_WC_REM_INV_REQ_ERR).
            try (Rig rig = Rig.connected(name))
            {
                assumeTrue(rig.attributes.atomicCap() != AtomicCap.NONE, "no atomics");
                final long target = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(target, PAGE, REMOTE_ALL);
                final long result = rig.bufferA(PAGE);
                final MemoryRegion resultMr = rig.pdA.regMr(result, PAGE, LOCAL);
                final VerbsException atPost = catchThrowableOfType(VerbsException.class, () -> rig.qpA.postSend(
                    SendWr.fetchAndAdd(3, sge(resultMr, result, 8), target + 3, mr.rkey(), 1)));
                if (atPost != null)
                {
                    assertThat(atPost.errnoName()).isEqualTo(Errno.EINVAL);
                }
                else
                {
                    assertThat(rig.awaitA().status()).isEqualTo(WcStatus.REM_INV_REQ_ERR);
                }
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testAtomicInvalidMrAccess(final String name)
        {
            try (Rig rig = Rig.connected(name))
            {
                assumeTrue(rig.attributes.atomicCap() != AtomicCap.NONE, "no atomics");
                final long target = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(target, PAGE, EnumSet.of(Access.LOCAL_WRITE,
                    Access.REMOTE_WRITE));
                final long result = rig.bufferA(PAGE);
                final MemoryRegion resultMr = rig.pdA.regMr(result, PAGE, LOCAL);
                rig.qpA.postSend(SendWr.fetchAndAdd(6, sge(resultMr, result, 8), target, mr.rkey(), 1));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testAtomicInvalidQpAccess(final String name)
        {
            // The responder QP grants no REMOTE_ATOMIC: the atomic fails with an error completion (mlx5 enables
            // atomics on the requester from the device's atomic_cap, so the post itself goes out).
            try (Rig rig = Rig.connected(name, EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ)))
            {
                assumeTrue(rig.attributes.atomicCap() != AtomicCap.NONE, "no atomics");
                final long target = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(target, PAGE, REMOTE_ALL);
                final long result = rig.bufferA(PAGE);
                final MemoryRegion resultMr = rig.pdA.regMr(result, PAGE, LOCAL);
                rig.qpA.postSend(SendWr.fetchAndAdd(7, sge(resultMr, result, 8), target, mr.rkey(), 1));
                assertThat(rig.awaitA().status()).isNotEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.readLong(target)).as("the target is unchanged").isZero();
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testAtomicInvalidRkey(final String name)
        {
            try (Rig rig = Rig.connected(name))
            {
                assumeTrue(rig.attributes.atomicCap() != AtomicCap.NONE, "no atomics");
                final long target = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(target, PAGE, REMOTE_ALL);
                final long result = rig.bufferA(PAGE);
                final MemoryRegion resultMr = rig.pdA.regMr(result, PAGE, LOCAL);
                rig.qpA.postSend(SendWr.fetchAndAdd(4, sge(resultMr, result, 8), target, mr.rkey() + 1, 1));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testAtomicInvalidLkey(final String name)
        {
            // The result buffer's lkey is stale: a local protection or QP-operation error, never success.
            try (Rig rig = Rig.connected(name))
            {
                assumeTrue(rig.attributes.atomicCap() != AtomicCap.NONE, "no atomics");
                final long target = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(target, PAGE, REMOTE_ALL);
                final long result = rig.bufferA(PAGE);
                final MemoryRegion resultMr = rig.pdA.regMr(result, PAGE, LOCAL);
                final int lkey = resultMr.lkey();
                resultMr.close();
                final VerbsException atPost = catchThrowableOfType(VerbsException.class, () -> rig.qpA.postSend(
                    SendWr.fetchAndAdd(5, new dev.rnicsim.verbs.Sge(result, 8, lkey), target, mr.rkey(), 1)));
                if (atPost == null)
                {
                    assertThat(rig.awaitA().status()).isIn(WcStatus.LOC_PROT_ERR, WcStatus.LOC_QP_OP_ERR);
                }
            }
        }
    }

    // ================================================================== tests/test_device.py

    /** tests/test_device.py, class DeviceTest. */
    @Nested
    class TestDevice
    {
        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testDevList(final String name)
        {
            try (Rig rig = Rig.unconnected(name))
            {
                assertThat(Verbs.devices()).extracting(dev.rnicsim.verbs.Device::name).contains(rig.device.name());
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testOpenDev(final String name)
        {
            try (Rig rig = Rig.unconnected(name))
            {
                assertThat(rig.ctxA.isClosed()).isFalse();
                assertThat(rig.ctxA.device().name()).isEqualTo(rig.device.name());
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQueryDevice(final String name)
        {
            // The upstream test checks the attributes are sane: vendor_id non-zero (pyverbs' verify_device_attr),
            // max_* positive, page_size_cap holds 4 KiB.
            try (Rig rig = Rig.unconnected(name))
            {
                final DeviceAttributes a = rig.attributes;
                // Old kernels' rxe reported vendor_id 0, which fails upstream's check; the profile that keeps that
                // dump (rxe-legacy) is skipped as a known upstream failure.
                // rxe reports vendor_part_id 0 (and old kernels vendor_id 0): upstream's check fails there too, so
                // the rxe profiles are skipped as known upstream failures.
                assumeTrue(!name.contains("rxe"), "rxe reports vendor_part_id 0: upstream test_query_device fails");
                assumeTrue(!name.contains("generic"), "the generic profile stands for an unrecognised dump and has "
                    + "only what the dump shows: no vendor_part_id of its own");
                assertThat(a.vendorId()).as("vendor_id of %s", name).isNotZero();
                assertThat(a.vendorPartId()).as("vendor_part_id of %s", name).isNotZero();
                assertThat(a.nodeGuid()).isNotZero();
                assertThat(a.sysImageGuid()).isNotZero();
                assertThat(Long.compareUnsigned(a.maxMrSizeBytes(), PAGE)).isPositive();
                assertThat(a.maxPkeys()).isPositive();
                assertThat(a.maxSge()).isPositive();
                assertThat(a.maxSgeRd()).isPositive();
                assertThat(a.maxCq()).isPositive();
                assertThat(a.maxMr()).isPositive();
                assertThat(a.maxPd()).isPositive();
                assertThat(a.maxQp()).isPositive();
                assertThat(a.maxQpWr()).isPositive();
                assertThat(a.maxCqe()).isPositive();
                assertThat(a.physPortCnt()).isPositive();
                assertThat(a.supportsPageSize(PAGE)).isTrue();
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQueryPort(final String name)
        {
            try (Rig rig = Rig.unconnected(name))
            {
                final dev.rnicsim.verbs.PortAttributes p = rig.ctxA.queryPort(1);
                assertThat(p.gidTblLen()).isPositive();
                assertThat(p.maxMsgSzBytes()).isPositive();
                assertThat(p.activeMtu()).isBetween(1, p.maxMtu());
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQueryPortBadFlow(final String name)
        {
            try (Rig rig = Rig.unconnected(name))
            {
                final int ports = rig.attributes.physPortCnt();
                assertThat(refused(() -> rig.ctxA.queryPort(ports + 1)).errnoName()).isEqualTo(Errno.EINVAL);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQueryGid(final String name)
        {
            try (Rig rig = Rig.unconnected(name))
            {
                assertThat(rig.ctxA.queryGid(1, 0)).hasSize(16);
                final int len = rig.ctxA.queryPort(1).gidTblLen();
                assertThat(refused(() -> rig.ctxA.queryGid(1, len)).errnoName()).isEqualTo(Errno.EINVAL);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQueryGidExBadFlow(final String name)
        {
            // test_query_gid_ex_bad_flow: an index inside gid_tbl_len that holds no GID is ENODATA (upstream skips
            // when every index is populated or the table has one entry).
            try (Rig rig = Rig.unconnected(name))
            {
                final int len = rig.ctxA.queryPort(1).gidTblLen();
                assumeTrue(len > 1, "the GID table has " + len + " entry: no empty index to ask for");
                assertThat(refused(() -> rig.ctxA.queryGid(1, len - 1)).errnoName()).isEqualTo(Errno.ENODATA);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testMultiProcessAllocDm(final String name)
        {
            // test_multi_process_alloc_dm: five users of the device each allocate a fifth of half of max_dm_size at
            // once (here 4 KiB each, five contexts); every allocation succeeds.
            try (Rig rig = Rig.unconnected(name))
            {
                final List<dev.rnicsim.verbs.Context> users = new ArrayList<>();
                final List<dev.rnicsim.verbs.DeviceMemory> dms = new ArrayList<>();
                try
                {
                    for (int i = 0; i < 5; i++)
                    {
                        final dev.rnicsim.verbs.Context c = rig.device.open();
                        users.add(c);
                        dms.add(i == 0 ? allocDmOrSkip(c, name) : c.allocDm(4096));
                    }
                    assertThat(dms).hasSize(5).allSatisfy(d -> assertThat(d.lengthBytes()).isEqualTo(4096));
                }
                finally
                {
                    users.forEach(dev.rnicsim.verbs.Context::close);
                }
            }
        }

        private static dev.rnicsim.verbs.DeviceMemory allocDmOrSkip(final dev.rnicsim.verbs.Context c,
            final String name)
        {
            try
            {
                return c.allocDm(4096);
            }
            catch (final VerbsException e)
            {
                assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, name + " has no device memory");
                throw e;
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testDestroyDmBadFlow(final String name)
        {
            // test_destroy_dm_bad_flow: freeing device memory twice; the second close does nothing.
            try (Rig rig = Rig.unconnected(name))
            {
                final dev.rnicsim.verbs.DeviceMemory dm = allocDmOrSkip(rig.ctxA, name);
                dm.close();
                dm.close();
                assertThat(dm.isClosed()).isTrue();
                assertThat(refused(() -> dm.memcpyFrom(0, 4)).errnoName()).isEqualTo(Errno.EINVAL);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testDmAllocWriteReadAndBadFlow(final String name)
        {
            // tests/test_device.py DM cases: alloc, write then read back, a copy past the end fails.
            try (Rig rig = Rig.unconnected(name))
            {
                final dev.rnicsim.verbs.DeviceMemory dm;
                try
                {
                    dm = rig.ctxA.allocDm(4096);
                }
                catch (final VerbsException e)
                {
                    assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, name + " has no device memory");
                    throw e;
                }
                dm.memcpyTo(8, pattern(64, 20));
                assertThat(dm.memcpyFrom(8, 64)).isEqualTo(pattern(64, 20));
                assertThat(refused(() -> dm.memcpyTo(4090, new byte[16])).errnoName()).isEqualTo(Errno.EFAULT);
                // test_create_dm_bad_flow: more than max_dm_size fails, and so does any comp_mask (1..100 upstream,
                // with the same oversized length; here with a length that fits too, so that the mask alone fails).
                final long max = 1L << 40;
                assertThat(refused(() -> rig.ctxA.allocDm(max)).errnoName()).isEqualTo(Errno.EINVAL);
                for (final int mask : new int[] {1, 2, 37, 100})
                {
                    assertThat(refused(() -> rig.ctxA.allocDm(new dev.rnicsim.verbs.DmAttr(max, 0, mask)))
                        .errnoName()).isEqualTo(Errno.EINVAL);
                    assertThat(refused(() -> rig.ctxA.allocDm(new dev.rnicsim.verbs.DmAttr(4096, 0, mask)))
                        .errnoName()).isEqualTo(Errno.EINVAL);
                }
                // The refused calls took nothing: another allocation of the same size still fits beside the first.
                rig.ctxA.allocDm(dev.rnicsim.verbs.DmAttr.of(4096)).close();
                // test_dm_write_bad_flow: an offset that is not a multiple of 4 fails.
                assertThat(refused(() -> dm.memcpyTo(9, new byte[16])).errnoName()).isEqualTo(Errno.EINVAL);
                dm.close();
                dm.close();
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQueryDeviceEx(final String name)
        {
            // ibv_query_device_ex: the ODP caps are consistent (a transport cap only with general ODP support).
            try (Rig rig = Rig.unconnected(name))
            {
                final OdpCaps caps = rig.attributes.odpCaps();
                if (!caps.supported())
                {
                    assertThat(caps.implicitSupported()).isFalse();
                    assertThat(caps.rcOdpCaps()).as("RC ODP caps without ODP support").isZero();
                }
                // MEM_WINDOW_TYPE_2A/2B only with windows at all.
                final DeviceAttributes a = rig.attributes;
                if (a.has(DeviceCap.MEM_WINDOW_TYPE_2B) || a.has(DeviceCap.MEM_WINDOW_TYPE_2A))
                {
                    assertThat(rig.attributes.has(DeviceCap.MEM_WINDOW)).isTrue();
                }
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQueryPkey(final String name)
        {
            // P_Key index 0 of the port holds the default full-membership key; past pkey_tbl_len there is no entry.
            try (Rig rig = Rig.unconnected(name))
            {
                assumeBound(() -> rig.ctxA.queryPkey(1, 0));
                assertThat(rig.ctxA.queryPkey(1, 0)).isEqualTo(0xffff);
                final int len = rig.ctxA.queryPort(1).pkeyTblLen();
                assertThat(refused(() -> rig.ctxA.queryPkey(1, len)).errnoName()).isEqualTo(Errno.ENOENT);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQueryGidTable(final String name)
        {
            // Room for every port's gid_tbl_len entries: the valid GIDs come back, each as ibv_query_gid gives it.
            try (Rig rig = Rig.unconnected(name))
            {
                assumeBound(() -> rig.ctxA.queryGidTable(rig.ctxA.queryPort(1).gidTblLen()));
                int maxEntries = 0;
                for (int port = 1; port <= rig.attributes.physPortCnt(); port++)
                {
                    maxEntries += rig.ctxA.queryPort(port).gidTblLen();
                }
                final List<dev.rnicsim.verbs.GidEntry> table = rig.ctxA.queryGidTable(maxEntries);
                assertThat(table).isNotEmpty().hasSizeLessThanOrEqualTo(maxEntries);
                for (final dev.rnicsim.verbs.GidEntry e : table)
                {
                    assertThat(e.gid()).isEqualTo(rig.ctxA.queryGid(e.portNum(), e.gidIndex()));
                }
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQueryGidTableBadFlow(final String name)
        {
            // A buffer of 0 entries is refused with EINVAL.
            try (Rig rig = Rig.unconnected(name))
            {
                assumeBound(() -> rig.ctxA.queryGidTable(rig.ctxA.queryPort(1).gidTblLen()));
                assertThat(refused(() -> rig.ctxA.queryGidTable(0)).errnoName()).isEqualTo(Errno.EINVAL);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testPhysPortCntEx(final String name)
        {
            // phys_port_cnt equals phys_port_cnt_ex below 256 ports, and is 255 above.
            try (Rig rig = Rig.unconnected(name))
            {
                final DeviceAttributes a = rig.ctxA.queryDevice();
                assertThat(a.physPortCnt()).isEqualTo(a.physPortCntEx() > 255 ? 255 : a.physPortCntEx());
                assertThat(a.physPortCntEx()).isPositive();
            }
        }
    }

    // ================================================================== tests/test_qpex.py

    /**
     * tests/test_qpex.py, class QpExTestCase: traffic posted through the extended QP (the {@code ibv_wr_*}
     * builders). On the simulator every work request is posted through {@link
     * dev.rnicsim.verbs.QueuePair#postSend} (or {@code postSendUd}) of a QP created with the {@code send_ops_flags}
     * upstream's player asks for; where the provider refuses them (EOPNOTSUPP) the case skips as upstream's does. The
     * responder QP grants what upstream's {@code create_qp_ex} gives an RC QP: REMOTE_WRITE, REMOTE_READ,
     * REMOTE_ATOMIC, FLUSH_GLOBAL and FLUSH_PERSISTENT (the FLUSH rights only where the device has FLUSH).
     */
    @Nested
    class TestQpex
    {
        private static final Set<Access> QPEX = EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ,
            Access.REMOTE_ATOMIC, Access.FLUSH_GLOBAL, Access.FLUSH_PERSISTENT);

        /**
         * A connected rig whose QPs are created with the send_ops_flags upstream's player asks for (skipping where
         * the provider refuses them with EOPNOTSUPP) and whose responder grants upstream's create_qp_ex rights the
         * device knows.
         */
        private static Rig qpexRig(final String name, final WrOpcode... sendOps)
        {
            final Rig rig = Rig.unconnected(name, EnumSet.copyOf(List.of(sendOps)));
            final Set<Access> rights = EnumSet.copyOf(Rig.ALL_REMOTE);
            if (rig.attributes.has(DeviceCap.FLUSH_GLOBAL) && rig.attributes.has(DeviceCap.FLUSH_PERSISTENT))
            {
                rights.addAll(QPEX);
            }
            rig.qpA.connect(rig.qpB.address(), rights);
            rig.qpB.connect(rig.qpA.address(), rights);
            return rig;
        }

        private static MemoryRegion flushTarget(final Rig rig, final long buf)
        {
            final VerbsException e = catchThrowableOfType(VerbsException.class, () -> rig.pdB.regMr(buf, PAGE,
                EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.FLUSH_GLOBAL)));
            if (e != null)
            {
                // Upstream skips on EINVAL (a kernel without the flag); create_players skips on EOPNOTSUPP.
                assertThat(e.errnoName()).isIn(Errno.EINVAL, Errno.EOPNOTSUPP);
                assumeTrue(false, "MR with IBV_ACCESS_FLUSH_GLOBAL is not supported: " + e.detail());
            }
            return rig.pdB.regMr(buf, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                Access.FLUSH_GLOBAL));
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQpExXrcSend(final String name)
        {
            try (Rig rig = Rig.unconnected(name))
            {
                new XrcPlayers(rig, 1024, LOCAL, 10).traffic(10, SendWr::send);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQpExXrcSendImm(final String name)
        {
            // SEND_WITH_IMM through the target's XRC SRQ: the receive completion carries the immediate.
            try (Rig rig = Rig.unconnected(name))
            {
                final XrcPlayers players = new XrcPlayers(rig, 1024, LOCAL, 10);
                players.traffic(10, (id, sgl) -> SendWr.sendWithImm(id, sgl, 0x1234));
                assertThat(players.lastReceived.withImm()).isTrue();
                assertThat(players.lastReceived.immData()).isEqualTo(0x1234);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQpExRcSend(final String name)
        {
            try (Rig rig = qpexRig(name, WrOpcode.SEND))
            {
                final long recv = rig.bufferB(PAGE);
                final MemoryRegion recvMr = rig.pdB.regMr(recv, PAGE, LOCAL);
                rig.qpB.postRecv(RecvWr.of(1, sge(recvMr, recv, 128)));
                final long src = rig.bufferA(PAGE);
                rig.memA.write(src, pattern(128, 3));
                final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, LOCAL);
                rig.qpA.postSend(SendWr.send(2, List.of(sge(srcMr, src, 128))));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                final WorkCompletion wc = rig.awaitB();
                assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(wc.byteLen()).isEqualTo(128);
                assertThat(rig.memB.read(recv, 128)).isEqualTo(pattern(128, 3));
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQpExRcSendImm(final String name)
        {
            try (Rig rig = qpexRig(name, WrOpcode.SEND_WITH_IMM))
            {
                final long recv = rig.bufferB(PAGE);
                final MemoryRegion recvMr = rig.pdB.regMr(recv, PAGE, LOCAL);
                rig.qpB.postRecv(RecvWr.of(1, sge(recvMr, recv, 64)));
                final long src = rig.bufferA(PAGE);
                final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, LOCAL);
                rig.qpA.postSend(SendWr.sendWithImm(2, List.of(sge(srcMr, src, 64)), 0x1234_5678));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                final WorkCompletion wc = rig.awaitB();
                assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(wc.withImm()).isTrue();
                assertThat(wc.immData()).isEqualTo(0x1234_5678);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQpExRcRdmaWrite(final String name)
        {
            try (Rig rig = qpexRig(name, WrOpcode.RDMA_WRITE))
            {
                final long dst = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(dst, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
                assertThat(write(rig, dst, mr.rkey(), 256, 4)).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.read(dst, 256)).isEqualTo(pattern(256, 4));
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQpExRcRdmaWriteImm(final String name)
        {
            try (Rig rig = qpexRig(name, WrOpcode.RDMA_WRITE_WITH_IMM))
            {
                final long dst = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(dst, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
                rig.qpB.postRecv(RecvWr.of(1));
                final long src = rig.bufferA(PAGE);
                rig.memA.write(src, pattern(32, 5));
                final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, LOCAL);
                rig.qpA.postSend(SendWr.writeWithImm(2, List.of(sge(srcMr, src, 32)), dst, mr.rkey(), 77));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                final WorkCompletion wc = rig.awaitB();
                assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(wc.immData()).isEqualTo(77);
                assertThat(rig.memB.read(dst, 32)).isEqualTo(pattern(32, 5));
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQpExRcRdmaWriteZeroLength(final String name)
        {
            try (Rig rig = qpexRig(name, WrOpcode.RDMA_WRITE))
            {
                final long dst = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(dst, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
                assertThat(write(rig, dst, mr.rkey(), 0, 6)).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.read(dst, 16)).containsOnly(0);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQpExRcRdmaRead(final String name)
        {
            try (Rig rig = qpexRig(name, WrOpcode.RDMA_READ))
            {
                // Upstream's RTR asks max_dest_rd_atomic 1, which a device with max_qp_rd_atom 0 refuses.
                assumeTrue(rig.servesReads(), "max_qp_rd_atom is 0: no READ responder resources");
                final long src = rig.bufferB(PAGE);
                rig.memB.write(src, pattern(200, 8));
                final MemoryRegion mr = rig.pdB.regMr(src, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
                final long dst = rig.bufferA(PAGE);
                final MemoryRegion dstMr = rig.pdA.regMr(dst, PAGE, LOCAL);
                rig.qpA.postSend(SendWr.read(1, List.of(sge(dstMr, dst, 200)), src, mr.rkey()));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memA.read(dst, 200)).isEqualTo(pattern(200, 8));
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQpExRcRdmaReadZeroSize(final String name)
        {
            try (Rig rig = qpexRig(name, WrOpcode.RDMA_READ))
            {
                // Upstream's RTR asks max_dest_rd_atomic 1, which a device with max_qp_rd_atom 0 refuses.
                assumeTrue(rig.servesReads(), "max_qp_rd_atom is 0: no READ responder resources");
                final long src = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(src, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
                final long dst = rig.bufferA(PAGE);
                final MemoryRegion dstMr = rig.pdA.regMr(dst, PAGE, LOCAL);
                rig.qpA.postSend(SendWr.read(1, List.of(sge(dstMr, dst, 0)), src, mr.rkey()));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQpExRcAtomicCmpSwp(final String name)
        {
            try (Rig rig = qpexRig(name, WrOpcode.ATOMIC_CMP_AND_SWP))
            {
                assumeTrue(rig.attributes.atomicCap() != AtomicCap.NONE, "no atomics");
                final long target = rig.bufferB(PAGE);
                rig.memB.writeLong(target, ONES);
                final MemoryRegion mr = rig.pdB.regMr(target, PAGE, REMOTE_ALL);
                final long result = rig.bufferA(PAGE);
                final MemoryRegion resultMr = rig.pdA.regMr(result, PAGE, LOCAL);
                rig.qpA.postSend(SendWr.compareAndSwap(1, sge(resultMr, result, 8), target, mr.rkey(), ONES, 0));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.readLong(target)).isZero();
                assertThat(rig.memA.readLong(result)).isEqualTo(ONES);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQpExRcAtomicFetchAdd(final String name)
        {
            try (Rig rig = qpexRig(name, WrOpcode.ATOMIC_FETCH_AND_ADD))
            {
                assumeTrue(rig.attributes.atomicCap() != AtomicCap.NONE, "no atomics");
                final long target = rig.bufferB(PAGE);
                rig.memB.writeLong(target, ONES);
                final MemoryRegion mr = rig.pdB.regMr(target, PAGE, REMOTE_ALL);
                final long result = rig.bufferA(PAGE);
                final MemoryRegion resultMr = rig.pdA.regMr(result, PAGE, LOCAL);
                rig.qpA.postSend(SendWr.fetchAndAdd(1, sge(resultMr, result, 8), target, mr.rkey(), 2 * ONES));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.memB.readLong(target)).isEqualTo(3 * ONES);
                assertThat(rig.memA.readLong(result)).isEqualTo(ONES);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQpExRcBindMw(final String name)
        {
            // A type 2 window bound with LOCAL_WRITE alone over an MR with REMOTE_WRITE refuses a remote WRITE.
            try (Rig rig = qpexRig(name, WrOpcode.RDMA_WRITE, WrOpcode.BIND_MW))
            {
                assumeWindows(rig, MwType.TYPE_2);
                final long dst = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(dst, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                    Access.MW_BIND));
                final MemoryWindow mw = rig.pdB.allocMw(MwType.TYPE_2);
                rig.qpB.postSend(SendWr.bindMw(1, mw, SendWr.incRkey(mw.rkey()), new MwBindInfo(mr, dst, PAGE,
                    EnumSet.of(Access.LOCAL_WRITE))));
                assertThat(rig.awaitB().status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(write(rig, dst, mw.rkey(), 16, 9)).isEqualTo(WcStatus.REM_ACCESS_ERR);
                assertThat(rig.memB.read(dst, 16)).containsOnly(0);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQpExRcFlush(final String name)
        {
            // An MR with FLUSH_GLOBAL: FLUSH of a range, then of the whole MR, both IBV_WC_SUCCESS.
            try (Rig rig = qpexRig(name, WrOpcode.FLUSH, WrOpcode.RDMA_WRITE))
            {
                final long dst = rig.bufferB(PAGE);
                final MemoryRegion mr = flushTarget(rig, dst);
                rig.qpA.postSend(SendWr.flush(1, dst, mr.rkey(), 1024, dev.rnicsim.verbs.FlushPlacement.GLOBAL,
                    dev.rnicsim.verbs.FlushSelectivity.RANGE));
                final WorkCompletion range = rig.awaitA();
                assertThat(range.status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(range.opcode()).isEqualTo(dev.rnicsim.verbs.WcOpcode.FLUSH);
                rig.qpA.postSend(SendWr.flush(2, dst, mr.rkey(), 1024, dev.rnicsim.verbs.FlushPlacement.GLOBAL,
                    dev.rnicsim.verbs.FlushSelectivity.MR));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQpExRcFlushTypeViolate(final String name)
        {
            // FLUSH_PERSISTENT to an MR registered with FLUSH_GLOBAL only: IBV_WC_REM_ACCESS_ERR.
            try (Rig rig = qpexRig(name, WrOpcode.FLUSH, WrOpcode.RDMA_WRITE))
            {
                final long dst = rig.bufferB(PAGE);
                final MemoryRegion mr = flushTarget(rig, dst);
                rig.qpA.postSend(SendWr.flush(1, dst, mr.rkey(), 1024, dev.rnicsim.verbs.FlushPlacement.PERSISTENT,
                    dev.rnicsim.verbs.FlushSelectivity.RANGE));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQpExRcAtomicWrite(final String name)
        {
            // 8 bytes written by ATOMIC_WRITE land at the responder.
            try (Rig rig = qpexRig(name, WrOpcode.ATOMIC_WRITE))
            {
                final long dst = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(dst, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
                rig.qpA.postSend(SendWr.atomicWrite(1, dst, mr.rkey(), 0x6363_6363_6363_6363L));
                final WorkCompletion wc = rig.awaitA();
                assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(wc.opcode()).isEqualTo(dev.rnicsim.verbs.WcOpcode.ATOMIC_WRITE);
                assertThat(rig.memB.readLong(dst)).isEqualTo(0x6363_6363_6363_6363L);
            }
        }

        // ------------------------------------------------------------ the UD cases (QpExUDSend, QpExUDSendImm)

        /**
         * Upstream's traffic on UD players: each side posts a receive of msg + 40 bytes, sends msg bytes to the
         * other through its address handle, and checks the payload after the 40-byte GRH; the receive's completion
         * names the sender's QP in src_qp and carries IBV_WC_GRH (ibv_poll_cq(3)).
         */
        private static void udTraffic(final UdRig rig, final int msg, final boolean withImm)
        {
            final int bufBytes = msg + UdRig.GRH;
            final long sendA = rig.bufferA(PAGE);
            final long recvA = rig.bufferA(PAGE);
            final long sendB = rig.bufferB(PAGE);
            final long recvB = rig.bufferB(PAGE);
            final MemoryRegion sendMrA = rig.pdA.regMr(sendA, PAGE, LOCAL);
            final MemoryRegion recvMrA = rig.pdA.regMr(recvA, PAGE, LOCAL);
            final MemoryRegion sendMrB = rig.pdB.regMr(sendB, PAGE, LOCAL);
            final MemoryRegion recvMrB = rig.pdB.regMr(recvB, PAGE, LOCAL);
            rig.client.postRecv(RecvWr.of(100, sge(recvMrA, recvA, bufBytes)));
            rig.server.postRecv(RecvWr.of(200, sge(recvMrB, recvB, bufBytes)));
            for (int i = 0; i < 10; i++)
            {
                rig.memA.write(sendA, pattern(msg, i));
                final List<Sge> a = msg == 0 ? List.of() : List.of(sge(sendMrA, sendA, msg));
                rig.client.postSendUd(List.of(new UdSendWr(withImm ? SendWr.sendWithImm(i, a, 0x1000 + i)
                    : SendWr.send(i, a), rig.toServer, rig.server.qpNum(), UdRig.UD_QKEY)));
                assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                final WorkCompletion atServer = rig.awaitB();
                assertReceived(atServer, rig.client.qpNum(), msg, withImm, 0x1000 + i);
                rig.server.postRecv(RecvWr.of(200 + i, sge(recvMrB, recvB, bufBytes)));
                assertThat(rig.memB.read(recvB + UdRig.GRH, msg)).isEqualTo(pattern(msg, i));

                rig.memB.write(sendB, pattern(msg, 100 + i));
                final List<Sge> b = msg == 0 ? List.of() : List.of(sge(sendMrB, sendB, msg));
                rig.server.postSendUd(List.of(new UdSendWr(withImm ? SendWr.sendWithImm(i, b, 0x2000 + i)
                    : SendWr.send(i, b), rig.toClient, rig.client.qpNum(), UdRig.UD_QKEY)));
                assertThat(rig.awaitB().status()).isEqualTo(WcStatus.SUCCESS);
                final WorkCompletion atClient = rig.awaitA();
                assertReceived(atClient, rig.server.qpNum(), msg, withImm, 0x2000 + i);
                rig.client.postRecv(RecvWr.of(100 + i, sge(recvMrA, recvA, bufBytes)));
                assertThat(rig.memA.read(recvA + UdRig.GRH, msg)).isEqualTo(pattern(msg, 100 + i));
            }
        }

        private static void assertReceived(final WorkCompletion wc, final int senderQp, final int msg,
            final boolean withImm, final int imm)
        {
            assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
            assertThat(wc.opcode()).isEqualTo(dev.rnicsim.verbs.WcOpcode.RECV);
            assertThat(wc.byteLen()).as("the GRH and the payload").isEqualTo(UdRig.GRH + msg);
            assertThat(wc.srcQp()).as("src_qp").isEqualTo(senderQp);
            assertThat(wc.withGrh()).as("IBV_WC_GRH").isTrue();
            assertThat(wc.withImm()).isEqualTo(withImm);
            if (withImm)
            {
                assertThat(wc.immData()).isEqualTo(imm);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQpExUdSend(final String name)
        {
            try (UdRig rig = UdRig.of(name, EnumSet.of(WrOpcode.SEND)))
            {
                udTraffic(rig, 1024, false);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQpExUdZeroSize(final String name)
        {
            // A datagram of no payload: the receive holds only the GRH, byte_len 40.
            try (UdRig rig = UdRig.of(name, EnumSet.of(WrOpcode.SEND)))
            {
                udTraffic(rig, 0, false);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testQpExUdSendImm(final String name)
        {
            try (UdRig rig = UdRig.of(name, EnumSet.of(WrOpcode.SEND_WITH_IMM)))
            {
                udTraffic(rig, 1024, true);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testPostReceiveQpStateBadFlow(final String name)
        {
            // tests/utils.py post_rq_state_bad_flow: the server's UD QP moved to RESET refuses a receive with EINVAL.
            try (UdRig rig = UdRig.of(name, EnumSet.of(WrOpcode.SEND)))
            {
                final QpAttr.Builder reset = QpAttr.builder().state(QpState.RESET);
                rig.server.modify(reset.build(), reset.mask());
                final long recv = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(recv, PAGE, LOCAL);
                assertThat(refused(() -> rig.server.postRecv(RecvWr.of(1, sge(mr, recv, 1024 + UdRig.GRH))))
                    .errnoName()).isEqualTo(Errno.EINVAL);
                assertThat(rig.server.state()).isEqualTo(QpState.RESET);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testPostSendQpStateBadFlow(final String name)
        {
            // tests/utils.py post_sq_state_bad_flow: the client's UD QP moved to RESET refuses a send with EINVAL,
            // and nothing reaches the server.
            try (UdRig rig = UdRig.of(name, EnumSet.of(WrOpcode.SEND)))
            {
                final QpAttr.Builder reset = QpAttr.builder().state(QpState.RESET);
                rig.client.modify(reset.build(), reset.mask());
                final long send = rig.bufferA(PAGE);
                final MemoryRegion mr = rig.pdA.regMr(send, PAGE, LOCAL);
                final long recv = rig.bufferB(PAGE);
                final MemoryRegion recvMr = rig.pdB.regMr(recv, PAGE, LOCAL);
                rig.server.postRecv(RecvWr.of(1, sge(recvMr, recv, 1024 + UdRig.GRH)));
                assertThat(refused(() -> rig.client.postSendUd(List.of(new UdSendWr(SendWr.send(1,
                    List.of(sge(mr, send, 1024))), rig.toServer, rig.server.qpNum(), UdRig.UD_QKEY)))).errnoName())
                    .isEqualTo(Errno.EINVAL);
                assertThat(rig.cqA.poll(1)).isEmpty();
                assertThat(rig.cqB.poll(1)).isEmpty();
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testFullRqBadFlow(final String name)
        {
            // tests/utils.py full_rq_bad_flow: max_recv_wr receives fill the queue, the next one is ENOMEM.
            try (UdRig rig = UdRig.of(name, EnumSet.of(WrOpcode.SEND)))
            {
                final long recv = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(recv, PAGE, LOCAL);
                final int granted = rig.server.cap().maxRecvWr(); // the QP's max_recv_wr as the provider granted it
                for (int i = 0; i < granted; i++)
                {
                    rig.server.postRecv(RecvWr.of(i, sge(mr, recv, 1024 + UdRig.GRH)));
                }
                assertThat(refused(() -> rig.server.postRecv(RecvWr.of(granted, sge(mr, recv, 1024 + UdRig.GRH))))
                    .errnoName()).isEqualTo(Errno.ENOMEM);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testRqWithLargerSglBadFlow(final String name)
        {
            // tests/utils.py create_rq_with_larger_sgl_bad_flow: a receive of max_recv_sge + 1 SGEs is EINVAL.
            try (UdRig rig = UdRig.of(name, EnumSet.of(WrOpcode.SEND)))
            {
                final long recv = rig.bufferB(PAGE);
                final MemoryRegion mr = rig.pdB.regMr(recv, PAGE, LOCAL);
                final List<Sge> sgl = List.of(sge(mr, recv, 512), sge(mr, recv + 512, 512));
                assertThat(refused(() -> rig.server.postRecv(new RecvWr(1, sgl))).errnoName())
                    .isEqualTo(Errno.EINVAL);
            }
        }
    }

    // ================================================================== tests/test_relaxed_ordering.py

    /** tests/test_relaxed_ordering.py, class RoTestCase: traffic through MRs registered with RELAXED_ORDERING. */
    @Nested
    class TestRelaxedOrdering
    {
        private static final Set<Access> RO = EnumSet.of(Access.LOCAL_WRITE, Access.RELAXED_ORDERING);
        private static final int MSG = 1024;

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testRoRcTraffic(final String name)
        {
            try (Rig rig = Rig.connected(name))
            {
                final long a = rig.bufferA(PAGE);
                final long b = rig.bufferB(PAGE);
                Traffic.run(new Traffic.Side(rig.qpA, rig.cqA, rig.memA, a, rig.pdA.regMr(a, MSG, RO), null, 0),
                    new Traffic.Side(rig.qpB, rig.cqB, rig.memB, b, rig.pdB.regMr(b, MSG, RO), null, 0), MSG, 100);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testRoUdTraffic(final String name)
        {
            try (Rig rig = Rig.unconnected(name))
            {
                final AddressHandle toB;
                final AddressHandle toA;
                try
                {
                    toB = rig.pdA.createAh(AhAttr.toGid(rig.qpB.address().gid()));
                    toA = rig.pdB.createAh(AhAttr.toGid(rig.qpA.address().gid()));
                }
                catch (final VerbsException e)
                {
                    assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, "this backend has no address handles: " + e);
                    throw e;
                }
                final long a = rig.bufferA(PAGE);
                final long b = rig.bufferB(PAGE);
                final int len = MSG + Traffic.GRH_BYTES;
                Traffic.run(new Traffic.Side(udQp(rig.pdA, rig.cqA), rig.cqA, rig.memA, a, rig.pdA.regMr(a, len, RO),
                    toB, UD_QKEY), new Traffic.Side(udQp(rig.pdB, rig.cqB), rig.cqB, rig.memB, b,
                    rig.pdB.regMr(b, len, RO), toA, UD_QKEY), MSG, 100);
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortTest#devices")
        void testRoXrcTraffic(final String name)
        {
            try (Rig rig = Rig.unconnected(name))
            {
                new XrcPlayers(rig, MSG, RO, 10).traffic(10, SendWr::send);
            }
        }
    }
}
