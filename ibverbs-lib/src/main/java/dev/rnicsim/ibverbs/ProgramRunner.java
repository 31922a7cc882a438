package dev.rnicsim.ibverbs;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Runs an unmodified program on a simulated fabric: the program finds this module's {@code libibverbs.so.1} first
 * on {@code LD_LIBRARY_PATH}, and the library finds the fabric server at {@code RNICSIM_FABRIC_SOCKET}. Programs
 * run with one fabric name share one fabric, whichever starts first (a client before its server, say): the first
 * run starts its server (in this JVM), the others attach to it, and the one that started it keeps serving until no
 * program is connected and no attached run is left.
 *
 * <p>Thread safety: {@link #run} may be called from several threads; each call runs one program.
 */
public final class ProgramRunner
{
    private static final String LIBRARY = "libibverbs.so.1";

    /**
     * What to run the program on.
     *
     * @param devices    the devices of a fabric started here (a fabric joined keeps its own).
     * @param fabricName the fabric's name; programs run with one name share one fabric.
     * @param privateFabric true when no other run uses this name: its lock file is removed at the end, and its QPs are
     *                   numbered apart from other fabrics' ({@link PrivateQpNumbers}).
     * @param strict     strict mode: the library reports on stderr failed completions with their diagnosis, DMA
     *                   into memory no longer mapped, and MRs leaked at exit, with the C call sites.
     */
    public record Options(List<FabricServer.DeviceSpec> devices, String fabricName, boolean privateFabric,
        boolean strict)
    {
        /**
         * @throws NullPointerException when devices or fabricName is null.
         */
        public Options
        {
            Objects.requireNonNull(devices, "devices");
            Objects.requireNonNull(fabricName, "fabricName");
            devices = List.copyOf(devices);
        }
    }

    /** The outcome of a run: the program's exit status, and the server when this run hosted the fabric. */
    public record Result(int exitCode, FabricServer hostedFabric)
    {
    }

    private ProgramRunner()
    {
    }

    /**
     * @return the folder holding the library (extracted from the jar to a cache folder when needed).
     * @throws IOException when the library is not on the class path or cannot be extracted.
     */
    public static Path libraryDir() throws IOException
    {
        final URL url = ProgramRunner.class.getResource("native/" + LIBRARY);
        if (url == null)
        {
            throw new IOException(LIBRARY + " is missing from the class path (dev/rnicsim/ibverbs/native/): the "
                + "ibverbs-lib module's build compiles it with make and gcc, which need <infiniband/verbs.h> "
                + "(package libibverbs-dev or rdma-core-devel)");
        }
        if ("file".equals(url.getProtocol()))
        {
            try
            {
                return Path.of(url.toURI()).getParent();
            }
            catch (final URISyntaxException e)
            {
                throw new IOException(e);
            }
        }
        final Path dir = Path.of(System.getProperty("java.io.tmpdir"), "rnicsim-native-" + ProcessHandle.current()
            .pid());
        Files.createDirectories(dir);
        try (InputStream in = url.openStream())
        {
            Files.copy(in, dir.resolve(LIBRARY), StandardCopyOption.REPLACE_EXISTING);
        }
        dir.toFile().deleteOnExit();
        dir.resolve(LIBRARY).toFile().deleteOnExit();
        return dir;
    }

    /**
     * @param fabricName a fabric's name.
     * @return the socket of that fabric's server.
     */
    public static Path socketOf(final String fabricName)
    {
        final String runtime = System.getenv("XDG_RUNTIME_DIR");
        final Path dir = runtime != null && Files.isDirectory(Path.of(runtime)) ? Path.of(runtime)
            : Path.of(System.getProperty("java.io.tmpdir"));
        return dir.resolve("rnicsim-fabric-" + fabricName + ".sock");
    }

    /**
     * Attaches this run to a live fabric: a connection the server counts until it closes, acknowledged by the server
     * (an ATTACH request and its answer), so the run that hosts the fabric keeps serving it until this run's program
     * has finished, even when its own program ended first.
     *
     * @return the open connection, or null when no fabric is live at that socket.
     */
    private static SocketChannel attach(final Path socket)
    {
        if (!Files.exists(socket))
        {
            return null;
        }
        SocketChannel ch = null;
        try
        {
            ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            ch.connect(UnixDomainSocketAddress.of(socket));
            final ByteBuffer req = ByteBuffer.allocate(Wire.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            req.putInt(Wire.HEADER_BYTES).putShort((short) Wire.OP_ATTACH).putShort((short) 0).putInt(1).putInt(0)
                .flip();
            while (req.hasRemaining())
            {
                ch.write(req);
            }
            final ByteBuffer answer = ByteBuffer.allocate(Wire.HEADER_BYTES);
            while (answer.hasRemaining())
            {
                if (ch.read(answer) < 0)
                {
                    throw new IOException("the fabric server closed the connection");
                }
            }
            return ch;
        }
        catch (final IOException e)
        {
            // a socket file left by a server that has gone: this run starts the fabric
            if (ch != null)
            {
                try
                {
                    ch.close();
                }
                catch (final IOException ignored)
                {
                    // closing a connection that never worked
                }
            }
            return null;
        }
    }

    /** Threads of this JVM that run programs on one fabric take its lock file in turn (a FileLock is per JVM). */
    private static final java.util.concurrent.ConcurrentHashMap<Path, Object> IN_JVM = new java.util.concurrent
        .ConcurrentHashMap<>();

    /** Runs {@code action} holding the fabric's lock file (against other JVMs) and its monitor (this JVM). */
    private static <T> T locked(final Path lockFile, final IoAction<T> action) throws IOException
    {
        synchronized (IN_JVM.computeIfAbsent(lockFile.toAbsolutePath(), k -> new Object()))
        {
            try (FileChannel lockChannel = FileChannel.open(lockFile, StandardOpenOption.CREATE,
                StandardOpenOption.WRITE); FileLock held = lockChannel.lock())
            {
                return action.run();
            }
        }
    }

    @FunctionalInterface
    private interface IoAction<T>
    {
        T run() throws IOException;
    }

    /**
     * Runs a program to its end on the named fabric, starting the fabric when none of that name is live.
     *
     * @param options what to run it on.
     * @param command the program and its arguments.
     * @param log     where the fabric server reports what it cannot tell a program.
     * @param onHosted called with the fabric's server when this run starts it, before the program runs (to attach
     *                 a trace); not called when the run joins a live fabric.
     * @return the program's exit status (128 + the signal's number when a signal ended it, as shells report it).
     * @throws IOException          when the program cannot be started or the fabric cannot be served.
     * @throws InterruptedException when interrupted while waiting.
     */
    public static Result run(final Options options, final List<String> command, final PrintStream log,
        final java.util.function.Consumer<FabricServer> onHosted) throws IOException, InterruptedException
    {
        return run(options, command, log, onHosted, ProcessBuilder::inheritIO);
    }

    /**
     * As {@link #run(Options, List, PrintStream, java.util.function.Consumer)}, with the program's standard streams
     * set by the caller.
     *
     * @param options  what to run it on.
     * @param command  the program and its arguments.
     * @param log      where the fabric server reports what it cannot tell a program.
     * @param onHosted called with the fabric's server when this run starts it.
     * @param streams  sets the program's standard streams (e.g. redirects them to files).
     * @return the program's exit status, and the server when this run hosted the fabric.
     * @throws IOException          when the program cannot be started or the fabric cannot be served.
     * @throws InterruptedException when interrupted while waiting.
     */
    public static Result run(final Options options, final List<String> command, final PrintStream log,
        final java.util.function.Consumer<FabricServer> onHosted,
        final java.util.function.Consumer<ProcessBuilder> streams) throws IOException, InterruptedException
    {
        final Path socket = socketOf(options.fabricName());
        final Path lockFile = socket.resolveSibling("rnicsim-fabric-" + options.fabricName() + ".lock");
        // under the lock: join the live fabric (attached, so that its host keeps it until this program ends), or
        // start it; a run that starts while the host is closing it waits, then starts a new one
        final SocketChannel[] attached = new SocketChannel[1];
        final FabricServer hosted = locked(lockFile, () ->
        {
            attached[0] = attach(socket);
            if (attached[0] != null)
            {
                return null;
            }
            final FabricServer f = FabricServer.start(socket, options.devices(), log);
            if (options.privateFabric())
            {
                synchronized (f.lock)
                {
                    f.fabric().firstQpNum(PrivateQpNumbers.firstOf(options.fabricName()));
                }
            }
            onHosted.accept(f);
            return f;
        });
        try
        {
            final ProcessBuilder pb = new ProcessBuilder(command);
            streams.accept(pb);
            final Map<String, String> env = pb.environment();
            final String old = env.get("LD_LIBRARY_PATH");
            env.put("LD_LIBRARY_PATH", libraryDir() + (old == null || old.isEmpty() ? "" : ":" + old));
            env.put("RNICSIM_FABRIC_SOCKET", socket.toString());
            env.put("RNICSIM_STRICT", options.strict() ? "1" : "0");
            final Process p = pb.start();
            final int code = p.waitFor();
            if (hosted != null)
            {
                closeWhenIdle(hosted, lockFile);
            }
            return new Result(code, hosted);
        }
        finally
        {
            if (attached[0] != null)
            {
                attached[0].close();
            }
            if (hosted != null)
            {
                hosted.close();
            }
            if (options.privateFabric())
            {
                Files.deleteIfExists(lockFile);
            }
        }
    }

    /**
     * Serves the fabric until no program and no attached run uses it, then closes it under the lock file, so that a
     * run cannot join it between the last one leaving and the close.
     */
    private static void closeWhenIdle(final FabricServer hosted, final Path lockFile)
        throws IOException, InterruptedException
    {
        while (true)
        {
            hosted.awaitNoConnections();
            final boolean idle = locked(lockFile, () ->
            {
                if (hosted.connections() > 0)
                {
                    return false;
                }
                hosted.close();
                return true;
            });
            if (idle)
            {
                return;
            }
        }
    }
}
