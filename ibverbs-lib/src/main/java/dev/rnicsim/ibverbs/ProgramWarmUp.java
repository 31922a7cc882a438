package dev.rnicsim.ibverbs;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The fabric's warm-up where the C library is built ({@link FabricWarmUp}): the library's training program
 * ({@code src/main/c/train.c}, the workload of the ahead-of-time cache) run on a private fabric server of this JVM,
 * so that the server's own path is compiled too before a program's first work request: the doorbell ring and its
 * parsing ({@link Session}, {@link Completions}), the model behind it, the copies of the real bytes and the
 * completions through the message ring. The model-only warm-up compiles the model's data path alone; with it the
 * server's path was compiled during the first thousands of messages of {@code ib_write_bw}, with the compiler threads
 * taking about as much CPU as the serving thread on a 2-core machine (docs/c-programs.md, "Bandwidth: where the
 * fabric's CPU goes").
 *
 * <p>The private server has its own fabric, host, devices, keys and clock: nothing of the served fabric changes. The
 * program is killed as soon as {@code stopped} says so (a program's first work request on the served fabric) or at
 * the deadline; its output is discarded. Without the program (no C library built) this part does nothing.
 *
 * <p>Thread safety: {@link #run} may be called from any thread; each call runs one program.
 */
final class ProgramWarmUp
{
    /** The training program's name next to the library ({@code Makefile}). */
    static final String PROGRAM = "rnicsim-train";
    /** How often a running warm-up looks at {@code stopped}. */
    private static final long POLL_MS = 2;

    private ProgramWarmUp()
    {
    }

    /**
     * Runs the training program on a private fabric until it ends, {@code stopped} answers true, or the deadline.
     *
     * @param device     the device of the private fabric (the served fabric's first).
     * @param arguments  the program's arguments (its counts of WRITEs and SENDs).
     * @param stopped    asked every few milliseconds: true ends the program at once.
     * @param deadlineNs the {@link System#nanoTime()} at which the program is ended.
     * @return true when the program ran to its end and succeeded; false when it was ended early, failed, or could not
     * be started (no C library, no program).
     */
    static boolean run(final FabricServer.DeviceSpec device, final List<String> arguments,
        final BooleanSupplier stopped, final long deadlineNs)
    {
        final Path program;
        final Path library;
        try
        {
            library = ProgramRunner.libraryDir();
            program = trainingProgram(library);
        }
        catch (final IOException e)
        {
            return false;
        }
        if (program == null || stopped.getAsBoolean())
        {
            return false;
        }
        final Path socket = Path.of(System.getProperty("java.io.tmpdir"), "rnicsim-warm-up-"
            + ProcessHandle.current().pid() + "-" + Thread.currentThread().threadId() + ".sock");
        final PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
        try (FabricServer server = FabricServer.startPrivate(socket, List.of(device), quiet))
        {
            final ProcessBuilder pb = new ProcessBuilder(command(program, arguments));
            pb.redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD);
            final var env = pb.environment();
            env.put("LD_LIBRARY_PATH", library.toString());
            env.put("RNICSIM_FABRIC_SOCKET", socket.toString());
            env.put("RNICSIM_STRICT", "0");
            final Process p = pb.start();
            // a JVM that exits meanwhile (the served program has ended) takes the program with it
            final Thread reaper = new Thread(p::destroyForcibly, "rnicsim-warm-up-reaper");
            Runtime.getRuntime().addShutdownHook(reaper);
            try
            {
                while (!p.waitFor(POLL_MS, TimeUnit.MILLISECONDS))
                {
                    if (stopped.getAsBoolean() || System.nanoTime() >= deadlineNs)
                    {
                        return false;
                    }
                }
                return p.exitValue() == 0;
            }
            finally
            {
                p.destroyForcibly();
                try
                {
                    Runtime.getRuntime().removeShutdownHook(reaper);
                }
                catch (final IllegalStateException e)
                {
                    // the JVM is exiting: the hook runs
                }
            }
        }
        catch (final IOException e)
        {
            return false;
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * @return whether the library and its training program were built (found on the class path).
     */
    static boolean available()
    {
        return ProgramWarmUp.class.getResource("native/" + PROGRAM) != null
            && ProgramWarmUp.class.getResource("native/libibverbs.so.1") != null;
    }

    private static List<String> command(final Path program, final List<String> arguments)
    {
        final List<String> c = new java.util.ArrayList<>();
        c.add(program.toString());
        c.addAll(arguments);
        return c;
    }

    /**
     * @param library the library's folder ({@link ProgramRunner#libraryDir()}).
     * @return the training program, extracted next to the library when it comes from a jar; null when it was not
     * built.
     * @throws IOException when it cannot be extracted.
     */
    static Path trainingProgram(final Path library) throws IOException
    {
        final URL url = ProgramWarmUp.class.getResource("native/" + PROGRAM);
        if (url == null)
        {
            return null;
        }
        if ("file".equals(url.getProtocol()))
        {
            try
            {
                return Path.of(url.toURI());
            }
            catch (final URISyntaxException e)
            {
                throw new IOException(e);
            }
        }
        final Path out = library.resolve(PROGRAM);
        if (!Files.isExecutable(out))
        {
            final Path tmp = Files.createTempFile(library, PROGRAM, ".tmp");
            try (InputStream in = url.openStream())
            {
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
            }
            if (!tmp.toFile().setExecutable(true))
            {
                Files.deleteIfExists(tmp);
                return null;
            }
            Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING);
            out.toFile().deleteOnExit();
        }
        return out;
    }
}
