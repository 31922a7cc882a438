package dev.rnicsim.pagetable;

import static dev.rnicsim.pagetable.KernelAssertions.assertErrno;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Physical memory of a host: zones, the buddy allocator, hugetlb pools reserved at boot, sparse frame state and
 * the validation of {@link HostConfig}.
 */
class PhysicalMemoryTest
{
    private static final long MIB = 1L << 20;
    private static final long GIB = 1L << 30;
    private static final long TIB = 1L << 40;
    private static final int FRAME = PhysicalMemory.FRAME_BYTES;

    private static Host host(final HostConfig.Builder builder)
    {
        return new Host(builder.build());
    }

    // ------------------------------------------------------------------------------------------------ boot

    @Test
    void shouldBootDefaultHostWithSixteenGibAllFreeInZoneNormal()
    {
        final Host host = new Host();
        final PhysicalMemory pm = host.physicalMemory();

        assertThat(host.config().physicalMemoryBytes()).isEqualTo(16 * GIB);
        assertThat(pm.totalFrames()).isEqualTo(16 * GIB / FRAME);
        assertThat(pm.freeFrames()).isEqualTo(pm.totalFrames());
        assertThat(pm.usedFrames()).isZero();
        assertThat(pm.zoneFrames(Zone.NORMAL)).isEqualTo(pm.totalFrames());
        assertThat(pm.zoneFrames(Zone.MOVABLE)).isZero();
        assertThat(pm.zoneFreeFrames(Zone.MOVABLE)).isZero();
        assertThat(pm.buddyInfo(Zone.MOVABLE)).isEmpty();
        // 16 naturally aligned 1 GiB blocks, nothing smaller.
        final List<Integer> expected = new ArrayList<>(Collections.nCopies(BuddyAllocator.MAX_ORDER + 1, 0));
        expected.set(18, 16);
        assertThat(pm.buddyInfo(Zone.NORMAL)).isEqualTo(expected);
    }

    @Test
    void shouldBootWithDocumentedDefaults()
    {
        final HostConfig config = HostConfig.builder().build();

        assertThat(config.thpMode()).isEqualTo(ThpMode.MADVISE);
        assertThat(config.maxMapCount()).isEqualTo(65530);
        assertThat(config.mmapMinAddrBytes()).isEqualTo(65536);
        assertThat(config.forkBehaviour()).isEqualTo(ForkBehaviour.MODERN);
        assertThat(config.swapBytes()).isZero();
        assertThat(config.movableZoneBytes()).isZero();
        assertThat(config.hugepages2M()).isZero();
        assertThat(config.hugepages1G()).isZero();
    }

    @Test
    void shouldBootOneTebibyteHostAndMapAndPinALittle()
    {
        final Host host = host(HostConfig.builder().physicalMemoryBytes(TIB).thpMode(ThpMode.ALWAYS).hugepages1G(2));
        final PhysicalMemory pm = host.physicalMemory();
        final UserProcess p = host.spawn("big").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);

        assertThat(pm.totalFrames()).isEqualTo(TIB / FRAME);
        assertThat(pm.buddyInfo(Zone.NORMAL).get(18)).isEqualTo(1024 - 2);

        final long va = p.mmapAnonymous(8 * MIB);
        p.write(va + 3 * MIB, new byte[] {7, 8, 9});
        p.touch(va, 8 * MIB, true);
        final PinnedPages pin = p.pinUserPages(va, 8 * MIB, true, true);

