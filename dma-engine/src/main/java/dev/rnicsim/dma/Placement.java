package dev.rnicsim.dma;

import dev.rnicsim.mtt.AccessFlags;
import dev.rnicsim.pagetable.PhysicalMemory;
import java.util.List;

/**
 * The bytes' movement between the two hosts' physical memories: copies along checked walks, inline payloads, the
 * write ordering of relaxed-ordering MRs, and the responder's execution of an atomic (IBA 9.4.5).
 *
 * <p>Not thread safe: one per {@link DmaEngine}.
 */
final class Placement
{
    /** The bytes of every chunk read from a source that keeps no DMA bytes (a chunk is at most this long). */
    private static final byte[] ZERO_CHUNK = new byte[WriteOrdering.CHUNK_BYTES];

    private final DmaEngine engine;

    Placement(final DmaEngine engine)
    {
        this.engine = engine;
    }

    // ------------------------------------------------------------------ movement

    void copy(final Walk src, final Walk dst, final long length)
    {
        copy(src, dst, length, dst.port.ordering() != null && relaxedTarget(dst));
    }

    /** As {@link #copy(Walk, Walk, long)} with {@code relaxed}, what {@link #relaxedTarget} answers for dst, known. */
    void copy(final Walk src, final Walk dst, final long length, final boolean relaxed)
    {
        final WriteOrdering ordering = dst.port.ordering();
        if (ordering != null && ordering.engaged(relaxed))
        {
            placeInChunks(src, null, dst, length, ordering, relaxed);
            return;
        }
        long remaining = length;
        while (remaining > 0)
        {
            final int n = (int)Math.min(Math.min(src.run(), dst.run()), Math.min(remaining, Integer.MAX_VALUE));
            PhysicalMemory.copy(src.port.memory(), src.phys(), dst.port.memory(), dst.phys(), n);
            if (engine.observer != null)
            {
                observeCopy(src, dst, n);
            }
            src.advance(n);
            dst.advance(n);
            remaining -= n;
        }
        engine.bytesMoved += length;
    }

    /** Tells the observer of a run copied at the walks' positions, read then written. */
    private void observeCopy(final Walk src, final Walk dst, final int n)
    {
        engine.observer.accessed(src.port, src.key(), src.addr, src.phys(), n, false);
        engine.observer.accessed(dst.port, dst.key(), dst.addr, dst.phys(), n, true);
    }

    /** Places {@code length} bytes of {@code data} from {@code from} at the destination walk's position. */
    void scatterBytes(final byte[] data, final int from, final int length, final Walk dst)
    {
        if (from == 0 && length == data.length)
        {
            scatterBytes(data, dst);
            return;
        }
        scatterBytes(java.util.Arrays.copyOfRange(data, from, from + length), dst);
    }

    void scatterBytes(final byte[] data, final Walk dst)
    {
        final WriteOrdering ordering = dst.port.ordering();
        final boolean relaxed = ordering != null && relaxedTarget(dst);
        if (ordering != null && ordering.engaged(relaxed))
        {
            placeInChunks(null, data, dst, data.length, ordering, relaxed);
            return;
        }
        int done = 0;
        while (done < data.length)
        {
            final int n = (int)Math.min(dst.run(), data.length - done);
            dst.port.memory().write(dst.phys(), data, done, n);
            engine.observe(dst.port, dst.key(), dst.addr, dst.phys(), n, true);
            dst.advance(n);
            done += n;
        }
        engine.bytesMoved += data.length;
    }

