package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Frames found once for a DMA: a copy through them moves the bytes {@link PhysicalMemory#copy} moves and leaves the
 * frame table as it leaves it; a frame that a copy inside it would not take straight (no written bytes, the zero
 * page as a destination, device memory) is not resolved, and once any frame of the memory lost its bytes the copy is
 * refused (the caller takes {@link PhysicalMemory#copy}).
 */
class ResolvedFramesTest
{
    private static final int FRAME = PhysicalMemory.FRAME_BYTES;
    private static final int PAGES = 24;

    /** A host with one process and two written buffers of {@link #PAGES} scattered 4 KiB pages. */
    private static final class World
    {
        final Host host = new Host(HostConfig.builder().physicalMemoryBytes(64L << 20).thpMode(ThpMode.NEVER)
            .build());
        final PhysicalMemory phys = host.physicalMemory();
        final UserProcess p = host.spawn("app");
        final long src = written(1);
        final long dst = written(2);

        private long written(final long seed)
        {
            final long va = p.mmapAnonymous((long)PAGES * FRAME);
            final long filler = p.mmapAnonymous((long)PAGES * FRAME);
            final byte[] bytes = new byte[PAGES * FRAME];
            new SplittableRandom(seed).nextBytes(bytes);
            for (int i = 0; i < PAGES; i++)
            {
                // each page faulted in before a page of the filler: no two pages back to back
                p.write(va + (long)i * FRAME, new byte[] {bytes[i * FRAME]});
                p.touch(filler + (long)i * FRAME, 1, true);
            }
            p.write(va, bytes);
            return va;
        }

        ResolvedFrames resolve(final long va, final boolean write)
        {
            final ResolvedFrames frames = new ResolvedFrames(phys, PAGES);
            for (int i = 0; i < PAGES; i++)
            {
                assertThat(frames.resolve(i, p.translate(va + (long)i * FRAME), write)).isTrue();
                assertThat(frames.pfn(i)).isEqualTo(p.translate(va + (long)i * FRAME) >>> 12);
            }
            return frames;
        }
    }

    @Test
    void copiesInsideFramesMoveWhatPhysicalMemoryCopyMovesAndLeaveTheFrameTableAlike()
    {
        final World viaFrames = new World();
        final World viaCopy = new World();
        final ResolvedFrames from = viaFrames.resolve(viaFrames.src, false);
        final ResolvedFrames to = viaFrames.resolve(viaFrames.dst, true);
        final SplittableRandom random = new SplittableRandom(7);
        for (int k = 0; k < 200; k++)
        {
            final int i = random.nextInt(PAGES);
            final int j = random.nextInt(PAGES);
            final int srcOffset = random.nextInt(FRAME);
            final int dstOffset = random.nextInt(FRAME);
            final int length = 1 + random.nextInt(FRAME - Math.max(srcOffset, dstOffset));
            final long s = viaFrames.p.translate(viaFrames.src + (long)i * FRAME) + srcOffset;
            final long d = viaFrames.p.translate(viaFrames.dst + (long)j * FRAME) + dstOffset;

            assertThat(ResolvedFrames.copy(from, i, s, to, j, d, length)).isTrue();
            PhysicalMemory.copy(viaCopy.phys, viaCopy.p.translate(viaCopy.src + (long)i * FRAME) + srcOffset,
                viaCopy.phys, viaCopy.p.translate(viaCopy.dst + (long)j * FRAME) + dstOffset, length);
        }
        assertThat(viaFrames.p.read(viaFrames.dst, PAGES * FRAME)).isEqualTo(viaCopy.p.read(viaCopy.dst,
            PAGES * FRAME));
        assertThat(viaFrames.p.read(viaFrames.src, PAGES * FRAME)).isEqualTo(viaCopy.p.read(viaCopy.src,
            PAGES * FRAME));
        assertThat(viaFrames.phys.frames().foldedSections()).isEqualTo(viaCopy.phys.frames().foldedSections());
    }

    @Test
    void refusesARunThatIsNotInsideTheFramesFoundAndCopiesNothing()
    {
        final World w = new World();
        final ResolvedFrames from = w.resolve(w.src, false);
        final ResolvedFrames to = w.resolve(w.dst, true);
        final byte[] before = w.p.read(w.dst, PAGES * FRAME);
        final long s = w.p.translate(w.src);
        final long d = w.p.translate(w.dst);

        // past the end of the frame, another frame than the place's, a place outside the list, nothing to copy
        assertThat(ResolvedFrames.copy(from, 0, s + 100, to, 0, d, FRAME - 99)).isFalse();
        assertThat(ResolvedFrames.copy(from, 1, s, to, 0, d, 64)).isFalse();
        assertThat(ResolvedFrames.copy(from, PAGES, s, to, 0, d, 64)).isFalse();
        assertThat(ResolvedFrames.copy(from, -1, s, to, 0, d, 64)).isFalse();
        assertThat(ResolvedFrames.copy(from, 0, s, to, 0, d, 0)).isFalse();
        assertThat(w.p.read(w.dst, PAGES * FRAME)).isEqualTo(before);
    }

    @Test
    void aFrameWithoutWrittenBytesTheZeroPageAsDestinationAndDeviceMemoryAreNotResolved()
    {
        final World w = new World();
        final long untouched = w.p.mmapAnonymous(2L * FRAME);
        w.p.touch(untouched, FRAME, true);
        w.p.touch(untouched + FRAME, FRAME, false);
        final ResolvedFrames frames = new ResolvedFrames(w.phys, 4);

        assertThat(frames.resolve(0, w.p.translate(untouched), false)).as("a frame never written").isFalse();
        assertThat(w.p.translate(untouched + FRAME) >>> 12).isEqualTo(w.phys.zeroPfn());
        assertThat(frames.resolve(1, w.p.translate(untouched + FRAME), true)).as("the zero page").isFalse();
        assertThat(frames.resolve(2, PhysicalMemory.DEVICE_MEMORY_BASE, false)).as("device memory").isFalse();
        assertThat(frames.resolve(3, -FRAME, false)).isFalse();
        for (int i = 0; i < 4; i++)
        {
            assertThat(frames.pfn(i)).isEqualTo(-1);
        }
    }

    @Test
    void onceAFrameOfTheMemoryLostItsBytesNoCopyGoesThroughTheFramesFound()
    {
        final World w = new World();
        final ResolvedFrames from = w.resolve(w.src, false);
        final ResolvedFrames to = w.resolve(w.dst, true);
        final long s = w.p.translate(w.src);
        final long d = w.p.translate(w.dst);
        assertThat(from.current()).isTrue();

        // the source's last page unmapped: its frame is freed (and may be handed out again)
        final long lastFrame = w.p.translate(w.src + (PAGES - 1L) * FRAME);
        w.p.munmap(w.src + (PAGES - 1L) * FRAME, FRAME);
        assertThat(w.phys.isAllocated(lastFrame >>> 12)).isFalse();
        final byte[] before = w.p.read(w.dst, FRAME);

        assertThat(from.current()).isFalse();
        assertThat(to.current()).as("the destination's memory is the same host's").isFalse();
        assertThat(ResolvedFrames.copy(from, 0, s, to, 0, d, FRAME)).isFalse();
        assertThat(w.p.read(w.dst, FRAME)).isEqualTo(before);
        assertThat(from.resolve(0, s, false)).as("found again after the change").isFalse();
        assertThat(new ResolvedFrames(w.phys, 1).resolve(0, s, false)).isTrue();
    }
}
