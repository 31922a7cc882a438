package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.KeyRig.PAGE;
import static dev.rnicsim.simnic.KeyRig.SIGNALED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.rnicsim.simnic.KeyRig.Footprint;
import dev.rnicsim.simnic.KeyRig.Pair;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.WcStatus;
import java.util.EnumSet;
import java.util.Set;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The rules of ibv_rereg_mr, one example each: the library's input checks (IBV_REREG_MR_ERR_INPUT with EINVAL), the
 * kernel's (IBV_REREG_MR_ERR_CMD with EINVAL or EOPNOTSUPP), which keys survive on which provider, and what each
 * change does to remote access: a new translation reaches the new buffer and unpins the old one, removed rights are
 * refused, a new PD refuses QPs of the old one. Every refused call is checked to change nothing.
 */
class ReregRulesTest
{
    private static final Set<ReregFlag> ACCESS = EnumSet.of(ReregFlag.CHANGE_ACCESS);
    private static final Set<ReregFlag> PD = EnumSet.of(ReregFlag.CHANGE_PD);
    private static final Set<ReregFlag> TRANSLATION = EnumSet.of(ReregFlag.CHANGE_TRANSLATION);
    private static final Set<Access> NONE = Set.of();

    /** What an MR looks like to the application. */
    private record Look(ProtectionDomain pd, long addr, long lengthBytes, long iova, int lkey, int rkey,
                        Set<Access> access, boolean closed)
    {
        static Look of(final MemoryRegion mr)
        {
            return new Look(mr.pd(), mr.addr(), mr.lengthBytes(), mr.iova(), mr.lkey(), mr.rkey(), mr.access(),
                mr.isClosed());
        }
    }

    private static ReregException reregFailure(final ThrowingCallable call)
    {
        final Throwable t = catchThrowable(call);
        assertThat(t).as("ibv_rereg_mr throws a ReregException").isInstanceOf(ReregException.class);
        return (ReregException)t;
    }

    /** Runs a rereg that must fail with {@code reregError} and {@code errno}, and checks that nothing changed. */
    private static void assertRefused(final KeyRig k, final MemoryRegion mr, final int reregError,
        final Errno errno, final ThrowingCallable call)
    {
        final Look look = Look.of(mr);
        final Footprint before = k.footprintB();

        final ReregException e = reregFailure(call);

        assertThat(e.verb()).isEqualTo("ibv_rereg_mr");
        assertThat(e.reregError()).as(e.getMessage()).isEqualTo(reregError);
        assertThat(e.errnoName()).as(e.getMessage()).isEqualTo(errno);
        assertThat(e.errno()).isEqualTo(errno.code());
        assertThat(Look.of(mr)).isEqualTo(look);
        assertThat(k.footprintB()).isEqualTo(before);
    }

    /** A two-page MR on b with every right, its bytes pattern 11. */
    private static MemoryRegion remoteMr(final KeyRig k)
    {
        final long buf = k.rig.bufferB(2 * PAGE);
        k.rig.processB().write(buf, RuleRig.pattern((int)(2 * PAGE), 11));
        return k.rig.pdB.regMr(buf, 2 * PAGE, RuleRig.REMOTE_ALL);
    }

    // ------------------------------------------------------------------ IBV_REREG_MR_ERR_INPUT

    @Test
    void changeTranslationWithAddressOrLengthZeroIsAnInputError()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = remoteMr(k);
        final long other = k.rig.bufferB(PAGE);

        assertRefused(k, mr, ReregException.ERR_INPUT, Errno.EINVAL, () -> mr.rereg(TRANSLATION, null, 0, PAGE, NONE));
        assertRefused(k, mr, ReregException.ERR_INPUT, Errno.EINVAL, () -> mr.rereg(TRANSLATION, null, other, 0,
            NONE));

