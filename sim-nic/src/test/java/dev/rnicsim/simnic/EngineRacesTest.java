package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RuleRig.sge;
import static dev.rnicsim.simnic.RuleRig.sgl;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The NIC engine: posted work requests are in flight until the fabric moves their packets, and keys retired while a
 * message is in flight behave as the profile's driver does.
 */
class EngineRacesTest
{
    private static final int MIB = 1 << 20;
    private static final int MTU = SimQp.PATH_MTU_BYTES;
    private static final int GUARD = 4096;

    /** A 1 MiB WRITE from a to b, with a guard page of zeros before and after the target range. */
    private record Write(RuleRig rig, long dst, MemoryRegion srcMr, MemoryRegion dstMr, byte[] data)
    {
        static Write of(final DeviceProfile profile)
        {
            final RuleRig rig = RuleRig.connected(profile, RuleRig.ALL_REMOTE);
            final long src = rig.bufferA(MIB);
            final byte[] data = RuleRig.pattern(MIB, 3);
            rig.ctxA.memory().write(src, data);
            final MemoryRegion srcMr = rig.pdA.regMr(src, MIB, RuleRig.LOCAL);
            final long region = rig.bufferB(MIB + 2L * GUARD);
            final long dst = region + GUARD;
            final MemoryRegion dstMr = rig.pdB.regMr(dst, MIB, RuleRig.REMOTE_ALL);
            rig.qpA.postSend(SendWr.write(7, sgl(sge(srcMr, src, MIB)), dst, dstMr.rkey()));
            return new Write(rig, dst, srcMr, dstMr, data);
        }

        byte[] target()
        {
            return rig.ctxB.memory().read(dst, MIB);
        }

        boolean guardsUntouched()
        {
            return Arrays.equals(rig.ctxB.memory().read(dst - GUARD, GUARD), new byte[GUARD])
                && Arrays.equals(rig.ctxB.memory().read(dst + MIB, GUARD), new byte[GUARD]);
        }
    }

    @Test
    void postOnlyQueuesAndTheFabricMovesOnePacketOfThePathMtuPerStep()
    {
        final Write w = Write.of(DeviceProfiles.connectx5());

        assertThat(w.target()).as("nothing placed at post").isEqualTo(new byte[MIB]);
        assertThat(((SimCq)w.rig().cqA).depth()).isZero();

        assertThat(w.rig().fabric.progress(3)).isEqualTo(3);

        final InflightMessage m = ((SimQp)w.rig().qpA).inflight();
        assertThat(m.packetCount()).isEqualTo(MIB / MTU);
        assertThat(m.packetsPlaced()).isEqualTo(3);
        assertThat(w.rig().fabric.engine().inflight()).containsExactly(m);
        assertThat(Arrays.copyOf(w.target(), 3 * MTU)).isEqualTo(Arrays.copyOf(w.data(), 3 * MTU));
        assertThat(Arrays.copyOfRange(w.target(), 3 * MTU, MIB)).isEqualTo(new byte[MIB - 3 * MTU]);

        assertThat(statuses(w.rig().pollA())).as("polling drives the engine").containsExactly(WcStatus.SUCCESS);
        assertThat(w.target()).isEqualTo(w.data());
        assertThat(w.rig().fabric.progress(10)).as("nothing left").isZero();
    }

    @Test
    void onMlx5ADeregMidMessageDestroysTheKeyAndTheRestIsNakedWithPartialDataLeftPlaced()
    {
        final Write w = Write.of(DeviceProfiles.connectx5());
        w.rig().fabric.progress(5);

        w.dstMr().close();

        assertThat(((SimQp)w.rig().qpA).inflight()).as("dereg does not wait on mlx5").isNotNull();
        final List<WorkCompletion> wcs = w.rig().pollA();
        assertThat(statuses(wcs)).containsExactly(WcStatus.REM_ACCESS_ERR);
        assertThat(Arrays.copyOf(w.target(), 5 * MTU)).as("placed packets stay placed")
            .isEqualTo(Arrays.copyOf(w.data(), 5 * MTU));
        assertThat(Arrays.copyOfRange(w.target(), 5 * MTU, MIB)).as("no DMA after dereg returned")
            .isEqualTo(new byte[MIB - 5 * MTU]);
        assertThat(w.guardsUntouched()).isTrue();
        assertThat(w.rig().qpA.state()).isEqualTo(QpState.ERR);
        assertThat(w.rig().qpB.state()).as("a remote access error moves the responder to ERR too")
            .isEqualTo(QpState.ERR);
        assertThat(w.rig().deviceB.counter(SimCounter.RESP_REMOTE_ACCESS_ERRORS)).isEqualTo(1);
    }

