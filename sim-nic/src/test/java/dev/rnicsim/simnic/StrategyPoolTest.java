package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.StrategyRig.KIB;
import static dev.rnicsim.simnic.StrategyRig.LOCAL;
import static dev.rnicsim.simnic.StrategyRig.MIB;
import static dev.rnicsim.simnic.StrategyRig.REMOTE_ALL;
import static dev.rnicsim.simnic.StrategyRig.concat;
import static dev.rnicsim.simnic.StrategyRig.enumSetAccess;
import static dev.rnicsim.simnic.StrategyRig.fails;
import static dev.rnicsim.simnic.StrategyRig.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.Vma;
import dev.rnicsim.pagetable.VmaKind;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.strategy.MemoryPool;
import dev.rnicsim.verbs.strategy.MemoryPool.Fragment;
import dev.rnicsim.verbs.strategy.StrategyCounters;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link MemoryPool} on the simulator: chunks registered once and carved by a buddy allocator, fragments carrying
 * the chunk MR's keys and gathered into SGLs, merging on free, its errors, a failed chunk registration, huge-page
 * chunks and close. The pool is given the simulator PD through {@link StrategyRig#enumSetAccess} (a simulator bug
 * otherwise makes every chunk registration throw, see {@link #shouldRegisterAChunkOnTheSimulatorPdItself}).
 */
class StrategyPoolTest
{
    private static final long CHUNK = 64 * KIB;

    private static MemoryPool.Config config(final long chunkBytes, final int maxChunks)
    {
        return new MemoryPool.Config(chunkBytes, maxChunks, 64, Backing.BASE_PAGES, LOCAL);
    }

    private static MemoryPool pool(final StrategyRig rig, final MemoryPool.Config config)
    {
        return MemoryPool.create(enumSetAccess(rig.pdA), rig.memA(), config);
    }

    private static MemoryPool pool(final StrategyRig.Single s, final MemoryPool.Config config)
    {
        return MemoryPool.create(enumSetAccess(s.pd), s.memory(), config);
    }

    private static MemoryRegion mrOf(final MemoryPool pool, final Fragment f)
    {
        for (final MemoryRegion mr : pool.memoryRegions())
        {
            if (mr.lkey() == f.lkey())
            {
                return mr;
            }
        }
        throw new AssertionError("no MR of the pool has lkey " + f.lkey());
    }

    @Test
    void shouldRegisterOneChunkOnTheFirstAllocationAndServeLaterOnesFromIt()
    {
        final StrategyRig.Single s = new StrategyRig.Single(DeviceProfiles.connectx5());
        final long mrsBefore = s.mrLive();
        final MemoryPool pool = pool(s, config(CHUNK, 4));

        assertThat(pool.counters()).isEqualTo(new StrategyCounters(0, 0, 0, 0, 0, 0, 0, 0));
        assertThat(pool.memoryRegions()).isEmpty();
        assertThat(s.mrLive()).as("nothing is registered before the first allocation").isEqualTo(mrsBefore);

        final Fragment first = pool.allocate(100);

        assertThat(pool.counters()).isEqualTo(new StrategyCounters(0, 1, 0, 0, 1, CHUNK, 1, CHUNK));
        assertThat(s.mrLive()).isEqualTo(mrsBefore + 1);
        final MemoryRegion mr = pool.memoryRegions().getFirst();
        assertThat(mr.lengthBytes()).isEqualTo(CHUNK);
        assertThat(mr.isClosed()).isFalse();
        assertThat(first.lengthBytes()).isEqualTo(100);
        assertThat(first.addr()).isBetween(mr.addr(), mr.addr() + CHUNK - 100);

        final List<Fragment> more = new ArrayList<>();
        for (int i = 0; i < 10; i++)
        {
            more.add(pool.allocate(1 + i * 300));
        }

        assertThat(pool.counters()).isEqualTo(new StrategyCounters(10, 1, 0, 0, 1, CHUNK, 1, CHUNK));
        assertThat(s.mrLive()).isEqualTo(mrsBefore + 1);
        assertThat(pool.memoryRegions()).containsExactly(mr);
        assertThat(pool.liveFragments()).isEqualTo(11);
        for (final Fragment f : more)
        {
            assertThat(f.lkey()).isEqualTo(mr.lkey());
            assertThat(f.addr()).isGreaterThanOrEqualTo(mr.addr());
            assertThat(f.addr() + f.lengthBytes()).isLessThanOrEqualTo(mr.addr() + CHUNK);
        }
    }

    @Test
    void shouldRoundEachFragmentUpToAPowerOfTwoBlockAlignedToItsSize()
    {
        final StrategyRig.Single s = new StrategyRig.Single(DeviceProfiles.connectx5());
        final MemoryPool pool = pool(s, config(CHUNK, 1));
        final List<Fragment> fragments = new ArrayList<>();

        // 3000 bytes take a 4 KiB block: 16 of them fill the 64 KiB chunk exactly.
        for (int i = 0; i < 16; i++)
        {
            fragments.add(pool.allocate(3000));
        }

        final long base = pool.memoryRegions().getFirst().addr();
        assertThat(fragments).extracting(f -> (f.addr() - base) % (4 * KIB)).containsOnly(0L);
        assertThat(fragments).extracting(Fragment::addr).doesNotHaveDuplicates();
        final VerbsException full = fails(() -> pool.allocate(1));
        assertThat(full.errnoName()).isEqualTo(Errno.ENOMEM);

        // 65 bytes take 128: after freeing one 4 KiB block, 32 of them fit and the 33rd does not.
        pool.free(fragments.get(5));
        final List<Fragment> small = new ArrayList<>();
        for (int i = 0; i < 32; i++)
        {
            small.add(pool.allocate(65));
        }
        assertThat(small).extracting(f -> (f.addr() - base) % 128).containsOnly(0L);
        assertThat(small).extracting(Fragment::addr).allSatisfy(a -> assertThat(a).isBetween(
            fragments.get(5).addr(), fragments.get(5).addr() + 4 * KIB - 128));
        assertThat(fails(() -> pool.allocate(1)).errnoName()).isEqualTo(Errno.ENOMEM);

        // Half a chunk plus one byte takes the whole chunk; exactly half takes half.
        final StrategyRig.Single s2 = new StrategyRig.Single(DeviceProfiles.connectx5());
        final MemoryPool halves = pool(s2, config(CHUNK, 1));
        final Fragment whole = halves.allocate(CHUNK / 2 + 1);
        assertThat(fails(() -> halves.allocate(1)).errnoName()).isEqualTo(Errno.ENOMEM);
        halves.free(whole);
        halves.allocate(CHUNK / 2);
        assertThatCode(() -> halves.allocate(CHUNK / 2)).doesNotThrowAnyException();
        assertThat(halves.counters().registrations()).isEqualTo(1);
    }

    @Test
    void shouldGiveEveryFragmentTheKeysOfItsOwnChunkMr()
    {
        final StrategyRig.Single s = new StrategyRig.Single(DeviceProfiles.connectx5());
        final MemoryPool pool = pool(s, config(4 * KIB, 3));

        final Fragment a = pool.allocate(4 * KIB);
        final Fragment b = pool.allocate(2 * KIB);
        final Fragment c = pool.allocate(2 * KIB);
        final Fragment d = pool.allocate(1);

        final List<MemoryRegion> mrs = pool.memoryRegions();
        assertThat(mrs).hasSize(3);
        assertThat(pool.counters().misses()).isEqualTo(3);
        assertThat(pool.counters().hits()).isEqualTo(1);
        assertThat(mrs).extracting(MemoryRegion::lkey).doesNotHaveDuplicates();
        assertThat(List.of(a.lkey(), a.rkey())).containsExactly(mrs.get(0).lkey(), mrs.get(0).rkey());
        assertThat(List.of(b.lkey(), b.rkey(), c.lkey(), c.rkey())).containsExactly(mrs.get(1).lkey(),
            mrs.get(1).rkey(), mrs.get(1).lkey(), mrs.get(1).rkey());
        assertThat(List.of(d.lkey(), d.rkey())).containsExactly(mrs.get(2).lkey(), mrs.get(2).rkey());
        for (final Fragment f : List.of(a, b, c, d))
        {
            final MemoryRegion mr = mrOf(pool, f);
            assertThat(f.addr()).isGreaterThanOrEqualTo(mr.addr());
            assertThat(f.addr() + f.lengthBytes()).isLessThanOrEqualTo(mr.addr() + mr.lengthBytes());
            assertThat(f.sge()).isEqualTo(new Sge(f.addr(), f.lengthBytes(), mr.lkey()));
        }
        assertThat(b.sge(100, 28)).isEqualTo(new Sge(b.addr() + 100, 28, b.lkey()));
        assertThatThrownBy(() -> b.sge(2 * KIB - 10, 11)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.sge(-1, 1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldGatherATwoFragmentSglIntoOneRdmaWriteLandingContiguousAtThePeer()
    {
        final StrategyRig rig = StrategyRig.connectx5();
        final MemoryPool pool = pool(rig, config(CHUNK, 1));
        final Fragment first = pool.allocate(300);
        final Fragment spacer = pool.allocate(1000);
        final Fragment second = pool.allocate(200);
        assertThat(second.addr()).as("the two fragments are apart in the chunk")
            .isNotEqualTo(first.addr() + first.lengthBytes());
        final byte[] one = pattern(300, 0);
        final byte[] two = pattern(200, 77);
        rig.memA().write(first.addr(), one);
        rig.memA().write(spacer.addr(), new byte[1000]);
        rig.memA().write(second.addr(), two);
        final List<Sge> sgl = MemoryPool.sgl(List.of(first, second));
        assertThat(sgl).containsExactly(first.sge(), second.sge());

        final WorkCompletion wc = rig.writeToPeer(sgl, 100);

        assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(wc.opcode()).isEqualTo(WcOpcode.RDMA_WRITE);
        assertThat(wc.byteLen()).isEqualTo(500);
        assertThat(rig.peerBytes(100, 500)).isEqualTo(concat(one, two));
        assertThat(rig.peerBytes(0, 100)).containsOnly(0);
        assertThat(rig.peerBytes(600, 100)).containsOnly(0);
    }

    @Test
    void shouldGatherATwoFragmentSglIntoOneSend()
    {
        final StrategyRig rig = StrategyRig.connectx5();
        final MemoryPool pool = pool(rig, config(CHUNK, 2));
        final Fragment first = pool.allocate(40 * KIB);
        final Fragment second = pool.allocate(700);
        assertThat(first.lkey()).as("from two chunks").isNotEqualTo(second.lkey());
        final byte[] one = pattern(40 * (int)KIB, 3);
        final byte[] two = pattern(700, 9);
        rig.memA().write(first.addr(), one);
        rig.memA().write(second.addr(), two);

        final WorkCompletion recv = rig.sendToPeer(MemoryPool.sgl(List.of(first, second)), 0,
            StrategyRig.PEER_BYTES);

        assertThat(recv.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(recv.byteLen()).isEqualTo(40 * KIB + 700);
        assertThat(rig.peerBytes(0, (int)(40 * KIB + 700))).isEqualTo(concat(one, two));
        assertThat(rig.peerBytes(40 * KIB + 700, 100)).containsOnly(0);
    }

    @Test
    void shouldLetThePeerWriteAndReadAFragmentWithItsRkey()
    {
        final StrategyRig rig = StrategyRig.connectx5();
        final MemoryPool pool = MemoryPool.create(enumSetAccess(rig.pdA), rig.memA(),
            new MemoryPool.Config(CHUNK, 1, 64, Backing.BASE_PAGES, REMOTE_ALL));
        pool.allocate(5000);
        final Fragment target = pool.allocate(256);
        final byte[] data = pattern(256, 42);

        final WorkCompletion write = rig.writeToA(data, target.addr(), target.rkey());

        assertThat(write.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.memA().read(target.addr(), 256)).isEqualTo(data);
        rig.memA().write(target.addr(), pattern(256, 5));
        final WorkCompletion read = rig.readFromA(target.addr(), target.rkey(), 256);
        assertThat(read.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.peerBytes(0, 256)).isEqualTo(pattern(256, 5));
    }

    @Test
    void shouldMergeFreedBuddiesSoThatTheWholeChunkCanBeAllocatedAgain()
    {
        final StrategyRig.Single s = new StrategyRig.Single(DeviceProfiles.connectx5());
        final MemoryPool pool = pool(s, config(CHUNK, 1));
        final List<Fragment> quarters = new ArrayList<>();
        for (int i = 0; i < 4; i++)
        {
            quarters.add(pool.allocate(CHUNK / 4));
        }
        final long mrs = s.mrLive();

        pool.free(quarters.get(0));
        pool.free(quarters.get(2));
        pool.free(quarters.get(3));
        assertThat(fails(() -> pool.allocate(CHUNK)).errnoName()).as("one quarter is still out")
            .isEqualTo(Errno.ENOMEM);
        pool.free(quarters.get(1));

        final Fragment whole = pool.allocate(CHUNK);

        assertThat(whole.addr()).isEqualTo(pool.memoryRegions().getFirst().addr());
        assertThat(pool.counters().registrations()).isEqualTo(1);
        assertThat(pool.liveFragments()).isEqualTo(1);
        assertThat(s.mrLive()).as("free never deregisters").isEqualTo(mrs);
    }

    @Test
    void shouldNotMergeFreeBlocksThatAreNotBuddies()
    {
        final StrategyRig.Single s = new StrategyRig.Single(DeviceProfiles.connectx5());
        final MemoryPool pool = pool(s, config(CHUNK, 1));
        final List<Fragment> quarters = new ArrayList<>();
        for (int i = 0; i < 4; i++)
        {
            quarters.add(pool.allocate(CHUNK / 4));
        }
        final long base = pool.memoryRegions().getFirst().addr();
        quarters.sort((x, y) -> Long.compare(x.addr(), y.addr()));
        assertThat(quarters).extracting(f -> f.addr() - base).containsExactly(0L, CHUNK / 4, CHUNK / 2,
            3 * CHUNK / 4);

        // The middle quarters are adjacent but belong to different halves.
        pool.free(quarters.get(1));
        pool.free(quarters.get(2));

        assertThat(fails(() -> pool.allocate(CHUNK / 2)).errnoName()).isEqualTo(Errno.ENOMEM);
        final Fragment q1 = pool.allocate(CHUNK / 4);
        final Fragment q2 = pool.allocate(CHUNK / 4);
        assertThat(List.of(q1.addr(), q2.addr())).containsExactlyInAnyOrder(quarters.get(1).addr(),
            quarters.get(2).addr());
    }

    @Test
    void shouldFailWithEnomemNamingMaxChunksWhenEveryChunkIsFull()
    {
        final StrategyRig.Single s = new StrategyRig.Single(DeviceProfiles.connectx5());
        final MemoryPool pool = pool(s, config(8 * KIB, 2));
        pool.allocate(8 * KIB);
        pool.allocate(4 * KIB);
        pool.allocate(4 * KIB);
        final StrategyCounters before = pool.counters();
        final long mrs = s.mrLive();

        final VerbsException e = fails(() -> pool.allocate(64));

        assertThat(e.errnoName()).isEqualTo(Errno.ENOMEM);
        assertThat(e).hasMessageContaining("maxChunks=2");
        assertThat(pool.counters()).isEqualTo(before);
        assertThat(s.mrLive()).isEqualTo(mrs);
        assertThat(pool.liveFragments()).isEqualTo(3);
    }

    @Test
    void shouldFailWithEinvalForASizeOfZeroOrAboveTheChunk()
    {
        final StrategyRig.Single s = new StrategyRig.Single(DeviceProfiles.connectx5());
        final MemoryPool pool = pool(s, config(CHUNK, 1));

        for (final long bytes : new long[] {0, -1, CHUNK + 1, Long.MAX_VALUE, Long.MIN_VALUE})
        {
            final VerbsException e = fails(() -> pool.allocate(bytes));
            assertThat(e.errnoName()).as("allocate(%d)", bytes).isEqualTo(Errno.EINVAL);
        }
        assertThat(pool.counters()).isEqualTo(new StrategyCounters(0, 0, 0, 0, 0, 0, 0, 0));
        assertThat(pool.memoryRegions()).isEmpty();
        assertThat(pool.allocate(CHUNK).lengthBytes()).isEqualTo(CHUNK);
    }

    @Test
    void shouldFailWithEinvalForADoubleFreeAndForAForeignFragment()
    {
        final StrategyRig.Single s = new StrategyRig.Single(DeviceProfiles.connectx5());
        final MemoryPool pool = pool(s, config(CHUNK, 1));
        final MemoryPool other = pool(s, config(CHUNK, 1));
        final Fragment a = pool.allocate(100);
        final Fragment b = pool.allocate(100);
        final Fragment foreign = other.allocate(100);
        pool.free(a);

        assertThat(fails(() -> pool.free(a)).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(fails(() -> pool.free(foreign)).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(fails(() -> pool.free(new Fragment(b.addr(), b.lengthBytes(), foreign.lkey(), foreign.rkey())))
            .errnoName()).as("b's address with another MR's key").isEqualTo(Errno.EINVAL);
        assertThat(fails(() -> pool.free(new Fragment(b.addr() + 64, 10, b.lkey(), b.rkey()))).errnoName())
            .as("inside b, not its start").isEqualTo(Errno.EINVAL);
        assertThat(fails(() -> pool.free(null)).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(pool.liveFragments()).isEqualTo(1);
        assertThat(other.liveFragments()).isEqualTo(1);

        // The failed frees changed nothing: b is still out, and a's block is still free exactly once.
        pool.free(b);
        assertThat(fails(() -> pool.free(b)).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(pool.allocate(CHUNK).lengthBytes()).isEqualTo(CHUNK);
        assertThat(fails(() -> pool.allocate(1)).errnoName()).isEqualTo(Errno.ENOMEM);
    }

    @Test
    void shouldPropagateEnomemAndLeaveNoChunkNoMrAndNoMappingWhenTheChunkRegistrationFails()
    {
        final StrategyRig.Single s = new StrategyRig.Single(DeviceProfiles.connectx5(),
            p -> p.capIpcLock(false).rlimitMemlockBytes(32 * KIB));
        final UserProcess process = s.ctx.process();
        final MemoryPool pool = pool(s, config(CHUNK, 2));
        final long mrs = s.mrLive();
        final long failures = s.device.counter(SimCounter.MR_REGISTRATION_FAILURES);
        final List<Vma> vmas = List.copyOf(process.vmas());
        final long pinned = process.pinnedVmPages();

        final VerbsException e = fails(() -> pool.allocate(100));

        assertThat(e.errnoName()).isEqualTo(Errno.ENOMEM);
        assertThat(s.device.counter(SimCounter.MR_REGISTRATION_FAILURES)).isEqualTo(failures + 1);
        assertThat(s.mrLive()).isEqualTo(mrs);
        assertThat(pool.memoryRegions()).isEmpty();
        assertThat(pool.liveFragments()).isZero();
        assertThat(pool.counters().registrations()).isZero();
        assertThat(pool.counters().liveMrs()).isZero();
        assertThat(pool.counters().liveBytes()).isZero();
        assertThat(process.vmas()).as("the chunk's memory is unmapped again").isEqualTo(vmas);
        assertThat(process.pinnedVmPages()).isEqualTo(pinned);

        // With room under the limit the same pool registers its first chunk now.
        process.rlimitMemlockBytes(1 * MIB);
        final Fragment f = pool.allocate(100);
        assertThat(pool.memoryRegions()).hasSize(1);
        assertThat(pool.counters().registrations()).isEqualTo(1);
        assertThat(s.mrLive()).isEqualTo(mrs + 1);
        assertThat(f.lkey()).isEqualTo(pool.memoryRegions().getFirst().lkey());
    }

    @Test
    void shouldNeedFewerMttEntriesForHugetlbChunksThanForBasePageChunksOfTheSameSize()
    {
        final StrategyRig rig = StrategyRig.of(HostConfig.builder().physicalMemoryBytes(1L << 30).hugepages2M(4)
            .build(), DeviceProfiles.connectx5(), p -> { });
        final long chunk = 2 * MIB;
        final MemoryPool base = pool(rig, new MemoryPool.Config(chunk, 1, 4 * KIB, Backing.BASE_PAGES, LOCAL));
        final MemoryPool huge = pool(rig, new MemoryPool.Config(chunk, 1, 4 * KIB, Backing.HUGETLB_2M, LOCAL));

        final long before = rig.deviceA.counter(SimCounter.MTT_ENTRIES_IN_USE);
        base.allocate(4 * KIB);
        final long afterBase = rig.deviceA.counter(SimCounter.MTT_ENTRIES_IN_USE);
        huge.allocate(4 * KIB);
        final long afterHuge = rig.deviceA.counter(SimCounter.MTT_ENTRIES_IN_USE);
        final long baseEntries = afterBase - before;
        final long hugeEntries = afterHuge - afterBase;

        assertThat(baseEntries).isEqualTo(chunk / (4 * KIB));
        assertThat(hugeEntries).isEqualTo(1);
        assertThat(rig.processA().vmaAt(huge.memoryRegions().getFirst().addr()).kind()).isEqualTo(VmaKind.HUGETLB);
        assertThat(rig.processA().vmaAt(base.memoryRegions().getFirst().addr()).kind())
            .isEqualTo(VmaKind.ANONYMOUS);
        huge.close();
        base.close();
        assertThat(rig.deviceA.counter(SimCounter.MTT_ENTRIES_IN_USE)).isEqualTo(before);
    }

    @Test
    void shouldDeregisterEveryChunkAndUnmapItsMemoryOnClose()
    {
        final StrategyRig.Single s = new StrategyRig.Single(DeviceProfiles.connectx5());
        final UserProcess process = s.ctx.process();
        final long mrs = s.mrLive();
        final long pinned = process.pinnedVmPages();
        final MemoryPool pool = pool(s, config(CHUNK, 3));
        final Fragment kept = pool.allocate(CHUNK);
        pool.allocate(CHUNK);
        pool.allocate(100);
        final List<MemoryRegion> chunks = pool.memoryRegions();
        assertThat(chunks).hasSize(3);
        assertThat(s.mrLive()).isEqualTo(mrs + 3);

        pool.close();

        assertThat(chunks).allSatisfy(mr -> assertThat(mr.isClosed()).isTrue());
        assertThat(chunks).allSatisfy(mr -> assertThat(process.vmaAt(mr.addr())).isNull());
        assertThat(s.mrLive()).isEqualTo(mrs);
        assertThat(s.device.counter(SimCounter.MR_DEREGISTRATIONS)).isEqualTo(3);
        assertThat(process.pinnedVmPages()).isEqualTo(pinned);
        assertThat(pool.memoryRegions()).isEmpty();
        assertThat(pool.liveFragments()).isZero();
        assertThat(pool.counters().liveMrs()).isZero();
        assertThat(pool.counters().liveBytes()).isZero();
        assertThatCode(pool::close).as("idempotent").doesNotThrowAnyException();
        assertThat(s.mrLive()).isEqualTo(mrs);
        assertThat(fails(() -> pool.allocate(1)).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(fails(() -> pool.free(kept)).errnoName()).isEqualTo(Errno.EINVAL);
    }

    @Test
    void shouldRejectConfigurationsOutOfRange()
    {
        assertThatThrownBy(() -> new MemoryPool.Config(3 * KIB, 1, 64, Backing.BASE_PAGES, LOCAL))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new MemoryPool.Config(12 * KIB, 1, 64, Backing.BASE_PAGES, LOCAL))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new MemoryPool.Config(4 * KIB, 0, 64, Backing.BASE_PAGES, LOCAL))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new MemoryPool.Config(4 * KIB, 1, 32, Backing.BASE_PAGES, LOCAL))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new MemoryPool.Config(4 * KIB, 1, 96, Backing.BASE_PAGES, LOCAL))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new MemoryPool.Config(4 * KIB, 1, 8 * KIB, Backing.BASE_PAGES, LOCAL))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatCode(() -> new MemoryPool.Config(4 * KIB, 1, 4 * KIB, Backing.BASE_PAGES, LOCAL))
            .doesNotThrowAnyException();
    }

    /**
     * BUG (simulator, SimPd.register): the pool stores its rights as an immutable {@code Set.copyOf}, and
     * {@code SimPd.register} calls {@code access.contains(null)}, which throws NullPointerException for immutable
     * sets: a pool on the simulator's own PD cannot register any chunk. Fails until SimPd accepts any Set.
     */
    @Test
    void shouldRegisterAChunkOnTheSimulatorPdItself()
    {
        final StrategyRig.Single s = new StrategyRig.Single(DeviceProfiles.connectx5());
        final MemoryPool pool = MemoryPool.create(s.pd, s.memory(), config(CHUNK, 1));

        final Fragment f = pool.allocate(100);

        assertThat(pool.memoryRegions()).hasSize(1);
        assertThat(f.lkey()).isEqualTo(pool.memoryRegions().getFirst().lkey());
    }
}
