package dev.rnicsim.pagetable;

import static dev.rnicsim.pagetable.FrameTable.BLOCKS;
import static dev.rnicsim.pagetable.FrameTable.BLOCK_BYTES;
import static dev.rnicsim.pagetable.FrameTable.BLOCK_SHIFT;
import static dev.rnicsim.pagetable.FrameTable.FLAG_HAS_DATA;
import static dev.rnicsim.pagetable.FrameTable.SECTION_MASK;
import static dev.rnicsim.pagetable.FrameTable.SECTION_SHIFT;
import static dev.rnicsim.pagetable.FrameTable.flagsOf;
import static dev.rnicsim.pagetable.FrameTable.frameAt;

import dev.rnicsim.pagetable.FrameTable.Section;
import java.lang.foreign.MemorySegment;

/**
 * A DMA's data movement between the bytes of frames, possibly of two hosts' {@link FrameTable}s, without a bounce
 * buffer: frame by frame, within one frame when both hold bytes, and in bulk runs over the blocks that lie back to
 * back in one slab on both sides. The frames' per-frame state and the slabs stay the tables'; these copies read and
 * mark them as a DMA engine's writes would. Not thread safe.
 */
final class FrameCopies
{
    private FrameCopies()
    {
    }

    /**
     * Copies bytes between frames, possibly of two hosts' tables, without a bounce buffer: a DMA's data movement.
     * Bytes of a frame never written read as zeros.
     */
    static void copyBytes(final FrameTable src, final long srcPfn, final int srcOffset, final FrameTable dst,
        final long dstPfn, final int dstOffset, final int length)
    {
        final Section d = dst.section(dstPfn);
        final int di = (int)(dstPfn & SECTION_MASK);
        final boolean srcHasData = src.hasData(srcPfn);
        if (!srcHasData && (d.flags[di] & FLAG_HAS_DATA) == 0)
        {
            return;
        }
        final long dstBase = dst.allocatedFrameAt(d, di);
        final MemorySegment dstSlab = d.data[di >>> BLOCK_SHIFT];
        if ((d.flags[di] & FLAG_HAS_DATA) == 0)
        {
            dstSlab.asSlice(dstBase, PhysicalMemory.FRAME_BYTES).fill((byte)0);
            d.flags[di] |= FLAG_HAS_DATA;
        }
        if (!srcHasData)
        {
            dstSlab.asSlice(dstBase + dstOffset, length).fill((byte)0);
            return;
        }
        final Section s = src.sectionOrNull(srcPfn);
        final int si = (int)(srcPfn & SECTION_MASK);
        MemorySegment.copy(s.data[si >>> BLOCK_SHIFT], frameAt(s, si) + srcOffset, dstSlab, dstBase + dstOffset,
            length);
    }

    /**
     * Copies bytes within one frame of each side when both frames are in use (not free), hold written bytes and lie
     * in sections with per-frame state; else does nothing and answers false (the caller's general path decides, with
     * its checks and errors). The destination's section is noted as changed, as {@link #copyRun} notes it.
     *
     * @return true when the bytes were copied.
     */
    static boolean copyInFrame(final FrameTable src, final long srcPfn, final int srcOffset, final FrameTable dst,
        final long dstPfn, final int dstOffset, final int length)
    {
        final Section s = src.sections[(int)(srcPfn >>> SECTION_SHIFT)];
        final int dstSection = (int)(dstPfn >>> SECTION_SHIFT);
        final Section d = dst.sections[dstSection];
        if (s == null || d == null)
        {
            return false;
        }
        // Null while a section is folded. A frame that holds written bytes is allocated (markFree clears the flag),
        // so the flag alone tells a frame this copy may use.
        final byte[] sf = s.flags;
        final byte[] df = d.flags;
        final int si = (int)(srcPfn & SECTION_MASK);
        final int di = (int)(dstPfn & SECTION_MASK);
        if (sf == null || df == null || si >= sf.length || di >= df.length || (sf[si] & FLAG_HAS_DATA) == 0
            || (df[di] & FLAG_HAS_DATA) == 0)
        {
            return false;
        }
        if (dst.lastTouched != dstSection)
        {
            dst.touched(dstSection);
        }
        MemorySegment.copy(s.data[si >>> BLOCK_SHIFT], frameAt(s, si) + srcOffset, d.data[di >>> BLOCK_SHIFT],
            frameAt(d, di) + dstOffset, length);
        return true;
    }