    /**
     * Packets move without checking keys again while neither side's tables change; a change elsewhere (another MR
     * registered and deregistered on both hosts) brings the checks back, and the key retired after it fails the very
     * next packet.
     */
    @Test
    void onMlx5ADeregAfterOtherKeyChangesStillFailsTheNextPacket()
    {
        final Write w = Write.of(DeviceProfiles.connectx5());
        w.rig().fabric.progress(3);
        final long otherA = w.rig().bufferA(4096);
        final long otherB = w.rig().bufferB(4096);
        w.rig().pdA.regMr(otherA, 4096, RuleRig.LOCAL).close();
        final MemoryRegion otherMr = w.rig().pdB.regMr(otherB, 4096, RuleRig.REMOTE_ALL);
        w.rig().fabric.progress(4);
        otherMr.close();
        w.rig().fabric.progress(2);

        w.dstMr().close();

        assertThat(statuses(w.rig().pollA())).containsExactly(WcStatus.REM_ACCESS_ERR);
        assertThat(Arrays.copyOf(w.target(), 9 * MTU)).as("the packets before the dereg landed")
            .isEqualTo(Arrays.copyOf(w.data(), 9 * MTU));
        assertThat(Arrays.copyOfRange(w.target(), 9 * MTU, MIB)).as("no DMA after dereg returned")
            .isEqualTo(new byte[MIB - 9 * MTU]);
        assertThat(w.guardsUntouched()).isTrue();
    }

    @Test
    void onRxeTheDeregWaitsForTheMessageHoldingTheKey()
    {
        final Write w = Write.of(DeviceProfiles.rxe());
        w.rig().fabric.progress(5);

        w.dstMr().close();

        assertThat(((SimQp)w.rig().qpA).inflight()).as("the message ended before dereg returned").isNull();
        assertThat(w.target()).as("the whole message landed first").isEqualTo(w.data());
        assertThat(statuses(w.rig().pollA())).containsExactly(WcStatus.SUCCESS);
        assertThat(w.guardsUntouched()).isTrue();
    }

    @Test
    void aDeregOfTheRequestersSourceMidMessageFailsTheRestLocallyOnEveryProfile()
    {
        for (final DeviceProfile p : List.of(DeviceProfiles.connectx5(), DeviceProfiles.rxe()))
        {
            final Write w = Write.of(p);
            w.rig().fabric.progress(2);

            w.srcMr().close();

            assertThat(statuses(w.rig().pollA())).as(p.name()).containsExactly(
                p.follows(ProviderRule.LOCAL_KEY_ERRORS_AS_QP_OP_ERR) ? WcStatus.LOC_QP_OP_ERR : WcStatus.LOC_PROT_ERR);
            assertThat(Arrays.copyOfRange(w.target(), 2 * MTU, MIB)).as(p.name()).isEqualTo(new byte[MIB - 2 * MTU]);
        }
    }

