package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RelaxedOrderingTest.KIB;
import static dev.rnicsim.simnic.RelaxedOrderingTest.RELAXED;
import static dev.rnicsim.simnic.RelaxedOrderingTest.STRICT;
import static dev.rnicsim.simnic.RelaxedOrderingTest.littleEndian;
import static dev.rnicsim.simnic.RelaxedOrderingTest.signaledWriteElsewhere;
import static dev.rnicsim.simnic.RelaxedOrderingTest.withSeed;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WrOpcode;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;

/**
 * Memory ends up holding the bytes written, whatever order relaxed and strict WRITEs land in (see {@link
 * RelaxedOrderingTest}).
 */
class RelaxedOrderingProperties
{
    // ------------------------------------------------------------------ property: memory ends up as written

    private static final int REGION = 16 * KIB;

    /**
     * One WRITE of the property.
     *
     * @param region   which of the two regions of b.
     * @param relaxed  through the region's RELAXED_ORDERING MR (else its strict MR).
     * @param offset   first byte in the region.
     * @param length   bytes.
     * @param signaled signaled or not.
     */
    record Write(int region, boolean relaxed, int offset, int length, boolean signaled)
    {
    }

    @Provide
    Arbitrary<DeviceProfile> orderingProfiles()
    {
        return Arbitraries.of(DeviceProfiles.connectx3(), DeviceProfiles.connectx5(),
            DeviceProfiles.connectx4ForcedRelaxedOrdering());
    }

