package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.KeyRig.PAGE;
import static dev.rnicsim.simnic.KeyRig.SIGNALED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.rnicsim.simnic.KeyRig.Footprint;
import dev.rnicsim.simnic.KeyRig.Pair;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The rules of memory windows, one example each: ibv_alloc_mw's capability checks and max_mw, ibv_bind_mw's
 * synchronous errno and its rkey change at post time, the semantic bind checks that complete with
 * IBV_WC_MW_BIND_ERR, unbinding, type 2 windows answering only their QP, LOCAL_INV and SEND_WITH_INV, deregistration
 * refused while windows are bound, stale keys after a rebind, and the counters and trace spans of every bind and
 * invalidation. Every refused call is also checked to change nothing.
 */
class MemoryWindowRulesTest
{
    private static final Set<Access> READ = EnumSet.of(Access.REMOTE_READ);
    private static final Set<Access> WRITE = EnumSet.of(Access.REMOTE_WRITE);
    private static final Set<Access> READ_WRITE = EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE);

    private static VerbsException verbsFailure(final ThrowingCallable call)
    {
        final Throwable t = catchThrowable(call);
        assertThat(t).as("the verb throws a VerbsException").isInstanceOf(VerbsException.class);
        return (VerbsException)t;
    }

    private static void assertErrno(final VerbsException e, final String verb, final Errno errno)
    {
        assertThat(e.verb()).isEqualTo(verb);
        assertThat(e.errnoName()).as(e.getMessage()).isEqualTo(errno);
        assertThat(e.errno()).isEqualTo(errno.code());
    }

    /** A buffer of {@code pages} pages on b registered with LOCAL_WRITE and MW_BIND. */
    private static MemoryRegion bindableMr(final KeyRig k, final int pages)
    {
        final long buf = k.rig.bufferB(pages * PAGE);
        return k.rig.pdB.regMr(buf, pages * PAGE, KeyRig.bindable());
    }

    // ------------------------------------------------------------------ ibv_alloc_mw

    @ParameterizedTest
    @ValueSource(strings = {"e810", "rxe-legacy"})
    void allocMwIsEopnotsuppOnProfilesWithoutWindows(final String profile)
    {
        final DeviceProfile p = DeviceProfiles.byName(profile);
        // e810 sets MEM_WINDOW but reports max_mw 0; the old kernel's rxe (rxe-legacy) sets neither.
        assertThat(p.attributes().has(DeviceCap.MEM_WINDOW) && p.attributes().maxMw() > 0).isFalse();
        final KeyRig k = KeyRig.of(p);
        final Footprint before = k.footprintB();

        for (final MwType type : MwType.values())
        {
            assertErrno(verbsFailure(() -> k.rig.pdB.allocMw(type)), "ibv_alloc_mw", Errno.EOPNOTSUPP);
        }

        assertThat(k.footprintB()).isEqualTo(before);
        assertThat(((SimPd)k.rig.pdB).memoryWindows()).isEmpty();
    }

    @Test
    void mlx4AllocatesWindowsThoughItReportsMaxMwZero()
    {
        // mlx4_ib_query_device never sets max_mw, but mlx4_ib_dev_mw_ops is registered and mlx4_mw_alloc takes an MPT
        // entry: both types allocate on a ConnectX-3, and an unknown type is still refused.
        final DeviceProfile p = DeviceProfiles.byName("connectx3");
        assertThat(p.attributes().maxMw()).isZero();
        assertThat(p.attributes().has(DeviceCap.MEM_WINDOW) && p.attributes().has(DeviceCap.MEM_WINDOW_TYPE_2B))
            .isTrue();
        final KeyRig k = KeyRig.of(p);
        for (final MwType type : MwType.values())
        {
            assertThat(k.rig.pdB.allocMw(type).rkey()).as(type.name()).isNotZero();
        }
        assertThat(((SimPd)k.rig.pdB).memoryWindows()).hasSize(MwType.values().length);
        assertErrno(verbsFailure(() -> k.rig.pdB.allocMw(3)), "ibv_alloc_mw", Errno.EINVAL);
    }

    @Test
    void allocMwIsEopnotsuppWithoutTheMemWindowFlagEvenWithMaxMw()
    {
        final DeviceProfile p = KeyRig.without(DeviceProfiles.connectx5(), DeviceCap.MEM_WINDOW);
        assertThat(p.attributes().maxMw()).isPositive();
        final RuleRig rig = RuleRig.unconnected(p);

        assertErrno(verbsFailure(() -> rig.pdB.allocMw(MwType.TYPE_1)), "ibv_alloc_mw", Errno.EOPNOTSUPP);
        assertThat(rig.deviceB.tables().windowCount()).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx5", "connectx7"})
    void mlx5ProfilesHaveType2BWindows(final String profile)
    {
        final DeviceProfile p = DeviceProfiles.byName(profile);
        assertThat(p.attributes().has(DeviceCap.MEM_WINDOW_TYPE_2B)).isTrue();
        final RuleRig rig = RuleRig.unconnected(p);

        final MemoryWindow one = rig.pdB.allocMw(MwType.TYPE_1);
        final MemoryWindow two = rig.pdB.allocMw(MwType.TYPE_2);

        assertThat(one.type()).isEqualTo(MwType.TYPE_1);
        assertThat(two.type()).isEqualTo(MwType.TYPE_2);
        assertThat(one.pd()).isSameAs(rig.pdB);
        assertThat(rig.deviceB.tables().windowCount()).isEqualTo(2);
        assertThat(rig.deviceB.tables().isWindow(one.rkey())).isTrue();
        assertThat(rig.deviceB.tables().isWindow(two.rkey())).isTrue();
        assertThat(one.rkey() >>> 8).isNotEqualTo(two.rkey() >>> 8);
    }

    @Test
    void type2NeedsMemWindowType2AOr2B()
    {
        final DeviceProfile neither = KeyRig.without(DeviceProfiles.connectx5(), DeviceCap.MEM_WINDOW_TYPE_2A,
            DeviceCap.MEM_WINDOW_TYPE_2B);
        final RuleRig rig = RuleRig.unconnected(neither);

        assertErrno(verbsFailure(() -> rig.pdB.allocMw(MwType.TYPE_2)), "ibv_alloc_mw", Errno.EOPNOTSUPP);
        assertThat(rig.deviceB.tables().windowCount()).isZero();
        assertThat(rig.pdB.allocMw(MwType.TYPE_1).type()).isEqualTo(MwType.TYPE_1);

        final DeviceProfile only2A = KeyRig.with(neither, b -> b.deviceCapFlags(neither.attributes().deviceCapFlags()
            | DeviceCap.MEM_WINDOW_TYPE_2A.bit()));
        assertThat(RuleRig.unconnected(only2A).pdB.allocMw(MwType.TYPE_2).type()).isEqualTo(MwType.TYPE_2);
    }

    @Test
    void allocMwIsEnomemAtMaxMwAndWorksAgainAfterADealloc()
    {
        final KeyRig k = KeyRig.of(KeyRig.with(DeviceProfiles.connectx5(), b -> b.maxMw(2)));
        final MemoryWindow first = k.rig.pdB.allocMw(MwType.TYPE_1);
        k.rig.pdB.allocMw(MwType.TYPE_2);
        final Footprint before = k.footprintB();

        for (final MwType type : MwType.values())
        {
            assertErrno(verbsFailure(() -> k.rig.pdB.allocMw(type)), "ibv_alloc_mw", Errno.ENOMEM);
        }
        assertThat(k.footprintB()).isEqualTo(before);
        // MRs are not windows: max_mw does not limit them.
        assertThat(bindableMr(k, 1).isClosed()).isFalse();

        first.close();
        assertThat(first.isClosed()).isTrue();
        assertThat(k.rig.pdB.allocMw(MwType.TYPE_1).isClosed()).isFalse();
        assertThat(k.deviceB().tables().windowCount()).isEqualTo(2);
    }

    // ------------------------------------------------------------------ ibv_bind_mw: synchronous errors

    @Test
    void bindMwOfAType2WindowIsEinvalAndPostsNothing()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 2);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);
        final int rkey = mw.rkey();
        final Footprint before = k.footprintB();

        assertErrno(verbsFailure(() -> k.rig.qpB.bindMw(mw, 1, SIGNALED, new MwBindInfo(mr, mr.addr(), PAGE, READ))),
            "ibv_bind_mw", Errno.EINVAL);

        assertThat(mw.rkey()).isEqualTo(rkey);
        assertThat(k.rig.pollB()).isEmpty();
        assertThat(k.rig.qpB.state()).isEqualTo(QpState.RTS);
        assertThat(k.footprintB()).isEqualTo(before);
        assertThat(((SimMw)mw).isBound()).isFalse();
    }

    @Test
    void bindMwWithoutAnMrButWithAnAddressOrLengthIsEinval()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 2);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);
        final int rkey = mw.rkey();
        final Footprint before = k.footprintB();

        assertErrno(verbsFailure(() -> k.rig.qpB.bindMw(mw, 1, SIGNALED, new MwBindInfo(null, mr.addr(), 0, READ))),
            "ibv_bind_mw", Errno.EINVAL);
        assertErrno(verbsFailure(() -> k.rig.qpB.bindMw(mw, 2, SIGNALED, new MwBindInfo(null, 0, PAGE, READ))),
            "ibv_bind_mw", Errno.EINVAL);

        assertThat(mw.rkey()).as("a refused ibv_bind_mw does not increment the rkey").isEqualTo(rkey);
        assertThat(k.rig.pollB()).isEmpty();
        assertThat(k.rig.qpB.state()).isEqualTo(QpState.RTS);
        assertThat(k.footprintB()).isEqualTo(before);
    }

    @Test
    void bindMwOfAnMrOfAnotherPdIsEperm()
    {
        final KeyRig k = KeyRig.connectx5();
        final ProtectionDomain otherPd = k.rig.ctxB.allocPd();
        final long buf = k.rig.bufferB(2 * PAGE);
        final MemoryRegion otherMr = otherPd.regMr(buf, 2 * PAGE, KeyRig.bindable());
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);
        final MemoryRegion mr = bindableMr(k, 1);
        final MemoryWindow otherMw = otherPd.allocMw(MwType.TYPE_1);
        final int rkey = mw.rkey();
        final Footprint before = k.footprintB();

        assertErrno(verbsFailure(() -> k.rig.qpB.bindMw(mw, 1, SIGNALED, new MwBindInfo(otherMr, buf, PAGE, READ))),
            "ibv_bind_mw", Errno.EPERM);
        assertErrno(verbsFailure(() -> k.rig.qpB.bindMw(otherMw, 2, SIGNALED, new MwBindInfo(mr, mr.addr(), PAGE,
            READ))), "ibv_bind_mw", Errno.EPERM);

        assertThat(mw.rkey()).isEqualTo(rkey);
        assertThat(k.rig.pollB()).isEmpty();
        assertThat(k.footprintB()).isEqualTo(before);
        assertThat(((SimMr)otherMr).boundWindows()).isZero();
    }

    // ------------------------------------------------------------------ ibv_bind_mw: the rkey

    @Test
    void bindMwIncrementsTheLowByteModulo256AndKeepsTheIndex()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 2);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);
        final int index = mw.rkey() >>> 8;
        boolean wrapped = false;
        int rkey = mw.rkey();
        for (int i = 0; i < 257; i++)
        {
            final int before = rkey;
            rkey = k.bind1(k.rig.qpB, mw, MwBindInfo.unbind());
            assertThat(rkey).isEqualTo(SendWr.incRkey(before));
            assertThat(rkey >>> 8).as("the upper 24 bits (the index)").isEqualTo(index);
            assertThat(rkey & 0xff).isEqualTo((before + 1) & 0xff);
            assertThat(mw.rkey()).isEqualTo(rkey);
            wrapped |= (before & 0xff) == 0xff && (rkey & 0xff) == 0;
        }
        assertThat(wrapped).as("0xff is followed by 0x00").isTrue();

        // The wrapped key is as good as any.
        final int bound = k.bind1(k.rig.qpB, mw, new MwBindInfo(mr, mr.addr(), PAGE, WRITE));
        k.assertWriteLands(mr.addr() + 16, bound, 32);
    }

    @Test
    void aFailedBindHasAlreadyChangedTheRkeyAtPostTimeButTheOldBindingStays()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 2);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);
        final int good = k.bind1(k.rig.qpB, mw, new MwBindInfo(mr, mr.addr(), PAGE, WRITE));
        final Footprint before = k.footprintB();

        final long wrId = k.nextWrId();
        final int attempted = k.rig.qpB.bindMw(mw, wrId, SIGNALED, new MwBindInfo(mr, mr.addr(), 3 * PAGE, WRITE));

        assertThat(attempted).isEqualTo(SendWr.incRkey(good));
        assertThat(mw.rkey()).as("ibv_bind_mw stores the new rkey at post time").isEqualTo(attempted);
        assertThat(k.completionOf(k.rig.qpB, wrId).status()).isEqualTo(WcStatus.MW_BIND_ERR);
        assertThat(k.footprintB()).isEqualTo(before);
        k.assertWriteLands(mr.addr(), good, 64);
        k.assertWriteRefused(mr.addr(), attempted, 64);
        assertThat(((SimMr)mr).boundWindows()).isEqualTo(1);
    }

    // ------------------------------------------------------------------ ibv_bind_mw: IBV_WC_MW_BIND_ERR

    /**
     * Binds through a new QP of b's PD, expecting IBV_WC_MW_BIND_ERR, the QP in ERR, and nothing else changed: the
     * window's key in the tables, its binding, the MR's window count, the counters.
     */
    private static void assertBindError(final KeyRig k, final QueuePair qp, final MemoryWindow mw,
        final MwBindInfo info)
    {
        final SimMw sim = (SimMw)mw;
        final int tableKey = sim.tableKey();
        final boolean wasBound = sim.isBound();
        final SimMr mr = info.mr() instanceof SimMr m ? m : null;
        final int mrWindows = mr == null ? 0 : mr.boundWindows();
        final Footprint before = k.footprintB();
        final WorkCompletion wc;
        if (mw.type() == MwType.TYPE_1)
        {
            final long wrId = k.nextWrId();
            final int before1 = mw.rkey();
            qp.bindMw(mw, wrId, SIGNALED, info);
            wc = k.completionOf(qp, wrId);
            // ibv_bind_mw(3): keep the old rkey and write it back when the bind's completion fails.
            mw.setRkey(before1);
        }
        else
        {
            final int rkey = mw.rkey();
            wc = k.bind2(qp, mw, info);
            assertThat(mw.rkey()).as("a type 2 window keeps its rkey").isEqualTo(rkey);
        }
        assertThat(wc.status()).as("bind %s of %s: %s", info, mw, ((SimQp)qp).lastLocalFailure())
            .isEqualTo(WcStatus.MW_BIND_ERR);
        assertThat(qp.state()).isEqualTo(QpState.ERR);
        assertThat(k.footprintB()).isEqualTo(before);
        assertThat(sim.tableKey()).isEqualTo(tableKey);
        assertThat(k.deviceB().tables().isWindow(tableKey)).isTrue();
        assertThat(sim.isBound()).isEqualTo(wasBound);
        if (mr != null)
        {
            assertThat(mr.boundWindows()).isEqualTo(mrWindows);
        }
    }

    @Test
    void bindToAnMrWithoutMwBindFails()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(2 * PAGE);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, 2 * PAGE, RuleRig.REMOTE_ALL);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);

        assertBindError(k, k.pair().b(), mw, new MwBindInfo(mr, buf, PAGE, READ));
        assertBindError(k, k.pair().b(), k.rig.pdB.allocMw(MwType.TYPE_2), new MwBindInfo(mr, buf, PAGE, READ));
    }

    @Test
    void aWritableOrAtomicWindowNeedsAnMrWithLocalWrite()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(2 * PAGE);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, 2 * PAGE, EnumSet.of(Access.MW_BIND));
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);

        assertBindError(k, k.pair().b(), mw, new MwBindInfo(mr, buf, PAGE, WRITE));
        assertBindError(k, k.pair().b(), mw, new MwBindInfo(mr, buf, PAGE, EnumSet.of(Access.REMOTE_ATOMIC)));
        assertBindError(k, k.pair().b(), k.rig.pdB.allocMw(MwType.TYPE_2), new MwBindInfo(mr, buf, PAGE, WRITE));

        // A read-only window of the same MR is fine.
        final int rkey = k.bind1(k.pair().b(), mw, new MwBindInfo(mr, buf, PAGE, READ));
        k.rig.processB().write(buf, RuleRig.pattern(32, 9));
        assertThat(k.read(k.pair().a(), buf, rkey, 32)).isEqualTo(WcStatus.SUCCESS);
        assertThat(k.scratchBytes(32)).isEqualTo(RuleRig.pattern(32, 9));
    }

    @Test
    void aBindAfterAFailedOneFailsUntilTheOldRkeyIsWrittenBack()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(2 * PAGE);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, 2 * PAGE, KeyRig.bindable());
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);
        final int before = mw.rkey();
        final QueuePair qp = k.pair().b();
        final long failed = k.nextWrId();
        qp.bindMw(mw, failed, SIGNALED, new MwBindInfo(mr, buf, 4 * PAGE, READ));
        assertThat(k.completionOf(qp, failed).status()).isEqualTo(WcStatus.MW_BIND_ERR);
        assertThat(mw.rkey()).as("set at post time").isEqualTo(SendWr.incRkey(before));

        // rxe_bind_mw: the bind names the window by a key the device does not know.
        final QueuePair qp2 = k.pair().b();
        final long stale = k.nextWrId();
        qp2.bindMw(mw, stale, SIGNALED, new MwBindInfo(mr, buf, PAGE, READ));
        assertThat(k.completionOf(qp2, stale).status()).isEqualTo(WcStatus.MW_BIND_ERR);
        assertThat(((SimQp)qp2).lastLocalFailure()).contains("write mw.rkey back");

        mw.setRkey(before);
        final int rkey = k.bind1(k.pair().b(), mw, new MwBindInfo(mr, buf, PAGE, READ));
        assertThat(rkey).isEqualTo(SendWr.incRkey(before));
    }

    @Test
    void aWindowOutsideTheMrFails()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(4 * PAGE);
        final MemoryRegion mr = k.rig.pdB.regMr(buf + PAGE, 2 * PAGE, KeyRig.bindable());
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);
        final long start = mr.addr();
        final long end = start + mr.lengthBytes();

        assertBindError(k, k.pair().b(), mw, new MwBindInfo(mr, start - 1, PAGE, READ));
        assertBindError(k, k.pair().b(), mw, new MwBindInfo(mr, start - PAGE, PAGE, READ));
        assertBindError(k, k.pair().b(), mw, new MwBindInfo(mr, start, mr.lengthBytes() + 1, READ));
        assertBindError(k, k.pair().b(), mw, new MwBindInfo(mr, end - 16, 32, READ));
        assertBindError(k, k.pair().b(), mw, new MwBindInfo(mr, end, 1, READ));
        assertBindError(k, k.pair().b(), k.rig.pdB.allocMw(MwType.TYPE_2), new MwBindInfo(mr, end - 16, 32, READ));

        // The whole MR, and its last byte alone, are inside.
        k.bind1(k.pair().b(), mw, new MwBindInfo(mr, start, mr.lengthBytes(), READ));
        k.bind1(k.pair().b(), mw, new MwBindInfo(mr, end - 1, 1, READ));
    }

    @Test
    void aType1WindowCannotBeZeroBased()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 2);

        // mlx5 refuses it in ibv_bind_mw (MW_BIND_CHECKED_AT_POST); rxe's rxe_check_bind_mw fails the bind.
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);
        final int before = mw.rkey();
        final Throwable t = catchThrowable(() -> k.pair().b().bindMw(mw, 1, SIGNALED, new MwBindInfo(mr, mr.addr(),
            PAGE, EnumSet.of(Access.REMOTE_READ, Access.ZERO_BASED))));
        assertThat(t).isInstanceOf(VerbsException.class);
        assertThat(((VerbsException)t).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(mw.rkey()).as("unchanged: nothing was posted").isEqualTo(before);
        final KeyRig rxeLike = KeyRig.of(DeviceProfiles.connectx5().withProviderRules(java.util.Set.of()));
        assertBindError(rxeLike, rxeLike.pair().b(), rxeLike.rig.pdB.allocMw(MwType.TYPE_1), new MwBindInfo(
            bindableMr(rxeLike, 2), bindableMr(rxeLike, 2).addr(), PAGE, EnumSet.of(Access.REMOTE_READ,
            Access.ZERO_BASED)));
    }

    @Test
    void aWindowCannotBeBoundToAZeroBasedMr()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(2 * PAGE);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, 2 * PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.MW_BIND,
            Access.ZERO_BASED));
        assertThat(mr.iova()).isZero();

        final Throwable t = catchThrowable(() -> k.pair().b().bindMw(k.rig.pdB.allocMw(MwType.TYPE_1), 1, SIGNALED,
            new MwBindInfo(mr, 0, PAGE, READ)));
        assertThat(t).isInstanceOf(VerbsException.class);
        assertThat(((VerbsException)t).errnoName()).isEqualTo(Errno.EINVAL);
        final Throwable t2 = catchThrowable(() -> k.pair().b().postSend(SendWr.bindMw(1, k.rig.pdB.allocMw(
            MwType.TYPE_2), 0x11, new MwBindInfo(mr, 0, PAGE, READ))));
        assertThat(t2).isInstanceOf(VerbsException.class);
        assertThat(((VerbsException)t2).errnoName()).isEqualTo(Errno.EINVAL);
    }

    @Test
    void aBoundType2WindowCannotBeBoundAgain()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 2);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);
        assertThat(k.bind2(k.rig.qpB, mw, new MwBindInfo(mr, mr.addr(), PAGE, WRITE)).status())
            .isEqualTo(WcStatus.SUCCESS);
        final int rkey = mw.rkey();

        // Through another QP of the PD, so that the QP the window is bound to stays usable.
        assertBindError(k, k.pair().b(), mw, new MwBindInfo(mr, mr.addr() + PAGE, PAGE, WRITE));

        assertThat(mw.rkey()).isEqualTo(rkey);
        assertThat(k.write(k.rig.qpA, mr.addr() + 8, rkey, 16, 4)).isEqualTo(WcStatus.SUCCESS);
        assertThat(k.rig.processB().read(mr.addr() + 8, 16)).isEqualTo(RuleRig.pattern(16, 4));
    }

    @Test
    void aType2BindFromAQpOfAnotherPdFails()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 2);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);
        final Pair foreign = k.pair(k.rig.pdA, k.rig.ctxB.allocPd());

        assertBindError(k, foreign.b(), mw, new MwBindInfo(mr, mr.addr(), PAGE, READ));
    }

    @Test
    void aType2WindowCannotBeBoundWithLengthZero()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 2);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);

        assertBindError(k, k.pair().b(), mw, new MwBindInfo(mr, mr.addr(), 0, READ));
        assertBindError(k, k.pair().b(), mw, MwBindInfo.unbind());
    }

    @Test
    void aType1WindowIsBoundWithAnIbvBindMwNotAPostedBindMw()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 2);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);
        final Footprint before = k.footprintB();

        final Throwable t = catchThrowable(() -> k.rig.qpB.postSend(SendWr.bindMw(1, mw, SendWr.incRkey(mw.rkey()),
            new MwBindInfo(mr, mr.addr(), PAGE, READ))));

        assertThat(t).isInstanceOf(dev.rnicsim.verbs.PostException.class);
        assertThat(((VerbsException)t).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(k.footprintB()).isEqualTo(before);
        assertThat(k.rig.qpB.state()).isEqualTo(QpState.RTS);
    }

    // ------------------------------------------------------------------ unbind, rights, bounds, rebind

    @Test
    void aZeroLengthBindUnbindsAType1Window()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 2);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);
        final int bound = k.bind1(k.rig.qpB, mw, new MwBindInfo(mr, mr.addr(), 2 * PAGE, READ_WRITE));
        k.assertWriteLands(mr.addr() + PAGE, bound, 128);
        assertThat(((SimMr)mr).boundWindows()).isEqualTo(1);
        final long binds = k.deviceB().counter(SimCounter.MW_BINDS);

        final int unbound = k.bind1(k.rig.qpB, mw, MwBindInfo.unbind());

        assertThat(unbound).isEqualTo(SendWr.incRkey(bound));
        assertThat(((SimMw)mw).isBound()).isFalse();
        assertThat(((SimMr)mr).boundWindows()).isZero();
        assertThat(k.deviceB().counter(SimCounter.MW_BINDS)).isEqualTo(binds + 1);
        k.assertWriteRefused(mr.addr() + PAGE, bound, 128);
        k.assertWriteRefused(mr.addr() + PAGE, unbound, 128);
        mr.close();
        assertThat(mr.isClosed()).isTrue();
    }

    @Test
    void aWindowGrantsOnlyItsRightsWithinItsBoundsWhateverTheMrGrants()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 4);
        final long w = mr.addr() + PAGE;
        final MemoryWindow reader = k.rig.pdB.allocMw(MwType.TYPE_1);
        final MemoryWindow writer = k.rig.pdB.allocMw(MwType.TYPE_1);
        final int r = k.bind1(k.rig.qpB, reader, new MwBindInfo(mr, w, PAGE, READ));
        final int wr = k.bind1(k.rig.qpB, writer, new MwBindInfo(mr, w, PAGE, WRITE));
        k.rig.processB().write(w, RuleRig.pattern((int)PAGE, 5));

        assertThat(k.read(k.pair().a(), w, r, (int)PAGE)).isEqualTo(WcStatus.SUCCESS);
        assertThat(k.scratchBytes((int)PAGE)).isEqualTo(RuleRig.pattern((int)PAGE, 5));
        k.assertWriteLands(w + PAGE - 8, wr, 8);

        k.assertWriteRefused(w, r, 8);
        assertThat(k.read(k.pair().a(), w, wr, 8)).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(k.read(k.pair().a(), w - 1, r, 8)).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(k.read(k.pair().a(), w + PAGE - 4, r, 8)).isEqualTo(WcStatus.REM_ACCESS_ERR);
        k.assertWriteRefused(w + PAGE, wr, 1);
        // The MR itself grants no remote right.
        k.assertWriteRefused(w, mr.rkey(), 8);
    }

    @Test
    void theOldRkeyIsRefusedAfterARebind()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 4);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);
        final int first = k.bind1(k.rig.qpB, mw, new MwBindInfo(mr, mr.addr(), 2 * PAGE, WRITE));
        k.assertWriteLands(mr.addr(), first, 16);

        final int second = k.bind1(k.rig.qpB, mw, new MwBindInfo(mr, mr.addr() + PAGE, 3 * PAGE, WRITE));

        k.assertWriteRefused(mr.addr(), first, 16);
        k.assertWriteRefused(mr.addr() + PAGE, first, 16);
        k.assertWriteLands(mr.addr() + PAGE, second, 16);
        k.assertWriteRefused(mr.addr(), second, 16);
        assertThat(((SimMr)mr).boundWindows()).isEqualTo(1);

        // Type 2: invalidate, then rebind under the next key; the old key is refused through the same QP.
        final MemoryWindow two = k.rig.pdB.allocMw(MwType.TYPE_2);
        final Pair p = k.pair();
        assertThat(k.bind2(p.b(), two, new MwBindInfo(mr, mr.addr(), PAGE, WRITE)).status())
            .isEqualTo(WcStatus.SUCCESS);
        final int old2 = two.rkey();
        assertThat(k.post(p.b(), SendWr.localInv(k.nextWrId(), old2)).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(k.bind2(p.b(), two, new MwBindInfo(mr, mr.addr(), PAGE, WRITE)).status())
            .isEqualTo(WcStatus.SUCCESS);
        assertThat(two.rkey()).isEqualTo(SendWr.incRkey(old2));
        assertThat(k.write(p.a(), mr.addr(), two.rkey(), 16, 7)).isEqualTo(WcStatus.SUCCESS);
        assertThat(k.write(p.a(), mr.addr(), old2, 16, 7)).isEqualTo(WcStatus.REM_ACCESS_ERR);
    }

    @Test
    void aType2WindowAnswersOnlyTheQpItWasBoundOn()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 2);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);
        final WorkCompletion bound = k.bind2(k.rig.qpB, mw, new MwBindInfo(mr, mr.addr(), 2 * PAGE, READ_WRITE));
        assertThat(bound.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(bound.opcode()).isEqualTo(WcOpcode.BIND_MW);
        assertThat(((SimMw)mw).boundQp()).isSameAs(k.rig.qpB);

        assertThat(k.write(k.rig.qpA, mr.addr() + 100, mw.rkey(), 50, 3)).isEqualTo(WcStatus.SUCCESS);
        assertThat(k.rig.processB().read(mr.addr() + 100, 50)).isEqualTo(RuleRig.pattern(50, 3));

        // Another QP of the same PD on b.
        final Pair other = k.pair();
        assertThat(other.b().pd()).isSameAs(mw.pd());
        assertThat(k.write(other.a(), mr.addr() + 100, mw.rkey(), 50, 4)).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(k.read(k.pair().a(), mr.addr(), mw.rkey(), 8)).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(k.rig.processB().read(mr.addr() + 100, 50)).isEqualTo(RuleRig.pattern(50, 3));
        // The QP it is bound on still answers.
        assertThat(k.read(k.rig.qpA, mr.addr() + 100, mw.rkey(), 50)).isEqualTo(WcStatus.SUCCESS);
        assertThat(k.scratchBytes(50)).isEqualTo(RuleRig.pattern(50, 3));
    }

    // ------------------------------------------------------------------ LOCAL_INV

    @Test
    void localInvUnbindsAType2Window()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 2);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);
        assertThat(k.bind2(k.rig.qpB, mw, new MwBindInfo(mr, mr.addr(), PAGE, WRITE)).status())
            .isEqualTo(WcStatus.SUCCESS);
        final int rkey = mw.rkey();
        final long invalidations = k.deviceB().counter(SimCounter.KEY_INVALIDATIONS);
        final int from = k.trace.size();

        final WorkCompletion wc = k.post(k.rig.qpB, SendWr.localInv(k.nextWrId(), rkey));

        assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(wc.opcode()).isEqualTo(WcOpcode.LOCAL_INV);
        assertThat(mw.rkey()).as("an invalidation keeps the key").isEqualTo(rkey);
        assertThat(((SimMw)mw).isBound()).isFalse();
        assertThat(((SimMr)mr).boundWindows()).isZero();
        assertThat(k.deviceB().counter(SimCounter.KEY_INVALIDATIONS)).isEqualTo(invalidations + 1);
        assertThat(k.invalidateCauses(from)).containsExactly("invalidate_mw");
        assertThat(k.write(k.rig.qpA, mr.addr(), rkey, 16, 1)).isEqualTo(WcStatus.REM_ACCESS_ERR);
        mr.close();
    }

    /** LOCAL_INV of {@code rkey} on a new QP of b's PD must complete LOC_QP_OP_ERR and change nothing. */
    private static void assertLocalInvRefused(final KeyRig k, final int rkey)
    {
        final QueuePair qp = k.pair().b();
        final Footprint before = k.footprintB();

        final WorkCompletion wc = k.post(qp, SendWr.localInv(k.nextWrId(), rkey));

        assertThat(wc.status()).as("LOCAL_INV 0x%x", rkey).isEqualTo(WcStatus.LOC_QP_OP_ERR);
        assertThat(qp.state()).isEqualTo(QpState.ERR);
        assertThat(k.footprintB()).isEqualTo(before);
    }

    @Test
    void localInvOfAType1WindowFailsAndTheWindowStaysBound()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 2);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);
        final int rkey = k.bind1(k.rig.qpB, mw, new MwBindInfo(mr, mr.addr(), PAGE, WRITE));

        assertLocalInvRefused(k, rkey);

        assertThat(((SimMw)mw).isBound()).isTrue();
        k.assertWriteLands(mr.addr(), rkey, 16);
    }

    @Test
    void localInvOfAUserMrFailsAndTheMrKeepsWorking()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(PAGE);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, PAGE, RuleRig.REMOTE_ALL);

        assertLocalInvRefused(k, mr.rkey());

        k.assertWriteLands(buf, mr.rkey(), 64);
    }

    @Test
    void localInvOfAnUnknownOrStaleKeyFails()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 2);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);
        final Pair p = k.pair();
        assertThat(k.bind2(p.b(), mw, new MwBindInfo(mr, mr.addr(), PAGE, WRITE)).status())
            .isEqualTo(WcStatus.SUCCESS);
        final int first = mw.rkey();
        assertThat(k.post(p.b(), SendWr.localInv(k.nextWrId(), first)).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(k.bind2(p.b(), mw, new MwBindInfo(mr, mr.addr(), PAGE, WRITE)).status())
            .isEqualTo(WcStatus.SUCCESS);

        assertLocalInvRefused(k, first);
        assertLocalInvRefused(k, 0x7fff_fe01);

        assertThat(((SimMw)mw).isBound()).isTrue();
        assertThat(k.write(p.a(), mr.addr(), mw.rkey(), 16, 2)).isEqualTo(WcStatus.SUCCESS);
    }

    // ------------------------------------------------------------------ SEND_WITH_INV

    @Test
    void sendWithInvInvalidatesAType2WindowAndSaysSoInTheReceiveCompletion()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 2);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);
        assertThat(k.bind2(k.rig.qpB, mw, new MwBindInfo(mr, mr.addr(), PAGE, READ)).status())
            .isEqualTo(WcStatus.SUCCESS);
        final int rkey = mw.rkey();
        final long rbuf = k.rig.bufferB(PAGE);
        final MemoryRegion rmr = k.rig.pdB.regMr(rbuf, PAGE, RuleRig.LOCAL);
        k.rig.qpB.postRecv(new RecvWr(77, List.of(RuleRig.sge(rmr, rbuf, 64))));
        final long invalidations = k.deviceB().counter(SimCounter.KEY_INVALIDATIONS);
        final int from = k.trace.size();
        k.rig.processA().write(k.scratch, RuleRig.pattern(24, 6));

        k.rig.qpA.postSend(SendWr.sendWithInv(5, List.of(RuleRig.sge(k.scratchMr, k.scratch, 24)), rkey));

        final List<WorkCompletion> sender = k.rig.pollA();
        final List<WorkCompletion> receiver = k.rig.pollB();
        assertThat(sender).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(receiver).hasSize(1);
        final WorkCompletion recv = receiver.get(0);
        assertThat(recv.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(recv.wrId()).isEqualTo(77);
        assertThat(recv.opcode()).isEqualTo(WcOpcode.RECV);
        assertThat(recv.withInv()).isTrue();
        assertThat(recv.invalidatedRkey()).isEqualTo(rkey);
        assertThat(recv.byteLen()).isEqualTo(24);
        assertThat(k.rig.processB().read(rbuf, 24)).isEqualTo(RuleRig.pattern(24, 6));
        assertThat(((SimMw)mw).isBound()).isFalse();
        assertThat(k.deviceB().counter(SimCounter.KEY_INVALIDATIONS)).isEqualTo(invalidations + 1);
        assertThat(k.invalidateCauses(from)).containsExactly("invalidate_mw");
        assertThat(k.read(k.rig.qpA, mr.addr(), rkey, 8)).isEqualTo(WcStatus.REM_ACCESS_ERR);
    }

    /** A SEND_WITH_INV of {@code rkey} on a new pair: both completions REM_INV_REQ_ERR, nothing invalidated. */
    private static void assertSendWithInvRefused(final KeyRig k, final int rkey)
    {
        final Pair p = k.pair();
        final long rbuf = k.rig.bufferB(PAGE);
        final MemoryRegion rmr = k.rig.pdB.regMr(rbuf, PAGE, RuleRig.LOCAL);
        p.b().postRecv(new RecvWr(88, List.of(RuleRig.sge(rmr, rbuf, 64))));
        final Footprint before = k.footprintB();

        p.a().postSend(SendWr.sendWithInv(6, List.of(RuleRig.sge(k.scratchMr, k.scratch, 8)), rkey));

        final List<WorkCompletion> all = k.drain();
        assertThat(KeyRig.only(all, p.a(), 6).status()).as("sender, rkey 0x%x", rkey)
            .isEqualTo(WcStatus.REM_INV_REQ_ERR);
        assertThat(KeyRig.only(all, p.b(), 88).status()).as("receiver, rkey 0x%x", rkey)
            .isEqualTo(WcStatus.REM_INV_REQ_ERR);
        assertThat(k.footprintB()).isEqualTo(before);
    }

    @Test
    void sendWithInvOfAKeyThatCannotBeInvalidatedFailsOnBothSides()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 2);
        final MemoryWindow one = k.rig.pdB.allocMw(MwType.TYPE_1);
        final int rkey1 = k.bind1(k.rig.qpB, one, new MwBindInfo(mr, mr.addr(), PAGE, WRITE));
        final MemoryWindow two = k.rig.pdB.allocMw(MwType.TYPE_2);
        assertThat(k.bind2(k.rig.qpB, two, new MwBindInfo(mr, mr.addr(), PAGE, WRITE)).status())
            .isEqualTo(WcStatus.SUCCESS);
        final int stale = SendWr.incRkey(SendWr.incRkey(two.rkey()));

        assertSendWithInvRefused(k, rkey1);
        assertSendWithInvRefused(k, stale);
        assertSendWithInvRefused(k, 0x7fff_fe01);

        assertThat(((SimMw)one).isBound()).isTrue();
        assertThat(((SimMw)two).isBound()).isTrue();
        k.assertWriteLands(mr.addr(), rkey1, 8);
        assertThat(k.write(k.rig.qpA, mr.addr(), two.rkey(), 8, 3)).isEqualTo(WcStatus.SUCCESS);
    }

    // ------------------------------------------------------------------ ibv_dereg_mr with bound windows

    @Test
    void deregOfAnMrWithBoundWindowsIsEinvalUntilTheyAreDeallocated()
    {
        // rxe_dereg_mr: EINVAL while mr->num_mw is not 0 (IBA 10.6.7.2.6)
        final KeyRig k = KeyRig.of(DeviceProfiles.rxe());
        final MemoryRegion mr = bindableMr(k, 2);
        final MemoryWindow one = k.rig.pdB.allocMw(MwType.TYPE_1);
        final MemoryWindow two = k.rig.pdB.allocMw(MwType.TYPE_2);
        final int rkey1 = k.bind1(k.rig.qpB, one, new MwBindInfo(mr, mr.addr(), PAGE, WRITE));
        assertThat(k.bind2(k.rig.qpB, two, new MwBindInfo(mr, mr.addr() + PAGE, PAGE, WRITE)).status())
            .isEqualTo(WcStatus.SUCCESS);
        assertThat(((SimMr)mr).boundWindows()).isEqualTo(2);
        final int lkey = mr.lkey();
        final Footprint before = k.footprintB();

        assertErrno(verbsFailure(mr::close), "ibv_dereg_mr", Errno.EINVAL);

        assertThat(mr.isClosed()).isFalse();
        assertThat(mr.lkey()).isEqualTo(lkey);
        assertThat(k.footprintB()).isEqualTo(before);
        assertThat(k.write(k.rig.qpA, mr.addr() + PAGE, two.rkey(), 8, 1)).isEqualTo(WcStatus.SUCCESS);
        k.assertWriteLands(mr.addr(), rkey1, 8);

        one.close();
        assertThat(((SimMr)mr).boundWindows()).isEqualTo(1);
        assertErrno(verbsFailure(mr::close), "ibv_dereg_mr", Errno.EINVAL);
        two.close();
        assertThat(((SimMr)mr).boundWindows()).isZero();
        final long pinned = k.deviceB().counter(SimCounter.PINNED_BYTES);

        mr.close();

        assertThat(mr.isClosed()).isTrue();
        assertThat(k.deviceB().counter(SimCounter.PINNED_BYTES)).isEqualTo(pinned - 2 * PAGE);
        assertThat(k.deviceB().tables().windowCount()).isZero();
        k.assertWriteRefused(mr.addr(), rkey1, 8);
    }

    @Test
    void onMlx5DeregOfAnMrWithBoundWindowsSucceedsAndTheWindowsStopTranslating()
    {
        // mlx5_ib_dereg_mr counts no windows: the MR goes, and its windows' indirect mkeys name a destroyed mkey.
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 2);
        final MemoryWindow one = k.rig.pdB.allocMw(MwType.TYPE_1);
        final MemoryWindow two = k.rig.pdB.allocMw(MwType.TYPE_2);
        final int rkey1 = k.bind1(k.rig.qpB, one, new MwBindInfo(mr, mr.addr(), PAGE, WRITE));
        assertThat(k.bind2(k.rig.qpB, two, new MwBindInfo(mr, mr.addr() + PAGE, PAGE, WRITE)).status())
            .isEqualTo(WcStatus.SUCCESS);
        final long pinned = k.deviceB().counter(SimCounter.PINNED_BYTES);

        mr.close();

        assertThat(mr.isClosed()).isTrue();
        assertThat(k.deviceB().counter(SimCounter.PINNED_BYTES)).isEqualTo(pinned - 2 * PAGE);
        assertThat(((SimMw)one).isBound()).isFalse();
        assertThat(((SimMw)two).isBound()).isFalse();
        assertThat(one.isClosed()).as("the windows stay allocated").isFalse();
        k.assertWriteRefused(mr.addr(), rkey1, 8);
        k.assertWriteRefused(mr.addr() + PAGE, two.rkey(), 8);
        one.close();
        two.close();
        assertThat(k.deviceB().tables().windowCount()).isZero();
    }

    @Test
    void deallocOfAWindowRefusesItsKey()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 2);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);
        final int rkey = k.bind1(k.rig.qpB, mw, new MwBindInfo(mr, mr.addr(), PAGE, WRITE));
        final int windows = k.deviceB().tables().windowCount();

        mw.close();
        mw.close();

        assertThat(mw.isClosed()).isTrue();
        assertThat(k.deviceB().tables().windowCount()).isEqualTo(windows - 1);
        assertThat(((SimPd)k.rig.pdB).memoryWindows()).isEmpty();
        k.assertWriteRefused(mr.addr(), rkey, 8);
    }

    // ------------------------------------------------------------------ counters and trace

    @Test
    void everyBindAndInvalidationCountsAndShowsAnInvalidateSpan()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindableMr(k, 2);
        final MemoryWindow one = k.rig.pdB.allocMw(MwType.TYPE_1);
        final MemoryWindow two = k.rig.pdB.allocMw(MwType.TYPE_2);
        final long binds = k.deviceB().counter(SimCounter.MW_BINDS);
        final long invalidations = k.deviceB().counter(SimCounter.KEY_INVALIDATIONS);
        final int from = k.trace.size();

        k.bind1(k.rig.qpB, one, new MwBindInfo(mr, mr.addr(), PAGE, WRITE));
        k.bind1(k.rig.qpB, one, new MwBindInfo(mr, mr.addr(), 2 * PAGE, WRITE));
        k.bind1(k.rig.qpB, one, MwBindInfo.unbind());
        assertThat(k.bind2(k.rig.qpB, two, new MwBindInfo(mr, mr.addr(), PAGE, READ)).status())
            .isEqualTo(WcStatus.SUCCESS);
        assertThat(k.post(k.rig.qpB, SendWr.localInv(k.nextWrId(), two.rkey())).status())
            .isEqualTo(WcStatus.SUCCESS);
        one.close();

        assertThat(k.deviceB().counter(SimCounter.MW_BINDS)).isEqualTo(binds + 4);
        assertThat(k.deviceB().counter(SimCounter.KEY_INVALIDATIONS)).isEqualTo(invalidations + 6);
        assertThat(k.invalidateCauses(from)).containsExactly("bind_mw", "bind_mw", "bind_mw", "bind_mw",
            "invalidate_mw", "dealloc_mw");
        assertThat(k.trace.subList(from, k.trace.size())).filteredOn(e -> e.name().equals("invalidate"))
            .allSatisfy(e ->
            {
                assertThat(e.category()).isEqualTo("invalidation");
                assertThat(e.device()).isEqualTo(k.deviceB().name());
                assertThat(e.durationNs()).isEqualTo(k.rig.fabric.costModel().invalidationStallNs());
            });
    }
}