    /**
     * Copies a run of bytes that frames with data hold back to back: as many of {@code maxLength} bytes from
     * {@code srcAddr} as lie back to back in one slab of the source and one of the destination (up to 256 KiB: blocks
     * carved one after the other from one slab, within one section; on the destination, blocks already allocated)
     * and in source frames holding written bytes, in one bulk copy (a DMA burst). Destination frames without bytes
     * yet are zeroed first, as {@link #copyBytes} does.
     *
     * @return the bytes copied, or 0 when the first source frame holds no bytes (the caller copies it frame by frame).
     */
    static int copyRun(final FrameTable src, final long srcAddr, final FrameTable dst, final long dstAddr,
        final int maxLength)
    {
        final int frameShift = PhysicalMemory.FRAME_SHIFT;
        final long srcPfn = srcAddr >>> frameShift;
        final Section s = src.sectionOrNull(srcPfn);
        if (s == null || s.data == null || (flagsOf(s, srcPfn) & FLAG_HAS_DATA) == 0)
        {
            return 0;
        }
        final long dstPfn = dstAddr >>> frameShift;
        final Section d = dst.section(dstPfn);
        final int srcFirst = (int)(srcPfn & SECTION_MASK);
        final int dstFirst = (int)(dstPfn & SECTION_MASK);
        final long dstAt = dst.allocatedFrameAt(d, dstFirst) + (dstAddr & (PhysicalMemory.FRAME_BYTES - 1));
        final long srcAt = frameAt(s, srcFirst) + (srcAddr & (PhysicalMemory.FRAME_BYTES - 1));
        int length = (int)Math.min(maxLength, Math.min(slabRun(s, srcAddr), slabRun(d, dstAddr)));
        final long srcLast = (srcAddr + length - 1) >>> frameShift;
        for (long pfn = srcPfn + 1; pfn <= srcLast; pfn++)
        {
            if ((flagsOf(s, pfn) & FLAG_HAS_DATA) == 0)
            {
                length = (int)((pfn << frameShift) - srcAddr);
                break;
            }
        }
        final MemorySegment dstSlab = d.data[dstFirst >>> BLOCK_SHIFT];
        final long dstLast = (dstAddr + length - 1) >>> frameShift;
        d.cover((int)(dstLast & SECTION_MASK)); // the run lies in one slab of one section (slabRun)
        for (long pfn = dstPfn; pfn <= dstLast; pfn++)
        {
            final int i = (int)(pfn & SECTION_MASK);
            if ((d.flags[i] & FLAG_HAS_DATA) == 0)
            {
                dstSlab.asSlice(frameAt(d, i), PhysicalMemory.FRAME_BYTES).fill((byte)0);
                d.flags[i] |= FLAG_HAS_DATA;
            }
        }
        MemorySegment.copy(s.data[srcFirst >>> BLOCK_SHIFT], srcAt, dstSlab, dstAt, length);
        return length;
    }

    /**
     * The bytes from {@code addr} (in section {@code s}, whose block there is allocated) that lie back to back in the
     * same slab: to the end of its block, then through each next block of the section carved right after it from the
     * same slab.
     */
    private static long slabRun(final Section s, final long addr)
    {
        final int first = (int)((addr >>> PhysicalMemory.FRAME_SHIFT) & SECTION_MASK) >>> BLOCK_SHIFT;
        long run = BLOCK_BYTES - (addr & (BLOCK_BYTES - 1));
        for (int b = first + 1; b < BLOCKS && s.data[b] == s.data[first] && s.dataAt[b] == s.dataAt[b - 1]
            + BLOCK_BYTES; b++)
        {
            run += BLOCK_BYTES;
        }
        return run;
    }
}
