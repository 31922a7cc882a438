package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.simnic.DeviceProfile;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Runs the distribution's programs on a fabric of this test's own, capturing what they print.
 */
final class Programs implements AutoCloseable
{
    /** A finished program: its exit status and what it printed. */
    record Run(int exitCode, String out, String err)
    {
        String both()
        {
            return out + err;
        }
    }

    private final String fabricName;
    private final FabricServer server;
    private final Path dir;

    Programs(final Path dir, final String hcaId, final DeviceProfile profile) throws IOException
    {
        try
        {
            ProgramRunner.libraryDir();
        }
        catch (final IOException e)
        {
            require("libibverbs.so.1-of-this-module (" + e.getMessage() + ")", "libibverbs-dev");
        }
        this.dir = dir;
        this.fabricName = "test-" + ProcessHandle.current().pid() + "-" + ThreadLocalRandom.current().nextInt(1 << 30);
        this.server = FabricServer.start(ProgramRunner.socketOf(fabricName),
            List.of(new FabricServer.DeviceSpec(hcaId, profile)), new PrintStream(System.err, true,
                StandardCharsets.UTF_8));
    }

    FabricServer server()
    {
        return server;
    }

    /**
     * Fails (under CI=true, where .ci/run installs them) or skips when a program of the distribution is missing.
     */
    static void require(final String program, final String debianPackage)
    {
        for (final String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(":"))
        {
            if (Files.isExecutable(Path.of(dir, program)))
            {
                return;
            }
        }
        final String why = program + " is not installed (Debian/Ubuntu package " + debianPackage + "; .ci/run "
            + "installs it)";
        if ("true".equals(System.getenv("CI")))
        {
            fail(why);
        }
        assumeTrue(false, why);
    }

    Run run(final boolean strict, final String... command) throws IOException, InterruptedException
    {
        final Path out = Files.createTempFile(dir, "out", ".txt");
        final Path err = Files.createTempFile(dir, "err", ".txt");
        final ProgramRunner.Result r = ProgramRunner.run(new ProgramRunner.Options(List.of(), fabricName, false, strict),
            List.of(command), System.err, s -> fail("the test's fabric was not live"),
            pb -> pb.redirectOutput(out.toFile()).redirectError(err.toFile()));
        return new Run(r.exitCode(), Files.readString(out), Files.readString(err));
    }

    /**
     * Runs a server program and then its client (which connects to localhost) once the server listens: the client
     * starts when the kernel's socket table shows the server's {@code -p} port in LISTEN, not after a guessed delay.
     */
    List<Run> serverAndClient(final List<String> server, final List<String> client, final String notListening)
        throws Exception
    {
        return serverAndClients(server, List.of(client), notListening);
    }

    /**
     * Runs a server program and, once it listens (as {@link #serverAndClient}), all its clients at once, each in a
     * process of its own: a server that serves several clients (ibv_xsrq_pingpong -c N) talks to them together.
     *
     * @return the server's run, then each client's, in the order given.
     */
    List<Run> serverAndClients(final List<String> server, final List<List<String>> clients, final String notListening)
        throws Exception
    {
        final Run[] runs = new Run[1 + clients.size()];
        final Exception[] failures = new Exception[runs.length];
        final List<Thread> threads = new java.util.ArrayList<>();
        threads.add(start(server, runs, failures, 0));
        final int port = Integer.parseInt(server.get(server.indexOf("-p") + 1));
        final long deadlineNs = System.nanoTime() + 60_000_000_000L;
        while (!listening(port) && threads.get(0).isAlive() && System.nanoTime() < deadlineNs)
        {
            // A real process binds the port: the test waits on the kernel's socket table, not on simulated time.
            java.util.concurrent.locks.LockSupport.parkNanos(5_000_000L);
        }
        for (int i = 0; i < clients.size(); i++)
        {
            threads.add(start(clients.get(i), runs, failures, i + 1));
        }
        for (final Thread t : threads)
        {
            t.join(120_000);
        }
        for (final Exception e : failures)
        {
            if (e != null)
            {
                throw e;
            }
        }
        for (int i = 1; i < runs.length; i++)
        {
            assertThat(runs[i].both()).as("client " + i + " ran after the server listened on port " + port)
                .doesNotContain(notListening);
        }
        return List.of(runs);
    }

    private Thread start(final List<String> command, final Run[] runs, final Exception[] failures, final int index)
    {
        return Thread.ofPlatform().start(() ->
        {
            try
            {
                runs[index] = run(false, command.toArray(String[]::new));
            }
            catch (final IOException | InterruptedException e)
            {
                failures[index] = e;
            }
        });
    }

    /** @return true when /proc/net/tcp or tcp6 holds a socket in LISTEN (state 0A) on {@code port}. */
    static boolean listening(final int port) throws IOException
    {
        final String local = String.format(":%04X ", port);
        for (final String table : List.of("/proc/net/tcp", "/proc/net/tcp6"))
        {
            final Path path = Path.of(table);
            if (Files.isReadable(path))
            {
                for (final String line : Files.readAllLines(path))
                {
                    final String[] f = line.trim().split("\\s+");
                    if (f.length > 3 && (f[1] + " ").endsWith(local) && f[3].equals("0A"))
                    {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /**
     * Compiles a C test program with gcc against the distribution's {@code <infiniband/verbs.h>} and links it with
     * this module's library (-rdynamic, so strict mode's call sites name functions).
     *
     * @param dir    where the executable goes.
     * @param source the C file.
     * @param name   the executable's name.
     * @return the executable.
     */
    static Path compile(final Path dir, final String source, final String name) throws Exception
    {
        require("gcc", "gcc");
        if (!Files.exists(Path.of("/usr/include/infiniband/verbs.h")))
        {
            require("verbs.h-of-libibverbs-dev", "libibverbs-dev");
        }
        final Path exe = dir.resolve(name);
        final Path lib = ProgramRunner.libraryDir().resolve("libibverbs.so.1");
        final Process gcc = new ProcessBuilder("gcc", "-g", "-rdynamic", "-O1", "-Wall", "-o", exe.toString(), source,
            lib.toString()).redirectErrorStream(true).start();
        final String out = new String(gcc.getInputStream().readAllBytes());
        assertThat(gcc.waitFor()).as(out).isZero();
        return exe;
    }

    static int port()
    {
        return 20000 + ThreadLocalRandom.current().nextInt(20000);
    }

    @Override
    public void close()
    {
        server.close();
        try
        {
            Files.deleteIfExists(ProgramRunner.socketOf(fabricName).resolveSibling("rnicsim-fabric-" + fabricName
                + ".lock"));
        }
        catch (final IOException e)
        {
            // a lock file left in the temporary folder
        }
    }
}
