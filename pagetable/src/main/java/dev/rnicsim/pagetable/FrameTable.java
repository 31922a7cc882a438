package dev.rnicsim.pagetable;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Per-frame state of physical memory, the model's {@code struct page} array, kept sparse like the kernel's
 * SPARSEMEM sections: state exists only for 2 MiB sections in which a frame has been handed out, as primitive
 * arrays (11 bytes a frame, grown as higher frames change), and bytes exist only for 16 KiB blocks of a section in
 * which a frame has been written, as off-heap memory ({@link java.lang.foreign}) carved back to back from slabs of up
 * to 256 KiB ({@link #newBlock}). A 1 TiB host that uses little memory costs little. A section whose 512 frames
 * all hold the same state (a 2 MiB block of order-0 frames mapped and pinned alike, as a large registration leaves
 * them) is folded into that one state and unfolded on its next change: it is checked when it leaves the short list
 * of sections changed last, so a long run of mapped pages costs a few bytes a section.
 *
 * <p>Per frame: the kind of use, the folio order (every frame of a folio holds it, so the head is found by
 * alignment), the number of page-table entries mapping the frame, the folio's pin count (kept on the head
 * frame, exact, as {@code folio->_pincount} for large folios: mm/gup.c), and whether the frame holds written
 * bytes (else it reads as zeros). Not thread safe.
 */
final class FrameTable
{
    static final byte KIND_FREE = 0;
    static final byte KIND_ANON = 1;
    static final byte KIND_FILE = 2;
    static final byte KIND_HUGETLB = 3;
    /** The shared zero page: mapped read-only by read faults on anonymous memory, never counted or freed. */
    static final byte KIND_ZERO = 4;

    static final int SECTION_SHIFT = 9;
    static final int SECTION_FRAMES = 1 << SECTION_SHIFT;
    static final int SECTION_MASK = SECTION_FRAMES - 1;
    static final byte FLAG_HAS_DATA = 1;
    /**
     * A section's bytes are allocated in blocks of this many frames (16 KiB), each on the first write into it: the
     * allocator zeroes what it hands out, so a whole 2 MiB section allocated for a few written frames cost the zeroing
     * of 2 MiB (a simulated host with a few buffers spread over sections paid it for each), and a 64 KiB block for a
     * process that writes a page or two cost the zeroing of 64 KiB.
     */
    static final int BLOCK_SHIFT = 2;
    private static final int BLOCK_FRAMES = 1 << BLOCK_SHIFT;
    static final int BLOCKS = SECTION_FRAMES >>> BLOCK_SHIFT;
    static final long BLOCK_BYTES = (long)BLOCK_FRAMES * PhysicalMemory.FRAME_BYTES;

    final Section[] sections;
    /** Frames of the table: those of its last section past them do not exist. */
    private final long totalFrames;

    /** Sections changed last, checked for folding when they leave this list (oldest first, -1: empty slot). */
    private static final int RECENT = 4;
    private final int[] recent = {-1, -1, -1, -1};
    private int recentNext;
    /**
     * The section {@link #touched} was last called for, which is in {@link #recent} (it stays there until a section
     * that is not enters): a repeated change to it (every packet of a DMA into one section) skips the search.
     */
    int lastTouched = -1;

    static final class Section
    {
        /**
         * Frames a new section's per-frame arrays cover at first: they double, up to the whole section, as a higher
         * frame changes; the frames past them are free (kind, order, flags and counts 0). A fresh host hands out its
         * lowest frames first, and a simulated host of a few buffers allocated 5.5 KiB of per-frame state for each
         * section it touched.
         */
        static final int FIRST_FRAMES = 32;
        /** Per-frame state, all as long, covering the section's first frames; all null while the section is folded. */
        byte[] kind;
        byte[] order;
        byte[] flags;
        int[] mapCount;
        int[] pinCount;
        /** The state every frame holds while folded. */
        byte uKind;
        byte uOrder;
        byte uFlags;
        int uMapCount;
        int uPinCount;
        /**
         * Where the bytes of the frames lie, a block of {@link #BLOCK_FRAMES} frames per entry: the slab the block was
         * carved from (shared by the blocks of one slab), the block starting {@link #dataAt} bytes into it; null until
         * a frame is written. A copy through the slab's segment object reads one such object per slab (up to 64
         * frames) where a segment per block had it read one per 4 frames: a DMA of 1 MiB in packets of 4 KiB read a
         * cold block object every 4 packets on each side, a dependent load before the copy could start (measured in
         * docs/benchmarks.md, "A ninth round").
         */
        MemorySegment[] data;
        /** The offset in bytes of each block in its slab ({@link #data}); null with it. */
        int[] dataAt;
        int usedFrames;

        /** A section of free frames, with per-frame state. */
        Section()
        {
            kind = new byte[FIRST_FRAMES];
            order = new byte[FIRST_FRAMES];
            flags = new byte[FIRST_FRAMES];
            mapCount = new int[FIRST_FRAMES];
            pinCount = new int[FIRST_FRAMES];
        }

        /** Makes the per-frame arrays of an unfolded section cover frame {@code i}. */
        void cover(final int i)
        {
            if (i >= kind.length)
            {
                final int n = Math.min(SECTION_FRAMES, Math.max(2 * kind.length, Integer.highestOneBit(i) << 1));
                kind = java.util.Arrays.copyOf(kind, n);
                order = java.util.Arrays.copyOf(order, n);
                flags = java.util.Arrays.copyOf(flags, n);
                mapCount = java.util.Arrays.copyOf(mapCount, n);
                pinCount = java.util.Arrays.copyOf(pinCount, n);
            }
        }

        /** A folded section: every frame holds this kind, order 0, unmapped, unpinned, without bytes. */
        Section(final byte foldedKind, final int usedFrames)
        {
            uKind = foldedKind;
            this.usedFrames = usedFrames;
        }

        boolean folded()
        {
            return kind == null;
        }

        /** Folds the section when all its frames hold one state. */
        void foldIfUniform()
        {
            if (kind == null || usedFrames != SECTION_FRAMES || kind.length != SECTION_FRAMES)
            {
                return;
            }
            final byte k = kind[0];
            final byte o = order[0];
            final byte f = flags[0];
            final int m = mapCount[0];
            final int p = pinCount[0];
            if (o != 0)
            {
                return; // a huge folio keeps its pins on its head frame only: never uniform
            }
            for (int i = 1; i < SECTION_FRAMES; i++)
            {
                if (kind[i] != k || order[i] != o || flags[i] != f || mapCount[i] != m || pinCount[i] != p)
                {
                    return;
                }
            }
            uKind = k;
            uOrder = o;
            uFlags = f;
            uMapCount = m;
            uPinCount = p;
            kind = null;
            order = null;
            flags = null;
            mapCount = null;
            pinCount = null;
        }

        /** Gives a folded section its per-frame state back before a change. */
        void unfold()
        {
            if (kind != null)
            {
                return;
            }
            kind = new byte[SECTION_FRAMES];
            order = new byte[SECTION_FRAMES];
            flags = new byte[SECTION_FRAMES];
            mapCount = new int[SECTION_FRAMES];
            pinCount = new int[SECTION_FRAMES];
            java.util.Arrays.fill(kind, uKind);
            java.util.Arrays.fill(order, uOrder);
            java.util.Arrays.fill(flags, uFlags);
            java.util.Arrays.fill(mapCount, uMapCount);
            java.util.Arrays.fill(pinCount, uPinCount);
        }
    }

    /**
     * Where the slabs of bytes come from: slabs of tables that are gone when there are some ({@link FrameSlabs}: the
     * allocator zeroed each new one, and a fresh host paid it), given back when this table goes.
     */
    private final FrameSlabs bytes = new FrameSlabs(this);
    /** Most blocks of one slab (256 KiB): see {@link #newBlock}. */
    private static final int MAX_SLAB_BLOCKS = 16;
    /** The slab blocks are carved from ({@link #newBlock}), the bytes of it handed out, and the next slab's blocks. */
    private MemorySegment slab;
    private long slabUsed;
    private int slabBlocks = 1;

    FrameTable(final long totalFrames)
    {
        this.totalFrames = totalFrames;
        sections = new Section[(int)((totalFrames + SECTION_MASK) >>> SECTION_SHIFT)];
    }

    /** The section of {@code pfn}, created or unfolded, ready for a change of its per-frame state. */
    Section section(final long pfn)
    {
        final int index = (int)(pfn >>> SECTION_SHIFT);
        Section s = sections[index];
        if (s == null)
        {
            s = new Section();
            sections[index] = s;
        }
        else if (s.folded())
        {
            s.unfold();
        }
        s.cover((int)(pfn & SECTION_MASK));
        if (lastTouched != index)
        {
            touched(index);
        }
        return s;
    }

    /** Notes a change to a section; the one changed longest ago leaves the list and is folded if it can be. */
    void touched(final int index)
    {
        lastTouched = index;
        for (int i = 0; i < RECENT; i++)
        {
            if (recent[i] == index)
            {
                return;
            }
        }
        final int leaving = recent[recentNext];
        recent[recentNext] = index;
        recentNext = (recentNext + 1) % RECENT;
        if (leaving >= 0 && sections[leaving] != null)
        {
            sections[leaving].foldIfUniform();
        }
    }

    Section sectionOrNull(final long pfn)
    {
        return sections[(int)(pfn >>> SECTION_SHIFT)];
    }

    /** Marks the {@code 2^order} frames from {@code head} as a folio of the given kind, unmapped and unpinned. */
    void markAllocated(final long head, final int order, final byte kind)
    {
        final long end = head + (1L << order);
        final int index = (int)(head >>> SECTION_SHIFT);
        if ((head & SECTION_MASK) == 0 && end == totalFrames && order == 0 && sections[index] == null)
        {
            // The only frame of the table's last section (the zero page past a host's memory): the section is born
            // folded, without per-frame arrays (5.5 KiB a host), as none of its other frames exists.
            sections[index] = new Section(kind, 1);
            return;
        }
        for (long pfn = head; pfn < end; pfn++)
        {
            final Section s = section(pfn);
            final int i = (int)(pfn & SECTION_MASK);
            s.kind[i] = kind;
            s.order[i] = (byte)order;
            s.flags[i] = 0;
            s.mapCount[i] = 0;
            s.pinCount[i] = 0;
            s.usedFrames++;
        }
    }

    /** Marks the frames of a folio free; sections left without a used frame drop their state and bytes. */
    void markFree(final long head, final int order)
    {
        final long end = head + (1L << order);
        for (long pfn = head; pfn < end; pfn++)
        {
            final Section s = section(pfn);
            final int i = (int)(pfn & SECTION_MASK);
            s.kind[i] = KIND_FREE;
            s.order[i] = 0;
            s.flags[i] = 0;
            s.mapCount[i] = 0;
            s.pinCount[i] = 0;
            if (--s.usedFrames == 0)
            {
                sections[(int)(pfn >>> SECTION_SHIFT)] = null;
            }
        }
    }

    byte kind(final long pfn)
    {
        final Section s = sectionOrNull(pfn);
        if (s == null)
        {
            return KIND_FREE;
        }
        final int i = (int)(pfn & SECTION_MASK);
        return s.folded() ? s.uKind : i < s.kind.length ? s.kind[i] : KIND_FREE;
    }

    int order(final long pfn)
    {
        final Section s = sectionOrNull(pfn);
        if (s == null)
        {
            return 0;
        }
        final int i = (int)(pfn & SECTION_MASK);
        return s.folded() ? s.uOrder : i < s.order.length ? s.order[i] : 0;
    }

    long head(final long pfn)
    {
        return pfn & ~((1L << order(pfn)) - 1);
    }

    /** Makes every frame of a folio an order-0 folio of its own (the folio split of mm/huge_memory.c). */
    void split(final long head, final int order)
    {
        split(head, order, 0);
    }

    /** Makes a folio folios of {@code toOrder} (split_huge_page to PAGE_SIZE folios on a 16 or 64 KiB host). */
    void split(final long head, final int order, final int toOrder)
    {
        final long end = head + (1L << order);
        for (long pfn = head; pfn < end; pfn++)
        {
            section(pfn).order[(int)(pfn & SECTION_MASK)] = (byte)toOrder;
        }
    }

    int mapCount(final long pfn)
    {
        final Section s = sectionOrNull(pfn);
        if (s == null)
        {
            return 0;
        }
        final int i = (int)(pfn & SECTION_MASK);
        return s.folded() ? s.uMapCount : i < s.mapCount.length ? s.mapCount[i] : 0;
    }

    void addMapCount(final long pfn, final int delta)
    {
        section(pfn).mapCount[(int)(pfn & SECTION_MASK)] += delta;
    }

    /** Adds {@code delta} to the mapcount of {@code count} consecutive frames. */
    void addMapCount(final long pfn, final long count, final int delta)
    {
        for (long p = pfn; p < pfn + count; p++)
        {
            section(p).mapCount[(int)(p & SECTION_MASK)] += delta;
        }
    }

    /** @return true when no frame of the folio is mapped by a page-table entry. */
    boolean folioUnmapped(final long head, final int order)
    {
        final long end = head + (1L << order);
        for (long pfn = head; pfn < end; pfn++)
        {
            if (mapCount(pfn) != 0)
            {
                return false;
            }
        }
        return true;
    }

    /** @return true when at least one frame of the folio is not mapped by any page-table entry. */
    boolean anyUnmapped(final long head, final int order)
    {
        final long end = head + (1L << order);
        for (long pfn = head; pfn < end; pfn++)
        {
            if (mapCount(pfn) == 0)
            {
                return true;
            }
        }
        return false;
    }

    int pinCount(final long head)
    {
        final Section s = sectionOrNull(head);
        if (s == null)
        {
            return 0;
        }
        final int i = (int)(head & SECTION_MASK);
        return s.folded() ? s.uPinCount : i < s.pinCount.length ? s.pinCount[i] : 0;
    }

    void addPinCount(final long head, final int delta)
    {
        section(head).pinCount[(int)(head & SECTION_MASK)] += delta;
    }

    boolean hasData(final long pfn)
    {
        final Section s = sectionOrNull(pfn);
        return s != null && (flagsOf(s, pfn) & FLAG_HAS_DATA) != 0;
    }

    /** Copies 4 KiB of bytes of frame {@code pfn} into {@code dst} (zeros when never written). */
    void readFrame(final long pfn, final int offsetInFrame, final byte[] dst, final int dstOffset, final int length)
    {
        if (!hasData(pfn))
        {
            java.util.Arrays.fill(dst, dstOffset, dstOffset + length, (byte)0);
            return;
        }
        final Section s = sectionOrNull(pfn);
        final int i = (int)(pfn & SECTION_MASK);
        MemorySegment.copy(s.data[i >>> BLOCK_SHIFT], ValueLayout.JAVA_BYTE, frameAt(s, i) + offsetInFrame, dst,
            dstOffset, length);
    }

    /** Writes bytes into frame {@code pfn}, creating its backing on first write. */
    void writeFrame(final long pfn, final int offsetInFrame, final byte[] src, final int srcOffset, final int length)
    {
        final Section s = section(pfn);
        final int i = (int)(pfn & SECTION_MASK);
        final long frameBase = allocatedFrameAt(s, i);
        final MemorySegment slab = s.data[i >>> BLOCK_SHIFT];
        if ((s.flags[i] & FLAG_HAS_DATA) == 0)
        {
            slab.asSlice(frameBase, PhysicalMemory.FRAME_BYTES).fill((byte)0);
            s.flags[i] |= FLAG_HAS_DATA;
        }
        MemorySegment.copy(src, srcOffset, slab, ValueLayout.JAVA_BYTE, frameBase + offsetInFrame, length);
    }

    /**
     * Where the bytes of frame {@code i} of section {@code s} (a section of this table) start in its slab
     * ({@code s.data[i >>> BLOCK_SHIFT]}), its block allocated when absent
     * (its bytes are read only once the frame holds written bytes).
     */
    long allocatedFrameAt(final Section s, final int i)
    {
        if (s.data == null)
        {
            s.data = new MemorySegment[BLOCKS];
            s.dataAt = new int[BLOCKS];
        }
        final int b = i >>> BLOCK_SHIFT;
        if (s.data[b] == null)
        {
            newBlock();
            s.data[b] = slab;
            s.dataAt[b] = (int)(slabUsed - BLOCK_BYTES);
        }
        return frameAt(s, i);
    }

    /** Where the bytes of frame {@code i} of section {@code s} start in its slab (its block allocated). */
    static long frameAt(final Section s, final int i)
    {
        return s.dataAt[i >>> BLOCK_SHIFT] + inBlock(i);
    }

    /**
     * Carves a block of bytes for frames about to be written: the next {@value #BLOCK_FRAMES} frames' worth of the
     * current slab ({@link #slab}, the block ending at {@link #slabUsed}), a new slab when it is used up. Blocks
     * handed out one after the other lie back to back (frames written in
     * order, as a buffer's are, then lie as they would in a host), and a slab is aligned to a frame, as a frame is in
     * a host: a frame's bytes then start a CPU cache line, and copying one touches 64 lines of each side, not 65 (the
     * allocator's own alignment is 16 bytes). Blocks allocated one by one lay 20 KiB apart (the alignment's padding),
     * and a 1 MiB DMA in packets of 4 KiB between two buffers so laid out took about 7 % more CPU time than between
     * the same buffers laid back to back. Slabs double from one block up to {@value #MAX_SLAB_BLOCKS}, so a host that writes a few frames
     * takes little more than it writes; a slab comes from a table that is gone when there is one ({@link FrameSlabs}),
     * its bytes as they were: a block's frames are read only once written whole.
     */
    private void newBlock()
    {
        if (slab == null || slabUsed == slab.byteSize())
        {
            slab = bytes.take(slabBlocks);
            slabUsed = 0;
            slabBlocks = Math.min(MAX_SLAB_BLOCKS, slabBlocks * 2);
        }
        slabUsed += BLOCK_BYTES;
    }

    /** Where frame {@code i} of a section starts in its block. */
    private static long inBlock(final int i)
    {
        return (long)(i & (BLOCK_FRAMES - 1)) * PhysicalMemory.FRAME_BYTES;
    }

    /** The flags of {@code pfn} in its section {@code s}, folded or not (a folded section reads as one state). */
    static byte flagsOf(final Section s, final long pfn)
    {
        final int i = (int)(pfn & SECTION_MASK);
        return s.folded() ? s.uFlags : i < s.flags.length ? s.flags[i] : 0;
    }

    /** Copies the bytes of frame {@code from} to frame {@code to} (both allocated). */
    void copyFrame(final long from, final long to)
    {
        if (!hasData(from))
        {
            if (sectionOrNull(to) != null)
            {
                section(to).flags[(int)(to & SECTION_MASK)] &= (byte)~FLAG_HAS_DATA;
            }
            return;
        }
        // Block to block, without a buffer between (a compaction's migrations copied each frame twice).
        final Section s = sectionOrNull(from);
        final int si = (int)(from & SECTION_MASK);
        final Section d = section(to);
        final int di = (int)(to & SECTION_MASK);
        final long dstAt = allocatedFrameAt(d, di);
        d.flags[di] |= FLAG_HAS_DATA;
        MemorySegment.copy(s.data[si >>> BLOCK_SHIFT], frameAt(s, si), d.data[di >>> BLOCK_SHIFT], dstAt,
            PhysicalMemory.FRAME_BYTES);
    }

    /** Takes the bytes of a frame out (for swap-out), or null when the frame reads as zeros. */
    byte[] takeBytes(final long pfn)
    {
        if (!hasData(pfn))
        {
            return null;
        }
        final byte[] buffer = new byte[PhysicalMemory.FRAME_BYTES];
        readFrame(pfn, 0, buffer, 0, buffer.length);
        return buffer;
    }

    /** @return the sections folded into one state (see the class comment). */
    int foldedSections()
    {
        int n = 0;
        for (final Section s : sections)
        {
            n += s != null && s.folded() ? 1 : 0;
        }
        return n;
    }

    /** Visits every frame that is handed out, in frame order. */
    void forEachUsed(final java.util.function.LongConsumer visitor)
    {
        for (int si = 0; si < sections.length; si++)
        {
            final Section s = sections[si];
            if (s == null)
            {
                continue;
            }
            final long base = (long)si << SECTION_SHIFT;
            final int n = (int)Math.min(s.folded() ? SECTION_FRAMES : s.kind.length, totalFrames - base);
            for (int i = 0; i < n; i++)
            {
                if ((s.folded() ? s.uKind : s.kind[i]) != KIND_FREE)
                {
                    visitor.accept(((long)si << SECTION_SHIFT) + i);
                }
            }
        }
    }
}
