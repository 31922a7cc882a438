package dev.rnicsim.pagetable;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The slabs a {@link FrameTable} carves its frames' bytes from, taken from the slabs of tables that are gone when
 * there are some, and given back when the table goes. A slab's bytes need no zeroing for reuse: a frame's bytes are
 * read only while it holds written bytes ({@link FrameTable#FLAG_HAS_DATA}), and each way a frame gets the flag writes
 * the whole frame first (zeros, then the bytes written or copied; or a whole frame copied), as for a frame freed and
 * handed out again within one table, whose block keeps the bytes of its earlier use. A simulated host that writes a
 * few frames (a key-lifecycle chain's worlds make two hosts each) so no longer has the allocator zero and register a
 * new slab each time. Free slabs are kept up to {@link #MAX_FREE_BYTES} bytes in all; those beyond are dropped, and each
 * slab's memory is freed once nothing holds it (an automatic arena of its own). Thread safe.
 */
final class FrameSlabs
{
    /**
     * The free slabs kept, in bytes, at most (those beyond are left to the collector). Slabs come back when the
     * collector finds their table gone, so the free ones must cover what new tables take between two collections: the
     * key-lifecycle soak's worlds take about 80 KiB of slabs each, some 36 MiB between two young collections of the
     * serial collector's default young generation (with 32 MiB, one slab in seven was still new). The slabs of tables
     * that are gone stayed allocated until the next collection before too.
     */
    static final long MAX_FREE_BYTES = 64L << 20;
    /** Slab sizes: {@link FrameTable}'s slabs double from one block up to this many size classes (1, 2, 4, 8, 16). */
    private static final int CLASSES = 5;
    /** Gives a gone table's slabs back: one daemon thread for all the tables. */
    private static final Cleaner CLEANER = Cleaner.create();
    /** The free slabs by size class (blocks = 1 << class); guarded by the class's lock. */
    @SuppressWarnings("unchecked")
    private static final ArrayDeque<MemorySegment>[] FREE = new ArrayDeque[CLASSES];
    private static long freeBytes;

    static
    {
        for (int i = 0; i < CLASSES; i++)
        {
            FREE[i] = new ArrayDeque<>();
        }
    }

    /** The slabs the table holds (its owner), given back when the table is gone; touched by its thread only till then. */
    private final List<MemorySegment> held = new ArrayList<>(4);

    /**
     * @param table the table the slabs are for: when it is gone, its slabs go back.
     */
    FrameSlabs(final Object table)
    {
        CLEANER.register(table, new GiveBack(held));
    }

    /**
     * @param blocks the slab's size in blocks of {@link FrameTable#BLOCK_BYTES}: 1, 2, 4, 8 or 16.
     * @return a slab of that size, aligned to a frame; its bytes are those of an earlier use, or zeros.
     */
    MemorySegment take(final int blocks)
    {
        final int c = Integer.numberOfTrailingZeros(blocks);
        MemorySegment slab;
        synchronized (FREE)
        {
            slab = FREE[c].pollLast();
            if (slab != null)
            {
                freeBytes -= slab.byteSize();
            }
        }
        if (slab == null)
        {
            slab = Arena.ofAuto().allocate(blocks * FrameTable.BLOCK_BYTES, PhysicalMemory.FRAME_BYTES);
        }
        held.add(slab);
        return slab;
    }

    /** @return the bytes of the free slabs kept now. */
    static long freeBytes()
    {
        synchronized (FREE)
        {
            return freeBytes;
        }
    }

    /** Gives the slabs of a table that is gone back to the free ones (it holds no reference to the table). */
    private record GiveBack(List<MemorySegment> slabs) implements Runnable
    {
        @Override
        public void run()
        {
            giveBack(slabs);
        }
    }

    /**
     * Adds slabs no table uses any more to the free ones, up to {@link #MAX_FREE_BYTES} in all.
     *
     * @param slabs slabs {@link #take} handed out, of a table that is gone.
     */
    static void giveBack(final List<MemorySegment> slabs)
    {
        synchronized (FREE)
        {
            for (final MemorySegment s : slabs)
            {
                if (freeBytes + s.byteSize() > MAX_FREE_BYTES)
                {
                    break;
                }
                FREE[Integer.numberOfTrailingZeros((int)(s.byteSize() / FrameTable.BLOCK_BYTES))].addLast(s);
                freeBytes += s.byteSize();
            }
        }
    }
}
