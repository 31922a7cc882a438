package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A frame table takes the slabs of tables that are gone with the bytes they held ({@link FrameSlabs}): a frame never
 * written still reads as zeros, a frame written in part reads zeros around what was written, and a copy from a frame
 * never written gives zeros, as on slabs fresh from the allocator.
 */
class FrameSlabsTest
{
    private static final int FRAME = PhysicalMemory.FRAME_BYTES;

    @Test
    void shouldReadZerosWhereNothingWasWrittenOnSlabsThatHeldAnotherTablesBytes()
    {
        // Slabs of every size, filled with bytes a gone table could have left, laid among the free ones.
        final FrameSlabs gone = new FrameSlabs(new Object());
        final List<MemorySegment> used = new ArrayList<>();
        for (int blocks = 1; blocks <= 16; blocks *= 2)
        {
            for (int i = 0; i < 3; i++)
            {
                final MemorySegment slab = gone.take(blocks);
                slab.fill((byte)0x5a);
                used.add(slab);
            }
        }
        FrameSlabs.giveBack(used);

        final FrameTable table = new FrameTable(4096);
        final FrameTable other = new FrameTable(4096);
        for (long pfn = 0; pfn < 64; pfn++)
        {
            table.markAllocated(pfn, 0, FrameTable.KIND_ANON);
            other.markAllocated(pfn, 0, FrameTable.KIND_ANON);
        }
        final byte[] data = "written".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        // Frames written in part, spread over several blocks and so several slabs.
        for (long pfn = 1; pfn < 64; pfn += 5)
        {
            table.writeFrame(pfn, 100, data, 0, data.length);
        }
        final byte[] frame = new byte[FRAME];
        for (long pfn = 0; pfn < 64; pfn++)
        {
            table.readFrame(pfn, 0, frame, 0, FRAME);
            final byte[] expected = new byte[FRAME];
            if (pfn % 5 == 1)
            {
                System.arraycopy(data, 0, expected, 100, data.length);
            }
            assertThat(frame).as("frame %d", pfn).isEqualTo(expected);
            assertThat(table.hasData(pfn)).isEqualTo(pfn % 5 == 1);
        }

        // A copy into frames never written: from a frame never written (zeros), and from a frame written in part.
        FrameCopies.copyBytes(other, 2, 0, table, 3, 0, 64);
        FrameCopies.copyBytes(table, 1, 100, other, 7, 200, data.length);
        table.readFrame(3, 0, frame, 0, FRAME);
        assertThat(frame).isEqualTo(new byte[FRAME]);
        other.readFrame(7, 0, frame, 0, FRAME);
        final byte[] copied = new byte[FRAME];
        System.arraycopy(data, 0, copied, 200, data.length);
        assertThat(frame).isEqualTo(copied);
        // A whole frame moved (compaction) and one taken out (swap) hold exactly what was written.
        table.copyFrame(6, 9);
        table.readFrame(9, 0, frame, 0, FRAME);
        final byte[] moved = new byte[FRAME];
        System.arraycopy(data, 0, moved, 100, data.length);
        assertThat(frame).isEqualTo(moved);
        assertThat(Arrays.equals(table.takeBytes(11), moved)).isTrue();
        assertThat(table.takeBytes(12)).isNull();
    }
}
