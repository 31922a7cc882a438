package dev.rnicsim.pagetable;

import java.util.AbstractList;
import java.util.Arrays;
import java.util.RandomAccess;

/**
 * The runs of one pin, kept as primitive arrays rather than one {@link PhysRun} object each: a pin of scattered
 * 4 KiB frames has a run per page, so a 1 GiB pin on an aged host holds 262,144 runs, and a list of objects would
 * cost about 40 bytes a page where this costs 9 (first frame and frame count as ints, page-size order; a host holds
 * at most 2^30 frames, and the first frames are widened to longs should one not fit an int). Appended to
 * while the pin walks the range, then read-only: the {@link List} view refuses changes, and {@link #get} builds the
 * run on demand. Not thread safe while being built; immutable after {@link #freeze()}.
 */
final class PhysRunList extends AbstractList<PhysRun> implements RandomAccess
{
    /** First frames while they all fit an int; null once one did not. */
    private int[] firstPfnNarrow = new int[8];
    /** First frames once one did not fit an int, else null. */
    private long[] firstPfnWide;
    private int[] frames = new int[8];
    private byte[] pageShift = new byte[8];
    private int size;

    /**
     * Appends a run, or extends the last one when the frames continue it with the same page size.
     *
     * @param pfn           first frame.
     * @param count         frames, more than 0.
     * @param pageShiftBits log2 of the leaf size backing the frames (12, 21 or 30).
     */
    void append(final long pfn, final long count, final int pageShiftBits)
    {
        // A run is physically contiguous, so it holds at most a host's frames (4 TiB: 2^30), which fit an int.
        if (size > 0 && pageShift[size - 1] == pageShiftBits && firstPfn(size - 1) + frames[size - 1] == pfn)
        {
            frames[size - 1] += (int)count;
            return;
        }
        if (size == frames.length)
        {
            final int grown = size + (size >> 1) + 8;
            if (firstPfnWide == null)
            {
                firstPfnNarrow = Arrays.copyOf(firstPfnNarrow, grown);
            }
            else
            {
                firstPfnWide = Arrays.copyOf(firstPfnWide, grown);
            }
            frames = Arrays.copyOf(frames, grown);
            pageShift = Arrays.copyOf(pageShift, grown);
        }
        if (firstPfnWide == null && pfn > Integer.MAX_VALUE)
        {
            firstPfnWide = new long[frames.length];
            for (int i = 0; i < size; i++)
            {
                firstPfnWide[i] = firstPfnNarrow[i];
            }
            firstPfnNarrow = null;
        }
        if (firstPfnWide == null)
        {
            firstPfnNarrow[size] = (int)pfn;
        }
        else
        {
            firstPfnWide[size] = pfn;
        }
        frames[size] = (int)count;
        pageShift[size] = (byte)pageShiftBits;
        size++;
    }

    /** Trims the arrays to the runs held. */
    PhysRunList freeze()
    {
        if (firstPfnWide == null)
        {
            firstPfnNarrow = Arrays.copyOf(firstPfnNarrow, size);
        }
        else
        {
            firstPfnWide = Arrays.copyOf(firstPfnWide, size);
        }
        frames = Arrays.copyOf(frames, size);
        pageShift = Arrays.copyOf(pageShift, size);
        return this;
    }

    /** @return the first frame of run {@code i}. */
    long firstPfn(final int i)
    {
        return firstPfnWide == null ? firstPfnNarrow[i] : firstPfnWide[i];
    }

    /** @return the frames of run {@code i}. */
    long frames(final int i)
    {
        return frames[i];
    }

    @Override
    public PhysRun get(final int index)
    {
        java.util.Objects.checkIndex(index, size);
        return new PhysRun(firstPfn(index) << PhysicalMemory.FRAME_SHIFT,
            (long)frames[index] << PhysicalMemory.FRAME_SHIFT, 1L << pageShift[index]);
    }

    @Override
    public int size()
    {
        return size;
    }
}
