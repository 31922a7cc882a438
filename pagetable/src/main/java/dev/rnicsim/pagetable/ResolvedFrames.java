package dev.rnicsim.pagetable;

import java.lang.foreign.MemorySegment;

/**
 * The bytes of a list of frames a DMA is about to move, found once: for each frame, where its written bytes lie, so
 * that a DMA moving a message packet by packet finds a packet's bytes by the frame's place in the list instead of
 * through the frame table's sections and flags each time (a per-message run list of frame addresses, as a NIC's
 * DMA context holds the translated pages of the transfer in progress).
 *
 * <p>A frame is resolved only when {@link PhysicalMemory#copy} would copy a run inside it without its general path:
 * a frame of this memory's RAM holding written bytes (and, for a destination, not the shared zero page). The bytes
 * found are the frame's while no frame of the memory lost its written bytes since they were found (freed, handed
 * out again, given a copy of a frame without bytes): {@link #copy} checks that count on every call and answers false
 * once it moved, so the caller takes the general path with its checks and errors. Every answer, check and effect is
 * the one {@link PhysicalMemory#copy} has for the same run ({@code ResolvedFramesTest}).
 *
 * <p>Not thread safe.
 */
public final class ResolvedFrames
{
    private final PhysicalMemory memory;
    private final FrameTable table;
    /** {@link FrameTable#dataDrops()} when the frames were found. */
    private final long found;
    /** Each frame's number, or -1 when it was not resolved. */
    private final long[] pfns;
    /** Each resolved frame's block of bytes (where in it: {@link FrameTable#offsetInBlock}). */
    private final MemorySegment[] blocks;

    /**
     * An empty list of {@code frames} places; {@link #resolve} fills them.
     *
     * @param memory the physical memory the frames belong to.
     * @param frames the number of places.
     */
    public ResolvedFrames(final PhysicalMemory memory, final int frames)
    {
        if (frames < 0)
        {
            throw new IllegalArgumentException("a list of " + frames + " frames; give 0 or more");
        }
        this.memory = memory;
        this.table = memory.frames();
        this.found = table.dataDrops();
        this.pfns = new long[frames];
        this.blocks = new MemorySegment[frames];
        java.util.Arrays.fill(pfns, -1);
    }

    /**
     * Finds the bytes of the frame holding {@code dmaAddress} for place {@code index}.
     *
     * @param index      the place, 0 to {@link #size()} - 1.
     * @param dmaAddress an address in the frame.
     * @param write      true when the frame is written (the destination of the copies).
     * @return true when the frame was resolved; false when a copy inside it takes {@link PhysicalMemory#copy}'s
     * general path (device memory, the shared zero page written, a frame without written bytes), which the place
     * then stays for.
     */
    public boolean resolve(final int index, final long dmaAddress, final boolean write)
    {
        pfns[index] = -1;
        blocks[index] = null;
        final long pfn = dmaAddress >>> PhysicalMemory.FRAME_SHIFT;
        if (dmaAddress < 0 || pfn > memory.totalFrames() || write && pfn == memory.zeroPfn()
            || table.dataDrops() != found)
        {
            return false;
        }
        final MemorySegment block = table.writtenBlock(pfn);
        if (block == null)
        {
            return false;
        }
        pfns[index] = pfn;
        blocks[index] = block;
        return true;
    }

    /** @return the number of places. */
    public int size()
    {
        return pfns.length;
    }

    /** @return the frame number resolved for place {@code index}, or -1. */
    public long pfn(final int index)
    {
        return pfns[index];
    }

    /** @return the physical memory of the frames. */
    public PhysicalMemory memory()
    {
        return memory;
    }

    /** @return true while every resolved frame still holds the bytes found for it. */
    public boolean current()
    {
        return table.dataDrops() == found;
    }

    /**
     * {@link PhysicalMemory#copy} of a run inside the frame of place {@code srcIndex} to a run inside the frame of
     * place {@code dstIndex}, when both places resolved the frames the addresses lie in and the bytes found are still
     * theirs: the same bytes copied and the destination's section noted as changed, as {@link PhysicalMemory#copy}
     * does. Else nothing happens and the answer is false: the caller copies with {@link PhysicalMemory#copy}.
     *
     * @param src         the source's frames.
     * @param srcIndex    the source frame's place.
     * @param srcAddr     the first source byte's DMA address.
     * @param dst         the destination's frames.
     * @param dstIndex    the destination frame's place.
     * @param dstAddr     the first destination byte's DMA address.
     * @param lengthBytes bytes to copy.
     * @return true when the bytes were copied.
     */
    public static boolean copy(final ResolvedFrames src, final int srcIndex, final long srcAddr,
        final ResolvedFrames dst, final int dstIndex, final long dstAddr, final int lengthBytes)
    {
        final long[] sp = src.pfns;
        final long[] dp = dst.pfns;
        if (srcIndex < 0 || srcIndex >= sp.length || dstIndex < 0 || dstIndex >= dp.length || lengthBytes <= 0)
        {
            return false;
        }
        final long srcPfn = srcAddr >>> PhysicalMemory.FRAME_SHIFT;
        final long dstPfn = dstAddr >>> PhysicalMemory.FRAME_SHIFT;
        if (sp[srcIndex] != srcPfn || dp[dstIndex] != dstPfn
            || (srcAddr & (PhysicalMemory.FRAME_BYTES - 1)) + lengthBytes > PhysicalMemory.FRAME_BYTES
            || (dstAddr & (PhysicalMemory.FRAME_BYTES - 1)) + lengthBytes > PhysicalMemory.FRAME_BYTES
            || src.table.dataDrops() != src.found || dst.table.dataDrops() != dst.found)
        {
            return false;
        }
        dst.table.dmaWritten(dstPfn);
        MemorySegment.copy(src.blocks[srcIndex], FrameTable.offsetInBlock(srcAddr), dst.blocks[dstIndex],
            FrameTable.offsetInBlock(dstAddr), lengthBytes);
        return true;
    }
}
