package dev.rnicsim.ibverbs;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * A process's doorbells and requests to the server through memory the two share, instead of its socket: a byte
 * ring in a memfd of the process ({@code src/main/c/ring.c}, which lays it out), mapped here through
 * {@code /proc/PID/fd/N}. The bytes are the messages the socket would carry, in the same order, so the session
 * parses them as before; what changes is the path. {@code ibv_post_send} and {@code ibv_post_recv} cost the program a
 * copy into memory instead of a {@code writev(2)}, and the server takes them with a load instead of a
 * {@code read(2)} and, while one of its threads polls the ring ({@link DoorbellPoller}), without a wake-up.
 *
 * <p>The wake-up when no thread polls: the thread about to sleep sets {@code asleep} ({@link #arm()}), then looks at
 * the ring once more; a producer publishes (its tail), then reads {@code asleep}, and when it is set clears it and
 * writes one byte on the socket (a kick). Each side stores before it loads with a full fence between, so a doorbell
 * is never left unseen; a kick may come when it is no longer needed (the session reads and drops it).
 *
 * <p>Layout (little-endian, offsets in bytes): {@code head} at 0 (consumed so far, written here), {@code tail} at 64
 * (published so far, written by the library), {@code asleep} at 128 (an int, written by both), the producers' lock at
 * 192 (the library's), the data from {@link #DATA_OFFSET}, a power of two long. Head and tail only grow; a byte at
 * position p lies at {@code DATA_OFFSET + (p & (capacity - 1))}. One consumer at a time (under the fabric's lock).
 *
 * <p>Thread safety: {@link #read} under the fabric's lock; {@link #pending}, {@link #arm}, {@link #disarm},
 * {@link #armUnlessCovered} from any thread, {@link #cover} and {@link #uncover} from the fabric's one poller (after {@link #close()} they throw {@link IllegalStateException}).
 */
final class DoorbellRing implements AutoCloseable
{
    static final long HEAD = 0;
    static final long TAIL = 64;
    static final long ASLEEP = 128;
    static final long DATA_OFFSET = MessageRing.DATA_OFFSET;

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    private final Arena arena;
    private final MemorySegment ring;
    private final long capacity;
    private long head;
    /** A thread of the server other than the session's polls this ring ({@link DoorbellPoller}): not in shared memory. */
    private volatile boolean covered;

    private DoorbellRing(final Arena arena, final MemorySegment ring, final long capacity)
    {
        this.arena = arena;
        this.ring = ring;
        this.capacity = capacity;
        this.head = (long) LONG.getAcquire(ring, HEAD);
    }

    /**
     * Maps the ring a process offers.
     *
     * @param file          the ring's file: {@code /proc/PID/fd/N} for the process's memfd.
     * @param capacityBytes the data area's length: a power of two, as for {@link MessageRing}.
     * @return the mapped ring.
     * @throws IllegalArgumentException when the capacity is not one of those.
     * @throws IOException              when the file cannot be opened or mapped (then the socket carries everything).
     */
    static DoorbellRing open(final Path file, final long capacityBytes) throws IOException
    {
        return MessageRing.map("doorbell ring", file, capacityBytes, DoorbellRing::new);
    }

    /** @return whether the process has published bytes not read yet. */
    boolean pending()
    {
        return (long) LONG.getAcquire(ring, TAIL) != (long) LONG.getAcquire(ring, HEAD);
    }

    /**
     * Moves the published bytes into {@code in} (as many as it has room for) and frees their room for the process.
     *
     * @param in where the bytes go.
     * @return the bytes moved.
     */
    int read(final ByteBuffer in)
    {
        final long tail = (long) LONG.getAcquire(ring, TAIL);
        final int n = (int) Math.min(tail - head, in.remaining());
        if (n == 0)
        {
            return 0;
        }
        final MemorySegment to = MemorySegment.ofBuffer(in);
        final long at = head & (capacity - 1);
        final long first = Math.min(n, capacity - at);
        MemorySegment.copy(ring, DATA_OFFSET + at, to, 0, first);
        if (first < n)
        {
            MemorySegment.copy(ring, DATA_OFFSET, to, first, n - first);
        }
        in.position(in.position() + n);
        head += n;
        LONG.setRelease(ring, HEAD, head);
        return n;
    }

    /**
     * Asks the process to kick the socket at its next doorbell, then looks at the ring once more.
     *
     * @return whether bytes were published meanwhile (then the caller reads them instead of sleeping, and
     *         {@link #disarm()}s).
     */
    boolean arm()
    {
        INT.setVolatile(ring, ASLEEP, 1);
        VarHandle.fullFence(); // the asleep's store before the tail's load: the library does the reverse
        return pending();
    }

    /** A thread of the server polls the ring: doorbells need no kick. */
    void disarm()
    {
        INT.setVolatile(ring, ASLEEP, 0);
    }

    /**
     * The fabric's poller takes this ring over: the session's thread may sleep without asking for kicks, and the
     * process rings without kicking while the poller looks at the ring.
     *
     * @return false when the ring was covered already.
     */
    boolean cover()
    {
        if (covered)
        {
            return false;
        }
        covered = true;
        disarm();
        return true;
    }

    /**
     * The fabric's poller hands the ring back: it clears {@code covered} <em>first</em>, then asks for a kick and
     * looks at the ring once more ({@link #arm()}). In the other order a session's thread could find the ring still
     * covered after the poller's last {@code arm()}, after which {@code asleep} had been cleared (by the process's
     * kick, or by that thread's own {@link #disarm()} once woken), and sleep unarmed: the process's next doorbell would
     * then kick nobody and wait for its answer forever. In this order, a thread that still finds the ring covered read
     * it before this {@code arm()}, so whatever cleared {@code asleep} came before it too.
     *
     * @return whether bytes were published meanwhile (the caller then reads them: no kick came for them).
     */
    boolean uncover()
    {
        covered = false;
        return arm();
    }

    /**
     * The session's thread, before it sleeps until kicked: unless the fabric's poller covers the ring (it will
     * {@link #uncover()} it before it stops), asks for a kick and looks at the ring once more.
     *
     * @return whether bytes were published meanwhile (then the caller reads them instead of sleeping, and
     *         {@link #disarm()}s).
     */
    boolean armUnlessCovered()
    {
        return !covered && arm();
    }

    @Override
    public void close()
    {
        arena.close();
    }
}
