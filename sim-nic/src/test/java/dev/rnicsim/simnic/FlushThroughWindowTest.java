package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.FlushPlacement;
import dev.rnicsim.verbs.FlushSelectivity;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A FLUSH whose rkey names a memory window (rxe_resp.c {@code check_rkey}: {@code rxe_lookup_mw} with the placement
 * type's access, then the range against the window's MR).
 */
class FlushThroughWindowTest
{
    private static final long PAGE = 4096;
    private static final Set<Access> QP_RIGHTS = EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ,
        Access.REMOTE_ATOMIC, Access.FLUSH_GLOBAL, Access.FLUSH_PERSISTENT);

    private static WcStatus flushThrough(final Set<Access> windowAccess)
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.rxe(), QP_RIGHTS);
        final long dst = rig.bufferB(PAGE);
        final MemoryRegion mr = rig.pdB.regMr(dst, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
            Access.FLUSH_GLOBAL, Access.MW_BIND));
        final MemoryWindow mw = rig.pdB.allocMw(MwType.TYPE_2);
        rig.qpB.postSend(SendWr.bindMw(1, mw, SendWr.incRkey(mw.rkey()), new MwBindInfo(mr, dst, PAGE,
            windowAccess)));
        assertThat(rig.pollB()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        rig.qpA.postSend(SendWr.flush(2, dst, mw.rkey(), 64, FlushPlacement.GLOBAL, FlushSelectivity.RANGE));
        final List<WorkCompletion> wcs = rig.pollA();
        assertThat(wcs).hasSize(1);
        if (wcs.get(0).status() != WcStatus.SUCCESS)
        {
            assertThat(rig.qpB.state()).isEqualTo(QpState.ERR);
        }
        return wcs.get(0).status();
    }

    @Test
    void shouldFlushThroughAWindowThatGrantsFlushGlobal()
    {
        assertThat(flushThrough(EnumSet.of(Access.REMOTE_WRITE, Access.FLUSH_GLOBAL))).isEqualTo(WcStatus.SUCCESS);
    }

    @Test
    void shouldRefuseAFlushThroughAWindowWithoutTheFlushRight()
    {
        assertThat(flushThrough(EnumSet.of(Access.REMOTE_WRITE))).isEqualTo(WcStatus.REM_ACCESS_ERR);
    }
}
