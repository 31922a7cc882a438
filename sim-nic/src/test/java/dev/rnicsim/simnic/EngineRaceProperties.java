package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RuleRig.sge;
import static dev.rnicsim.simnic.RuleRig.sgl;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * Key retirement racing messages in flight: whatever the interleaving of engine steps and the retirement, no DMA
 * reaches memory through a key once its retirement returned, a message either lands whole and completes
 * successfully or its requester sees an error, and bytes outside the target ranges never change.
 */
class EngineRaceProperties
{
    private static final int GUARD = 4096;

    /** What to retire while the two WRITEs are in flight. */
    enum Retire
    {
        TARGET_MR,
        SOURCE_MR,
        NOTHING
    }

    @Property(tries = 60)
    void noDmaAfterDeregReturnsAndMessagesLandWholeOrFail(@ForAll final boolean rxe,
        @ForAll @IntRange(min = 1, max = 24) final int packetsA, @ForAll @IntRange(min = 1, max = 24) final int packetsB,
        @ForAll @IntRange(min = 0, max = 40) final int stepsBefore, @ForAll final Retire retire,
        @ForAll @IntRange(min = 0, max = 8) final int tailBytes)
    {
        final RuleRig rig = RuleRig.connected(rxe ? DeviceProfiles.rxe() : DeviceProfiles.connectx5(),
            RuleRig.ALL_REMOTE);
        // rxe's QPs take the 1024-byte active mtu of their 1500-byte netdev, connectx5's 4096
        final int mtu = PacketMtu.bytes((SimQp)rig.qpA);
        final int lenA = packetsA * mtu - tailBytes;
        final int lenB = packetsB * mtu;
        final int total = lenA + lenB;
        final long src = rig.bufferA(total);
        final byte[] data = RuleRig.pattern(total, 5);
        rig.ctxA.memory().write(src, data);
        final MemoryRegion srcMr = rig.pdA.regMr(src, total, RuleRig.LOCAL);
        final long region = rig.bufferB(total + 2L * GUARD);
        final long dst = region + GUARD;
        final MemoryRegion dstMr = rig.pdB.regMr(dst, total, RuleRig.REMOTE_ALL);
        // Two connections, each with one WRITE into its own part of the target MR: their packets interleave.
        final SimQp qpC = (SimQp)rig.pdA.createQp(QpInitAttr.rc(rig.cqA));
        final SimQp qpD = (SimQp)rig.pdB.createQp(QpInitAttr.rc(rig.cqB));
        qpC.connect(qpD.address(), RuleRig.ALL_REMOTE);
        qpD.connect(qpC.address(), RuleRig.ALL_REMOTE);
        rig.qpA.postSend(SendWr.write(1, sgl(sge(srcMr, src, lenA)), dst, dstMr.rkey()));
        qpC.postSend(SendWr.write(2, sgl(sge(srcMr, src + lenA, lenB)), dst + lenA, dstMr.rkey()));
        rig.fabric.progress(stepsBefore);

        final boolean startedA = ((SimQp)rig.qpA).inflight() != null;
        final boolean startedC = qpC.inflight() != null;
        final byte[] atRetirement;
        switch (retire)
        {
            case TARGET_MR -> dstMr.close();
            case SOURCE_MR -> srcMr.close();
            default ->
            {
            }
        }
        atRetirement = rig.ctxB.memory().read(dst, total);
        final List<WorkCompletion> wcs = new ArrayList<>(rig.cqA.poll(2));
        if (wcs.size() < 2)
        {
            wcs.addAll(rig.cqA.poll(2));
        }
        final byte[] after = rig.ctxB.memory().read(dst, total);

        assertThat(wcs).extracting(WorkCompletion::wrId).containsExactlyInAnyOrder(1L, 2L);
        assertThat(rig.ctxB.memory().read(region, GUARD)).as("bytes before the target").isEqualTo(new byte[GUARD]);
        assertThat(rig.ctxB.memory().read(dst + total, GUARD)).as("bytes after the target")
            .isEqualTo(new byte[GUARD]);
        if (retire != Retire.NOTHING)
        {
            assertThat(after).as("no DMA through a key once its retirement returned").isEqualTo(atRetirement);
        }
        for (final WorkCompletion wc : wcs)
        {
            final int from = wc.wrId() == 1 ? 0 : lenA;
            final int len = wc.wrId() == 1 ? lenA : lenB;
            final byte[] landed = Arrays.copyOfRange(after, from, from + len);
            final byte[] sent = Arrays.copyOfRange(data, from, from + len);
            if (wc.status() == WcStatus.SUCCESS)
            {
                assertThat(landed).as("a successful message landed whole").isEqualTo(sent);
                continue;
            }
            // An error: what landed is a run of whole packets from the start, the rest is untouched.
            int placed = 0;
            while (placed < len && landed[placed] == sent[placed])
            {
                placed++;
            }
            assertThat(Arrays.copyOfRange(landed, placed, len)).as("after the placed packets")
                .containsOnly((byte)0);
            assertThat(placed % mtu == 0 || placed == len).as("placed %d bytes: whole packets", placed).isTrue();
        }
        if (rxe && retire == Retire.TARGET_MR)
        {
            // Messages past their first packet hold the key; those not started meet a dead key at their first.
            for (final WorkCompletion wc : wcs)
            {
                if (wc.wrId() == 1 ? startedA : startedC)
                {
                    assertThat(wc.status()).as("rxe's dereg waits for wr %d, which held the key", wc.wrId())
                        .isEqualTo(WcStatus.SUCCESS);
                }
            }
        }
        if (retire == Retire.NOTHING)
        {
            assertThat(wcs).extracting(WorkCompletion::status).containsOnly(WcStatus.SUCCESS);
        }
    }
}