    @Test
    void aFailedWorkRequestFlushesTheOnesBehindItInOrder()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final long src = rig.bufferA(64 * 1024);
        final MemoryRegion srcMr = rig.pdA.regMr(src, 64 * 1024, RuleRig.LOCAL);
        final long dst = rig.bufferB(64 * 1024);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, 64 * 1024, RuleRig.REMOTE_ALL);
        rig.qpA.postSend(SendWr.write(1, sgl(sge(srcMr, src, 32 * 1024)), dst, dstMr.rkey()));
        rig.qpA.postSend(SendWr.write(2, sgl(sge(srcMr, src, 8)), dst + 64 * 1024, dstMr.rkey()));
        rig.qpA.postSend(SendWr.write(3, sgl(sge(srcMr, src, 8)), dst, dstMr.rkey()));
        rig.qpA.postSend(SendWr.write(4, sgl(sge(srcMr, src, 8)), dst, dstMr.rkey()));

        final List<WorkCompletion> wcs = rig.pollA();

        assertThat(wcs).extracting(WorkCompletion::wrId).containsExactly(1L, 2L, 3L, 4L);
        assertThat(statuses(wcs)).containsExactly(WcStatus.SUCCESS, WcStatus.REM_ACCESS_ERR, WcStatus.WR_FLUSH_ERR,
            WcStatus.WR_FLUSH_ERR);
    }

    @Test
    void aReadSeesAWriteThatLandedBetweenItsResponsePackets()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final int n = 16 * MTU;
        final long remote = rig.bufferB(n);
        final MemoryRegion remoteMr = rig.pdB.regMr(remote, n, RuleRig.REMOTE_ALL);
        final long back = rig.bufferA(n);
        final MemoryRegion backMr = rig.pdA.regMr(back, n, RuleRig.LOCAL);
        final long fresh = rig.bufferA(n);
        rig.ctxA.memory().write(fresh, RuleRig.pattern(n, 9));
        final MemoryRegion freshMr = rig.pdA.regMr(fresh, n, RuleRig.LOCAL);
        // A second connection between the same devices writes into the region the READ reads.
        final SimQp writer = (SimQp)rig.pdA.createQp(dev.rnicsim.verbs.QpInitAttr.rc(rig.cqA));
        final SimQp target = (SimQp)rig.pdB.createQp(dev.rnicsim.verbs.QpInitAttr.rc(rig.cqB));
        writer.connect(target.address(), RuleRig.ALL_REMOTE);
        target.connect(writer.address(), RuleRig.ALL_REMOTE);

        rig.qpA.postSend(SendWr.read(1, sgl(sge(backMr, back, n)), remote, remoteMr.rkey()));
        // Posted after the READ, on another QP: it writes the second half while the READ's responses stream back.
        writer.postSend(SendWr.write(2, sgl(sge(freshMr, fresh, n / 2)), remote + n / 2, remoteMr.rkey()));
        assertThat(statuses(rig.cqA.poll(2))).containsExactly(WcStatus.SUCCESS, WcStatus.SUCCESS);

        final byte[] got = rig.ctxA.memory().read(back, n);
        assertThat(Arrays.copyOf(got, n / 2)).as("the first half was read before the WRITE reached it")
            .isEqualTo(new byte[n / 2]);
        assertThat(Arrays.copyOfRange(got, n / 2, n)).as("the second half after the WRITE's packets landed there")
            .isEqualTo(Arrays.copyOf(RuleRig.pattern(n, 9), n / 2));
    }

    @Test
    void progressOfOneDeviceLeavesTheOthersWorkWaiting()
    {
        final Write w = Write.of(DeviceProfiles.connectx5());

        assertThat(w.rig().fabric.engine().progress(w.rig().deviceB, 4)).as("b has nothing posted").isZero();
        assertThat(w.rig().fabric.engine().progress(w.rig().deviceA, 4)).isEqualTo(4);
        assertThat(((SimQp)w.rig().qpA).inflight().packetsPlaced()).isEqualTo(4);
    }

    @Test
    void thePathMtuSetsThePacketCount()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        rig.fabric.pathMtuBytes(1024);
        final long src = rig.bufferA(8192);
        final MemoryRegion srcMr = rig.pdA.regMr(src, 8192, RuleRig.LOCAL);
        final long dst = rig.bufferB(8192);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, 8192, RuleRig.REMOTE_ALL);
        rig.qpA.postSend(SendWr.write(1, sgl(sge(srcMr, src, 8192)), dst, dstMr.rkey()));

        assertThat(rig.fabric.progressAll()).isEqualTo(8);
        assertThat(rig.deviceA.counter(SimCounter.PORT_XMIT_PACKETS)).as("port counters count packets of the path MTU")
            .isEqualTo(8);
        assertThat(rig.deviceB.counter(SimCounter.PORT_RCV_PACKETS)).isEqualTo(8);
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> rig.fabric.pathMtuBytes(1500)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("256, 512, 1024, 2048 or 4096");
    }

    private static List<WcStatus> statuses(final List<WorkCompletion> wcs)
    {
        return wcs.stream().map(WorkCompletion::status).toList();
    }
}
