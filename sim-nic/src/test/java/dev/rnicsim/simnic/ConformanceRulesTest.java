package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.KeyRig.PAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.simnic.KeyRig.Footprint;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.OdpCaps;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The answers that real stacks give and the simulator once gave differently, one example per rule, each naming its
 * source; every refused call is checked to leave the device as it was.
 */
class ConformanceRulesTest
{
    private static final Set<Access> WRITE = EnumSet.of(Access.REMOTE_WRITE);

    private static VerbsException refused(final Runnable call)
    {
        final VerbsException e = catchThrowableOfType(VerbsException.class, call::run);
        assertThat(e).as("the call fails").isNotNull();
        return e;
    }

    // ------------------------------------------------------------------ memory-window binds

    @Test
    void shouldAcceptAndIgnoreLocalWriteInABindsAccess()
    {
        // rdma-core tests/test_mr.py (MWTest, bind with REMOTE_WRITE | LOCAL_WRITE succeeds); rxe's
        // RXE_ACCESS_SUPPORTED_MW holds LOCAL_WRITE.
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = k.rig.pdB.regMr(k.rig.bufferB(2 * PAGE), 2 * PAGE, KeyRig.bindable());
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);

        final int rkey = k.bind1(k.rig.qpB, mw, new MwBindInfo(mr, mr.addr(), PAGE,
            EnumSet.of(Access.REMOTE_WRITE, Access.LOCAL_WRITE)));

