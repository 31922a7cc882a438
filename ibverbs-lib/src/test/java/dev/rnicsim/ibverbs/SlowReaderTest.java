package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import java.io.IOException;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A process that sends requests and never reads the answers (a program stopped in a debugger, or computing) holds up
 * only itself: the answers wait for it in the server, which keeps reading its requests and serving the other
 * processes of the fabric. The answers here exceed what the sockets hold (8 MiB of send buffer and the peer's receive
 * buffer), so a server that waited for the socket while holding the fabric's lock would never answer the second
 * process, nor read the first's later requests: the test would not end (its timeout fails it).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class SlowReaderTest
{
    @TempDir
    Path dir;

    /** wire_hdr then the payload. */
    private static ByteBuffer message(final int op, final int seq, final ByteBuffer payload)
    {
        final ByteBuffer b = ByteBuffer.allocate(Wire.HEADER_BYTES + payload.remaining()).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(Wire.HEADER_BYTES + payload.remaining()).putShort((short) op).putShort((short) 0).putInt(seq)
            .putInt(0).put(payload).flip();
        return b;
    }

    private static ByteBuffer hello()
    {
        final ByteBuffer p = ByteBuffer.allocate(32).order(ByteOrder.LITTLE_ENDIAN);
        p.putInt(Wire.VERSION).putInt((int) ProcessHandle.current().pid()).putLong(-1).putLong(-1).putInt(0).putInt(0)
            .flip();
        return message(Wire.OP_HELLO, 1, p);
    }

    private static ByteBuffer handle(final int op, final int seq, final int h)
    {
        final ByteBuffer p = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        p.putInt(h).putInt(0).flip();
        return message(op, seq, p);
    }

    private static void send(final SocketChannel ch, final ByteBuffer b) throws IOException
    {
        while (b.hasRemaining())
        {
            ch.write(b);
        }
    }

    /** Reads one whole answer and returns its header's seq and err. */
    private static int[] answer(final SocketChannel ch) throws IOException
    {
        final ByteBuffer h = ByteBuffer.allocate(Wire.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        while (h.hasRemaining())
        {
            if (ch.read(h) < 0)
            {
                throw new IOException("the server closed the connection");
            }
        }
        final ByteBuffer rest = ByteBuffer.allocate(h.getInt(0) - Wire.HEADER_BYTES);
        while (rest.hasRemaining())
        {
            ch.read(rest);
        }
        return new int[] {h.getInt(8), h.getInt(12)};
    }

    @Test
    void aProcessThatNeverReadsItsAnswersHoldsUpNoOtherProcess() throws Exception
    {
        final Path socket = dir.resolve("fabric.sock");
        try (FabricServer server = FabricServer.start(socket, List.of(new FabricServer.DeviceSpec("mlx5_0",
            DeviceProfiles.connectx5())), new PrintStream(System.err, true, StandardCharsets.UTF_8));
            SocketChannel slow = SocketChannel.open(StandardProtocolFamily.UNIX);
            SocketChannel other = SocketChannel.open(StandardProtocolFamily.UNIX))
        {
            slow.connect(UnixDomainSocketAddress.of(socket));
            send(slow, hello());
            send(slow, handle(Wire.OP_OPEN, 2, 0)); // the context is handle 1
            final int queries = 60_000; // 60,000 answers of 296 bytes: 17.8 MB, more than the sockets hold
            final ByteBuffer many = ByteBuffer.allocate(queries * (Wire.HEADER_BYTES + 8));
            for (int i = 0; i < queries; i++)
            {
                many.put(handle(Wire.OP_QUERY_DEVICE, 3 + i, 1));
            }
            many.flip();
            send(slow, many); // the server reads every request though their answers wait
            send(slow, handle(Wire.OP_ALLOC_PD, 3 + queries, 1));

            other.connect(UnixDomainSocketAddress.of(socket));
            send(other, hello());
            assertThat(answer(other)).as("the other process's HELLO is answered (seq 1, no error)")
                .containsExactly(1, 0);
            send(other, handle(Wire.OP_OPEN, 2, 0));
            assertThat(answer(other)).containsExactly(2, 0);

            // the slow process reads at last: every answer is there, in order, the last one its ALLOC_PD
            int[] last = answer(slow);
            assertThat(last).containsExactly(1, 0);
            for (int seq = 2; seq <= 3 + queries; seq++)
            {
                last = answer(slow);
                assertThat(last[0]).isEqualTo(seq);
                assertThat(last[1]).isZero();
            }
        }
    }
}
