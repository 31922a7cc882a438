package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RuleRig.sge;
import static dev.rnicsim.simnic.RuleRig.sgl;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Strict mode's KEY_RETIRED_IN_FLIGHT: a key retired while a message using it is in flight is a race of the
 * program's own making, whatever the driver then does with it.
 */
class StrictInFlightTest
{
    private static final int MTU = SimQp.PATH_MTU_BYTES;
    private static final int N = 16 * MTU;

    /** A 64 KiB WRITE from a to b, posted and not yet moved, with strict mode watching both devices. */
    private record Write(RuleRig rig, MemoryRegion srcMr, MemoryRegion dstMr, StrictChecker strict)
    {
        static Write of(final DeviceProfile profile)
        {
            final RuleRig rig = RuleRig.connected(profile, RuleRig.ALL_REMOTE);
            final long src = rig.bufferA(N);
            final MemoryRegion srcMr = rig.pdA.regMr(src, N, RuleRig.LOCAL);
            final long dst = rig.bufferB(N);
            final MemoryRegion dstMr = rig.pdB.regMr(dst, N, RuleRig.REMOTE_ALL);
            final StrictChecker strict = new StrictChecker(false).attach(rig.deviceA).attach(rig.deviceB);
            rig.qpA.postSend(SendWr.write(5, sgl(sge(srcMr, src, N)), dst, dstMr.rkey()));
            return new Write(rig, srcMr, dstMr, strict);
        }

        List<StrictWarning> inFlight()
        {
            return strict.warnings().stream().filter(w -> w.kind() == StrictWarning.Kind.KEY_RETIRED_IN_FLIGHT)
                .toList();
        }
    }

    @Test
    void aDeregOfTheTargetWhileTheWriteIsInFlightIsReportedOnEveryDriver()
    {
        for (final DeviceProfile p : List.of(DeviceProfiles.connectx5(), DeviceProfiles.rxe()))
        {
            final int mtu = PacketMtuTest.connectMtuBytes(p);
            final Write w = Write.of(p);
            w.rig().fabric.progress(3);

            w.dstMr().close();

            assertThat(w.inFlight()).as(p.name()).hasSize(1);
            final String message = w.inFlight().get(0).message();
            assertThat(message).as(p.name()).contains("ibv_dereg_mr retired rkey 0x"
                + Integer.toHexString(w.dstMr().rkey())).contains("RDMA_WRITE wr_id 5").contains("3 of " + N / mtu + " packets");
            assertThat(message).as(p.name()).contains(p.follows(ProviderRule.RESPONDER_HOLDS_KEY_REFERENCE)
                ? "the retirement waits until the message is done" : "NAKs its next packet");
            final List<WorkCompletion> wcs = w.rig().pollA();
            assertThat(wcs).as(p.name()).extracting(WorkCompletion::status).containsExactly(
                p.follows(ProviderRule.RESPONDER_HOLDS_KEY_REFERENCE) ? WcStatus.SUCCESS : WcStatus.REM_ACCESS_ERR);
        }
    }

    @Test
    void aDeregOfTheSourceWhileTheWriteIsInFlightNamesTheLkey()
    {
        final Write w = Write.of(DeviceProfiles.connectx5());
        w.rig().fabric.progress(2);

        w.srcMr().close();

        assertThat(w.inFlight()).hasSize(1);
        assertThat(w.inFlight().get(0).message()).contains("retired lkey 0x" + Integer.toHexString(w.srcMr().lkey()))
            .contains("local protection error");
    }

    @Test
    void aDeregAfterTheCompletionIsNotReported()
    {
        final Write w = Write.of(DeviceProfiles.connectx5());
        assertThat(w.rig().pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);

        w.dstMr().close();
        w.srcMr().close();

        assertThat(w.inFlight()).isEmpty();
    }

    @Test
    void theKindCanBeSwitchedOffLikeEveryOther()
    {
        final Write w = Write.of(DeviceProfiles.connectx5());
        w.strict().disable(StrictWarning.Kind.KEY_RETIRED_IN_FLIGHT);
        w.rig().fabric.progress(3);

        w.dstMr().close();

        assertThat(w.inFlight()).isEmpty();
    }
}
