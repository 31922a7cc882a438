package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link DoorbellRing}, the server's side of the doorbells through shared memory, against a writer that does what
 * {@code src/main/c/ring.c} does with the same layout: bytes arrive whole and in order across the end of the data
 * area while the writer waits for room, a server about to sleep sees a doorbell published before it asked for a
 * kick, and a ring the process offers wrongly is refused (the library then keeps its socket).
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES) // a ring that never drains fails its test instead of the build
class DoorbellRingTest
{
    private static final long CAPACITY = 4096;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;

    @TempDir
    Path dir;

    /** The library's side: maps the file, publishes bytes when there is room, reads the asleep word. */
    private static final class Writer implements AutoCloseable
    {
        final Arena arena = Arena.ofShared();
        final MemorySegment ring;
        long tail;

        Writer(final Path file) throws IOException
        {
            try (FileChannel f = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE))
            {
                ring = f.map(FileChannel.MapMode.READ_WRITE, 0, DoorbellRing.DATA_OFFSET + CAPACITY, arena);
            }
        }

        /** Publishes what fits of {@code from} and returns how many bytes that was. */
        int put(final byte[] from, final int at, final int len)
        {
            final long head = (long) LONG.varHandle().getAcquire(ring, DoorbellRing.HEAD);
            final int n = (int) Math.min(len, CAPACITY - (tail - head));
            for (int i = 0; i < n; i++)
            {
                ring.set(ValueLayout.JAVA_BYTE, DoorbellRing.DATA_OFFSET + ((tail + i) & (CAPACITY - 1)),
                    from[at + i]);
            }
            tail += n;
            LONG.varHandle().setRelease(ring, DoorbellRing.TAIL, tail);
            return n;
        }

        /**
         * Rings as ring.c's rnicsim_doorbells_write and db_kick do: publishes, full fence, then clears a set
         * {@code asleep} and kicks.
         *
         * @return whether the library would write a kick on the socket.
         */
        boolean ring(final byte... doorbell)
        {
            assertThat(put(doorbell, 0, doorbell.length)).isEqualTo(doorbell.length);
            VarHandle.fullFence();
            return asleep() != 0
                && (int) ValueLayout.JAVA_INT.varHandle().getAndSet(ring, DoorbellRing.ASLEEP, 0) != 0;
        }

        int asleep()
        {
            return (int) ValueLayout.JAVA_INT.varHandle().getVolatile(ring, DoorbellRing.ASLEEP);
        }