        assertThat(pin.runs()).allSatisfy(r -> assertThat(r.pageSizeBytes()).isEqualTo(2 * MIB));
        assertThat(p.read(va + 3 * MIB, 3)).containsExactly(7, 8, 9);
        assertThat(pm.freeFrames() + pm.usedFrames()).isEqualTo(pm.totalFrames());
        assertThat(pm.freeFrames()).isEqualTo(pm.totalFrames() - 2 * PageSize.SIZE_1G.frames() - 8 * MIB / FRAME);
        p.munmap(va, 8 * MIB);
        p.unpinUserPages(pin);
        assertThat(pm.freeFrames()).isEqualTo(pm.totalFrames() - 2 * PageSize.SIZE_1G.frames());
    }

    @Test
    void shouldBootLargestHostWithoutPerFrameObjects()
    {
        // 4 TiB is 2^30 frames: an object (or even a byte) per frame would not fit the test JVM's heap.
        final Host host = host(HostConfig.builder().physicalMemoryBytes(HostConfig.MAX_PHYSICAL_MEMORY_BYTES)
            .movableZoneBytes(TIB));
        final UserProcess p = host.spawn("huge");
        final long va = p.mmapAnonymous(64 * 1024);
        p.write(va, new byte[] {1});

        assertThat(host.physicalMemory().zoneFrames(Zone.MOVABLE)).isEqualTo(TIB / FRAME);
        assertThat(host.physicalMemory().zoneOf(p.translate(va) >>> 12)).isEqualTo(Zone.MOVABLE);
        assertThat(host.physicalMemory().usedFrames()).isEqualTo(1);
    }

    // ------------------------------------------------------------------------------------------------ zones

    @Test
    void shouldPutZoneMovableAtTheTopOfMemory()
    {
        final Host host = host(HostConfig.builder().physicalMemoryBytes(512 * MIB).movableZoneBytes(128 * MIB));
        final PhysicalMemory pm = host.physicalMemory();
        final long boundary = 384 * MIB / FRAME;

        assertThat(pm.zoneFrames(Zone.NORMAL)).isEqualTo(boundary);
        assertThat(pm.zoneFrames(Zone.MOVABLE)).isEqualTo(128 * MIB / FRAME);
        assertThat(pm.zoneOf(0)).isEqualTo(Zone.NORMAL);
        assertThat(pm.zoneOf(boundary - 1)).isEqualTo(Zone.NORMAL);
        assertThat(pm.zoneOf(boundary)).isEqualTo(Zone.MOVABLE);
        assertThat(pm.zoneOf(pm.totalFrames() - 1)).isEqualTo(Zone.MOVABLE);
    }

    @Test
    void shouldAllocateUserPagesFromZoneMovableFirst()
    {
        // GFP_HIGHUSER_MOVABLE: anonymous user pages prefer ZONE_MOVABLE.
        final Host host = host(HostConfig.builder().physicalMemoryBytes(512 * MIB).movableZoneBytes(128 * MIB));
        final PhysicalMemory pm = host.physicalMemory();
        final UserProcess p = host.spawn("app");
        final long va = p.mmapAnonymous(4 * FRAME);

        p.touch(va, 4 * FRAME, true);

        for (int i = 0; i < 4; i++)
        {
            assertThat(pm.zoneOf(p.translate(va + (long)i * FRAME) >>> 12)).isEqualTo(Zone.MOVABLE);
        }
        assertThat(pm.zoneFreeFrames(Zone.MOVABLE)).isEqualTo(128 * MIB / FRAME - 4);
        assertThat(pm.zoneFreeFrames(Zone.NORMAL)).isEqualTo(384 * MIB / FRAME);
    }

    // ------------------------------------------------------------------------------------------------ buddy

    @Test
    void shouldSplitTheSmallestLargeEnoughBlockForAnAllocation()
    {
        // 256 MiB is one free order-16 block; taking one page leaves one free block of each order 0 to 15.
        final Host host = host(HostConfig.builder().physicalMemoryBytes(256 * MIB).thpMode(ThpMode.NEVER));
        final UserProcess p = host.spawn("app");
        assertThat(host.physicalMemory().buddyInfo(Zone.NORMAL).get(16)).isEqualTo(1);
        final long va = p.mmapAnonymous(FRAME);

        p.touch(va, FRAME, true);

        final List<Integer> expected = new ArrayList<>(Collections.nCopies(BuddyAllocator.MAX_ORDER + 1, 0));
        for (int order = 0; order < 16; order++)
        {
            expected.set(order, 1);
        }
        assertThat(host.physicalMemory().buddyInfo(Zone.NORMAL)).isEqualTo(expected);
        assertThat(p.translate(va)).isZero();
    }

    @Test
    void shouldMergeBuddiesBackWhenPagesAreFreed()
    {
        final Host host = host(HostConfig.builder().physicalMemoryBytes(256 * MIB).thpMode(ThpMode.NEVER));
        final PhysicalMemory pm = host.physicalMemory();
        final List<Integer> before = pm.buddyInfo(Zone.NORMAL);
        final UserProcess p = host.spawn("app");
        final long va = p.mmapAnonymous(100 * FRAME);
        p.touch(va, 100 * FRAME, true);
        assertThat(pm.buddyInfo(Zone.NORMAL)).isNotEqualTo(before);

        p.munmap(va, 100 * FRAME);

        assertThat(pm.buddyInfo(Zone.NORMAL)).isEqualTo(before);
        assertThat(pm.freeFrames()).isEqualTo(pm.totalFrames());
    }

    @Test
    void shouldKeepFreePlusUsedEqualToTotal()
    {
        final Host host = host(HostConfig.builder().physicalMemoryBytes(256 * MIB).thpMode(ThpMode.ALWAYS)
            .hugepages2M(3));
        final PhysicalMemory pm = host.physicalMemory();
        final UserProcess p = host.spawn("app");
        final long va = p.mmapAnonymous(6 * MIB);
        p.touch(va, 5 * MIB, true);
        p.munmap(va + FRAME, FRAME);

        assertThat(pm.freeFrames() + pm.usedFrames()).isEqualTo(pm.totalFrames());
    }

    // ------------------------------------------------------------------------------------------------ hugetlb pools

    @Test
    void shouldReserveHugetlbPoolsAtBoot()
    {
        final Host host = host(HostConfig.builder().physicalMemoryBytes(2 * GIB).hugepages2M(8).hugepages1G(1));
        final PhysicalMemory pm = host.physicalMemory();
        final long poolFrames = 8 * PageSize.SIZE_2M.frames() + PageSize.SIZE_1G.frames();

        assertThat(host.hugepagesTotal(PageSize.SIZE_2M)).isEqualTo(8);
        assertThat(host.hugepagesFree(PageSize.SIZE_2M)).isEqualTo(8);
        assertThat(host.hugepagesReserved(PageSize.SIZE_2M)).isZero();
        assertThat(host.hugepagesTotal(PageSize.SIZE_1G)).isEqualTo(1);
        assertThat(host.hugepagesFree(PageSize.SIZE_1G)).isEqualTo(1);
        assertThat(host.hugepagesReserved(PageSize.SIZE_1G)).isZero();
        assertThat(pm.freeFrames()).isEqualTo(pm.totalFrames() - poolFrames);
        assertThat(pm.usedFrames()).isEqualTo(poolFrames);
    }

    @Test
    void shouldTakeHugetlbPoolPagesFromZoneNormal()
    {
        final Host host = host(HostConfig.builder().physicalMemoryBytes(1 * GIB).movableZoneBytes(512 * MIB)
            .hugepages2M(4));
        final UserProcess p = host.spawn("app");
        final long va = p.mmap(0, 8 * MIB, Prot.READ_WRITE,
            EnumSet.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.HUGETLB));

        p.touch(va, 8 * MIB, true);

        assertThat(host.physicalMemory().zoneFreeFrames(Zone.MOVABLE)).isEqualTo(512 * MIB / FRAME);
        for (long off = 0; off < 8 * MIB; off += 2 * MIB)
        {
            assertThat(host.physicalMemory().zoneOf(p.translate(va + off) >>> 12)).isEqualTo(Zone.NORMAL);
        }
    }

    @Test
    void shouldPlaceOneGibHugetlbPagesOnOneGibBoundaries()
    {
        final Host host = host(HostConfig.builder().physicalMemoryBytes(3 * GIB).hugepages2M(3).hugepages1G(2));
        final UserProcess p = host.spawn("app").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        final long va = p.mmap(0, 2 * GIB, Prot.READ_WRITE,
            EnumSet.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.HUGETLB, MapFlag.HUGE_1GB));

        p.touch(va, 2 * GIB, true);

        assertThat(p.translate(va) % GIB).isZero();
        assertThat(p.translate(va + GIB) % GIB).isZero();
        assertThat(host.physicalMemory().folioSize(p.translate(va) >>> 12)).isEqualTo(PageSize.SIZE_1G);
    }

    // ------------------------------------------------------------------------------------------------ physical access

    @Test
    void shouldReadAndWriteAllocatedFramesByPhysicalAddress()
    {
        final Host host = host(HostConfig.builder().physicalMemoryBytes(256 * MIB));
        final UserProcess p = host.spawn("app");
        final long va = p.mmapAnonymous(2 * FRAME);
        p.touch(va, 2 * FRAME, true);
        final long phys = p.translate(va + FRAME - 2);

        host.physicalMemory().write(phys, new byte[] {1, 2}, 0, 2);

        assertThat(p.read(va + FRAME - 2, 2)).containsExactly(1, 2);
        final byte[] back = new byte[2];
        host.physicalMemory().read(phys, back, 0, 2);
        assertThat(back).containsExactly(1, 2);
    }

    @Test
    void shouldTellARangeThatReadsAsZerosBecauseNoFrameOfItWasEverWritten()
    {
        final Host host = host(HostConfig.builder().physicalMemoryBytes(256 * MIB));
        final PhysicalMemory pm = host.physicalMemory();
        final UserProcess p = host.spawn("app");
        final long va = p.mmapAnonymous(3 * FRAME);
        p.touch(va, 3 * FRAME, true);
        p.write(va + FRAME + 10, new byte[] {0});
        final long untouched = p.translate(va);
        final long written = p.translate(va + FRAME);

        assertThat(pm.readsAsNeverWritten(untouched, FRAME)).as("faulted in, never written").isTrue();
        assertThat(pm.readsAsNeverWritten(written, FRAME)).as("a zero byte written: the frame holds bytes").isFalse();
        assertThat(pm.readsAsNeverWritten(written + 100, 8)).isFalse();
        assertThat(pm.readsAsNeverWritten(p.translate(va + 2 * FRAME), FRAME)).isTrue();
        final byte[] back = {9, 9, 9, 9};
        pm.read(untouched + 40, back, 0, 4);
        assertThat(back).as("what the answer stands for").containsExactly(0, 0, 0, 0);
        long free = 0;
        while (pm.isAllocated(free))
        {
            free++;
        }
        final long freeAddr = free * FRAME;
        assertErrno(Errno.EFAULT, () -> pm.readsAsNeverWritten(freeAddr, 8)); // a free frame, as read refuses it
        assertErrno(Errno.EFAULT, () -> pm.readsAsNeverWritten(256 * MIB - 4, 8));
    }

    @Test
    void shouldFailWithEfaultWhenDmaTouchesAFreeFrame()
    {
        final Host host = host(HostConfig.builder().physicalMemoryBytes(256 * MIB));
        final PhysicalMemory pm = host.physicalMemory();

        assertErrno(Errno.EFAULT, () -> pm.read(0, new byte[8], 0, 8));
        assertErrno(Errno.EFAULT, () -> pm.write(4 * FRAME, new byte[8], 0, 8));
        assertThat(pm.freeFrames()).isEqualTo(pm.totalFrames());
        assertThat(pm.usedFrames()).isZero();
    }

    @Test
    void shouldFailWithEfaultWhenDmaLeavesPhysicalMemory()
    {
        final Host host = host(HostConfig.builder().physicalMemoryBytes(256 * MIB));

        assertErrno(Errno.EFAULT, () -> host.physicalMemory().read(256 * MIB - 4, new byte[8], 0, 8));
        assertErrno(Errno.EFAULT, () -> host.physicalMemory().read(-4096, new byte[8], 0, 8));
    }

    @Test
    void shouldCheckEveryDmaAccessAndMoveNoByteWhenTheBytesLiveElsewhere()
    {
        final Host host = host(HostConfig.builder().physicalMemoryBytes(256 * MIB));
        final PhysicalMemory pm = host.physicalMemory();
        final UserProcess p = host.spawn("app");
        final long va = p.mmapAnonymous(2 * FRAME);
        p.write(va, new byte[] {7, 7, 7});
        p.touch(va + FRAME, FRAME, true);
        final long phys = p.translate(va);
        final Host other = host(HostConfig.builder().physicalMemoryBytes(256 * MIB));
        final UserProcess q = other.spawn("peer");
        final long qva = q.mmapAnonymous(FRAME);
        q.write(qva, new byte[] {5, 5, 5});

        pm.bytesElsewhere(true);
        pm.write(phys + FRAME, new byte[] {1, 2}, 0, 2);
        final byte[] back = {9, 9, 9};
        pm.read(phys, back, 0, 3);
        PhysicalMemory.copy(other.physicalMemory(), q.translate(qva), pm, phys + FRAME, 3);
        pm.checkDma(phys, 2 * FRAME, true);

        assertThat(pm.bytesElsewhere()).isTrue();
        assertThat(back).as("a DMA read gives zeros").containsExactly(0, 0, 0);
        assertThat(p.read(va, 3)).as("the CPU's bytes stay").containsExactly(7, 7, 7);
        assertThat(p.read(va + FRAME, 3)).as("DMA writes and copies are dropped").containsExactly(0, 0, 0);
        assertErrno(Errno.EFAULT, () -> pm.read(4 * FRAME, new byte[8], 0, 8));
        assertErrno(Errno.EFAULT, () -> pm.write(4 * FRAME, new byte[8], 0, 8));
        assertErrno(Errno.EFAULT, () -> pm.checkDma(4 * FRAME, 8, false));
        assertErrno(Errno.EFAULT, () -> pm.checkDma(pm.zeroPfn() * FRAME, 8, true));
        assertErrno(Errno.EFAULT, () -> PhysicalMemory.copy(other.physicalMemory(), q.translate(qva), pm,
            pm.zeroPfn() * FRAME, 8));
        assertErrno(Errno.EFAULT, () -> pm.read(256 * MIB - 4, new byte[8], 0, 8));
        pm.checkDma(pm.zeroPfn() * FRAME, 8, false);
    }

    // ------------------------------------------------------------------------------------------------ bad configs

    static Stream<Arguments> invalidConfigs()
    {
        return Stream.of(
            bad("memory below 64 MiB", "physicalMemoryBytes",
                () -> HostConfig.builder().physicalMemoryBytes(32 * MIB)),
            bad("memory above 4 TiB", "physicalMemoryBytes",
                () -> HostConfig.builder().physicalMemoryBytes(8 * TIB)),
            bad("memory not page aligned", "physicalMemoryBytes",
                () -> HostConfig.builder().physicalMemoryBytes(256 * MIB + 1)),
            bad("movable zone covering all memory", "movableZoneBytes",
                () -> HostConfig.builder().physicalMemoryBytes(256 * MIB).movableZoneBytes(256 * MIB)),
            bad("movable zone not page aligned", "movableZoneBytes",
                () -> HostConfig.builder().physicalMemoryBytes(256 * MIB).movableZoneBytes(100)),
            bad("negative movable zone", "movableZoneBytes",
                () -> HostConfig.builder().physicalMemoryBytes(256 * MIB).movableZoneBytes(-FRAME)),
            bad("negative 2 MiB pool", "hugepages2M",
                () -> HostConfig.builder().physicalMemoryBytes(256 * MIB).hugepages2M(-1)),
            bad("negative 1 GiB pool", "hugepages1G",
                () -> HostConfig.builder().physicalMemoryBytes(256 * MIB).hugepages1G(-1)),
            bad("2 MiB pool larger than ZONE_NORMAL", "ZONE_NORMAL",
                () -> HostConfig.builder().physicalMemoryBytes(256 * MIB).hugepages2M(129)),
            bad("1 GiB pool in ZONE_MOVABLE", "ZONE_NORMAL",
                () -> HostConfig.builder().physicalMemoryBytes(2 * GIB).movableZoneBytes(GIB + 2 * MIB)
                    .hugepages1G(1)),
            bad("negative swap", "swapBytes",
                () -> HostConfig.builder().physicalMemoryBytes(256 * MIB).swapBytes(-FRAME)),
            bad("swap not page aligned", "swapBytes",
                () -> HostConfig.builder().physicalMemoryBytes(256 * MIB).swapBytes(FRAME + 1)),
            bad("swap above 8 TiB", "swapBytes",
                () -> HostConfig.builder().physicalMemoryBytes(256 * MIB).swapBytes(16 * TIB)),
            bad("vm.max_map_count -1", "maxMapCount",
                () -> HostConfig.builder().physicalMemoryBytes(256 * MIB).maxMapCount(-1)),
            bad("mmap_min_addr not page aligned", "mmapMinAddrBytes",
                () -> HostConfig.builder().physicalMemoryBytes(256 * MIB).mmapMinAddrBytes(100)),
            bad("negative mmap_min_addr", "mmapMinAddrBytes",
                () -> HostConfig.builder().physicalMemoryBytes(256 * MIB).mmapMinAddrBytes(-FRAME)),
            bad("mmap_min_addr at TASK_SIZE", "mmapMinAddrBytes",
                () -> HostConfig.builder().physicalMemoryBytes(256 * MIB).mmapMinAddrBytes(UserProcess.TASK_SIZE)),
            bad("no THP mode", "thpMode",
                () -> HostConfig.builder().physicalMemoryBytes(256 * MIB).thpMode(null)),
            bad("no fork behaviour", "forkBehaviour",
                () -> HostConfig.builder().physicalMemoryBytes(256 * MIB).forkBehaviour(null)));
    }

    private static Arguments bad(final String name, final String named, final Supplier<HostConfig.Builder> config)
    {
        return Arguments.of(name, named, config);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidConfigs")
    void shouldRejectInvalidHostConfigWithEinvalNamingTheValue(final String name, final String named,
        final Supplier<HostConfig.Builder> config)
    {
        final HostConfig.Builder builder = config.get();

        final KernelException e = assertErrno(Errno.EINVAL, builder::build);

        assertThat(e.getMessage()).contains(named);
    }

    @Test
    void shouldAcceptSmallestAndLargestHosts()
    {
        assertThat(HostConfig.builder().physicalMemoryBytes(HostConfig.MIN_PHYSICAL_MEMORY_BYTES).build()
            .physicalMemoryBytes()).isEqualTo(64 * MIB);
        assertThat(HostConfig.builder().physicalMemoryBytes(HostConfig.MAX_PHYSICAL_MEMORY_BYTES).build()
            .physicalMemoryBytes()).isEqualTo(4 * TIB);
    }

    @Test
    void shouldAcceptHugetlbPoolsFillingZoneNormalExactly()
    {
        final Host host = host(HostConfig.builder().physicalMemoryBytes(256 * MIB).movableZoneBytes(128 * MIB)
            .hugepages2M(64));

        assertThat(host.physicalMemory().zoneFreeFrames(Zone.NORMAL)).isZero();
        assertThat(host.physicalMemory().zoneFreeFrames(Zone.MOVABLE)).isEqualTo(128 * MIB / FRAME);
    }

    // ------------------------------------------------------------------------------------------------ DMA copy

    /**
     * A DMA copy between two hosts over 1,024 frames (two 2 MiB sections), at offsets that differ on the two sides,
     * with source frames never written (they read as zeros) in the middle of the range and destination frames
     * written before: the destination ends with exactly the source's bytes, zeros for the unwritten frames, and the
     * bytes around the range unchanged, whether the frames move in bulk runs or one by one.
     */
    @Test
    void shouldCopyRunsOfFramesExactlyAcrossSectionsAndUnwrittenFrames()
    {
        final PhysicalMemory src = new Host().physicalMemory();
        final PhysicalMemory dst = new Host().physicalMemory();
        final int frames = 1024;
        final long srcHead = src.allocateFolio(10, false, FrameTable.KIND_ANON);
        final long dstHead = dst.allocateFolio(10, false, FrameTable.KIND_ANON);
        final byte[] frame = new byte[FRAME];
        for (int f = 0; f < frames; f++)
        {
            if (f == 3 || f == 500 || f == 511 || f == 512 || f == 700)
            {
                continue; // never written: reads as zeros
            }
            java.util.Arrays.fill(frame, (byte)(1 + f % 250));
            frame[f % FRAME] = (byte)0x5a;
            src.write((srcHead + f) * FRAME, frame, 0, FRAME);
        }
        final byte[] before = new byte[frames * FRAME];
        java.util.Arrays.fill(before, (byte)0xee);
        dst.write(dstHead * FRAME, before, 0, before.length);
        final long srcAddr = srcHead * FRAME + 100;
        final long dstAddr = dstHead * FRAME + 3000;
        final int length = (frames - 2) * FRAME - 77;

        PhysicalMemory.copy(src, srcAddr, dst, dstAddr, length);

        final byte[] expected = before.clone();
        final byte[] moved = new byte[length];
        src.read(srcAddr, moved, 0, length);
        System.arraycopy(moved, 0, expected, 3000, length);
        final byte[] actual = new byte[frames * FRAME];
        dst.read(dstHead * FRAME, actual, 0, actual.length);
        assertThat(moved[3 * FRAME]).isZero();
        assertThat(moved[512 * FRAME]).isZero();
        assertThat(java.util.Arrays.mismatch(actual, expected)).isEqualTo(-1);
    }

    /**
     * The bytes of frames are handed out in blocks carved one after the other from shared slabs, in the order frames
     * are first written: frames of three folios in three sections, first written in an interleaved order (a block of
     * one folio, then one of another, across more blocks than the largest slab holds), each frame with a pattern of
     * its own, each keep exactly their own bytes, and a DMA copy between two of them moves exactly the source's
     * bytes. Two blocks that shared bytes would show one frame's pattern in another.
     */
    @Test
    void shouldKeepEveryFrameItsOwnBytesWhenBlocksAreHandedOutInterleavedAcrossSections()
    {
        final PhysicalMemory memory = new Host().physicalMemory();
        final int frames = 512;
        final long[] heads = new long[3];
        for (int i = 0; i < heads.length; i++)
        {
            heads[i] = memory.allocateFolio(9, false, FrameTable.KIND_ANON);
        }
        final byte[] frame = new byte[FRAME];
        // Every 4th frame of each folio in turn first (one new block each), then the rest in reverse order.
        final List<long[]> order = new ArrayList<>();
        for (int f = 0; f < frames; f += 4)
        {
            for (int i = 0; i < heads.length; i++)
            {
                order.add(new long[] {i, f});
            }
        }
        for (int f = frames - 1; f >= 0; f--)
        {
            for (int i = 0; i < heads.length; i++)
            {
                if (f % 4 != 0)
                {
                    order.add(new long[] {i, f});
                }
            }
        }
        for (final long[] o : order)
        {
            fillFrame(frame, (int)o[0], (int)o[1]);
            memory.write((heads[(int)o[0]] + o[1]) * FRAME, frame, 0, FRAME);
        }
        final byte[] expected = new byte[FRAME];
        final byte[] actual = new byte[FRAME];
        for (int i = 0; i < heads.length; i++)
        {
            for (int f = 0; f < frames; f++)
            {
                fillFrame(expected, i, f);
                memory.read((heads[i] + f) * FRAME, actual, 0, FRAME);
                assertThat(java.util.Arrays.mismatch(actual, expected)).as("folio %d frame %d", i, f).isEqualTo(-1);
            }
        }

        PhysicalMemory.copy(memory, heads[0] * FRAME + 10, memory, heads[2] * FRAME + 10, 100 * FRAME);

        final byte[] moved = new byte[100 * FRAME];
        final byte[] landed = new byte[100 * FRAME];
        memory.read(heads[0] * FRAME + 10, moved, 0, moved.length);
        memory.read(heads[2] * FRAME + 10, landed, 0, landed.length);
        assertThat(java.util.Arrays.mismatch(landed, moved)).isEqualTo(-1);
        fillFrame(expected, 1, 7);
        memory.read((heads[1] + 7) * FRAME, actual, 0, FRAME);
        assertThat(java.util.Arrays.mismatch(actual, expected)).isEqualTo(-1);
    }

    /**
     * A bulk run over several blocks of one slab whose destination frames were not all written (every third frame
     * of the destination written first, so its blocks exist but some of their frames hold no bytes): the run zeroes
     * each such frame before the copy, so the destination ends with exactly the source's bytes and its bytes outside
     * the range stay as written.
     */
    @Test
    void shouldCopyARunOverSeveralBlocksIntoFramesNotWrittenYet()
    {
        final PhysicalMemory memory = new Host().physicalMemory();
        final long src = memory.allocateFolio(6, false, FrameTable.KIND_ANON);
        final long dst = memory.allocateFolio(6, false, FrameTable.KIND_ANON);
        final byte[] frame = new byte[FRAME];
        for (int f = 0; f < 64; f++)
        {
            fillFrame(frame, 0, f);
            memory.write((src + f) * FRAME, frame, 0, FRAME);
        }
        for (int f = 0; f < 64; f += 3)
        {
            fillFrame(frame, 1, f);
            memory.write((dst + f) * FRAME, frame, 0, FRAME);
        }
        final byte[] expected = new byte[64 * FRAME];
        memory.read(dst * FRAME, expected, 0, expected.length);
        final int length = 40 * FRAME + 123;
        final byte[] moved = new byte[length];
        memory.read(src * FRAME + 7, moved, 0, length);
        System.arraycopy(moved, 0, expected, 5 * FRAME + 7, length);

        PhysicalMemory.copy(memory, src * FRAME + 7, memory, dst * FRAME + 5 * FRAME + 7, length);

        final byte[] actual = new byte[64 * FRAME];
        memory.read(dst * FRAME, actual, 0, actual.length);
        assertThat(java.util.Arrays.mismatch(actual, expected)).isEqualTo(-1);
    }

    /** A frame's own pattern: its folio and frame number in its first bytes, the rest by both. */
    private static void fillFrame(final byte[] frame, final int folio, final int f)
    {
        java.util.Arrays.fill(frame, (byte)(1 + (folio * 37 + f) % 251));
        frame[0] = (byte)folio;
        frame[1] = (byte)f;
        frame[2] = (byte)(f >>> 8);
    }
}