    /**
     * Reads the source (a walk or bytes) in chunks of at most {@link WriteOrdering#CHUNK_BYTES} that never cross an
     * MR page or segment of the destination, and hands them to the destination's ordering to place. The source is
     * read once, page run by page run, into one array the chunks are views of; a source whose memory keeps no DMA
     * bytes ({@code PhysicalMemory.bytesElsewhere}) is only checked, and its chunks are views of one array of zeros.
     */
    void placeInChunks(final Walk src, final byte[] data, final Walk dst, final long length,
        final WriteOrdering ordering, final boolean relaxed)
    {
        final byte[] bytes;
        int[] srcRunEnds = null;
        // a source that keeps no DMA bytes reads as zeros: its chunks share one array of zeros
        final boolean zeros = src != null && src.port.memory().bytesElsewhere();
        if (src != null)
        {
            bytes = zeros ? ZERO_CHUNK : new byte[(int)length];
            srcRunEnds = new int[8];
            int runs = 0;
            int read = 0;
            while (read < length)
            {
                final int n = (int)Math.min(src.run(), length - read);
                if (zeros)
                {
                    src.port.memory().checkDma(src.phys(), n, false);
                }
                else
                {
                    src.port.memory().read(src.phys(), bytes, read, n);
                }
                engine.observe(src.port, src.key(), src.addr, src.phys(), n, false);
                src.advance(n);
                read += n;
                if (runs == srcRunEnds.length)
                {
                    srcRunEnds = java.util.Arrays.copyOf(srcRunEnds, runs * 2);
                }
                srcRunEnds[runs++] = read;
            }
        }
        else
        {
            bytes = java.util.Arrays.copyOf(data, (int)length); // chunks may stay in flight after the caller returns
        }
        final List<WriteOrdering.Chunk> chunks = new java.util.ArrayList<>((int)(length / WriteOrdering.CHUNK_BYTES)
            + 1);
        int done = 0;
        int srcRun = 0;
        while (done < length)
        {
            final int dstRun = (int)Math.min(dst.run(), length - done);
            engine.observe(dst.port, dst.key(), dst.addr, dst.phys(), dstRun, true);
            final long phys = dst.phys();
            for (int at = 0; at < dstRun;)
            {
                int n = Math.min(dstRun - at, WriteOrdering.CHUNK_BYTES);
                if (srcRunEnds != null)
                {
                    while (srcRunEnds[srcRun] <= done + at)
                    {
                        srcRun++;
                    }
                    n = Math.min(n, srcRunEnds[srcRun] - done - at);
                }
                chunks.add(ordering.chunk(dst.port.memory(), phys + at, bytes, zeros ? 0 : done + at, n));
                at += n;
            }
            dst.advance(dstRun);
            done += dstRun;
        }
        ordering.place(chunks, relaxed);
        engine.bytesMoved += length;
    }

    /**
     * True when the destination device applies relaxed ordering and every MR the destination walk writes asks for it
     * (IBV_ACCESS_RELAXED_ORDERING).
     */
    static boolean relaxedTarget(final Walk dst)
    {
        if (!dst.port.ordering().relaxedApplied())
        {
            return false;
        }
        boolean any = false;
        for (final Segment s : dst.segments)
        {
            if (s.lengthBytes() == 0)
            {
                continue;
            }
            final int access = dst.port.tables().mpt().accessBits(s.key());
            if (access == -1 || (access & AccessFlags.RELAXED_ORDERING) == 0)
            {
                return false;
            }
            any = true;
        }
        return any;
    }

    /** Reads and atomics order behind every write still in flight to that memory. */
    static void drainOrdering(final DmaPort port)
    {
        if (port.ordering() != null)
        {
            port.ordering().drain();
        }
    }

    /**
     * Runs an atomic at the responder after its checks passed (IBA 9.4.5): waits for earlier relaxed-ordering writes
     * to the region, reads the 8 bytes, writes the new value when it differs and reports both accesses.
     *
     * @return the original value, which the response carries back.
     */
    long executeAtomic(final DmaPort remote, final int rkey, final long remoteAddr, final boolean compareAndSwap,
        final long compareAdd, final long swap)
    {
        engine.atomics++;
        drainOrdering(remote);
        final long remotePhys = engine.keys.checkedRemote()[0];
        final byte[] bytes = new byte[Long.BYTES];
        remote.memory().read(remotePhys, bytes, 0, Long.BYTES);
        engine.observe(remote, rkey, remoteAddr, remotePhys, Long.BYTES, false);
        final long original = toLong(bytes);
        final long updated = compareAndSwap ? (original == compareAdd ? swap : original) : original + compareAdd;
        if (updated != original)
        {
            remote.memory().write(remotePhys, toBytes(updated), 0, Long.BYTES);
            engine.observe(remote, rkey, remoteAddr, remotePhys, Long.BYTES, true);
        }
        return original;
    }

    static long toLong(final byte[] b)
    {
        long v = 0;
        for (int i = Long.BYTES - 1; i >= 0; i--)
        {
            v = (v << 8) | (b[i] & 0xff);
        }
        return v;
    }

    static byte[] toBytes(final long v)
    {
        final byte[] b = new byte[Long.BYTES];
        for (int i = 0; i < Long.BYTES; i++)
        {
            b[i] = (byte)(v >>> (8 * i));
        }
        return b;
    }
}
