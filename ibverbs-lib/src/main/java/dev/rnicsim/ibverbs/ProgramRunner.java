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
 * program is connected and no attached run is left. Before anything starts, a program that is not there or not
 * executable is refused as a shell refuses it ({@link ProgramLookup}), and a live fabric whose origin
 * ({@link FabricOrigin}) the run's {@link Options#joinCheck} refuses is not joined; while the program runs, the signals
 * that ask a run to end can be sent on to it ({@link ProgramSignals}).
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
     * @param origin     what a fabric started here is, told to the runs that join it ({@link FabricOrigin}; its
     *                   process id is this run's); null: its devices' names, no trace.
     * @param joinCheck  given the origin of a live fabric this run would join, why it must not (the program is not
     *                   started), or null when it may; null: any fabric is joined.
     * @param forwardSignals true to catch SIGINT, SIGTERM and SIGHUP while the program runs and send them to it
     *                   ({@link ProgramSignals}): for a process that runs one program, as {@code rnicsim exec}.
     */
    public record Options(List<FabricServer.DeviceSpec> devices, String fabricName, boolean privateFabric,
        boolean strict, FabricOrigin origin, java.util.function.Function<FabricOrigin, String> joinCheck,
        boolean forwardSignals)
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

        /**
         * Options that join any live fabric and leave signals to the JVM.
         *
         * @param devices       the devices of a fabric started here.
         * @param fabricName    the fabric's name.
         * @param privateFabric true when no other run uses this name.
         * @param strict        strict mode.
         */
        public Options(final List<FabricServer.DeviceSpec> devices, final String fabricName,
            final boolean privateFabric, final boolean strict)
        {
            this(devices, fabricName, privateFabric, strict, null, null, false);
        }
    }

    /**
     * A live fabric this run was to join is not what the run asked for ({@link Options#joinCheck}); nothing was
     * started.
     */
    public static final class JoinRefused extends IOException
    {
        private static final long serialVersionUID = 1L;

        JoinRefused(final String message)
        {
            super(message);
        }
    }

    /**
     * The outcome of a run.
     *
     * @param exitCode     the program's exit status (128 + the signal's number when a signal ended it).
     * @param hostedFabric the fabric's server when this run hosted it, else null.
     * @param signal       the first signal this run caught after its program had ended, while it served the fabric
     *                     for other runs ({@link Options#forwardSignals}), or 0: a signal caught while the program
     *                     ran was sent to it, and its exit status says how it ended.
     * @param programSignal the signal that ended the program (waitpid(2)'s WTERMSIG), or 0 when it exited: a program
     *                     that exits with 130 of its own ({@code exit 130} in a shell) has exitCode 130 and no signal.
     */
    public record Result(int exitCode, FabricServer hostedFabric, int signal, int programSignal)
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
            throw new IOException("rnic-sim's " + LIBRARY + " was not built (ibverbs-lib's build makes it with make "
                + "and gcc, and skips it without <infiniband/verbs.h>): install the package libibverbs-dev (or "
                + "rdma-core-devel), make and gcc, and build again (./rnicsim rebuilds itself when a source is newer "
                + "than its build: 'touch ibverbs-lib/pom.xml')");
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
        return extracted(url);
    }

    /** The folder the library and rnicsim-status were copied to out of the jar, once per JVM; null before. */
    private static Path extracted;

    /**
     * Copies the library and rnicsim-status out of the jar the first time only: copying again while another thread
     * of this JVM runs a program from the folder would replace rnicsim-status under it (not executable for a moment,
     * or busy), and a folder a dead process of the same pid left behind is overwritten the first time.
     */
    private static synchronized Path extracted(final URL url) throws IOException
    {
        if (extracted != null)
        {
            return extracted;
        }
        final Path dir = Path.of(System.getProperty("java.io.tmpdir"), "rnicsim-native-" + ProcessHandle.current()
            .pid());
        Files.createDirectories(dir);
        try (InputStream in = url.openStream())
        {
            Files.copy(in, dir.resolve(LIBRARY), StandardCopyOption.REPLACE_EXISTING);
        }
        final URL statusProgram = ProgramRunner.class.getResource("native/" + RunDirectory.STATUS_PROGRAM);
        if (statusProgram != null)
        {
            try (InputStream in = statusProgram.openStream())
            {
                Files.copy(in, dir.resolve(RunDirectory.STATUS_PROGRAM), StandardCopyOption.REPLACE_EXISTING);
            }
            dir.resolve(RunDirectory.STATUS_PROGRAM).toFile().setExecutable(true);
            dir.resolve(RunDirectory.STATUS_PROGRAM).toFile().deleteOnExit();
        }
        dir.toFile().deleteOnExit();
        dir.resolve(LIBRARY).toFile().deleteOnExit();
        extracted = dir;
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
        // as a shell: a program that is not there or cannot be run is refused before anything starts
        ProgramLookup.find(command.isEmpty() ? "" : command.get(0), System.getenv("PATH"));
        final Path library = libraryDir(); // no library, no run: said before a fabric starts
        final Path socket = socketOf(options.fabricName());
        final Path lockFile = socket.resolveSibling("rnicsim-fabric-" + options.fabricName() + ".lock");
        final Path originFile = FabricOrigin.fileOf(options.fabricName());
        final RunDirectory runDir = RunDirectory.create(socket);
        final ProgramSignals signals = options.forwardSignals() ? ProgramSignals.install() : null;
        // under the lock: join the live fabric (attached, so that its host keeps it until this program ends), or
        // start it; a run that starts while the host is closing it waits, then starts a new one
        final SocketChannel[] attached = new SocketChannel[1];
        try
        {
            final FabricServer hosted = locked(lockFile, () ->
            {
                attached[0] = attach(socket);
                if (attached[0] != null)
                {
                    refuseJoin(options, originFile, attached[0], log);
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
                try
                {
                    originOf(options).write(originFile);
                    onHosted.accept(f);
                }
                catch (final IOException | RuntimeException | Error e)
                {
                    f.close(); // no fabric is left serving for a run that did not start
                    Files.deleteIfExists(originFile);
                    throw e;
                }
                return f;
            });
            boolean ended = false;
            try
            {
                final Result r = runProgram(options, command, library, hosted, socket, lockFile, streams, signals,
                    log, runDir);
                ended = true;
                return r;
            }
            finally
            {
                if (hosted != null && !ended)
                {
                    // the program could not be started, or the wait was interrupted: the fabric goes with the run
                    locked(lockFile, () ->
                    {
                        hosted.close();
                        return Files.deleteIfExists(originFile);
                    });
                }
            }
        }
        finally
        {
            if (signals != null)
            {
                signals.close();
            }
            if (attached[0] != null)
            {
                attached[0].close();
            }
            if (options.privateFabric())
            {
                Files.deleteIfExists(lockFile);
            }
            runDir.close();
        }
    }

    private static Result runProgram(final Options options, final List<String> command, final Path library,
        final FabricServer hosted,
        final Path socket, final Path lockFile, final java.util.function.Consumer<ProcessBuilder> streams,
        final ProgramSignals signals, final PrintStream log, final RunDirectory runDir)
        throws IOException, InterruptedException
    {
        final ProcessBuilder pb = new ProcessBuilder(runDir.wrap(library, command));
        streams.accept(pb);
        final Map<String, String> env = pb.environment();
        final String old = env.get("LD_LIBRARY_PATH");
        env.put("LD_LIBRARY_PATH", library + (old == null || old.isEmpty() ? "" : ":" + old));
        env.put("RNICSIM_FABRIC_SOCKET", socket.toString());
        env.put("RNICSIM_STRICT", options.strict() ? "1" : "0");
        env.put("RNICSIM_FORK_LOCK", runDir.forkLock().toString());
        final Process p;
        try
        {
            p = pb.start();
        }
        catch (final IOException e)
        {
            // found and executable, yet refused by execve(2) (a binary of another machine, say): the JDK's
            // message ends with the C library's reason
            final String m = String.valueOf(e.getMessage());
            throw new ProgramLookup.NotRunnable(command.get(0) + ": cannot be started: "
                + (m.contains("error: ") ? m.substring(m.indexOf("error: ") + 7).trim() : m),
                ProgramLookup.NOT_EXECUTABLE);
        }
        if (signals != null)
        {
            signals.program(p);
        }
        final RunDirectory.ProgramEnd end = runDir.end(command.get(0), p.waitFor());
        final int signal = signals == null ? 0 : signals.received();
        if (hosted != null)
        {
            if (signal != 0 || !closeWhenIdle(hosted, lockFile, options.fabricName(), signals))
            {
                closeNow(hosted, lockFile, options.fabricName(), signals, log);
            }
        }
        return new Result(end.exitStatus(), hosted, signals == null ? 0 : signals.afterProgram(), end.signal());
    }

    /**
     * Refuses to join a live fabric that is not what this run asked for (its {@link Options#joinCheck}); says which of
     * this run's server settings the fabric does not have ({@link FabricSettings}).
     */
    private static void refuseJoin(final Options options, final Path originFile, final SocketChannel attached,
        final PrintStream log) throws IOException
    {
        final FabricOrigin origin = FabricOrigin.read(originFile);
        final String refusal = origin == null || options.joinCheck() == null ? null : options.joinCheck().apply(origin);
        if (refusal != null)
        {
            attached.close();
            throw new JoinRefused(refusal);
        }
        if (origin != null)
        {
            FabricSettings.ignored(options.fabricName(), origin, System.getenv()).forEach(l -> log.println(
                "rnicsim exec: " + l));
        }
    }

    private static FabricOrigin originOf(final Options options)
    {
        final long pid = ProcessHandle.current().pid();
        if (options.origin() != null)
        {
            return new FabricOrigin(pid, options.origin().devices(), options.origin().trace(),
                FabricSettings.of(System.getenv()));
        }
        return new FabricOrigin(pid, "devices " + String.join(", ", options.devices().stream()
            .map(FabricServer.DeviceSpec::hcaId).toList()), null, FabricSettings.of(System.getenv()));
    }

    /**
     * Closes a hosted fabric at once after a signal, under the lock file, and removes its origin; says how many
     * connections of other runs lose it.
     */
    private static void closeNow(final FabricServer hosted, final Path lockFile, final String fabricName,
        final ProgramSignals signals, final PrintStream log) throws IOException
    {
        locked(lockFile, () ->
        {
            final int others = hosted.connections();
            if (others > 0 && signals != null && signals.received() != 0)
            {
                log.println("rnicsim exec: " + ProgramSignals.describe(signals.received()) + ": fabric '"
                    + fabricName + "' closes with " + others + " connection" + (others == 1 ? "" : "s")
                    + " of other runs on it (their programs lose the fabric)");
            }
            hosted.close();
            Files.deleteIfExists(FabricOrigin.fileOf(fabricName));
            return null;
        });
    }

    /**
     * Serves the fabric until no program and no attached run uses it, then closes it under the lock file, so that a
     * run cannot join it between the last one leaving and the close.
     *
     * @return true when it closed; false when a signal was caught first (the fabric is still open).
     */
    private static boolean closeWhenIdle(final FabricServer hosted, final Path lockFile, final String fabricName,
        final ProgramSignals signals) throws IOException, InterruptedException
    {
        if (signals != null)
        {
            signals.waiter(Thread.currentThread());
        }
        try
        {
            while (true)
            {
                try
                {
                    hosted.awaitNoConnections();
                }
                catch (final InterruptedException e)
                {
                    if (signals == null || signals.received() == 0)
                    {
                        throw e;
                    }
                    return false; // a signal: the fabric closes now, whoever is on it
                }
                final boolean idle = locked(lockFile, () ->
                {
                    if (hosted.connections() > 0)
                    {
                        return false;
                    }
                    hosted.close();
                    Files.deleteIfExists(FabricOrigin.fileOf(fabricName));
                    return true;
                });
                if (idle)
                {
                    return true;
                }
            }
        }
        finally
        {
            if (signals != null)
            {
                signals.waiter(null);
                Thread.interrupted(); // an interrupt from a signal that came as the wait ended
            }
        }
    }
}