    @Provide
    Arbitrary<List<Write>> writes()
    {
        final Arbitrary<Integer> lengths = Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(3, Arbitraries.integers().between(1, 64)),
            net.jqwik.api.Tuple.of(5, Arbitraries.integers().between(65, 2048)),
            net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(2049, 6000)));
        final Arbitrary<Write> write = Combinators.combine(Arbitraries.integers().between(0, 1),
            Arbitraries.of(true, false), Arbitraries.integers().between(0, REGION - 1), lengths,
            Arbitraries.frequency(net.jqwik.api.Tuple.of(1, true), net.jqwik.api.Tuple.of(3, false)))
            .as((region, relaxed, offset, length, signaled) -> new Write(region, relaxed, offset,
                Math.min(length, REGION - offset), signaled));
        return write.list().ofMinSize(1).ofMaxSize(24);
    }

    /**
     * The flag a write the device places strictly carries in its last 8 bytes: byte 0 is 0xff and bytes 1-7 are
     * 0xfc-0xfe (base 3 of the write's index); the patterns never hold bytes above 251, so no earlier write leaves
     * that value there.
     */
    private static long flagValue(final int index)
    {
        long v = 0xff;
        int k = index;
        for (int i = 1; i < Long.BYTES; i++)
        {
            v |= (long)(0xfc + k % 3) << (8 * i);
            k /= 3;
        }
        return v;
    }

    @Property(tries = 250)
    void memoryEqualsTheSequentialModelOnceDrainedAndAStrictFlagIsNeverTornOnASafePlatform(
        @ForAll("orderingProfiles") final DeviceProfile base, @ForAll("writes") final List<Write> writes,
        @ForAll @LongRange(min = 0, max = 1_000_000) final long seed)
    {
        final DeviceProfile profile = withSeed(base, seed);
        final boolean unsafe = profile.follows(ProviderRule.RELAXED_ORDERING_UNSAFE_PLATFORM);
        final RuleRig rig = RuleRig.connected(profile, RuleRig.ALL_REMOTE);
        final long[] region = {rig.bufferB(REGION), rig.bufferB(REGION)};
        final int[][] rkeys = new int[2][2];
        for (int r = 0; r < 2; r++)
        {
            rkeys[r][0] = rig.pdB.regMr(region[r], REGION, STRICT).rkey();
            rkeys[r][1] = rig.pdB.regMr(region[r], REGION, RELAXED).rkey();
        }
        final int total = writes.stream().mapToInt(Write::length).sum();
        final long src = rig.bufferA(total);
        final MemoryRegion srcMr = rig.pdA.regMr(src, total, RuleRig.LOCAL);
        final byte[][] payload = new byte[writes.size()][];
        long at = src;
        for (int k = 0; k < writes.size(); k++)
        {
            final Write w = writes.get(k);
            payload[k] = RuleRig.pattern(w.length(), k * 37);
            final boolean flagged = !relaxedApplied(profile, w) && w.length() >= Long.BYTES;
            if (flagged)
            {
                System.arraycopy(littleEndian(flagValue(k)), 0, payload[k], w.length() - Long.BYTES, Long.BYTES);
            }
            rig.ctxA.memory().write(at, payload[k]);
            final long remote = region[w.region()] + w.offset();
            final FlagWatch watch = flagged && !unsafe ? rig.deviceB.watchFlag(rig.processB(),
                remote + w.length() - Long.BYTES, flagValue(k), region[w.region()], REGION) : null;
            final SendWr wr = new SendWr(k, WrOpcode.RDMA_WRITE, List.of(new Sge(at, w.length(), srcMr.lkey())),
                w.signaled() ? EnumSet.of(dev.rnicsim.verbs.SendFlag.SIGNALED) : Set.of(), remote,
                rkeys[w.region()][w.relaxed() ? 1 : 0], 0, 0, 0, 0);
            rig.qpA.postSend(wr);
            rig.fabric.progressAll();
            if (watch != null)
            {
                assertThat(watch.flagSeen()).as("write %d: flag seen", k).isTrue();
                assertThat(watch.torn()).as("write %d: strict flag torn on a safe platform", k).isFalse();
                watch.close();
            }
            at += w.length();
        }
        signaledWriteElsewhere(rig);

        assertThat(rig.deviceB.writeOrdering().inFlight()).isZero();
        if (!profile.relaxedOrdering())
        {
            assertThat(rig.deviceB.writeOrdering().chunksReordered()).isZero();
        }
        for (int r = 0; r < 2; r++)
        {
            final byte[] actual = rig.ctxB.memory().read(region[r], REGION);
            for (int i = 0; i < REGION; i++)
            {
                final List<Integer> candidates = candidates(profile, writes, r, i);
                if (candidates.isEmpty())
                {
                    assertThat(actual[i]).as("region %d byte %d never written", r, i).isZero();
                    continue;
                }
                final byte got = actual[i];
                final int byteIndex = i;
                assertThat(candidates.stream().anyMatch(k -> payload[k][byteIndex - writes.get(k).offset()] == got))
                    .as("region %d byte %d = %d: one of the writes %s that may land last", r, i, got, candidates)
                    .isTrue();
            }
        }
    }

    /** True when the device applies relaxed ordering to the write. */
    private static boolean relaxedApplied(final DeviceProfile p, final Write w)
    {
        return w.relaxed() && p.relaxedOrdering();
    }

    /**
     * True when every chunk of write {@code e} has landed before any chunk of the later write {@code l} does: e was
     * strict (it leaves nothing in flight), a signaled completion from e on drained it, a strict write between them
     * drained it, or l is strict on a safe platform (it waits for everything in flight).
     */
    private static boolean ordered(final DeviceProfile p, final List<Write> writes, final int e, final int l)
    {
        if (!relaxedApplied(p, writes.get(e)))
        {
            return true;
        }
        for (int m = e; m < l; m++)
        {
            if (writes.get(m).signaled() || m > e && !relaxedApplied(p, writes.get(m)))
            {
                return true;
            }
        }
        return !relaxedApplied(p, writes.get(l)) && !p.follows(ProviderRule.RELAXED_ORDERING_UNSAFE_PLATFORM);
    }

    /** The writes of byte {@code i} of region {@code r} that no later write of it is ordered after. */
    private static List<Integer> candidates(final DeviceProfile p, final List<Write> writes, final int r,
        final int i)
    {
        final List<Integer> covering = new ArrayList<>();
        for (int k = 0; k < writes.size(); k++)
        {
            final Write w = writes.get(k);
            if (w.region() == r && i >= w.offset() && i < w.offset() + w.length())
            {
                covering.add(k);
            }
        }
        final List<Integer> out = new ArrayList<>();
        for (int a = 0; a < covering.size(); a++)
        {
            boolean superseded = false;
            for (int b = a + 1; b < covering.size() && !superseded; b++)
            {
                superseded = ordered(p, writes, covering.get(a), covering.get(b));
            }
            if (!superseded)
            {
                out.add(covering.get(a));
            }
        }
        return out;
    }
}
