package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.simnic.DeviceProfile;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
     * Runs a server program and then its client (which connects to localhost), retrying the client while the
     * server is not yet listening.
     */
    List<Run> serverAndClient(final List<String> server, final List<String> client, final String notListening)
        throws Exception
    {
        final Run[] serverRun = new Run[1];
        final Exception[] serverFailure = new Exception[1];
        final Thread t = Thread.ofPlatform().start(() ->
        {
            try
            {
                serverRun[0] = run(false, server.toArray(String[]::new));
            }
            catch (final IOException | InterruptedException e)
            {
                serverFailure[0] = e;
            }
        });
        final List<String> clientCommand = new ArrayList<>(client);
        Run c = null;
        for (int attempt = 0; attempt < 100; attempt++)
        {
            Thread.sleep(200);
            c = run(false, clientCommand.toArray(String[]::new));
            if (c.exitCode() == 0 || !c.both().contains(notListening))
            {
                break;
            }
        }
        t.join(120_000);
        if (serverFailure[0] != null)
        {
            throw serverFailure[0];
        }
        return List.of(serverRun[0], c);
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
