package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.dma.PlacementListener;
import dev.rnicsim.dma.WriteOrdering;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
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
    static final int KIB = 1024;
    static final Set<Access> STRICT = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
        Access.REMOTE_READ, Access.REMOTE_ATOMIC);
    static final Set<Access> RELAXED = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
        Access.REMOTE_READ, Access.REMOTE_ATOMIC, Access.RELAXED_ORDERING);

    // ------------------------------------------------------------------ fixture

    /** The profile with another seed: its placement order changes, nothing else. */
    static DeviceProfile withSeed(final DeviceProfile p, final long seed)
    {
        return new DeviceProfile(p.name(), p.driver(), p.attributes(), p.mtt(), p.variantPolicy(), p.indexPolicy(),
            p.cacheEntries(), p.cacheWays(), p.providerRules(), p.relaxedOrdering(), p.linkGbps(), seed,
            p.defaultedFields()).withLinkLayer(p.linkLayer());
    }

    static SendWr unsignaledWrite(final long id, final Sge sge, final long remoteAddr, final int rkey)
    {
        return new SendWr(id, WrOpcode.RDMA_WRITE, List.of(sge), Set.of(), remoteAddr, rkey, 0, 0, 0, 0);
    }

    /** A source buffer on a holding {@code data}, registered for local access. */
    static Sge sourceA(final RuleRig rig, final byte[] data)
    {
        final long addr = rig.bufferA(data.length);
        rig.ctxA.memory().write(addr, data);
        final MemoryRegion mr = rig.pdA.regMr(addr, data.length, RuleRig.LOCAL);
        return new Sge(addr, data.length, mr.lkey());
    }

    static byte[] littleEndian(final long v)
    {
        final byte[] b = new byte[Long.BYTES];
        for (int i = 0; i < Long.BYTES; i++)
        {
            b[i] = (byte)(v >>> (8 * i));
        }
        return b;
    }

    static List<WcStatus> statuses(final List<WorkCompletion> wcs)
    {
        return wcs.stream().map(WorkCompletion::status).toList();
    }

    /** Index of the first differing byte, -1 when equal: keeps failure messages short. */
    static int mismatch(final byte[] actual, final byte[] expected)
    {
        return Arrays.mismatch(actual, expected);
    }

    /**
     * A signaled 8-byte WRITE into a fresh strict MR of b: its completion drains b's chunks in flight. Polls every
     * completion, which must all be successful.
     */
    static void signaledWriteElsewhere(final RuleRig rig)
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

    static final int DATA = 64 * KIB;

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

}
