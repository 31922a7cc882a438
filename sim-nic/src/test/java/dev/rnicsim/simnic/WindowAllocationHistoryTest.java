package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.KeyRig.PAGE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * {@code ibv_alloc_mw} is in the key history ({@link KeyHistory.What#ALLOCATED}): the window's MPT entry and its rkey
 * before any bind, with where the call came from, so that a diagnosis of a window's key names its allocation (the
 * rkey of ibv_alloc_mw grants nothing until a bind, ibv_alloc_mw(3)).
 */
class WindowAllocationHistoryTest
{
    private static WorkCompletion writeTo(final KeyRig k, final long remoteAddr, final int rkey)
    {
        k.rig.processA().write(k.scratch, RuleRig.pattern(8, 1));
        return k.post(k.pair().a(), SendWr.write(k.nextWrId(), RuleRig.sgl(RuleRig.sge(k.scratchMr, k.scratch, 8)),
            remoteAddr, rkey));
    }

    @Test
    void anAllocationIsAKeyEventWithItsOriginAndThePdOfTheWindow()
    {
        final KeyRig k = KeyRig.connectx5();
        k.rig.fabric.origin("app.c:30 (ibv_alloc_mw)");
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);
        k.rig.fabric.origin(null);

        final KeyHistory h = k.deviceB().keyHistory();
        final KeyHistory.Event e = h.lastOf(mw.rkey());

        assertThat(e.what()).isEqualTo(KeyHistory.What.ALLOCATED);
        assertThat(e.cause()).isEqualTo("ibv_alloc_mw");
        assertThat(e.describe()).isEqualTo("allocated at app.c:30 (ibv_alloc_mw)");
        assertThat(e.object()).startsWith("type 2 window of PD ").endsWith(", not bound");
        assertThat(h.firstOf(mw.rkey())).isSameAs(e);
    }

    @Test
    void aWindowNeverBoundNamesItsAllocation()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(PAGE);
        k.rig.fabric.origin("app.c:31 (ibv_alloc_mw)");
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);
        k.rig.fabric.origin(null);

        final WorkCompletion wc = writeTo(k, buf, mw.rkey());

        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.diagnosis().summary()).contains("names a type 2 window that was never bound")
            .contains("(this one allocated at app.c:31 (ibv_alloc_mw), and no bind followed)");
        assertThat(wc.diagnosis().details()).anyMatch(l -> l.startsWith("history of index ")
            && l.contains("allocated at app.c:31 (ibv_alloc_mw)"));
    }

    @Test
    void theRkeyFromBeforeTheBindNamesTheAllocationThatGaveIt()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(PAGE);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, PAGE, KeyRig.bindable());
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);
        final int allocated = mw.rkey();
        final int bound = SendWr.incRkey(allocated);
        final KeyRig.Pair p = k.pair();
        assertThat(k.post(p.b(), SendWr.bindMw(k.nextWrId(), mw, bound, new MwBindInfo(mr, buf, PAGE,
            EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE)))).status()).isEqualTo(WcStatus.SUCCESS);

        final WorkCompletion wc = writeTo(k, buf, allocated);

        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.diagnosis().summary()).contains("is not the key the window at its index is bound under")
            .contains("this key is the rkey the window had from ibv_alloc_mw (allocated by ibv_alloc_mw (key event #");
    }

    @Test
    void aDeallocatedWindowsKeyNamesItsAllocationAndItsDeallocation()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(PAGE);
        k.rig.fabric.origin("app.c:32 (ibv_alloc_mw)");
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);
        k.rig.fabric.origin("app.c:40 (ibv_dealloc_mw)");
        mw.close();
        k.rig.fabric.origin(null);

        final WorkCompletion wc = writeTo(k, buf, mw.rkey());

        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.diagnosis().summary()).contains("allocated at app.c:32 (ibv_alloc_mw), then invalidated at "
            + "app.c:40 (ibv_dealloc_mw)");
    }
}
