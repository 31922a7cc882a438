package dev.rnicsim.ibverbs;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The server's messages to one process through memory the two share, instead of its socket: a byte ring in a
 * memfd of the process ({@code src/main/c/ring.c}, which lays it out), mapped here through {@code /proc/PID/fd/N}.
 * The bytes are the messages the socket would carry, in the same order (answers, completions, PLACE, DIAG), so the
 * library parses them as before; what changes is the path. A program spinning on {@code ibv_poll_cq} finds its
 * completions with a load from memory instead of a {@code recvfrom(2)}, and the server writes them with a copy
 * instead of a {@code write(2)} on the socket. A process that sleeps until the server writes (a control verb waiting
 * for its answer, the completion-channel thread, a pipeline's wait) counts itself in {@code waiters} first, and the
 * server then writes one byte (a kick) on the socket after it has published: the socket stays the way to wake a
 * process, and to learn that it has gone.
 *
 * <p>Layout (little-endian, offsets in bytes): {@code head} at 0 (consumed so far, written by the library),
 * {@code tail} at 64 (published so far, written here), {@code waiters} at 128 (an int, the library's), {@code kicks}
 * at 192 (kick bytes written, here), the data from {@link #DATA_OFFSET}, a power of two long. Head and tail only
 * grow; a byte at position p lies at {@code DATA_OFFSET + (p & (capacity - 1))}. One producer (this server, under the
 * fabric's lock), one consumer (the library, under its lock).
 *
 * <p>Not thread safe: called under the fabric's lock.
 */
final class MessageRing implements AutoCloseable
{
    static final long HEAD = 0;
    static final long TAIL = 64;
    static final long WAITERS = 128;
    static final long KICKS = 192;
    static final long DATA_OFFSET = 4096;
    /** The smallest and largest data area the library may offer. */
    static final long MIN_CAPACITY = 4096;
    static final long MAX_CAPACITY = 64L << 20;

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    private final Arena arena;
    private final MemorySegment ring;
    private final long capacity;
    private long tail;
    private long kicks;
    private final ByteBuffer kick = ByteBuffer.allocateDirect(1);

    private MessageRing(final Arena arena, final MemorySegment ring, final long capacity)
    {
        this.arena = arena;
        this.ring = ring;
        this.capacity = capacity;
        this.tail = (long) LONG.getAcquire(ring, TAIL);
        this.kicks = (long) LONG.getAcquire(ring, KICKS);
    }

    /**
     * Maps the ring a process offers.
     *
     * @param file          the ring's file: {@code /proc/PID/fd/N} for the process's memfd.
     * @param capacityBytes the data area's length: a power of two from {@link #MIN_CAPACITY} to {@link #MAX_CAPACITY}.
     * @return the mapped ring.
     * @throws IllegalArgumentException when the capacity is not one of those.
     * @throws IOException              when the file cannot be opened or mapped (then the socket carries everything).
     */
    static MessageRing open(final Path file, final long capacityBytes) throws IOException
    {
        return map("message ring", file, capacityBytes, MessageRing::new);
    }

    /** Makes a ring's object from its arena, its mapping (header and data) and its data area's size. */
    interface RingMaker<T>
    {
        T make(Arena arena, MemorySegment mapping, long capacityBytes);
    }

    /**
     * Maps a ring file the process offered: a header of {@link #DATA_OFFSET} bytes, then a data area of a power of two
     * from {@link #MIN_CAPACITY} to {@link #MAX_CAPACITY} bytes (the layout of ring.c's message and doorbell rings).
     *
     * @throws IllegalArgumentException when capacityBytes is not such a size.
     * @throws IOException              when the file cannot be opened or mapped, or is too short.
     */
    static <T> T map(final String what, final Path file, final long capacityBytes, final RingMaker<T> maker)
        throws IOException
    {
        if (capacityBytes < MIN_CAPACITY || capacityBytes > MAX_CAPACITY || Long.bitCount(capacityBytes) != 1)
        {
            throw new IllegalArgumentException("a " + what + " of " + capacityBytes + " bytes: the data area is a "
                + "power of two from " + MIN_CAPACITY + " to " + MAX_CAPACITY + " bytes");
        }
        final Arena arena = Arena.ofShared();
        try (FileChannel f = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            if (f.size() < DATA_OFFSET + capacityBytes)
            {
                throw new IOException("the " + what + " " + file + " holds " + f.size() + " bytes, fewer than its "
                    + "header and " + capacityBytes + " bytes of data");
            }
            return maker.make(arena, f.map(FileChannel.MapMode.READ_WRITE, 0, DATA_OFFSET + capacityBytes, arena),
                capacityBytes);
        }
        catch (final IOException | RuntimeException e)
        {
            arena.close();
            throw e;
        }
    }

    /**
     * Publishes as much of {@code out} (position to limit) as the ring has room for, without waiting, and kicks the
     * process when it sleeps: the fabric's lock is never held waiting for one process to read (a process stopped, or
     * busy elsewhere, while completions for it keep coming); what does not fit stays in {@code out}, its position
     * moved past what was published.
     *
     * @param out  the messages.
     * @param wake the process's socket, for the kick.
     * @return true when everything was published.
     */
    boolean offer(final ByteBuffer out, final WritableByteChannel wake)
    {
        final long head = (long) LONG.getAcquire(ring, HEAD);
        final long n = Math.min(capacity - (tail - head), out.remaining());
        if (n > 0)
        {
            publish(MemorySegment.ofBuffer(out), 0, n);
            out.position(out.position() + (int) n);
        }
        VarHandle.fullFence(); // the tail's store before the waiters' load: the library does the reverse
        if ((int) INT.getVolatile(ring, WAITERS) > 0)
        {
            kick(wake);
        }
        return !out.hasRemaining();
    }

    /** Copies n bytes at {@code done} of {@code from} to the tail, across the end of the ring, and publishes them. */
    private long publish(final MemorySegment from, final long done, final long n)
    {
        final long at = tail & (capacity - 1);
        final long first = Math.min(n, capacity - at);
        MemorySegment.copy(from, done, ring, DATA_OFFSET + at, first);
        if (first < n)
        {
            MemorySegment.copy(from, done + first, ring, DATA_OFFSET, n - first);
        }
        tail += n;
        LONG.setRelease(ring, TAIL, tail);
        return n;
    }

    /**
     * Counts a kick, then writes its byte: the library reads only the kick bytes counted (ring.c, drain_kicks), so a
     * byte it can read is always counted first. A write that takes nothing (the socket is full of kicks, and the
     * process readable already) takes its count back: a kick counted and never written would leave the library
     * reading for a byte that never comes, a wasted recv(2) on every read from then on.
     */
    private void kick(final WritableByteChannel wake)
    {
        kicks++;
        LONG.setRelease(ring, KICKS, kicks);
        kick.clear();
        try
        {
            if (wake.write(kick) == 0)
            {
                kicks--;
                LONG.setRelease(ring, KICKS, kicks);
            }
        }
        catch (final IOException e)
        {
            // the process has gone; its session's thread releases its resources
        }
    }

    @Override
    public void close()
    {
        arena.close();
    }
}
