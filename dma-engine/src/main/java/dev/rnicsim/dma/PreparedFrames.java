package dev.rnicsim.dma;

import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.mtt.Mtt;
import dev.rnicsim.pagetable.PhysicalMemory;
import dev.rnicsim.pagetable.ResolvedFrames;

/**
 * One side of a message moving packet by packet, its frames found in one pass when it starts: for each 4 KiB of the
 * side's iova range (each lies in one frame, as an MR page is physically contiguous and its iova and DMA address
 * agree below the page size), the frame its MTT entry names now and where that frame's bytes lie
 * ({@link ResolvedFrames}). Found without the translation cache (nothing is counted): the packets still fetch each
 * MTT entry through the cache as they enter its page ({@link Walk}), and a packet takes the bytes found here only when
 * the frame its walk reached is the one found here and the memory dropped no frame's bytes since; any other packet
 * takes {@link PhysicalMemory#copy}. So a key retired, an MR deregistered or revoked, or pages moved mid-message change
 * nothing of what a packet does, checks or counts: at worst the packet does not find its frame here.
 *
 * <p>Covers at most {@link #MAX_FRAMES} frames from where it starts; a longer message finds the next ones when a
 * packet gets there. Not thread safe.
 */
final class PreparedFrames
{
    /** Frames found at once, at most (4 MiB of 4 KiB frames). */
    static final int MAX_FRAMES = 1024;

    private final AdapterTables tables;
    private final int key;
    /** The first 4 KiB of iova covered ({@code iova >>> 12}). */
    private final long firstChunk;
    /** {@code tables.keyChanges()} when the frames were found. */
    private final long keyChanges;
    final ResolvedFrames frames;

    private PreparedFrames(final AdapterTables tables, final int key, final long firstChunk, final long keyChanges,
        final ResolvedFrames frames)
    {
        this.tables = tables;
        this.key = key;
        this.firstChunk = firstChunk;
        this.keyChanges = keyChanges;
        this.frames = frames;
    }

    /**
     * Finds the frames of {@code [iova, iova + lengthBytes)} of {@code key} on a port, or null when the key's pages
     * are not consecutive MTT entries (an implicit ODP MR) or the range is empty.
     *
     * @param port        the device and host memory.
     * @param key         the key whose MR (or window) the range lies in, checked for the message.
     * @param iova        first byte.
     * @param lengthBytes bytes from it (at most {@link #MAX_FRAMES} frames are found).
     * @param write       true for the destination side.
     */
    static PreparedFrames find(final DmaPort port, final int key, final long iova, final long lengthBytes,
        final boolean write)
    {
        final AdapterTables tables = port.tables();
        final long mttFirst = tables.blockIndex(key, iova);
        if (lengthBytes <= 0 || mttFirst < 0)
        {
            return null;
        }
        final int pageShift = tables.pageShift(key);
        final long pageMask = (1L << pageShift) - 1;
        final long firstChunk = iova >>> PhysicalMemory.FRAME_SHIFT;
        final long lastChunk = (iova + lengthBytes - 1) >>> PhysicalMemory.FRAME_SHIFT;
        final int count = (int)Math.min(MAX_FRAMES, lastChunk - firstChunk + 1);
        final ResolvedFrames frames = new ResolvedFrames(port.memory(), count);
        final Mtt mtt = tables.mtt();
        final long firstPage = iova >>> pageShift;
        long page = -1;
        long pageDma = -1;
        for (int j = 0; j < count; j++)
        {
            final long at = Math.max(iova, (firstChunk + j) << PhysicalMemory.FRAME_SHIFT);
            if (at >>> pageShift != page)
            {
                page = at >>> pageShift;
                final long raw = mtt.entry(mttFirst + page - firstPage);
                pageDma = raw >= 0 ? -1 : raw & ~Mtt.PRESENT & ~pageMask;
            }
            if (pageDma >= 0)
            {
                frames.resolve(j, pageDma + (at & pageMask), write);
            }
        }
        return new PreparedFrames(tables, key, firstChunk, tables.keyChanges(), frames);
    }

    /**
     * @return the place among {@link #frames} of the 4 KiB of iova {@code iova} lies in, or -1 (or a place past the
     * end) when it is not covered.
     */
    int place(final long iova)
    {
        return (int)Math.min(Integer.MAX_VALUE, Math.max(-1, (iova >>> PhysicalMemory.FRAME_SHIFT) - firstChunk));
    }

    /** @return true when {@code iova} lies in the frames found. */
    boolean covers(final long iova)
    {
        final long j = (iova >>> PhysicalMemory.FRAME_SHIFT) - firstChunk;
        return j >= 0 && j < frames.size();
    }

    /**
     * @return true when these frames can serve another message over {@code [iova, iova + lengthBytes)} of the same key
     * on the same port: found from the same place, covering as much, and nothing changed in the port's keys or
     * frames since (a packet would find its frames here).
     */
    boolean serves(final DmaPort port, final int key, final long iova, final long lengthBytes)
    {
        final long lastChunk = (iova + lengthBytes - 1) >>> PhysicalMemory.FRAME_SHIFT;
        return port.tables() == tables && key == this.key && iova >>> PhysicalMemory.FRAME_SHIFT == firstChunk
            && lastChunk - firstChunk < frames.size() && port.memory() == frames.memory()
            && tables.keyChanges() == keyChanges && frames.current();
    }
}
