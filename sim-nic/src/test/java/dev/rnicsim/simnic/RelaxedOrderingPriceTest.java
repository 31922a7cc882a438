package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RelaxedOrderingTest.KIB;
import static dev.rnicsim.simnic.RelaxedOrderingTest.RELAXED;
import static dev.rnicsim.simnic.RelaxedOrderingTest.STRICT;
import static dev.rnicsim.simnic.RelaxedOrderingTest.mismatch;
import static dev.rnicsim.simnic.RelaxedOrderingTest.sourceA;
import static dev.rnicsim.simnic.RelaxedOrderingTest.statuses;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The price of relaxed ordering: transfers into or out of relaxed MRs are cheaper by {@link
 * CostModel#relaxedOrderingSavingNs} where the profile applies it (see {@link RelaxedOrderingTest}).
 */
class RelaxedOrderingPriceTest
{
    // ------------------------------------------------------------------ price

    /** Runs one signaled work request on a's QP and returns its dma span. */
    private static TraceEvent span(final RuleRig rig, final SendWr wr)
    {
        final List<TraceEvent> trace = new ArrayList<>();
        rig.fabric.addTraceListener(trace::add);
        final long start = rig.fabric.clock().nowNs();
        rig.qpA.postSend(wr);
        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.SUCCESS);
        final TraceEvent s = trace.stream().filter(t -> t.category().equals("dma")
            && t.name().equals(wr.opcode().name())).findFirst().orElseThrow();
        assertThat(rig.fabric.clock().nowNs() - start).isEqualTo(s.durationNs());
        return s;
    }

    private static long operationNs(final RuleRig rig, final TraceEvent span, final long bytes)
    {
        return rig.fabric.costModel().operationNs(bytes, rig.deviceA.profile().linkGbps(),
            ((Number)span.args().get("cache_misses")).longValue());
    }

    private static long saving(final RuleRig rig, final long bytes)
    {
        return rig.fabric.costModel().relaxedOrderingSavingNs(bytes, rig.deviceA.profile().linkGbps());
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx5", "connectx7", "connectx4-forced-ro", "connectx3", "rxe"})
    void aWriteIntoARelaxedMrIsCheaperByTheSavingWhereApplied(final String name)
    {
        final DeviceProfile profile = DeviceProfiles.byName(name);
        final RuleRig rig = RuleRig.connected(profile, RuleRig.ALL_REMOTE);
        final int n = 256 * KIB;
        final long dst = rig.bufferB(2L * n);
        final MemoryRegion strict = rig.pdB.regMr(dst, n, STRICT);
        final MemoryRegion relaxed = rig.pdB.regMr(dst + n, n, RELAXED);
        final Sge src = sourceA(rig, RuleRig.pattern(n, 1));

        final TraceEvent s = span(rig, SendWr.write(1, List.of(src), dst, strict.rkey()));
        final TraceEvent r = span(rig, SendWr.write(2, List.of(src), dst + n, relaxed.rkey()));

        assertThat(s.durationNs()).isEqualTo(operationNs(rig, s, n));
        assertThat(s.args()).doesNotContainKey("relaxed_ordering");
        if (profile.relaxedOrdering())
        {
            assertThat(saving(rig, n)).isPositive();
            assertThat(r.durationNs()).isEqualTo(operationNs(rig, r, n) - saving(rig, n));
            assertThat(r.args()).containsEntry("relaxed_ordering", true);
        }
        else
        {
            assertThat(r.durationNs()).isEqualTo(operationNs(rig, r, n));
            assertThat(r.args()).doesNotContainKey("relaxed_ordering");
        }
    }

    @Test
    void aReadOfARelaxedMrIsCheaperOnlyWithRelaxedOrderingRead()
    {
        final int n = 256 * KIB;
        for (final DeviceProfile profile : List.of(DeviceProfiles.connectx5(), DeviceProfiles.connectx7()))
        {
            final RuleRig rig = RuleRig.connected(profile, RuleRig.ALL_REMOTE);
            final long remote = rig.bufferB(n);
            final MemoryRegion remoteMr = rig.pdB.regMr(remote, n, RELAXED);
            final long local = rig.bufferA(n);
            final MemoryRegion localMr = rig.pdA.regMr(local, n, RuleRig.LOCAL);

            final TraceEvent read = span(rig, SendWr.read(1, List.of(new Sge(local, n, localMr.lkey())), remote,
                remoteMr.rkey()));

            final boolean applied = profile.follows(ProviderRule.RELAXED_ORDERING_READ);
            assertThat(applied).isEqualTo(profile.name().equals("connectx7"));
            assertThat(read.durationNs()).as(profile.name())
                .isEqualTo(operationNs(rig, read, n) - (applied ? saving(rig, n) : 0));
        }
    }

    @Test
    void aReadResponsePlacedIntoARelaxedLocalMrIsRelaxedAndCheaper()
    {
        final int n = 256 * KIB;
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final long remote = rig.bufferB(n);
        final byte[] data = RuleRig.pattern(n, 3);
        rig.ctxB.memory().write(remote, data);
        final MemoryRegion remoteMr = rig.pdB.regMr(remote, n, STRICT);
        final long local = rig.bufferA(n);
        final MemoryRegion localMr = rig.pdA.regMr(local, n, EnumSet.of(Access.LOCAL_WRITE,
            Access.RELAXED_ORDERING));

        final TraceEvent read = span(rig, SendWr.read(1, List.of(new Sge(local, n, localMr.lkey())), remote,
            remoteMr.rkey()));

        assertThat(read.durationNs()).isEqualTo(operationNs(rig, read, n) - saving(rig, n));
        assertThat(rig.deviceA.writeOrdering().chunksReordered()).as("the requester placed the response relaxed")
            .isPositive();
        assertThat(rig.deviceA.writeOrdering().inFlight()).isZero();
        assertThat(mismatch(rig.ctxA.memory().read(local, n), data)).isEqualTo(-1);
    }

    @Test
    void aSendIntoARelaxedReceiveBufferIsCheaperByTheSaving()
    {
        final int n = 256 * KIB;
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final long recv = rig.bufferB(n);
        final MemoryRegion recvMr = rig.pdB.regMr(recv, n, RELAXED);
        rig.qpB.postRecv(RecvWr.of(1, new Sge(recv, n, recvMr.lkey())));

        final TraceEvent send = span(rig, SendWr.send(1, List.of(sourceA(rig, RuleRig.pattern(n, 1)))));

        assertThat(rig.deviceB.writeOrdering().chunksReordered()).as("placed relaxed").isPositive();
        assertThat(send.durationNs()).isEqualTo(operationNs(rig, send, n) - saving(rig, n));
    }
}
