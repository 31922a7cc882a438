package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.Pipe;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link MessageRing}, the server's side of the shared-memory path for its messages, against a reader that does
 * what {@code src/main/c/ring.c} does with the same layout: bytes arrive whole and in order across the end of the
 * data area, a full ring waits for the reader, a sleeping reader is kicked and a spinning one is not, and a
 * process that has gone does not hold the server forever.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES) // a ring that never drains fails its test instead of the build
class MessageRingTest
{
    private static final long CAPACITY = 4096;

    @TempDir
    Path dir;

    /** The library's side: maps the file, takes what the server published, moves head. */
    private static final class Reader implements AutoCloseable
    {
        final Arena arena = Arena.ofShared();
        final MemorySegment ring;

        Reader(final Path file) throws IOException
        {
            try (FileChannel f = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE))
            {
                ring = f.map(FileChannel.MapMode.READ_WRITE, 0, MessageRing.DATA_OFFSET + CAPACITY, arena);
            }
        }

        long tail()
        {
            return (long) ValueLayout.JAVA_LONG.varHandle().getAcquire(ring, MessageRing.TAIL);
        }

        long head()
        {
            return ring.get(ValueLayout.JAVA_LONG, MessageRing.HEAD);
        }

        long kicks()
        {
            return (long) ValueLayout.JAVA_LONG.varHandle().getAcquire(ring, MessageRing.KICKS);
        }

        void waiters(final int n)
        {
            ValueLayout.JAVA_INT.varHandle().setVolatile(ring, MessageRing.WAITERS, n);
        }

        /** Takes what is there into {@code to}. */
        int take(final ByteBuffer to)
        {
            final long head = head();
            final int n = (int) Math.min(tail() - head, to.remaining());
            for (int i = 0; i < n; i++)
            {
                to.put(ring.get(ValueLayout.JAVA_BYTE, MessageRing.DATA_OFFSET + ((head + i) & (CAPACITY - 1))));
            }
            ValueLayout.JAVA_LONG.varHandle().setRelease(ring, MessageRing.HEAD, head + n);
            return n;
        }

        @Override
        public void close()
        {
            arena.close();
        }
    }

    private Path ringFile() throws IOException
    {
        final Path f = dir.resolve("ring");
        try (RandomAccessFile r = new RandomAccessFile(f.toFile(), "rw"))
        {
            r.setLength(MessageRing.DATA_OFFSET + CAPACITY);
        }
        return f;
    }

    @Test
    void bytesArriveWholeAndInOrderAcrossTheEndOfTheRingWhileTheReaderTakesThem() throws Exception
    {
        final Path file = ringFile();
        final byte[] sent = new byte[50 * (int) CAPACITY + 123]; // fifty times round, not on a boundary
        new Random(25).nextBytes(sent);
        final ByteBuffer got = ByteBuffer.allocate(sent.length);
        final Pipe kicks = Pipe.open();
        try (MessageRing ring = MessageRing.open(file, CAPACITY); Reader reader = new Reader(file))
        {
            final Thread library = Thread.ofPlatform().start(() ->
            {
                while (got.hasRemaining())
                {
                    if (reader.take(got) == 0)
                    {
                        Thread.onSpinWait();
                    }
                }
            });
            final Random sizes = new Random(19);
            int at = 0;
            while (at < sent.length)
            {
                // messages of up to twice the ring's length: offered again while the reader makes room, as the
                // session's drainer does
                final int n = Math.min(sent.length - at, 1 + sizes.nextInt(2 * (int) CAPACITY));
                final ByteBuffer out = ByteBuffer.allocateDirect(n).put(sent, at, n).flip();
                while (!ring.offer(out, kicks.sink()))
                {
                    Thread.onSpinWait();
                }
                assertThat(out.hasRemaining()).as("everything published").isFalse();
                at += n;
            }
            library.join(30_000);
            assertThat(got.array()).isEqualTo(sent);
            assertThat(reader.kicks()).as("a reader that never sleeps is never kicked").isZero();
        }
    }

    @Test
    void aSleepingReaderIsKickedOnceForEachWriteAndAReaderThatSpinsIsNot() throws Exception
    {
        final Path file = ringFile();
        final Pipe kicks = Pipe.open();
        kicks.source().configureBlocking(false);
        try (MessageRing ring = MessageRing.open(file, CAPACITY); Reader reader = new Reader(file))
        {
            ring.offer(ByteBuffer.allocateDirect(16).put(new byte[16]).flip(), kicks.sink());
            assertThat(kicks.source().read(ByteBuffer.allocate(8))).as("no waiter, no kick").isZero();

            reader.waiters(1);
            ring.offer(ByteBuffer.allocateDirect(16).put(new byte[16]).flip(), kicks.sink());
            ring.offer(ByteBuffer.allocateDirect(16).put(new byte[16]).flip(), kicks.sink());
            assertThat(kicks.source().read(ByteBuffer.allocate(8))).as("one kick byte per write").isEqualTo(2);
            assertThat(reader.kicks()).as("each kick counted for the reader to drain").isEqualTo(2);
            assertThat(reader.tail()).isEqualTo(48);
        }
    }

    @Test
    void aKickTheSocketDidNotTakeIsNotCounted() throws Exception
    {
        final Path file = ringFile();
        final java.nio.channels.WritableByteChannel full = new java.nio.channels.WritableByteChannel()
        {
            @Override
            public int write(final ByteBuffer src)
            {
                return 0; // a non-blocking socket full of kicks takes nothing
            }

            @Override
            public boolean isOpen()
            {
                return true;
            }

            @Override
            public void close()
            {
            }
        };
        final Pipe kicks = Pipe.open();
        try (MessageRing ring = MessageRing.open(file, CAPACITY); Reader reader = new Reader(file))
        {
            reader.waiters(1);
            ring.offer(ByteBuffer.allocateDirect(16).put(new byte[16]).flip(), full);
            assertThat(reader.kicks()).as("no byte written, none counted for the reader to drain").isZero();
            ring.offer(ByteBuffer.allocateDirect(16).put(new byte[16]).flip(), kicks.sink());
            assertThat(reader.kicks()).as("the next kick written is counted").isEqualTo(1);
        }
    }

    @Test
    void aFullRingDoesNotHoldTheServerAndKeepsWhatDidNotFit() throws Exception
    {
        final Path file = ringFile();
        final Pipe kicks = Pipe.open();
        try (MessageRing ring = MessageRing.open(file, CAPACITY); Reader reader = new Reader(file))
        {
            final ByteBuffer out = ByteBuffer.allocateDirect((int) CAPACITY + 100).put(new byte[(int) CAPACITY + 100])
                .flip();
            assertThat(ring.offer(out, kicks.sink())).as("the reader took nothing").isFalse();
            assertThat(reader.tail()).as("what fitted was published").isEqualTo(CAPACITY);
            assertThat(out.remaining()).as("the rest stays for a later offer").isEqualTo(100);
        }
    }

    @Test
    void aRingOfAnotherSizeOrAShortFileIsRefusedAndTheSocketStays() throws Exception
    {
        final Path file = ringFile();
        assertThatThrownBy(() -> MessageRing.open(file, 3000)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("power of two");
        assertThatThrownBy(() -> MessageRing.open(file, 2 * CAPACITY)).isInstanceOf(IOException.class)
            .hasMessageContaining("fewer than its header and 8192 bytes of data");
    }
}