        @Override
        public void close()
        {
            arena.close();
        }
    }

    private Path ringFile(final long bytes) throws IOException
    {
        final Path f = dir.resolve("doorbells");
        try (RandomAccessFile r = new RandomAccessFile(f.toFile(), "rw"))
        {
            r.setLength(bytes);
        }
        return f;
    }

    @Test
    void bytesArriveWholeAndInOrderAcrossTheEndOfTheRingWhileTheWriterWaitsForRoom() throws Exception
    {
        final Path file = ringFile(DoorbellRing.DATA_OFFSET + CAPACITY);
        final byte[] sent = new byte[50 * (int) CAPACITY + 123]; // fifty times round, not on a boundary
        new Random(90).nextBytes(sent);
        final ByteBuffer got = ByteBuffer.allocateDirect(sent.length);
        try (DoorbellRing ring = DoorbellRing.open(file, CAPACITY); Writer writer = new Writer(file))
        {
            final Thread library = Thread.ofPlatform().start(() ->
            {
                final Random sizes = new Random(19);
                int at = 0;
                while (at < sent.length)
                {
                    // messages of up to twice the ring's length go in pieces as the server makes room
                    final int n = Math.min(sent.length - at, 1 + sizes.nextInt(2 * (int) CAPACITY));
                    int done = 0;
                    while (done < n)
                    {
                        done += writer.put(sent, at + done, n - done);
                    }
                    at += n;
                }
            });
            final ByteBuffer room = ByteBuffer.allocateDirect(777); // the server reads in pieces of its own
            while (got.hasRemaining())
            {
                room.clear().limit(Math.min(room.capacity(), got.remaining()));
                if (ring.read(room) == 0)
                {
                    Thread.onSpinWait();
                }
                got.put(room.flip());
            }
            library.join(30_000);
            final byte[] bytes = new byte[sent.length];
            got.flip().get(bytes);
            assertThat(bytes).isEqualTo(sent);
            assertThat(ring.pending()).isFalse();
        }
    }

    @Test
    void aServerAboutToSleepSeesADoorbellPublishedBeforeItAskedForAKick() throws Exception
    {
        final Path file = ringFile(DoorbellRing.DATA_OFFSET + CAPACITY);
        try (DoorbellRing ring = DoorbellRing.open(file, CAPACITY); Writer writer = new Writer(file))
        {
            assertThat(ring.arm()).as("an empty ring: the server may sleep").isFalse();
            assertThat(writer.asleep()).as("and the library is asked to kick").isEqualTo(1);
            ring.disarm();
            assertThat(writer.asleep()).as("a polling server needs no kick").isZero();

            writer.put(new byte[] {1, 2, 3}, 0, 3);
            assertThat(ring.arm()).as("a doorbell published before the server asked: it reads instead").isTrue();
            final ByteBuffer in = ByteBuffer.allocateDirect(16);
            assertThat(ring.read(in)).isEqualTo(3);
            assertThat(ring.pending()).isFalse();
        }
    }

    /**
     * The interleaving of a lost wake-up: the fabric's poller, after its last request for kicks, had not yet handed the
     * ring back when the session's thread, woken by a kick that request brought, found the ring still covered and slept
     * without asking for one. Handed back with {@code covered} cleared after that request, as it was, the process's next
     * doorbell (a control verb's request, whose caller then waits for the answer without a limit) kicked nobody.
     */
    @Test
    void aSessionThreadThatSleptOnACoveredRingIsKickedAfterThePollerHandsItBack() throws Exception
    {
        final Path file = ringFile(DoorbellRing.DATA_OFFSET + CAPACITY);
        try (DoorbellRing ring = DoorbellRing.open(file, CAPACITY); Writer writer = new Writer(file))
        {
            final ByteBuffer in = ByteBuffer.allocateDirect(16);
            assertThat(ring.armUnlessCovered()).as("the session's thread sleeps, asking for a kick").isFalse();
            assertThat(ring.cover()).as("the poller takes the ring over").isTrue();
            assertThat(writer.asleep()).as("a polled ring needs no kick").isZero();
            assertThat(ring.arm()).as("the poller's spin ends with nothing late: it asks for kicks").isFalse();

            assertThat(writer.ring((byte) 1)).as("a doorbell then kicks").isTrue();
            ring.disarm(); // the session's thread, woken by that kick
            assertThat(ring.read(in)).isEqualTo(1);
            assertThat(ring.armUnlessCovered()).as("the ring is still covered: it sleeps without asking").isFalse();
            assertThat(writer.asleep()).isZero();

            assertThat(ring.uncover()).as("the poller hands the ring back; nothing came meanwhile").isFalse();
            assertThat(writer.ring((byte) 2)).as("the next doorbell wakes the sleeping thread").isTrue();
        }
    }

    @Test
    void aDoorbellRungWhileTheRingWasCoveredIsFoundWhenThePollerHandsItBack() throws Exception
    {
        final Path file = ringFile(DoorbellRing.DATA_OFFSET + CAPACITY);
        try (DoorbellRing ring = DoorbellRing.open(file, CAPACITY); Writer writer = new Writer(file))
        {
            assertThat(ring.cover()).isTrue();
            assertThat(ring.cover()).as("one poller at a time").isFalse();
            assertThat(writer.ring((byte) 7)).as("a polled ring: no kick").isFalse();
            assertThat(ring.uncover()).as("no kick came for it: the poller carries it out").isTrue();
            assertThat(writer.asleep()).as("and later doorbells kick").isEqualTo(1);
            assertThat(ring.read(ByteBuffer.allocateDirect(16))).isEqualTo(1);
        }
    }

    @Test
    void aRingOfTheWrongSizeIsRefusedSoTheSocketKeepsTheDoorbells() throws Exception
    {
        assertThatThrownBy(() -> DoorbellRing.open(ringFile(DoorbellRing.DATA_OFFSET + CAPACITY), 3000))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("power of two");
        assertThatThrownBy(() -> DoorbellRing.open(ringFile(DoorbellRing.DATA_OFFSET + CAPACITY / 2), CAPACITY))
            .isInstanceOf(IOException.class).hasMessageContaining("fewer than its header and 4096 bytes of data");
    }
}
