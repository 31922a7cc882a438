package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.KeyRig.PAGE;
import static dev.rnicsim.simnic.KeyRig.SIGNALED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.FastRegMr;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Who may invalidate a window or a fast-registration MR, which keys never come back, and the mlx5 bind checks at
 * post time.
 */
class WindowOwnershipTest
{
    private static final Set<Access> READ = EnumSet.of(Access.REMOTE_READ);

    private static MemoryRegion bindable(final KeyRig k, final int pages)
    {
        return k.rig.pdB.regMr(k.rig.bufferB(pages * PAGE), pages * PAGE, KeyRig.bindable());
    }

    @Test
    void onMlx5OnlyTheBoundQpInvalidatesATypeTwoWindow()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindable(k, 2);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);
        final QueuePair owner = k.pair().b();
        final int rkey = SendWr.incRkey(mw.rkey());
        assertThat(k.post(owner, SendWr.bindMw(1, mw, rkey, new MwBindInfo(mr, mr.addr(), PAGE, READ))).status())
            .isEqualTo(WcStatus.SUCCESS);
        final QueuePair other = k.pair().b();
        assertThat(k.post(other, SendWr.localInv(2, rkey)).status()).isEqualTo(WcStatus.LOC_QP_OP_ERR);
        assertThat(((SimMw)mw).isBound()).isTrue();
        assertThat(k.post(owner, SendWr.localInv(3, rkey)).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(((SimMw)mw).isBound()).isFalse();
    }

    @Test
    void withoutTheRuleAnyQpOfTheDeviceInvalidates()
    {
        final KeyRig k = KeyRig.of(DeviceProfiles.connectx5().withProviderRules(Set.of()));
        final MemoryRegion mr = bindable(k, 2);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);
        final int rkey = SendWr.incRkey(mw.rkey());
        k.post(k.pair().b(), SendWr.bindMw(1, mw, rkey, new MwBindInfo(mr, mr.addr(), PAGE, READ)));
        assertThat(k.post(k.pair().b(), SendWr.localInv(2, rkey)).status()).isEqualTo(WcStatus.SUCCESS);
    }

    @Test
    void aDeallocatedWindowsKeyIsNotHandedToTheNextMrUnderRecycledKeys()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindable(k, 2);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);
        final int rkey = k.bind1(k.pair().b(), mw, new MwBindInfo(mr, mr.addr(), PAGE, READ));
        mw.close();
        final Set<Integer> keys = new HashSet<>();
        for (int i = 0; i < 8; i++)
        {
            keys.add(bindable(k, 1).lkey());
        }
        assertThat(keys).doesNotContain(rkey);
    }

    @Test
    void aClosedFastRegMrsKeyIsNotHandedToTheNextMrUnderRecycledKeys()
    {
        final KeyRig k = KeyRig.connectx5();
        final FastRegMr fr = k.rig.pdB.allocMr(4);
        final long buf = k.rig.bufferB(PAGE);
        fr.mapSg(buf, PAGE);
        final int key = (fr.lkey() & 0xffffff00) | ((fr.lkey() + 0x40) & 0xff);
        assertThat(k.post(k.pair().b(), SendWr.regMr(1, fr, key, EnumSet.of(Access.LOCAL_WRITE))).status())
            .isEqualTo(WcStatus.SUCCESS);
        fr.close();
        final Set<Integer> keys = new HashSet<>();
        for (int i = 0; i < 8; i++)
        {
            keys.add(bindable(k, 1).lkey());
        }
        assertThat(keys).doesNotContain(key);
    }

    @Test
    void mlx5RefusesAWindowOverTwoGibAtPost()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindable(k, 1);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);
        final Throwable t = catchThrowable(() -> k.pair().b().postSend(SendWr.bindMw(1, mw, 0x11,
            new MwBindInfo(mr, mr.addr(), (1L << 31) + PAGE, READ))));
        assertThat(((VerbsException)t).errnoName()).isEqualTo(Errno.EOPNOTSUPP);
    }

    @Test
    void bindMwRefusesNullFlagsWithEinval()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = bindable(k, 1);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);
        final Set<SendFlag> flags = new HashSet<>();
        flags.add(null);
        final Throwable t = catchThrowable(() -> k.pair().b().bindMw(mw, 1, flags, new MwBindInfo(mr, mr.addr(),
            PAGE, READ)));
        assertThat(t).isInstanceOf(VerbsException.class);
        assertThat(((VerbsException)t).errnoName()).isEqualTo(Errno.EINVAL);
    }

    @Test
    void allocMrRefusesMoreThanTheFastRegPageListLimit()
    {
        final KeyRig k = KeyRig.connectx5();
        final long before = k.deviceB().counter(SimCounter.MTT_ENTRIES_IN_USE);
        final Throwable t = catchThrowable(() -> k.rig.pdB.allocMr(Integer.MAX_VALUE));
        assertThat(((VerbsException)t).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(k.deviceB().counter(SimCounter.MTT_ENTRIES_IN_USE)).isEqualTo(before);
    }

    @Test
    void mlx5KeepsTheKeyWhenTheNewTranslationFitsAndChangesItWhenItGrows()
    {
        final KeyRig k = KeyRig.connectx5();
        final long a = k.rig.bufferB(4 * PAGE);
        final MemoryRegion mr = k.rig.pdB.regMr(a, 2 * PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
        final int key = mr.lkey();
        final long b = k.rig.bufferB(2 * PAGE);
        mr.rereg(EnumSet.of(ReregFlag.CHANGE_TRANSLATION), null, b, 2 * PAGE, Set.of());
        assertThat(mr.lkey()).as("same page size, as many entries: UMR in place").isEqualTo(key);
        final long c = k.rig.bufferB(64 * PAGE);
        mr.rereg(EnumSet.of(ReregFlag.CHANGE_TRANSLATION), null, c + PAGE, 40 * PAGE, Set.of());
        assertThat(mr.lkey()).as("more entries than the mkey has: a new mkey").isNotEqualTo(key);
    }

    @Test
    void writableAccessOnAReadOnlyPinKeepsTheKeyOnMlx5()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(2 * PAGE);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, 2 * PAGE, EnumSet.of(Access.REMOTE_READ));
        final int key = mr.lkey();
        mr.rereg(EnumSet.of(ReregFlag.CHANGE_ACCESS), null, 0, 0, EnumSet.of(Access.LOCAL_WRITE,
            Access.REMOTE_WRITE));
        assertThat(mr.lkey()).isEqualTo(key);
        assertThat(k.write(k.pair().a(), buf, mr.rkey(), 16, 5)).isEqualTo(WcStatus.SUCCESS);
        assertThat(k.rig.processB().read(buf, 16)).isEqualTo(RuleRig.pattern(16, 5));
    }

    @Test
    void aNewWindowDoesNotTakeTheStaleKeyOfTheMrLastAtItsIndexUnderRecycledKeys()
    {
        final KeyRig k = KeyRig.connectx5();
        final Set<Integer> stale = new HashSet<>();
        for (int i = 0; i < 8; i++)
        {
            final MemoryRegion mr = bindable(k, 1);
            stale.add(mr.rkey());
            mr.close();
        }
        for (int i = 0; i < 8; i++)
        {
            assertThat(stale).doesNotContain(k.rig.pdB.allocMw(MwType.TYPE_2).rkey());
            assertThat(stale).doesNotContain(k.rig.pdB.allocMr(4).rkey());
        }
    }
}
