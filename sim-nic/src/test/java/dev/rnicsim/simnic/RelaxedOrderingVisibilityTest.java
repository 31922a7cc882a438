package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RelaxedOrderingTest.DATA;
import static dev.rnicsim.simnic.RelaxedOrderingTest.RELAXED;
import static dev.rnicsim.simnic.RelaxedOrderingTest.STRICT;
import static dev.rnicsim.simnic.RelaxedOrderingTest.littleEndian;
import static dev.rnicsim.simnic.RelaxedOrderingTest.mismatch;
import static dev.rnicsim.simnic.RelaxedOrderingTest.signaledWriteElsewhere;
import static dev.rnicsim.simnic.RelaxedOrderingTest.sourceA;
import static dev.rnicsim.simnic.RelaxedOrderingTest.statuses;
import static dev.rnicsim.simnic.RelaxedOrderingTest.unsignaledWrite;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.WrOpcode;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What makes the bytes of IBV_ACCESS_RELAXED_ORDERING writes visible: a later signaled completion, the write's own completion,
 * the receive completion of a WRITE with immediate data, a READ or an atomic of the region, and deregistration (see
 * {@link RelaxedOrderingTest}).
 */
class RelaxedOrderingVisibilityTest
{
    // ------------------------------------------------------------------ what makes earlier bytes visible

    /** An unsignaled 64 KiB relaxed WRITE into b that leaves chunks in flight; returns the data. */
    private static byte[] relaxedWriteLeavingChunksInFlight(final RuleRig rig, final long dst, final MemoryRegion mr)
    {
        final byte[] data = RuleRig.pattern(DATA, 6);
        rig.qpA.postSend(unsignaledWrite(1, sourceA(rig, data), dst, mr.rkey()));
        rig.fabric.progressAll();
        assertThat(rig.deviceB.writeOrdering().inFlight()).as("chunks in flight").isPositive();
        assertThat(mismatch(rig.ctxB.memory().read(dst, DATA), data)).as("not all there yet").isNotNegative();
        return data;
    }

    @Test
    void aSignaledCompletionOfALaterWriteMakesEveryEarlierByteVisible()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final long dst = rig.bufferB(DATA);
        final MemoryRegion mr = rig.pdB.regMr(dst, DATA, RELAXED);
        final byte[] data = relaxedWriteLeavingChunksInFlight(rig, dst, mr);

        signaledWriteElsewhere(rig);

        assertThat(rig.deviceB.writeOrdering().inFlight()).isZero();
        assertThat(mismatch(rig.ctxB.memory().read(dst, DATA), data)).isEqualTo(-1);
    }

    @Test
    void theCompletionOfARelaxedWriteItselfMakesItsBytesVisible()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final long dst = rig.bufferB(DATA);
        final MemoryRegion mr = rig.pdB.regMr(dst, DATA, RELAXED);
        final byte[] data = RuleRig.pattern(DATA, 6);

        rig.qpA.postSend(SendWr.write(1, List.of(sourceA(rig, data)), dst, mr.rkey()));
        final List<WorkCompletion> wcs = rig.pollA();

        assertThat(statuses(wcs)).containsExactly(WcStatus.SUCCESS);
        assertThat(rig.deviceB.writeOrdering().inFlight()).isZero();
        assertThat(mismatch(rig.ctxB.memory().read(dst, DATA), data)).isEqualTo(-1);
    }

    @Test
    void theReceiveCompletionOfAWriteWithImmMakesItsBytesVisibleAtTheResponder()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final long dst = rig.bufferB(DATA);
        final MemoryRegion mr = rig.pdB.regMr(dst, DATA, RELAXED);
        final long recv = rig.bufferB(4096);
        final MemoryRegion recvMr = rig.pdB.regMr(recv, 4096, STRICT);
        rig.qpB.postRecv(RecvWr.of(5, new Sge(recv, 4096, recvMr.lkey())));
        final byte[] data = RuleRig.pattern(DATA, 6);

        rig.qpA.postSend(new SendWr(1, WrOpcode.RDMA_WRITE_WITH_IMM, List.of(sourceA(rig, data)), Set.of(), dst,
            mr.rkey(), 7, 0, 0, 0));

        assertThat(statuses(rig.pollB())).containsExactly(WcStatus.SUCCESS);
        assertThat(rig.deviceB.writeOrdering().inFlight()).isZero();
        assertThat(mismatch(rig.ctxB.memory().read(dst, DATA), data)).isEqualTo(-1);
    }

    @Test
    void aReadOfTheRegionSeesEveryEarlierByte()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final long dst = rig.bufferB(DATA);
        final MemoryRegion mr = rig.pdB.regMr(dst, DATA, RELAXED);
        final byte[] data = relaxedWriteLeavingChunksInFlight(rig, dst, mr);
        final long back = rig.bufferA(DATA);
        final MemoryRegion backMr = rig.pdA.regMr(back, DATA, RuleRig.LOCAL);

        rig.qpA.postSend(SendWr.read(2, List.of(new Sge(back, DATA, backMr.lkey())), dst, mr.rkey()));

        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.SUCCESS);
        assertThat(mismatch(rig.ctxA.memory().read(back, DATA), data)).isEqualTo(-1);
    }

    @Test
    void anAtomicOnTheRegionOrdersBehindEveryEarlierByte()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final long dst = rig.bufferB(DATA);
        final MemoryRegion mr = rig.pdB.regMr(dst, DATA, RELAXED);
        final byte[] data = relaxedWriteLeavingChunksInFlight(rig, dst, mr);
        final long result = rig.bufferA(8);
        final MemoryRegion resultMr = rig.pdA.regMr(result, 8, RuleRig.LOCAL);
        // A word whose chunk is still in flight: the atomic must see the written value.
        final int at = mismatch(rig.ctxB.memory().read(dst, DATA), data) & ~7;
        final long written = java.nio.ByteBuffer.wrap(data, at, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong();

        rig.qpA.postSend(SendWr.fetchAndAdd(2, new Sge(result, 8, resultMr.lkey()), dst + at, mr.rkey(), 1));

        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.SUCCESS);
        assertThat(rig.ctxA.memory().readLong(result)).isEqualTo(written);
        assertThat(rig.ctxB.memory().readLong(dst + at)).isEqualTo(written + 1);
        signaledWriteElsewhere(rig);
        final byte[] expected = data.clone();
        System.arraycopy(littleEndian(written + 1), 0, expected, at, Long.BYTES);
        assertThat(mismatch(rig.ctxB.memory().read(dst, DATA), expected)).isEqualTo(-1);
    }

    @Test
    void deregistrationMakesChunksInFlightLandFirst()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final long dst = rig.bufferB(DATA);
        final MemoryRegion mr = rig.pdB.regMr(dst, DATA, RELAXED);
        relaxedWriteLeavingChunksInFlight(rig, dst, mr);

        mr.close();
        rig.ctxB.memory().free(dst, DATA);
        final long reused = rig.bufferB(DATA);
        rig.ctxB.memory().write(reused, new byte[DATA]);

        assertThatCode(() -> signaledWriteElsewhere(rig)).doesNotThrowAnyException();
        assertThat(mismatch(rig.ctxB.memory().read(reused, DATA), new byte[DATA])).as("first byte overwritten")
            .isEqualTo(-1);
    }
}
