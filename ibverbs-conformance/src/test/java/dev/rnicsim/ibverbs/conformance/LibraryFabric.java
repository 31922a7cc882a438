package dev.rnicsim.ibverbs.conformance;

import dev.rnicsim.ibverbs.FabricServer;
import dev.rnicsim.ibverbs.ProgramRunner;
import dev.rnicsim.simnic.DeviceProfiles;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * The test JVM as a program on the simulated fabric: before any test runs, it starts a {@link FabricServer} with
 * the devices below, points hw-nic's binding at ibverbs-lib's {@code libibverbs.so.1} (system property
 * {@code rnicsim.libibverbs}, which {@code Libibverbs.system()} dlopens instead of the distribution's library), and
 * sets {@code RNICSIM_FABRIC_SOCKET} in the process environment (libc {@code setenv}, which the library's
 * {@code getenv} reads at its first verb), as {@code rnicsim exec} does for a C program. hw-nic's {@code rdma:}
 * devices are then the simulated devices, reached through the same downcalls, struct layouts and ops tables as on
 * a real NIC. Registered through {@code META-INF/services}; the server closes with the launcher session.
 */
public final class LibraryFabric implements LauncherSessionListener
{
    /** The devices the fabric's host has, as {@code rdma:NAME} shows them. */
    static final List<FabricServer.DeviceSpec> DEVICES = List.of(
        new FabricServer.DeviceSpec("mlx5_0", DeviceProfiles.connectx5()),
        new FabricServer.DeviceSpec("rxe0", DeviceProfiles.rxe()));

    private static FabricServer server;
    private static Path dir;

    @Override
    public void launcherSessionOpened(final LauncherSession session)
    {
        start();
    }

    /** Starts the fabric and points the backend at the library, once per JVM. */
    static synchronized void start()
    {
        if (server != null)
        {
            return;
        }
        try
        {
            final Path library = ProgramRunner.libraryDir().resolve("libibverbs.so.1");
            dir = Files.createTempDirectory("rnicsim-conformance-");
            final Path socket = dir.resolve("fabric.sock");
            server = FabricServer.start(socket, DEVICES, new PrintStream(System.err, true, StandardCharsets.UTF_8));
            setenv("RNICSIM_FABRIC_SOCKET", socket.toString());
            System.setProperty("rnicsim.libibverbs", library.toString());
        }
        catch (final IOException e)
        {
            // without the library (no gcc or <infiniband/verbs.h> at build time) the rdma: cases skip with the
            // reason the backend gives
            System.err.println("ibverbs-conformance: " + e.getMessage());
        }
    }

    @SuppressWarnings("restricted")
    private static void setenv(final String name, final String value)
    {
        final Linker linker = Linker.nativeLinker();
        final MethodHandle setenv = linker.downcallHandle(linker.defaultLookup().find("setenv").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                ValueLayout.JAVA_INT));
        try (Arena arena = Arena.ofConfined())
        {
            final int rc = (int)setenv.invokeExact(arena.allocateFrom(name), arena.allocateFrom(value), 1);
            if (rc != 0)
            {
                throw new IllegalStateException("setenv(" + name + ") failed");
            }
        }
        catch (final RuntimeException | Error e)
        {
            throw e;
        }
        catch (final Throwable t)
        {
            throw new IllegalStateException(t);
        }
    }

    @Override
    public void launcherSessionClosed(final LauncherSession session)
    {
        stop();
    }

    private static synchronized void stop()
    {
        if (server == null)
        {
            return;
        }
        server.close();
        server = null;
        try
        {
            Files.deleteIfExists(dir.resolve("fabric.sock"));
            Files.deleteIfExists(dir);
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }
}
