package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RuleRig.sge;
import static dev.rnicsim.simnic.RuleRig.sgl;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.mtt.VariantPolicy;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * A key that comes back under another registration while a message checked under its old one is in flight: the
 * later packets carry only the rkey, and the device resolves them through the key's current context (its MPT entry
 * and MTT entries now), never through the translation of the registration that is gone.
 */
class EngineStaleKeyTest
{
    private static final int MTU = SimQp.PATH_MTU_BYTES;
    private static final int N = 16 * MTU;

    @Test
    void laterPacketsOfAMessageLandWhereTheKeyTranslatesNowNotInAnotherMrsPages()
    {
        final DeviceProfile base = DeviceProfiles.connectx5();
        final DeviceProfile p = base.withAttributes(base.attributes().toBuilder().maxMr(3).build())
            .withVariantPolicy(VariantPolicy.GENERATION);
        final RuleRig rig = RuleRig.connected(p, RuleRig.ALL_REMOTE);
        final long src = rig.bufferA(N);
        final byte[] data = RuleRig.pattern(N, 9);
        rig.ctxA.memory().write(src, data);
        final MemoryRegion srcMr = rig.pdA.regMr(src, N, RuleRig.LOCAL);
        final long dst = rig.bufferB(N);
        final MemoryRegion first = rig.pdB.regMr(dst, N, RuleRig.REMOTE_ALL);
        final int rkey = first.rkey();
        rig.qpA.postSend(SendWr.write(1, sgl(sge(srcMr, src, N)), dst, rkey));
        rig.fabric.progress(4);

        first.close();
        // Another MR takes the MTT entries the first one had; the key comes back on a registration elsewhere.
        final long other = rig.bufferB(N);
        final MemoryRegion otherMr = rig.pdB.regMr(other, N, RuleRig.REMOTE_ALL);
        MemoryRegion again = null;
        for (int i = 0; i < 2048 && again == null; i++)
        {
            final MemoryRegion mr = rig.pdB.regMr(dst, N, RuleRig.REMOTE_ALL);
            if (mr.rkey() == rkey)
            {
                again = mr;
            }
            else
            {
                mr.close();
            }
        }
        assertThat(again).as("the key came back").isNotNull();

        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(Arrays.equals(rig.ctxB.memory().read(other, N), new byte[N])).as("no byte in the other MR")
            .isTrue();
        assertThat(Arrays.equals(rig.ctxB.memory().read(dst, N), data)).as("the key's current pages").isTrue();
        assertThat(otherMr.rkey()).isNotEqualTo(rkey);
    }
}
