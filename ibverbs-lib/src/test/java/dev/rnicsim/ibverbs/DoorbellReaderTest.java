package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * How long a fabric session polls its socket before it sleeps, from {@code RNICSIM_FABRIC_SPIN_NS}; and, once the
 * doorbells come through shared memory, the socket's kicks wake it and its end is seen with or without a sleep.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES) // a reader that never wakes fails its test instead of the build
class DoorbellReaderTest
{
    @TempDir
    Path dir;

    @Test
    void theSpinIsTenMicrosecondsUnlessTheEnvironmentSaysOtherwise()
    {
        assertThat(DoorbellReader.spinNs(null)).isEqualTo(10_000);
        assertThat(DoorbellReader.spinNs(" ")).isEqualTo(10_000);
        assertThat(DoorbellReader.spinNs("0")).as("0 sleeps at once").isZero();
        assertThat(DoorbellReader.spinNs(" 30000 ")).isEqualTo(30_000);
        assertThat(DoorbellReader.spinNs("-5")).as("a negative spin is none").isZero();
        assertThat(DoorbellReader.spinNs("20us")).as("not a whole number: the default").isEqualTo(10_000);
    }

    @Test
    void aKickWakesTheSessionAndTheProcessGoneEndsIt() throws Exception
    {
        final Path path = dir.resolve("socket");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX))
        {
            server.bind(UnixDomainSocketAddress.of(path));
            final SocketChannel process = SocketChannel.open(UnixDomainSocketAddress.of(path));
            try (SocketChannel session = server.accept(); DoorbellReader reader = new DoorbellReader(session))
            {
                assertThat(reader.endOfStream()).as("nothing sent, the process is there").isFalse();
                process.write(ByteBuffer.wrap(new byte[] {1, 1, 1})); // three kicks
                assertThat(reader.sleepUntilKicked()).as("woken by the kicks").isTrue();
                // the kicks read above may leave some behind: drain them, then one more kick wakes the next sleep
                // (a session already asleep is woken the same way: DoorbellRingProgramTest's ping-pong sleeps)
                process.write(ByteBuffer.wrap(new byte[] {1}));
                assertThat(reader.sleepUntilKicked()).as("woken by the next kick").isTrue();
                process.close();
                while (!reader.endOfStream() && reader.sleepUntilKicked())
                {
                    Thread.onSpinWait(); // kicks still buffered before the end of the stream
                }
                assertThat(reader.endOfStream()).as("the process closed its end").isTrue();
                assertThat(reader.sleepUntilKicked()).as("a sleep at the end returns at once").isFalse();
            }
        }
    }
}