        k.assertWriteLands(mr.addr(), mr.rkey(), 16);
    }

    @Test
    void accessWithoutChangeAccessIsAnInputError()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = remoteMr(k);
        final ProtectionDomain other = k.rig.ctxB.allocPd();

        assertRefused(k, mr, ReregException.ERR_INPUT, Errno.EINVAL, () -> mr.rereg(PD, other, 0, 0,
            EnumSet.of(Access.LOCAL_WRITE)));
        assertThat(mr.pd()).isSameAs(k.rig.pdB);
    }

    @Test
    void reregOfADeregisteredMrIsAnInputError()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = remoteMr(k);
        mr.close();

        assertRefused(k, mr, ReregException.ERR_INPUT, Errno.EINVAL, () -> mr.rereg(ACCESS, null, 0, 0,
            RuleRig.LOCAL));
        assertThat(mr.isClosed()).isTrue();
    }

    // ------------------------------------------------------------------ IBV_REREG_MR_ERR_CMD

    @Test
    void emptyFlagsAreACommandError()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = remoteMr(k);

        assertRefused(k, mr, ReregException.ERR_CMD, Errno.EINVAL, () -> mr.rereg(EnumSet.noneOf(ReregFlag.class),
            null, 0, 0, NONE));
    }

    @Test
    void remoteWriteWithoutLocalWriteIsACommandError()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = remoteMr(k);

        assertRefused(k, mr, ReregException.ERR_CMD, Errno.EINVAL, () -> mr.rereg(ACCESS, null, 0, 0,
            EnumSet.of(Access.REMOTE_WRITE)));
        assertRefused(k, mr, ReregException.ERR_CMD, Errno.EINVAL, () -> mr.rereg(ACCESS, null, 0, 0,
            EnumSet.of(Access.REMOTE_READ, Access.REMOTE_ATOMIC)));

        k.assertWriteLands(mr.addr(), mr.rkey(), 16);
    }

    @Test
    void anMrWithBoundWindowsCannotBeReregistered()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(2 * PAGE);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, 2 * PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.MW_BIND,
            Access.REMOTE_READ));
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);
        final int rkey = k.bind1(k.rig.qpB, mw, new MwBindInfo(mr, buf, PAGE, EnumSet.of(Access.REMOTE_WRITE)));
        final long other = k.rig.bufferB(PAGE);
        final ProtectionDomain otherPd = k.rig.ctxB.allocPd();

        assertRefused(k, mr, ReregException.ERR_CMD, Errno.EINVAL, () -> mr.rereg(ACCESS, null, 0, 0,
            EnumSet.of(Access.LOCAL_WRITE, Access.MW_BIND)));
        assertRefused(k, mr, ReregException.ERR_CMD, Errno.EINVAL, () -> mr.rereg(PD, otherPd, 0, 0, NONE));
        assertRefused(k, mr, ReregException.ERR_CMD, Errno.EINVAL, () -> mr.rereg(TRANSLATION, null, other, PAGE,
            NONE));

        k.assertWriteLands(buf, rkey, 16);
        k.bind1(k.rig.qpB, mw, MwBindInfo.unbind());
        mr.rereg(ACCESS, null, 0, 0, EnumSet.of(Access.LOCAL_WRITE, Access.MW_BIND));
        assertThat(mr.access()).containsExactlyInAnyOrder(Access.LOCAL_WRITE, Access.MW_BIND);
    }

    @Test
    void aBadPdIsACommandError()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = remoteMr(k);
        final ProtectionDomain closed = k.rig.ctxB.allocPd();
        closed.close();

        assertRefused(k, mr, ReregException.ERR_CMD, Errno.EINVAL, () -> mr.rereg(PD, null, 0, 0, NONE));
        assertRefused(k, mr, ReregException.ERR_CMD, Errno.EINVAL, () -> mr.rereg(PD, closed, 0, 0, NONE));
        // A PD of another context (another device, even).
        assertRefused(k, mr, ReregException.ERR_CMD, Errno.EINVAL, () -> mr.rereg(PD, k.rig.pdA, 0, 0, NONE));
        assertRefused(k, mr, ReregException.ERR_CMD, Errno.EINVAL, () -> mr.rereg(PD,
            k.rig.deviceB.open().allocPd(), 0, 0, NONE));

        k.assertWriteLands(mr.addr(), mr.rkey(), 16);
    }

    @ParameterizedTest
    @ValueSource(strings = {"rxe", "rxe-legacy", "bnxt_re", "siw", "e810", "e810-iwarp", "qedr", "erdma", "cxgb4",
        "hfi1"})
    void aProviderWithoutReregMrAnswersEopnotsuppAndChangesNothing(final String profile)
    {
        // rdma-core 44's librxe, libbnxt_re, libsiw, libirdma, libqedr, liberdma, libcxgb4 and libhfi1verbs set no
        // rereg_mr: libibverbs' stand-in answers EOPNOTSUPP with IBV_REREG_MR_ERR_INPUT for every change, after
        // libibverbs' own input checks.
        final KeyRig k = KeyRig.of(DeviceProfiles.byName(profile));
        final MemoryRegion mr = remoteMr(k);
        final long other = k.rig.bufferB(PAGE);

        assertRefused(k, mr, ReregException.ERR_INPUT, Errno.EOPNOTSUPP, () -> mr.rereg(ACCESS, null, 0, 0,
            RuleRig.LOCAL));
        assertRefused(k, mr, ReregException.ERR_INPUT, Errno.EOPNOTSUPP, () -> mr.rereg(PD, k.rig.ctxB.allocPd(), 0,
            0, NONE));
        assertRefused(k, mr, ReregException.ERR_INPUT, Errno.EOPNOTSUPP, () -> mr.rereg(TRANSLATION, null, other,
            PAGE, NONE));
        // libibverbs' input checks come first: a translation without an address is EINVAL all the same.
        assertRefused(k, mr, ReregException.ERR_INPUT, Errno.EINVAL, () -> mr.rereg(TRANSLATION, null, 0, PAGE,
            NONE));

        k.assertWriteLands(mr.addr(), mr.rkey(), 16);
    }

    @Test
    void onlyTheProvidersWithReregMrInRdmaCore44TakeIt()
    {
        // rdma-core 44: only libmlx4, libmlx5 and libhns import ibv_cmd_rereg_mr (mlx4_rereg_mr, mlx5_rereg_mr,
        // hns_roce_u_rereg_mr); every other provider of a built-in profile leaves verbs_context_ops.rereg_mr unset.
        final Set<String> withRereg = Set.of("mlx4", "mlx5", "hns");
        for (final DeviceProfile p : DeviceProfiles.builtIn().values())
        {
            if (p.driver().equals(DeviceProfiles.GENERIC))
            {
                continue; // a device no rule recognises: its provider is unknown
            }
            assertThat(p.follows(ProviderRule.REREG_MR_UNSUPPORTED)).as("%s (%s)", p.name(), p.driver())
                .isEqualTo(!withRereg.contains(p.driver()));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"efa", "mana"})
    void aProviderWithoutReregMrRefusesItOnDevicesWithoutRcToo(final String profile)
    {
        // libefa and libmana (rdma-core 44) have no rereg_mr either; these devices take no RC QP, so the MR is
        // checked without traffic.
        final DeviceProfile p = DeviceProfiles.byName(profile);
        final RuleRig rig = RuleRig.unconnected(p);
        final long buf = rig.bufferB(2 * PAGE);
        final MemoryRegion mr = rig.pdB.regMr(buf, 2 * PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
        final int lkey = mr.lkey();

        final ReregException e = reregFailure(() -> mr.rereg(ACCESS, null, 0, 0, RuleRig.LOCAL));

        assertThat(e.reregError()).isEqualTo(ReregException.ERR_INPUT);
        assertThat(e.errnoName()).isEqualTo(Errno.EOPNOTSUPP);
        assertThat(e.getMessage()).contains(p.driver() + "'s provider has no rereg_mr");
        assertThat(mr.lkey()).isEqualTo(lkey);
        assertThat(mr.access()).containsExactlyInAnyOrder(Access.LOCAL_WRITE, Access.REMOTE_READ);
    }

    /** rxe's kernel driver behind a provider that passes ibv_rereg_mr on (rdma-core 44's librxe does not). */
    private static DeviceProfile rxeKernel()
    {
        final Set<ProviderRule> rules = EnumSet.copyOf(DeviceProfiles.rxe().providerRules());
        rules.remove(ProviderRule.REREG_MR_UNSUPPORTED);
        return DeviceProfiles.rxe().withProviderRules(rules);
    }

    @Test
    void rxeCannotChangeTheTranslation()
    {
        final KeyRig k = KeyRig.of(rxeKernel());
        final MemoryRegion mr = remoteMr(k);
        final long other = k.rig.bufferB(PAGE);

        assertRefused(k, mr, ReregException.ERR_CMD, Errno.EOPNOTSUPP, () -> mr.rereg(TRANSLATION, null, other, PAGE,
            NONE));
        assertRefused(k, mr, ReregException.ERR_CMD, Errno.EOPNOTSUPP, () -> mr.rereg(EnumSet.of(
            ReregFlag.CHANGE_TRANSLATION, ReregFlag.CHANGE_ACCESS), null, other, PAGE, RuleRig.REMOTE_ALL));

        k.assertWriteLands(mr.addr(), mr.rkey(), 16);
        // rxe does change the access.
        mr.rereg(ACCESS, null, 0, 0, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
        assertThat(mr.access()).containsExactlyInAnyOrder(Access.LOCAL_WRITE, Access.REMOTE_READ);
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx3", "connectx5"})
    void aNewTranslationOverUnmappedMemoryIsEfaultAndChangesNothing(final String profile)
    {
        final KeyRig k = KeyRig.of(DeviceProfiles.byName(profile));
        final MemoryRegion mr = remoteMr(k);
        final long gone = k.rig.bufferB(2 * PAGE);
        k.rig.ctxB.memory().free(gone, 2 * PAGE);

        assertRefused(k, mr, ReregException.ERR_CMD, Errno.EFAULT, () -> mr.rereg(TRANSLATION, null, gone, 2 * PAGE,
            NONE));

        k.assertWriteLands(mr.addr(), mr.rkey(), 16);
    }

    @Test
    void aNewTranslationThatDoesNotFitTheMttIsEnomemAndChangesNothing()
    {
        for (final DeviceProfile p : java.util.List.of(
            DeviceProfiles.connectx3().withMtt(dev.rnicsim.mtt.MttConfig.buddy(2, 3)),
            DeviceProfiles.connectx5().withMtt(dev.rnicsim.mtt.MttConfig.exact(32))))
        {
            final KeyRig k = KeyRig.of(p);
            final MemoryRegion mr = remoteMr(k);
            final long big = k.rig.bufferB(64 * PAGE);

            assertRefused(k, mr, ReregException.ERR_CMD, Errno.ENOMEM, () -> mr.rereg(TRANSLATION, null, big,
                64 * PAGE, NONE));

            k.assertWriteLands(mr.addr(), mr.rkey(), 16);
        }
    }

    // ------------------------------------------------------------------ keys

    @ParameterizedTest
    @ValueSource(strings = {"connectx3", "connectx5", "connectx7", "rxe", "hns"})
    void pdAndAccessChangesKeepTheKeys(final String profile)
    {
        final KeyRig k = KeyRig.of(profile.equals("rxe") ? rxeKernel() : DeviceProfiles.byName(profile));
        final MemoryRegion mr = remoteMr(k);
        final int lkey = mr.lkey();
        final int rkey = mr.rkey();
        assertThat(rkey).isNotZero();
        final ProtectionDomain other = k.rig.ctxB.allocPd();
        final long rereg = k.deviceB().counter(SimCounter.MR_REREGISTRATIONS);

        mr.rereg(ACCESS, null, 0, 0, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
        assertThat(mr.lkey()).isEqualTo(lkey);
        assertThat(mr.rkey()).isEqualTo(rkey);
        assertThat(mr.access()).containsExactlyInAnyOrder(Access.LOCAL_WRITE, Access.REMOTE_READ);

        mr.rereg(PD, other, 0, 0, NONE);
        assertThat(mr.pd()).isSameAs(other);
        assertThat(mr.lkey()).isEqualTo(lkey);
        assertThat(mr.rkey()).isEqualTo(rkey);

        mr.rereg(EnumSet.of(ReregFlag.CHANGE_PD, ReregFlag.CHANGE_ACCESS), k.rig.pdB, 0, 0, RuleRig.REMOTE_ALL);
        assertThat(mr.pd()).isSameAs(k.rig.pdB);
        assertThat(mr.lkey()).isEqualTo(lkey);
        assertThat(mr.rkey()).isEqualTo(rkey);
        assertThat(mr.addr()).isEqualTo(mr.iova());
        assertThat(k.deviceB().counter(SimCounter.MR_REREGISTRATIONS)).isEqualTo(rereg + 3);
        assertThat(((SimPd)k.rig.pdB).memoryRegions()).contains((SimMr)mr);
        assertThat(((SimPd)other).memoryRegions()).doesNotContain((SimMr)mr);
        k.assertWriteLands(mr.addr() + PAGE, rkey, 32);
    }

    @Test
    void rxeIssuesRkeyZeroOnceTheRemoteRightsAreGone()
    {
        final KeyRig k = KeyRig.of(rxeKernel());
        final MemoryRegion mr = remoteMr(k);
        final int lkey = mr.lkey();

        mr.rereg(ACCESS, null, 0, 0, RuleRig.LOCAL);

        assertThat(mr.lkey()).isEqualTo(lkey);
        assertThat(mr.rkey()).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx3", "hns"})
    void aNewTranslationKeepsTheKeysOnMlx4AndHns(final String profile)
    {
        final KeyRig k = KeyRig.of(DeviceProfiles.byName(profile));
        final MemoryRegion mr = remoteMr(k);
        final int lkey = mr.lkey();
        final int rkey = mr.rkey();
        final long other = k.rig.bufferB(3 * PAGE);

        mr.rereg(TRANSLATION, null, other, 3 * PAGE, NONE);

        assertThat(mr.lkey()).isEqualTo(lkey);
        assertThat(mr.rkey()).isEqualTo(rkey);
        assertThat(mr.addr()).isEqualTo(other);
        assertThat(mr.iova()).isEqualTo(other);
        assertThat(mr.lengthBytes()).isEqualTo(3 * PAGE);
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx5", "connectx7"})
    void aNewTranslationIssuesNewKeysOnMlx5(final String profile)
    {
        final KeyRig k = KeyRig.of(DeviceProfiles.byName(profile));
        final MemoryRegion mr = remoteMr(k);
        final int lkey = mr.lkey();
        final int rkey = mr.rkey();
        final long oldAddr = mr.addr();
        final long other = k.rig.bufferB(3 * PAGE);

        mr.rereg(TRANSLATION, null, other, 3 * PAGE, NONE);

        assertThat(mr.lkey()).isNotEqualTo(lkey);
        assertThat(mr.rkey()).isNotEqualTo(rkey);
        assertThat(mr.rkey()).isEqualTo(mr.lkey());
        assertThat(mr.addr()).isEqualTo(other);
        k.assertWriteRefused(other, rkey, 16);
        k.assertWriteRefused(oldAddr, rkey, 16);
        k.assertWriteLands(other, mr.rkey(), 16);
    }

    // ------------------------------------------------------------------ what the changes do

    @ParameterizedTest
    @ValueSource(strings = {"connectx3", "connectx5"})
    void aNewTranslationReachesTheNewBytesAndUnpinsTheOldPages(final String profile)
    {
        final KeyRig k = KeyRig.of(DeviceProfiles.byName(profile));
        final MemoryRegion mr = remoteMr(k);
        final long oldAddr = mr.addr();
        final long other = k.rig.bufferB(3 * PAGE);
        k.rig.processB().write(other, RuleRig.pattern((int)(3 * PAGE), 44));
        final long vmPin = k.rig.processB().pinnedVmPages();
        final long pinnedBytes = k.deviceB().counter(SimCounter.PINNED_BYTES);
        final long mrLive = k.deviceB().counter(SimCounter.MR_LIVE);
        final long invalidations = k.deviceB().counter(SimCounter.KEY_INVALIDATIONS);
        final int from = k.trace.size();

        mr.rereg(TRANSLATION, null, other, 3 * PAGE, NONE);

        assertThat(k.rig.processB().pinnedVmPages()).as("VmPin: 2 old pages unpinned, 3 new pinned")
            .isEqualTo(vmPin - 2 + 3);
        assertThat(k.deviceB().counter(SimCounter.PINNED_BYTES)).isEqualTo(pinnedBytes + PAGE);
        assertThat(k.deviceB().counter(SimCounter.MR_LIVE)).isEqualTo(mrLive);
        assertThat(k.deviceB().counter(SimCounter.KEY_INVALIDATIONS)).isEqualTo(invalidations + 1);
        assertThat(k.invalidateCauses(from)).containsExactly("rereg_mr");
        assertThat(k.trace.subList(from, k.trace.size())).extracting(TraceEvent::name).contains("rereg_mr");

        assertThat(k.read(k.pair().a(), other + 2 * PAGE + 100, mr.rkey(), 64)).isEqualTo(WcStatus.SUCCESS);
        assertThat(k.scratchBytes(64)).isEqualTo(java.util.Arrays.copyOfRange(RuleRig.pattern((int)(3 * PAGE), 44),
            (int)(2 * PAGE + 100), (int)(2 * PAGE + 164)));
        k.assertWriteLands(other + PAGE, mr.rkey(), 32);
        k.assertWriteRefused(oldAddr, mr.rkey(), 32);
        assertThat(k.rig.processB().read(oldAddr, (int)(2 * PAGE))).as("the old buffer is untouched")
            .isEqualTo(RuleRig.pattern((int)(2 * PAGE), 11));

        final long vmPinNow = k.rig.processB().pinnedVmPages();
        mr.close();
        assertThat(k.rig.processB().pinnedVmPages()).as("deregistration unpins the 3 new pages")
            .isEqualTo(vmPinNow - 3);
    }

    @Test
    void removingRemoteWriteRefusesWritesButNotReads()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = remoteMr(k);
        k.assertWriteLands(mr.addr(), mr.rkey(), 16);

        mr.rereg(ACCESS, null, 0, 0, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));

        k.assertWriteRefused(mr.addr(), mr.rkey(), 16);
        assertThat(k.read(k.pair().a(), mr.addr() + PAGE, mr.rkey(), 16)).isEqualTo(WcStatus.SUCCESS);
        assertThat(k.scratchBytes(16)).isEqualTo(java.util.Arrays.copyOfRange(
            RuleRig.pattern((int)(2 * PAGE), 11), (int)PAGE, (int)PAGE + 16));
    }

    @Test
    void aNewPdRefusesQpsOfTheOldPdAndAnswersQpsOfTheNewOne()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = remoteMr(k);
        final ProtectionDomain other = k.rig.ctxB.allocPd();
        final Pair oldPd = k.pair();
        final Pair newPd = k.pair(k.rig.pdA, other);
        final long invalidations = k.deviceB().counter(SimCounter.KEY_INVALIDATIONS);

        mr.rereg(PD, other, 0, 0, NONE);

        assertThat(k.deviceB().counter(SimCounter.KEY_INVALIDATIONS)).isEqualTo(invalidations + 1);
        assertThat(k.write(newPd.a(), mr.addr(), mr.rkey(), 16, 8)).isEqualTo(WcStatus.SUCCESS);
        assertThat(k.rig.processB().read(mr.addr(), 16)).isEqualTo(RuleRig.pattern(16, 8));
        assertThat(k.write(oldPd.a(), mr.addr(), mr.rkey(), 16, 9)).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(k.rig.processB().read(mr.addr(), 16)).isEqualTo(RuleRig.pattern(16, 8));
        // Closing the old PD leaves the MR alone; closing the new one deregisters it.
        k.rig.pdB.close();
        assertThat(mr.isClosed()).isFalse();
        other.close();
        assertThat(mr.isClosed()).isTrue();
    }

    @Test
    void aNewPdAppliesToWindowsBoundAfterwards()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(2 * PAGE);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, 2 * PAGE, KeyRig.bindable());
        final ProtectionDomain other = k.rig.ctxB.allocPd();
        final MemoryWindow oldMw = k.rig.pdB.allocMw(MwType.TYPE_1);

        mr.rereg(PD, other, 0, 0, NONE);

        final Throwable t = catchThrowable(() -> k.rig.qpB.bindMw(oldMw, 1, SIGNALED, new MwBindInfo(mr, buf, PAGE,
            EnumSet.of(Access.REMOTE_READ))));
        assertThat(t).isInstanceOf(dev.rnicsim.verbs.VerbsException.class);
        assertThat(((dev.rnicsim.verbs.VerbsException)t).errnoName()).isEqualTo(Errno.EPERM);
        final Pair p = k.pair(k.rig.pdA, other);
        final int rkey = k.bind1(p.b(), other.allocMw(MwType.TYPE_1), new MwBindInfo(mr, buf, PAGE,
            EnumSet.of(Access.REMOTE_WRITE)));
        assertThat(k.write(p.a(), buf, rkey, 16, 2)).isEqualTo(WcStatus.SUCCESS);
    }

    @Test
    void addingWriteAccessToAReadOnlyPinIsEpermOnMlx4AndARepinElsewhere()
    {
        for (final DeviceProfile profile : java.util.List.of(DeviceProfiles.connectx3(), DeviceProfiles.connectx5()))
        {
            final KeyRig k = KeyRig.of(profile);
            final long buf = k.rig.bufferB(2 * PAGE);
            final MemoryRegion mr = k.rig.pdB.regMr(buf, 2 * PAGE, EnumSet.of(Access.REMOTE_READ));
            final Set<Access> writable = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
            if (profile.driver().equals("mlx4"))
            {
                final Footprint before = k.footprintB();
                final Throwable t = catchThrowable(() -> mr.rereg(EnumSet.of(ReregFlag.CHANGE_ACCESS), null, 0, 0,
                    writable));
                assertThat(t).isInstanceOf(ReregException.class);
                assertThat(((ReregException)t).errnoName()).isEqualTo(Errno.EPERM);
                assertThat(((ReregException)t).reregError()).isEqualTo(ReregException.ERR_CMD);
                assertThat(k.footprintB()).isEqualTo(before);
                assertThat(k.write(k.pair().a(), buf, mr.rkey(), 16, 3)).isEqualTo(WcStatus.REM_ACCESS_ERR);
            }
            else
            {
                mr.rereg(EnumSet.of(ReregFlag.CHANGE_ACCESS), null, 0, 0, writable);
                assertThat(((SimMr)mr).pinned().write()).as("re-pinned for writing").isTrue();
                assertThat(k.write(k.pair().a(), buf, mr.rkey(), 16, 3)).isEqualTo(WcStatus.SUCCESS);
                assertThat(k.rig.processB().read(buf, 16)).isEqualTo(RuleRig.pattern(16, 3));
            }
        }
    }

    @Test
    void addingWriteAccessToReadOnlyMemoryFailsWithEfaultOnMlx5()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(2 * PAGE);
        k.rig.processB().touch(buf, 2 * PAGE, false);
        k.rig.processB().mprotect(buf, 2 * PAGE, EnumSet.of(dev.rnicsim.pagetable.Prot.READ));
        final MemoryRegion mr = k.rig.pdB.regMr(buf, 2 * PAGE, EnumSet.of(Access.REMOTE_READ));
        final Footprint before = k.footprintB();
        final Throwable t = catchThrowable(() -> mr.rereg(EnumSet.of(ReregFlag.CHANGE_ACCESS), null, 0, 0,
            EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE)));
        assertThat(t).isInstanceOf(ReregException.class);
        assertThat(((ReregException)t).errnoName()).isEqualTo(Errno.EFAULT);
        assertThat(k.footprintB()).isEqualTo(before);
        assertThat(k.write(k.pair().a(), buf, mr.rkey(), 16, 3)).isEqualTo(WcStatus.REM_ACCESS_ERR);
    }
}
