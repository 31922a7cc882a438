package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class OdpSmokeTest
{
    @Test
    void remoteWriteFaultsThenLands()
    {
        final RuleRig rig = RuleRig.connected();
        final long src = rig.bufferA(8192);
        rig.ctxA.memory().write(src, RuleRig.pattern(8192, 3));
        final MemoryRegion local = rig.pdA.regMr(src, 8192, RuleRig.LOCAL);
        final long dst = rig.bufferB(8192);
        final long pinnedBefore = rig.processB().pinnedVmPages();
        final MemoryRegion odp = rig.pdB.regMr(dst, 8192, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
            Access.ON_DEMAND));
        assertThat(rig.processB().pinnedVmPages()).isEqualTo(pinnedBefore);
        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(src, 8192, local.lkey())), dst, odp.rkey()));
        final List<WorkCompletion> wcs = rig.pollA();
        System.out.println(wcs + " " + rig.deviceB.counters());
        assertThat(wcs).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(rig.ctxB.memory().read(dst, 8192)).isEqualTo(RuleRig.pattern(8192, 3));
        rig.ctxB.memory().free(dst, 8192);
        System.out.println(rig.deviceB.counters());
    }
}
