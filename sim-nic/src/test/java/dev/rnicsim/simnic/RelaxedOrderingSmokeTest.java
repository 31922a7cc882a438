package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class RelaxedOrderingSmokeTest
{
    private static boolean torn(final DeviceProfile profile, final boolean flagRelaxed)
    {
        final RuleRig rig = RuleRig.connected(profile, RuleRig.ALL_REMOTE);
        final int n = 64 << 10;
        final long src = rig.bufferA(n + 4096);
        rig.ctxA.memory().write(src, RuleRig.pattern(n, 9));
        rig.ctxA.memory().writeLong(src + n, 1);
        final MemoryRegion local = rig.pdA.regMr(src, n + 4096, RuleRig.LOCAL);
        final long dst = rig.bufferB(n);
        final long flag = rig.bufferB(4096);
        final EnumSet<Access> ro = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.RELAXED_ORDERING);
        final MemoryRegion data = rig.pdB.regMr(dst, n, ro);
        final MemoryRegion flagMr = rig.pdB.regMr(flag, 4096, flagRelaxed ? ro
            : EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
        final FlagWatch w = rig.deviceB.watchFlag(rig.processB(), flag, 1, dst, n);
        rig.qpA.postSend(List.of(
            new SendWr(1, dev.rnicsim.verbs.WrOpcode.RDMA_WRITE, List.of(new Sge(src, n, local.lkey())), java.util.Set.of(), dst, data.rkey(), 0, 0, 0, 0),
            SendWr.write(2, List.of(new Sge(src + n, 8, local.lkey())), flag, flagMr.rkey())));
        rig.pollA();
        System.out.println(profile.name() + " flagRelaxed=" + flagRelaxed + " seen=" + w.flagSeen() + " torn=" + w.torn()
            + " reordered=" + rig.deviceB.writeOrdering().chunksReordered());
        assertThat(rig.ctxB.memory().read(dst, n)).isEqualTo(RuleRig.pattern(n, 9));
        return w.torn();
    }

    @Test
    void flags()
    {
        assertThat(torn(DeviceProfiles.connectx5(), false)).isFalse();
        torn(DeviceProfiles.connectx5(), true);
        torn(DeviceProfiles.connectx4ForcedRelaxedOrdering(), false);
        assertThat(torn(DeviceProfiles.connectx3(), true)).isFalse();
    }
}
