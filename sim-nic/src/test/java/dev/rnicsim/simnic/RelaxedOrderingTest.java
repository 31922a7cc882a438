package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.rnicsim.dma.PlacementListener;
import dev.rnicsim.dma.WriteOrdering;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.WrOpcode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.LongStream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * IBV_ACCESS_RELAXED_ORDERING (ibv_reg_mr(3)) and PCIe write ordering: accepted on every device and applied only
 * where the profile supports it; chunks of a relaxed write may land out of order and a later relaxed write may pass
 * it, while a later strict write never does on a safe platform (a polling reader never sees its flag before the
 * data) but may on the unsafe platform; completions, reads and atomics make every earlier byte visible; memory ends
 * up holding the bytes written; placement is a function of the profile's seed; relaxed transfers are priced
 * cheaper by {@link CostModel#relaxedOrderingSavingNs}.
 */
class RelaxedOrderingTest
{
    private static final int KIB = 1024;
    private static final Set<Access> STRICT = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
        Access.REMOTE_READ, Access.REMOTE_ATOMIC);
    private static final Set<Access> RELAXED = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
        Access.REMOTE_READ, Access.REMOTE_ATOMIC, Access.RELAXED_ORDERING);

    // ------------------------------------------------------------------ fixture

    /** The profile with another seed: its placement order changes, nothing else. */
    static DeviceProfile withSeed(final DeviceProfile p, final long seed)
    {
        return new DeviceProfile(p.name(), p.driver(), p.attributes(), p.mtt(), p.variantPolicy(), p.indexPolicy(),
            p.cacheEntries(), p.cacheWays(), p.providerRules(), p.relaxedOrdering(), p.linkGbps(), seed,
            p.defaultedFields()).withLinkLayer(p.linkLayer());
    }

    private static SendWr unsignaledWrite(final long id, final Sge sge, final long remoteAddr, final int rkey)
    {
        return new SendWr(id, WrOpcode.RDMA_WRITE, List.of(sge), Set.of(), remoteAddr, rkey, 0, 0, 0, 0);
    }

    /** A source buffer on a holding {@code data}, registered for local access. */
    private static Sge sourceA(final RuleRig rig, final byte[] data)
    {
        final long addr = rig.bufferA(data.length);
        rig.ctxA.memory().write(addr, data);
        final MemoryRegion mr = rig.pdA.regMr(addr, data.length, RuleRig.LOCAL);
        return new Sge(addr, data.length, mr.lkey());
    }

    private static byte[] littleEndian(final long v)
    {
        final byte[] b = new byte[Long.BYTES];
        for (int i = 0; i < Long.BYTES; i++)
        {
            b[i] = (byte)(v >>> (8 * i));
        }
        return b;
    }

    private static List<WcStatus> statuses(final List<WorkCompletion> wcs)
    {
        return wcs.stream().map(WorkCompletion::status).toList();
    }

    /** Index of the first differing byte, -1 when equal: keeps failure messages short. */
    private static int mismatch(final byte[] actual, final byte[] expected)
    {
        return Arrays.mismatch(actual, expected);
    }

    /**
     * A signaled 8-byte WRITE into a fresh strict MR of b: its completion drains b's chunks in flight. Polls every
     * completion, which must all be successful.
     */
    private static void signaledWriteElsewhere(final RuleRig rig)
    {
        final long scratch = rig.bufferB(4096);
        final MemoryRegion mr = rig.pdB.regMr(scratch, 4096, STRICT);
        rig.qpA.postSend(SendWr.write(-1, List.of(sourceA(rig, new byte[8])), scratch, mr.rkey()));
        final List<WorkCompletion> wcs = rig.pollA();
        assertThat(statuses(wcs)).isNotEmpty().containsOnly(WcStatus.SUCCESS);
        assertThat(wcs.getLast().wrId()).isEqualTo(-1);
    }

    /**
     * Records where b's device places chunks inside one buffer of b's process, as offsets from its start, in the
     * order the memory sees them.
     */
    static final class Landing implements PlacementListener
    {
        private final Map<Long, Long> pageToOffset = new HashMap<>();
        final List<Long> offsets = new ArrayList<>();

        Landing(final UserProcess process, final long va, final long lengthBytes)
        {
            for (long off = 0; off < lengthBytes; off += 4096)
            {
                pageToOffset.put(process.translate(va + off) & ~0xfffL, off);
            }
        }

        @Override
        public void placed(final dev.rnicsim.pagetable.PhysicalMemory memory, final long physAddr,
            final int lengthBytes)
        {
            final Long page = pageToOffset.get(physAddr & ~0xfffL);
            if (page != null)
            {
                offsets.add(page + (physAddr & 0xfff));
            }
        }

        /** Chunks that landed after a chunk at a higher offset (the issue order of one write). */
        long outOfOrder()
        {
            long max = -1;
            long n = 0;
            for (final long o : offsets)
            {
                if (o < max)
                {
                    n++;
                }
                max = Math.max(max, o);
            }
            return n;
        }
    }

    /**
     * What a polling reader saw of a 64 KiB data WRITE then an 8-byte flag WRITE, both unsignaled, followed by a
     * signaled WRITE elsewhere: whether it saw the flag before that completion, whether the data it then read was
     * incomplete, and the same once everything drained.
     */
    record FlagRun(boolean seenBeforeDrain, boolean tornBeforeDrain, boolean seen, boolean torn, byte[] seenData,
        long overtakes, long reordered, int inFlightAfterFlag, boolean finalDataComplete)
    {
    }

    private static final int DATA = 64 * KIB;

    static FlagRun dataThenFlag(final DeviceProfile profile, final boolean dataRelaxed, final boolean flagRelaxed)
    {
        final RuleRig rig = RuleRig.connected(profile, RuleRig.ALL_REMOTE);
        final byte[] data = RuleRig.pattern(DATA, 9);
        final long dst = rig.bufferB(DATA);
        final long flag = rig.bufferB(4096);
        final MemoryRegion dataMr = rig.pdB.regMr(dst, DATA, dataRelaxed ? RELAXED : STRICT);
        final MemoryRegion flagMr = rig.pdB.regMr(flag, 4096, flagRelaxed ? RELAXED : STRICT);
        final Sge dataSrc = sourceA(rig, data);
        final Sge flagSrc = sourceA(rig, littleEndian(1));
        final FlagWatch watch = rig.deviceB.watchFlag(rig.processB(), flag, 1, dst, DATA);
        final WriteOrdering ordering = rig.deviceB.writeOrdering();

        rig.qpA.postSend(unsignaledWrite(1, dataSrc, dst, dataMr.rkey()));
        rig.qpA.postSend(unsignaledWrite(2, flagSrc, flag, flagMr.rkey()));
        rig.fabric.progressAll();
        final boolean seenBeforeDrain = watch.flagSeen();
        final boolean tornBeforeDrain = seenBeforeDrain && mismatch(watch.dataWhenFlagSeen(), data) >= 0;
        final int inFlight = ordering.inFlight();
        signaledWriteElsewhere(rig);
        watch.close();

        return new FlagRun(seenBeforeDrain, tornBeforeDrain, watch.flagSeen(), watch.torn(), watch.dataWhenFlagSeen(),
            ordering.overtakes(), ordering.chunksReordered(), inFlight,
            mismatch(rig.ctxB.memory().read(dst, DATA), data) < 0);
    }

    // ------------------------------------------------------------------ accepted everywhere, applied where supported

    @ParameterizedTest
    @ValueSource(strings = {"connectx3", "connectx4-forced-ro", "connectx5", "connectx7", "rxe", "e810"})
    void relaxedOrderingNeverMakesRegistrationFailAndIsAppliedOnlyWhereSupported(final String name)
    {
        final DeviceProfile profile = DeviceProfiles.byName(name);
        final RuleRig rig = RuleRig.connected(profile, RuleRig.ALL_REMOTE);
        final long buf = rig.bufferB(64 * KIB);
        final long failures = rig.deviceB.counter(SimCounter.MR_REGISTRATION_FAILURES);

        final MemoryRegion alone = rig.pdB.regMr(buf, 4096, EnumSet.of(Access.RELAXED_ORDERING));
        final MemoryRegion full = rig.pdB.regMr(buf, 64 * KIB, buf + 0x10_0000, RELAXED);
        final MemoryRegion plain = rig.pdB.regMr(buf, 64 * KIB, STRICT);

        assertThat(alone.access()).containsExactly(Access.RELAXED_ORDERING);
        assertThat(full.access()).contains(Access.RELAXED_ORDERING);
        assertThat(rig.deviceB.counter(SimCounter.MR_REGISTRATION_FAILURES)).isEqualTo(failures);
        assertThat(rig.deviceB.relaxedWrites(full.rkey())).isEqualTo(profile.relaxedOrdering());
        assertThat(rig.deviceB.relaxedWrites(plain.rkey())).isFalse();
        assertThat(rig.deviceB.writeOrdering().relaxedApplied()).isEqualTo(profile.relaxedOrdering());
        assertThat(rig.deviceB.writeOrdering().unsafePlatform())
            .isEqualTo(profile.follows(ProviderRule.RELAXED_ORDERING_UNSAFE_PLATFORM));
        if (profile.attributes().odpCaps().supported())
        {
            final MemoryRegion odp = rig.pdB.regMr(buf, 64 * KIB, EnumSet.of(Access.LOCAL_WRITE,
                Access.REMOTE_WRITE, Access.ON_DEMAND, Access.RELAXED_ORDERING));
            assertThat(odp.access()).contains(Access.RELAXED_ORDERING);
        }
    }

    @Test
    void theBuiltInProfilesApplyRelaxedOrderingOnMlx5Only()
    {
        assertThat(DeviceProfiles.connectx5().relaxedOrdering()).isTrue();
        assertThat(DeviceProfiles.connectx7().relaxedOrdering()).isTrue();
        assertThat(DeviceProfiles.connectx4ForcedRelaxedOrdering().relaxedOrdering()).isTrue();
        assertThat(DeviceProfiles.connectx4ForcedRelaxedOrdering().name()).isEqualTo("connectx4-forced-ro");
        assertThat(DeviceProfiles.connectx4ForcedRelaxedOrdering()
            .follows(ProviderRule.RELAXED_ORDERING_UNSAFE_PLATFORM)).isTrue();
        assertThat(DeviceProfiles.byName("connectx4-forced-ro")).isEqualTo(
            DeviceProfiles.connectx4ForcedRelaxedOrdering());
        assertThat(DeviceProfiles.connectx5().follows(ProviderRule.RELAXED_ORDERING_UNSAFE_PLATFORM)).isFalse();
        assertThat(DeviceProfiles.connectx3().relaxedOrdering()).isFalse();
        assertThat(DeviceProfiles.rxe().relaxedOrdering()).isFalse();
        assertThat(DeviceProfiles.e810().relaxedOrdering()).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx3", "rxe", "e810"})
    void whereItIsNotAppliedTheFlagChangesNoPlacement(final String name)
    {
        for (long seed = 1; seed <= 8; seed++)
        {
            final DeviceProfile profile = withSeed(DeviceProfiles.byName(name), seed);
            final FlagRun run = dataThenFlag(profile, true, true);

            assertThat(run.seenBeforeDrain()).isTrue();
            assertThat(run.tornBeforeDrain()).isFalse();
            assertThat(run.torn()).isFalse();
            assertThat(run.reordered()).isZero();
            assertThat(run.overtakes()).isZero();
            assertThat(run.inFlightAfterFlag()).isZero();
            assertThat(run.finalDataComplete()).isTrue();
        }
        final RuleRig rig = RuleRig.connected(DeviceProfiles.byName(name), RuleRig.ALL_REMOTE);
        final long dst = rig.bufferB(DATA);
        final MemoryRegion mr = rig.pdB.regMr(dst, DATA, RELAXED);
        final Landing landing = new Landing(rig.processB(), dst, DATA);
        rig.deviceB.writeOrdering().addListener(landing);
        rig.qpA.postSend(SendWr.write(1, List.of(sourceA(rig, RuleRig.pattern(DATA, 2))), dst, mr.rkey()));
        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.SUCCESS);
        assertThat(landing.offsets).isSorted().hasSize(DATA / WriteOrdering.CHUNK_BYTES);
    }

    // ------------------------------------------------------------------ ordering on a safe platform

    @Test
    void chunksOfARelaxedWriteMayLandOutOfOrderAndAllLandByItsCompletion()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final long dst = rig.bufferB(DATA);
        final MemoryRegion mr = rig.pdB.regMr(dst, DATA, RELAXED);
        final Landing landing = new Landing(rig.processB(), dst, DATA);
        rig.deviceB.writeOrdering().addListener(landing);
        final byte[] data = RuleRig.pattern(DATA, 4);

        rig.qpA.postSend(SendWr.write(1, List.of(sourceA(rig, data)), dst, mr.rkey()));

        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.SUCCESS);
        assertThat(landing.offsets).isNotEqualTo(landing.offsets.stream().sorted().toList());
        assertThat(landing.offsets).containsExactlyInAnyOrderElementsOf(
            LongStream.range(0, DATA / WriteOrdering.CHUNK_BYTES).map(i -> i * WriteOrdering.CHUNK_BYTES).boxed()
                .toList());
        assertThat(rig.deviceB.writeOrdering().chunksReordered()).isPositive();
        assertThat(rig.deviceB.writeOrdering().inFlight()).isZero();
        assertThat(mismatch(rig.ctxB.memory().read(dst, DATA), data)).isEqualTo(-1);
    }

    @Test
    void aStrictWriteNeverOvertakesEarlierWritesOnASafePlatform()
    {
        for (final DeviceProfile base : List.of(DeviceProfiles.connectx5(), DeviceProfiles.connectx7()))
        {
            for (long seed = 1; seed <= 24; seed++)
            {
                final FlagRun run = dataThenFlag(withSeed(base, seed), true, false);

                assertThat(run.seenBeforeDrain()).as(base.name() + " seed " + seed).isTrue();
                assertThat(run.tornBeforeDrain()).as(base.name() + " seed " + seed).isFalse();
                assertThat(run.torn()).as(base.name() + " seed " + seed).isFalse();
                assertThat(mismatch(run.seenData(), RuleRig.pattern(DATA, 9))).isEqualTo(-1);
                assertThat(run.inFlightAfterFlag()).as("a strict write leaves nothing in flight").isZero();
                assertThat(run.finalDataComplete()).isTrue();
            }
        }
    }

    @Test
    void aLaterRelaxedWriteMayOvertakeAnEarlierOne()
    {
        int torn = 0;
        for (long seed = 1; seed <= 24; seed++)
        {
            final FlagRun run = dataThenFlag(withSeed(DeviceProfiles.connectx5(), seed), true, true);
            assertThat(run.finalDataComplete()).as("seed " + seed).isTrue();
            if (run.torn())
            {
                torn++;
                assertThat(run.seen()).isTrue();
            }
        }
        assertThat(torn).as("seeds where the relaxed flag overtook the data").isPositive();
    }

    @Test
    void strictWritesAloneNeverReorderOnASafePlatform()
    {
        final FlagRun run = dataThenFlag(DeviceProfiles.connectx5(), false, false);

        assertThat(run.torn()).isFalse();
        assertThat(run.reordered()).isZero();
        assertThat(run.overtakes()).isZero();
    }

    // ------------------------------------------------------------------ the unsafe platform

    @Test
    void onTheUnsafePlatformEvenAStrictFlagWriteMayOvertakeTheData()
    {
        int torn = 0;
        for (long seed = 1; seed <= 24; seed++)
        {
            final FlagRun run = dataThenFlag(withSeed(DeviceProfiles.connectx4ForcedRelaxedOrdering(), seed), true,
                false);
            assertThat(run.finalDataComplete()).as("seed " + seed).isTrue();
            if (run.torn())
            {
                torn++;
            }
        }
        assertThat(torn).as("seeds where the strict flag overtook the data").isPositive();
    }

    @Test
    void theBuiltInUnsafeProfileTearsAStrictFlag()
    {
        final FlagRun run = dataThenFlag(DeviceProfiles.connectx4ForcedRelaxedOrdering(), true, false);

        assertThat(run.seen()).isTrue();
        assertThat(run.torn()).isTrue();
        assertThat(run.finalDataComplete()).isTrue();
    }

    @Test
    void overtakesCountsAStrictFlagThatLandedBeforeTheData()
    {
        final FlagRun run = dataThenFlag(DeviceProfiles.connectx4ForcedRelaxedOrdering(), true, false);

        assertThat(run.tornBeforeDrain()).isTrue();
        assertThat(run.overtakes()).isPositive();
    }

    @Test
    void chunksReorderedCountsEveryChunkThatLandsAfterALaterOne()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final int n = 4096;
        final long dst = rig.bufferB(n);
        final MemoryRegion mr = rig.pdB.regMr(dst, n, RELAXED);
        final Landing landing = new Landing(rig.processB(), dst, n);
        rig.deviceB.writeOrdering().addListener(landing);

        rig.qpA.postSend(SendWr.write(1, List.of(sourceA(rig, RuleRig.pattern(n, 1))), dst, mr.rkey()));
        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.SUCCESS);

        assertThat(landing.offsets).hasSize(n / WriteOrdering.CHUNK_BYTES);
        assertThat(rig.deviceB.writeOrdering().chunksReordered()).isEqualTo(landing.outOfOrder());
    }

    @Test
    void watchingPlacementsDoesNotChangeThem()
    {
        final byte[][] snapshots = new byte[2][];
        for (int watched = 0; watched < 2; watched++)
        {
            final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx4ForcedRelaxedOrdering(),
                RuleRig.ALL_REMOTE);
            if (watched == 1)
            {
                rig.deviceB.writeOrdering().addListener((m, a, l) -> { });
            }
            final long dst = rig.bufferB(2 * DATA);
            final MemoryRegion strict = rig.pdB.regMr(dst, DATA, STRICT);
            final MemoryRegion relaxed = rig.pdB.regMr(dst + DATA, DATA, RELAXED);
            rig.qpA.postSend(unsignaledWrite(1, sourceA(rig, RuleRig.pattern(DATA, 1)), dst, strict.rkey()));
            rig.qpA.postSend(unsignaledWrite(2, sourceA(rig, RuleRig.pattern(DATA, 2)), dst + DATA,
                relaxed.rkey()));
            rig.fabric.progressAll();
            snapshots[watched] = rig.ctxB.memory().read(dst, 2 * DATA);
        }

        assertThat(mismatch(snapshots[1], snapshots[0])).as("first byte that landed differently").isEqualTo(-1);
    }

    /** What one run of a strict then a relaxed 64 KiB WRITE, then a signaled one, placed and counted. */
    record PlacementRun(List<Long> landed, long placed, long reordered, long overtakes, long clockNs,
        Map<String, Long> counters, byte[] dstBytes)
    {
    }

    private static PlacementRun strictThenRelaxed(final boolean bytesElsewhere)
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx4ForcedRelaxedOrdering(), RuleRig.ALL_REMOTE);
        rig.deviceA.host().host().physicalMemory().bytesElsewhere(bytesElsewhere);
        rig.deviceB.host().host().physicalMemory().bytesElsewhere(bytesElsewhere);
        final long dst = rig.bufferB(2 * DATA);
        final MemoryRegion strict = rig.pdB.regMr(dst, DATA, STRICT);
        final MemoryRegion relaxed = rig.pdB.regMr(dst + DATA, DATA, RELAXED);
        final Landing landing = new Landing(rig.processB(), dst, 2 * DATA);
        final WriteOrdering ordering = rig.deviceB.writeOrdering();
        ordering.addListener(landing);
        rig.qpA.postSend(unsignaledWrite(1, sourceA(rig, RuleRig.pattern(DATA, 1)), dst, strict.rkey()));
        rig.qpA.postSend(unsignaledWrite(2, sourceA(rig, RuleRig.pattern(DATA, 2)), dst + DATA, relaxed.rkey()));
        signaledWriteElsewhere(rig);
        return new PlacementRun(landing.offsets, ordering.chunksPlaced(), ordering.chunksReordered(),
            ordering.overtakes(), rig.fabric.clock().nowNs(), rig.deviceB.counters(),
            rig.ctxB.memory().read(dst, 2 * DATA));
    }

    @Test
    void withTheBytesElsewhereEveryChunkIsPlacedCheckedAndCountedAsBeforeAndNoByteMoves()
    {
        final PlacementRun kept = strictThenRelaxed(false);
        final PlacementRun elsewhere = strictThenRelaxed(true);

        assertThat(elsewhere.landed()).hasSize(2 * DATA / WriteOrdering.CHUNK_BYTES).isEqualTo(kept.landed());
        assertThat(elsewhere.placed()).isEqualTo(kept.placed());
        assertThat(elsewhere.reordered()).isPositive().isEqualTo(kept.reordered());
        assertThat(elsewhere.overtakes()).isEqualTo(kept.overtakes());
        assertThat(elsewhere.clockNs()).isEqualTo(kept.clockNs());
        assertThat(elsewhere.counters()).isEqualTo(kept.counters());
        final byte[] expected = new byte[2 * DATA];
        System.arraycopy(RuleRig.pattern(DATA, 1), 0, expected, 0, DATA);
        System.arraycopy(RuleRig.pattern(DATA, 2), 0, expected, DATA, DATA);
        assertThat(mismatch(kept.dstBytes(), expected)).as("first byte not placed with the bytes kept").isEqualTo(-1);
        assertThat(mismatch(elsewhere.dstBytes(), new byte[2 * DATA])).as("first byte the DMA moved").isEqualTo(-1);
    }

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

    // ------------------------------------------------------------------ determinism

    /** Offsets of every chunk of three relaxed 16 KiB writes, in landing order, and the counters. */
    private static List<Long> placement(final DeviceProfile profile)
    {
        final RuleRig rig = RuleRig.connected(profile, RuleRig.ALL_REMOTE);
        final int n = 16 * KIB;
        final long dst = rig.bufferB(3 * n);
        final MemoryRegion mr = rig.pdB.regMr(dst, 3 * n, RELAXED);
        final Landing landing = new Landing(rig.processB(), dst, 3 * n);
        rig.deviceB.writeOrdering().addListener(landing);
        for (int i = 0; i < 3; i++)
        {
            rig.qpA.postSend(unsignaledWrite(i, sourceA(rig, RuleRig.pattern(n, i)), dst + (long)i * n, mr.rkey()));
        }
        signaledWriteElsewhere(rig);
        final List<Long> out = new ArrayList<>(landing.offsets);
        final WriteOrdering o = rig.deviceB.writeOrdering();
        out.addAll(List.of(o.chunksPlaced(), o.chunksReordered(), o.overtakes()));
        return out;
    }

    @Test
    void placementIsAFunctionOfTheProfileSeed()
    {
        for (final DeviceProfile p : List.of(DeviceProfiles.connectx5(), DeviceProfiles.connectx7(),
            DeviceProfiles.connectx4ForcedRelaxedOrdering()))
        {
            assertThat(placement(p)).as(p.name()).isEqualTo(placement(p));
            assertThat(placement(withSeed(p, 12345))).as(p.name()).isEqualTo(placement(withSeed(p, 12345)));
            assertThat(placement(withSeed(p, 12345))).as(p.name()).isNotEqualTo(placement(p));
        }
    }

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
