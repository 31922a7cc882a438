package dev.rnicsim.pagetable;

import java.util.AbstractList;
import java.util.Arrays;
import java.util.RandomAccess;

/**
 * The runs of one pin, kept as primitive arrays rather than one {@link PhysRun} object each: a pin of scattered
 * 4 KiB frames has a run per page, so a 1 GiB pin on an aged host holds 262,144 runs, and a list of objects would
 * cost about 40 bytes a page where this costs 9 (the first frame's low 32 bits, the frame count as an int, the
 * page-size order; a host holds at most 2^30 frames, and the high bits of a first frame are kept beside it only when
 * one has any). The arrays are chunks of {@value #CHUNK} runs (the first grows up to that), so a pin of a terabyte
 * is never copied to grow. Appended to while the pin walks the range, then read-only: the {@link java.util.List}
 * view refuses changes, and {@link #get} builds the run on demand. Not thread safe while being built; immutable
 * after {@link #freeze()}.
 */
final class PhysRunList extends AbstractList<PhysRun> implements RandomAccess
{
    private static final int CHUNK_SHIFT = 14;
    private static final int CHUNK = 1 << CHUNK_SHIFT;
    private static final int CHUNK_MASK = CHUNK - 1;

    private int[][] pfnLow = {new int[8]};
    /** High 32 bits of first frames, per chunk; null (or a null chunk) while they are all 0. */
    private int[][] pfnHigh;
    private int[][] frames = {new int[8]};
    private byte[][] pageShift = {new byte[8]};
    private int size;

    /**
     * Appends a run, or extends the last one when the frames continue it with the same page size.
     *
     * @param pfn           first frame.
     * @param count         frames, more than 0.
     * @param pageShiftBits log2 of the leaf size backing the frames (the host's PAGE_SHIFT, or a huge page's: 21, 25, 29, 30, 34 ...).
     */
    void append(final long pfn, final long count, final int pageShiftBits)
    {
        // A run is physically contiguous, so it holds at most a host's frames (4 TiB: 2^30), which fit an int.
        if (size > 0)
        {
            final int c = (size - 1) >>> CHUNK_SHIFT;
            final int j = (size - 1) & CHUNK_MASK;
            if (pageShift[c][j] == pageShiftBits && firstPfn(size - 1) + frames[c][j] == pfn)
            {
                frames[c][j] += (int)count;
                return;
            }
        }
        final int c = size >>> CHUNK_SHIFT;
        final int j = size & CHUNK_MASK;
        room(c, j);
        pfnLow[c][j] = (int)pfn;
        if (pfn >>> 32 != 0)
        {
            if (pfnHigh == null)
            {
                pfnHigh = new int[pfnLow.length][];
            }
            if (pfnHigh[c] == null)
            {
                pfnHigh[c] = new int[pfnLow[c].length];
            }
            pfnHigh[c][j] = (int)(pfn >>> 32);
        }
        frames[c][j] = (int)count;
        pageShift[c][j] = (byte)pageShiftBits;
        size++;
    }

    /** Makes room for run {@code j} of chunk {@code c}: grows the first chunk, or adds a chunk. */
    private void room(final int c, final int j)
    {
        if (c == pfnLow.length)
        {
            pfnLow = Arrays.copyOf(pfnLow, c + 1);
            frames = Arrays.copyOf(frames, c + 1);
            pageShift = Arrays.copyOf(pageShift, c + 1);
            pfnLow[c] = new int[CHUNK];
            frames[c] = new int[CHUNK];
            pageShift[c] = new byte[CHUNK];
            if (pfnHigh != null)
            {
                pfnHigh = Arrays.copyOf(pfnHigh, c + 1);
            }
        }
        else if (j == pfnLow[c].length)
        {
            final int grown = Math.min(CHUNK, j * 2);
            pfnLow[c] = Arrays.copyOf(pfnLow[c], grown);
            frames[c] = Arrays.copyOf(frames[c], grown);
            pageShift[c] = Arrays.copyOf(pageShift[c], grown);
            if (pfnHigh != null && pfnHigh[c] != null)
            {
                pfnHigh[c] = Arrays.copyOf(pfnHigh[c], grown);
            }
        }
    }

    /** Trims the last chunk to the runs held. */
    PhysRunList freeze()
    {
        final int c = Math.max(0, (size - 1) >>> CHUNK_SHIFT);
        final int n = size == 0 ? 0 : ((size - 1) & CHUNK_MASK) + 1;
        pfnLow[c] = Arrays.copyOf(pfnLow[c], n);
        frames[c] = Arrays.copyOf(frames[c], n);
        pageShift[c] = Arrays.copyOf(pageShift[c], n);
        if (pfnHigh != null && pfnHigh[c] != null)
        {
            pfnHigh[c] = Arrays.copyOf(pfnHigh[c], n);
        }
        return this;
    }

    /** @return the first frame of run {@code i}. */
    long firstPfn(final int i)
    {
        final int c = i >>> CHUNK_SHIFT;
        final int j = i & CHUNK_MASK;
        final long low = pfnLow[c][j] & 0xffff_ffffL;
        return pfnHigh == null || pfnHigh[c] == null ? low : ((long)pfnHigh[c][j] << 32) | low;
    }

    /** @return the frames of run {@code i}. */
    long frames(final int i)
    {
        return frames[i >>> CHUNK_SHIFT][i & CHUNK_MASK];
    }

    @Override
    public PhysRun get(final int index)
    {
        java.util.Objects.checkIndex(index, size);
        return new PhysRun(firstPfn(index) << PhysicalMemory.FRAME_SHIFT, frames(index) << PhysicalMemory.FRAME_SHIFT,
            1L << pageShift[index >>> CHUNK_SHIFT][index & CHUNK_MASK]);
    }

    @Override
    public int size()
    {
        return size;
    }
}