        k.assertWriteLands(mr.addr(), rkey, 64);
        assertThat(((SimMw)mw).access()).as("the window grants remote rights only").containsExactly(
            Access.REMOTE_WRITE);
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx5", "rxe"})
    void shouldLetTheWindowsOwnRightsDecideARemoteWrite(final String profile)
    {
        // rdma-core tests/test_qpex.py test_qp_ex_rc_bind_mw: a window bound with LOCAL_WRITE alone over an MR
        // with every right refuses a remote WRITE with IBV_WC_REM_ACCESS_ERR.
        final KeyRig k = KeyRig.of(DeviceProfiles.byName(profile));
        final EnumSet<Access> all = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
            Access.MW_BIND);
        final MemoryRegion mr = k.rig.pdB.regMr(k.rig.bufferB(PAGE), PAGE, all);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);

        final int rkey = k.bind1(k.rig.qpB, mw, new MwBindInfo(mr, mr.addr(), PAGE, EnumSet.of(Access.LOCAL_WRITE)));

        k.assertWriteRefused(mr.addr(), rkey, 8);
        k.assertWriteLands(mr.addr(), mr.rkey(), 8);
    }

    @Test
    void shouldRefuseToBindAWindowToADmabufMrWithEopnotsuppAtCallTimeOnMlx5()
    {
        // rdma-core providers/mlx5 mlx5_bind_mw: an MR whose type is not IBV_MR_TYPE_MR is ENOTSUP (= EOPNOTSUPP).
        final KeyRig k = KeyRig.connectx5();
        final SimGpu gpu = k.rig.deviceB.host().addGpu("gpu0", 64L << 20, SimGpu.DEFAULT_BAR1_BYTES,
            GpuTopology.PIX);
        final GpuBuffer buf = gpu.allocate(2L << 20);
        final int fd = gpu.exportDmabuf(buf, 0, 2L << 20);
        final MemoryRegion dmabufMr = k.rig.pdB.regDmabufMr(0, 1L << 20, 0x4000_0000L, fd,
            EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);
        final int rkey = mw.rkey();
        final Footprint before = k.footprintB();

        final VerbsException e = refused(() -> k.rig.qpB.bindMw(mw, 1, KeyRig.SIGNALED,
            new MwBindInfo(dmabufMr, 0x4000_0000L, PAGE, WRITE)));

        assertThat(e.errnoName()).isEqualTo(Errno.EOPNOTSUPP);
        assertThat(e.detail()).contains("IBV_MR_TYPE_DMABUF_MR");
        assertThat(mw.rkey()).isEqualTo(rkey);
        assertThat(k.footprintB()).isEqualTo(before);
        assertThat(k.rig.cqB.poll(4)).as("nothing was posted").isEmpty();
    }

    // ------------------------------------------------------------------ ibv_alloc_mw

    @Test
    void shouldFailWithEinvalForAWindowTypeOtherThanOneOrTwo()
    {
        // The kernel's ib_uverbs_alloc_mw: a type other than IB_MW_TYPE_1 or IB_MW_TYPE_2 is EINVAL.
        final KeyRig k = KeyRig.connectx5();
        final Footprint before = k.footprintB();

        assertThat(refused(() -> k.rig.pdB.allocMw(3)).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(refused(() -> k.rig.pdB.allocMw(0)).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(k.footprintB()).isEqualTo(before);
        assertThat(k.rig.pdB.allocMw(2).rkey()).isNotZero();
    }

    @Test
    void shouldAnswerEopnotsuppBeforeTheTypeOnADeviceWithoutWindows()
    {
        // libibverbs ibv_alloc_mw: a provider without windows is EOPNOTSUPP before the kernel sees the type.
        final KeyRig k = KeyRig.of(DeviceProfiles.rxeLegacy());

        assertThat(refused(() -> k.rig.pdB.allocMw(3)).errnoName()).isEqualTo(Errno.EOPNOTSUPP);
    }

    // ------------------------------------------------------------------ ibv_dealloc_pd

    @Test
    void shouldFailWithEbusyToDeallocAPdWithAWindowAQpOrAnMrAndChangeNothing()
    {
        // The kernel frees a PD only when its use count is 0 (ib_dealloc_pd_user; uverbs_free_pd returns EBUSY
        // while pd->usecnt is not 0): windows, QPs, SRQs, address handles and MRs all count.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final ProtectionDomain pd = rig.ctxB.allocPd();
        final MemoryWindow mw = pd.allocMw(MwType.TYPE_2);
        final QueuePair qp = pd.createQp(QpInitAttr.rc(rig.cqB));
        final MemoryRegion mr = pd.regMr(rig.bufferB(PAGE), PAGE, RuleRig.LOCAL);

        for (final AutoCloseable user : new AutoCloseable[] {mw, qp, mr})
        {
            final VerbsException e = refused(pd::dealloc);
            assertThat(e.errnoName()).isEqualTo(Errno.EBUSY);
            assertThat(e.verb()).isEqualTo("ibv_dealloc_pd");
            assertThat(pd.isClosed()).isFalse();
            assertThat(user == mw ? mw.isClosed() : user == qp ? qp.isClosed() : mr.isClosed())
                .as("the refused call closed nothing").isFalse();
            closeQuietly(user);
        }
        pd.dealloc();
        assertThat(pd.isClosed()).isTrue();
    }

    private static void closeQuietly(final AutoCloseable c)
    {
        try
        {
            c.close();
        }
        catch (final Exception e)
        {
            throw new AssertionError(e);
        }
    }

    // ------------------------------------------------------------------ current-kernel rxe

    @Test
    void shouldDescribeRxeAsCurrentKernelsBuildIt()
    {
        // drivers/infiniband/sw/rxe/rxe_param.h (DEFAULT_MAX_VALUE 2^20, RXE_MAX_MR, RXE_MAX_MW, RXE_VENDOR_ID,
        // RXE_DEVICE_CAP_FLAGS) and rxe.c rxe_init_device_param (ODP caps).
        final DeviceAttributes a = DeviceProfiles.rxe().attributes();

        assertThat(a.vendorId()).isEqualTo(0xFFFFFF);
        assertThat(a.maxMr()).isEqualTo((1 << 19) - 1);
        assertThat(a.maxMw()).isEqualTo((1 << 19) - 1);
        assertThat(a.maxQp()).isEqualTo((1 << 20) - 16);
        assertThat(a.maxCqe()).isEqualTo(32767);
        for (final DeviceCap c : new DeviceCap[] {DeviceCap.MEM_WINDOW, DeviceCap.MEM_WINDOW_TYPE_2B,
            DeviceCap.FLUSH_GLOBAL, DeviceCap.FLUSH_PERSISTENT, DeviceCap.ATOMIC_WRITE})
        {
            assertThat(a.has(c)).as("%s", c).isTrue();
        }
        assertThat(a.odpCaps().supported()).isTrue();
        assertThat(a.odpCaps().implicitSupported()).isFalse();
        assertThat(a.odpCaps().rcOdpCaps() & OdpCaps.FLUSH).isNotZero();
        assertThat(DeviceProfiles.rxeLegacy().attributes().vendorId()).as("the old dump's rxe").isZero();
        assertThat(DeviceProfiles.builtIn()).containsKeys("rxe", "rxe-legacy");
    }

    @Test
    void shouldBindType1AndType2WindowsOnRxe()
    {
        // rxe_mw.c: type 1 and type 2B windows.
        final KeyRig k = KeyRig.of(DeviceProfiles.rxe());
        final MemoryRegion mr = k.rig.pdB.regMr(k.rig.bufferB(2 * PAGE), 2 * PAGE, KeyRig.bindable());
        final MemoryWindow one = k.rig.pdB.allocMw(MwType.TYPE_1);
        final MemoryWindow two = k.rig.pdB.allocMw(MwType.TYPE_2);

        final int rkey1 = k.bind1(k.rig.qpB, one, new MwBindInfo(mr, mr.addr(), PAGE, WRITE));
        assertThat(k.bind2(k.rig.qpB, two, new MwBindInfo(mr, mr.addr() + PAGE, PAGE, WRITE)).status())
            .isEqualTo(WcStatus.SUCCESS);

        k.assertWriteLands(mr.addr(), rkey1, 32);
        assertThat(k.write(k.rig.qpA, mr.addr() + PAGE, two.rkey(), 32, 3)).isEqualTo(WcStatus.SUCCESS);
    }

    @ParameterizedTest
    @ValueSource(strings = {"zero_based", "odp_hugetlb"})
    void shouldFailWithEopnotsuppForAccessOutsideRxesMrMask(final String which)
    {
        // rxe_verbs.h RXE_ACCESS_SUPPORTED_MR has neither ZERO_BASED nor HUGETLB; rxe_reg_user_mr answers
        // EOPNOTSUPP.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.rxe());
        final long buf = rig.bufferB(2 << 20);
        final Set<Access> access = which.equals("zero_based") ? EnumSet.of(Access.LOCAL_WRITE, Access.ZERO_BASED)
            : EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND, Access.HUGETLB);
        final long pinned = rig.processB().pinnedVmPages();
        final long regs = rig.deviceB.counter(SimCounter.MR_REGISTRATIONS);

        final VerbsException e = refused(() -> rig.pdB.regMr(buf, 2 << 20, access));

        assertThat(e.errnoName()).isEqualTo(Errno.EOPNOTSUPP);
        assertThat(e.detail()).contains("RXE_ACCESS_SUPPORTED_MR");
        assertThat(rig.processB().pinnedVmPages()).isEqualTo(pinned);
        assertThat(rig.deviceB.counter(SimCounter.MR_REGISTRATIONS)).isEqualTo(regs);
        assertThat(rig.deviceB.tables().mpt().inUse()).isZero();
    }

    @Test
    void shouldRegisterFlushAccessOnlyWhereTheDeviceHasTheFlushCapability()
    {
        // ib_check_mr_access: FLUSH_GLOBAL needs IB_DEVICE_FLUSH_GLOBAL, FLUSH_PERSISTENT IB_DEVICE_FLUSH_PERSISTENT
        // (rxe sets both in RXE_DEVICE_CAP_FLAGS); otherwise EOPNOTSUPP. rxe takes FLUSH_PERSISTENT only over
        // persistent memory (rxe_mr_fill_pages_from_sgt), which the simulated host has not: EINVAL there.
        final RuleRig rxe = RuleRig.unconnected(DeviceProfiles.rxe());
        final RuleRig cx5 = RuleRig.unconnected(DeviceProfiles.connectx5());
        final Set<Access> global = EnumSet.of(Access.LOCAL_WRITE, Access.FLUSH_GLOBAL);
        final Set<Access> flush = EnumSet.of(Access.LOCAL_WRITE, Access.FLUSH_GLOBAL, Access.FLUSH_PERSISTENT);

        assertThat(rxe.pdB.regMr(rxe.bufferB(PAGE), PAGE, global).access()).containsAll(global);
        final long inUse = rxe.deviceB.tables().mpt().inUse();
        final VerbsException persistent = refused(() -> rxe.pdB.regMr(rxe.bufferB(PAGE), PAGE, flush));
        assertThat(persistent.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(persistent.detail()).contains("persistent memory");
        assertThat(rxe.deviceB.tables().mpt().inUse()).isEqualTo(inUse);
        final VerbsException e = refused(() -> cx5.pdB.regMr(cx5.bufferB(PAGE), PAGE, flush));
        assertThat(e.errnoName()).isEqualTo(Errno.EOPNOTSUPP);
        assertThat(cx5.deviceB.tables().mpt().inUse()).isZero();
    }

    // ------------------------------------------------------------------ on-demand paging

    @ParameterizedTest
    @ValueSource(strings = {"connectx5", "rxe"})
    void shouldRegisterOnDemandWithMwBindAndWithZeroBased(final String profile)
    {
        // mlx5 create_user_odp_mr and rxe_odp_mr_init_user take every legal flag with ON_DEMAND; rdma-core
        // tests/test_odp.py registers ODP MRs with the access its traffic needs. (rxe refuses ZERO_BASED for any
        // MR: see the mask test.)
        final KeyRig k = KeyRig.of(DeviceProfiles.byName(profile));
        final long buf = k.rig.bufferB(4 * PAGE);
        final MemoryRegion bindable = k.rig.pdB.regMr(buf, 4 * PAGE, EnumSet.of(Access.LOCAL_WRITE,
            Access.ON_DEMAND, Access.MW_BIND, Access.REMOTE_WRITE));
        assertThat(bindable.access()).contains(Access.MW_BIND, Access.ON_DEMAND);
        k.assertWriteLands(buf + 100, bindable.rkey(), 16);
        if (profile.equals("connectx5"))
        {
            final MemoryRegion zb = k.rig.pdB.regMr(buf, 4 * PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND,
                Access.ZERO_BASED, Access.REMOTE_WRITE, Access.REMOTE_READ));
            assertThat(zb.iova()).as("a zero-based MR is addressed from 0").isZero();
            final int seed = 9;
            assertThat(k.write(k.rig.qpA, 2 * PAGE + 8, zb.rkey(), 24, seed)).isEqualTo(WcStatus.SUCCESS);
            assertThat(k.rig.processB().read(buf + 2 * PAGE + 8, 24)).isEqualTo(RuleRig.pattern(24, seed));
        }
    }

    @Test
    void shouldFailWithEinvalForImplicitOdpOnADeviceWithoutImplicitOdp()
    {
        // mlx5 create_user_odp_mr / rxe: an implicit MR (addr 0, length SIZE_MAX) without
        // IBV_ODP_SUPPORT_IMPLICIT is EINVAL, not EOPNOTSUPP.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.rxe());
        final long regs = rig.deviceB.counter(SimCounter.MR_REGISTRATIONS);

        final VerbsException e = refused(() -> rig.pdB.regMr(0, -1L, EnumSet.of(Access.LOCAL_WRITE,
            Access.ON_DEMAND)));

        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.detail()).contains("IBV_ODP_SUPPORT_IMPLICIT");
        assertThat(rig.deviceB.counter(SimCounter.MR_REGISTRATIONS)).isEqualTo(regs);
        assertThat(rig.deviceB.tables().mpt().inUse()).isZero();
    }

    // ------------------------------------------------------------------ max_mr

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 7})
    void shouldTakeExactlyMaxMrMrsAndPlanWithTheSameFigure(final int maxMr)
    {
        // ibv_query_device(3): max_mr is the maximum number of MRs; mlx4 reports num_mpts less reserved_mrws.
        final DeviceProfile p = KeyRig.with(DeviceProfiles.connectx5(), b -> b.maxMr(maxMr));
        final RuleRig rig = RuleRig.unconnected(p);
        final long buf = rig.bufferB(PAGE);
        for (int i = 0; i < maxMr; i++)
        {
            rig.pdB.regMr(buf, PAGE, RuleRig.LOCAL);
        }

        assertThat(refused(() -> rig.pdB.regMr(buf, PAGE, RuleRig.LOCAL)).errnoName()).isEqualTo(Errno.ENOMEM);
        assertThat(p.registrableMrs()).isEqualTo(maxMr);
    }
}
