package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server and a client each run without {@code --fabric} are on two fabrics, as on two hosts: the QP number the
 * client learns from the server over TCP names no QP the client's fabric can reach, so the client's first SEND ends
 * with IBV_WC_RETRY_EXC_ERR after its retries, as on a real network, instead of connecting to a QP of its own
 * fabric (itself) and reporting a success the server never sees. Strict mode's report of that SEND names the C call
 * site of its ibv_post_send, although the post waited for the peer to connect back before the device ran it.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class PrivateFabricQpTest
{
    @TempDir
    Path dir;

    @Test
    void aClientOnAnotherPrivateFabricFailsWithTheRetryErrorAndIsToldToShareAFabric() throws Exception
    {
        Programs.require("ibv_rc_pingpong", "ibverbs-utils");
        final int port = 19600 + ThreadLocalRandom.current().nextInt(100);
        final int n = ThreadLocalRandom.current().nextInt(1 << 20);
        // names ending with consecutive numbers, as two runs' pids: blocks apart (PrivateQpNumbers), as two hosts
        final String serverFabric = "qpn-server-" + ProcessHandle.current().pid() + "-" + n;
        final String clientFabric = "qpn-client-" + ProcessHandle.current().pid() + "-" + (n + 1);
        final Path serverOut = dir.resolve("server.txt");
        final Path clientOut = dir.resolve("client.txt");
        final Thread server = Thread.ofPlatform().daemon().start(() -> runQuietly(ownFabric(serverFabric, false),
            List.of("ibv_rc_pingpong", "-p", Integer.toString(port)), serverOut));
        try
        {
            final long deadlineNs = System.nanoTime() + 60_000_000_000L;
            while (!Programs.listening(port) && server.isAlive() && System.nanoTime() < deadlineNs)
            {
                LockSupport.parkNanos(5_000_000L); // a real process binds the port: wait on the kernel's table
            }
            final ProgramRunner.Result client = ProgramRunner.run(ownFabric(clientFabric, true),
                List.of("ibv_rc_pingpong", "-p", Integer.toString(port), "localhost"), System.err, f -> { },
                pb -> pb.redirectOutput(clientOut.toFile()).redirectErrorStream(true));
            final String out = Files.readString(clientOut, StandardCharsets.UTF_8);
            assertThat(client.exitCode()).as(out).isNotZero();
            assertThat(out).contains("transport retry counter exceeded")
                .contains("names no QP on any device of this fabric")
                .contains("--fabric NAME")
                .doesNotContain("iters in");
            // the SEND waited for the peer to connect back before it ran: its report still names where it was posted
            assertThat(out).containsPattern("SEND wr_id 2 on QP 0x\\p{XDigit}+ \\(ibv_post_send called from "
                + "ibv_rc_pingpong\\(");
        }
        finally
        {
            // the server waits for a client that never reached it: end it (by its port, the test's own)
            ProcessHandle.current().descendants()
                .filter(p -> p.info().commandLine().map(c -> c.contains("ibv_rc_pingpong -p " + port)
                    && !c.contains("localhost")).orElse(false))
                .forEach(ProcessHandle::destroy);
            server.join(30_000);
        }
        assertThat(server.isAlive()).as("the server's run ends once its program is ended").isFalse();
    }

    @Test
    void privateFabricsOfNearbyPidsNumberTheirQpsInBlocksApartWithin24Bits()
    {
        final java.util.Set<Integer> firsts = new java.util.HashSet<>();
        for (int pid = 4_190_000; pid < 4_190_000 + PrivateQpNumbers.BLOCKS; pid++)
        {
            final int first = PrivateQpNumbers.firstOf("exec-" + pid);
            // blocks 1 to 0xfff: the last block's numbers end at 0xffffff, below QP 0x11 of block 0 (named fabrics)
            assertThat(first).isBetween(PrivateQpNumbers.BLOCK_QPS + 0x11, 0xfff011);
            assertThat(first % PrivateQpNumbers.BLOCK_QPS).isEqualTo(0x11);
            firsts.add(first);
        }
        assertThat(firsts).as("4095 consecutive pids, 4095 blocks").hasSize(PrivateQpNumbers.BLOCKS);
    }

    private static ProgramRunner.Options ownFabric(final String fabricName, final boolean strict)
    {
        return new ProgramRunner.Options(List.of(new FabricServer.DeviceSpec("mlx5_0", DeviceProfiles.connectx5())),
            fabricName, true, strict);
    }

    private static void runQuietly(final ProgramRunner.Options options, final List<String> command, final Path out)
    {
        try
        {
            ProgramRunner.run(options, command, System.err, f -> { },
                pb -> pb.redirectOutput(out.toFile()).redirectErrorStream(true));
        }
        catch (final Exception e)
        {
            throw new IllegalStateException(e);
        }
    }
}
