package dev.rnicsim.ibverbs;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The files of one program's run, in a directory of its own beside the fabric's socket, removed when the run ends so
 * that no run leaves a file behind: the lock that a forked child and its parent take around each conversation on
 * their shared connection ({@code RNICSIM_FORK_LOCK}, fork.c), and the file in which {@code rnicsim-status} (status.c)
 * writes how the program ended, exit or signal, which the JVM's {@link Process#waitFor} does not tell apart.
 *
 * <p>Not thread safe: one run uses it.
 */
final class RunDirectory implements AutoCloseable
{
    /** The program that runs the program and writes how it ended (status.c), built beside the library. */
    static final String STATUS_PROGRAM = "rnicsim-status";

    private final Path dir;

    private RunDirectory(final Path dir)
    {
        this.dir = dir;
    }

    /**
     * @param socket the fabric's socket: the directory goes beside it.
     * @return a new, empty directory of this run.
     * @throws IOException when it cannot be made.
     */
    static RunDirectory create(final Path socket) throws IOException
    {
        return new RunDirectory(Files.createTempDirectory(socket.toAbsolutePath().getParent(), "rnicsim-run-"));
    }

    /** @return the directory. */
    Path path()
    {
        return dir;
    }

    /** @return the lock file of the program's forked processes (fork.c reads it from {@code RNICSIM_FORK_LOCK}). */
    Path forkLock()
    {
        return dir.resolve("fork-lock");
    }

    private Path statusFile()
    {
        return dir.resolve("status");
    }

    /**
     * @param library the folder of the library and of rnicsim-status.
     * @param command the program and its arguments.
     * @return the command that runs it under rnicsim-status, which records how it ended.
     * @throws IOException when rnicsim-status was not built.
     */
    List<String> wrap(final Path library, final List<String> command) throws IOException
    {
        if (!Files.isExecutable(library.resolve(STATUS_PROGRAM)))
        {
            throw new IOException("rnic-sim's " + STATUS_PROGRAM + " was not built beside its library in " + library
                + " (ibverbs-lib's build makes both with make and gcc): build again (./rnicsim rebuilds itself when a "
                + "source is newer than its build: 'touch ibverbs-lib/pom.xml')");
        }
        final List<String> wrapped = new ArrayList<>(command.size() + 2);
        wrapped.add(library.resolve(STATUS_PROGRAM).toString());
        wrapped.add(statusFile().toString());
        wrapped.addAll(command);
        return wrapped;
    }

    /**
     * @param program   the program as given (for the message when it could not be started).
     * @param jdkStatus what {@link Process#waitFor} returned for rnicsim-status.
     * @return how the program ended, as rnicsim-status saw it; by {@code jdkStatus} when it wrote nothing (it was
     *         killed itself, by SIGKILL say: then a status above 128 is its signal).
     * @throws ProgramLookup.NotRunnable when execve(2) refused the program (a binary of another machine, say).
     * @throws IOException               when the status file cannot be read.
     */
    ProgramEnd end(final String program, final int jdkStatus) throws IOException
    {
        final List<String> lines;
        try
        {
            lines = Files.readAllLines(statusFile());
        }
        catch (final NoSuchFileException e)
        {
            return jdkStatus > 128 ? new ProgramEnd(jdkStatus, jdkStatus - 128) : new ProgramEnd(jdkStatus, 0);
        }
        final String[] f = lines.isEmpty() ? new String[] {""} : lines.get(0).split(" ", 3);
        return switch (f[0])
        {
            case "exit" -> new ProgramEnd(Integer.parseInt(f[1]), 0);
            case "signal" -> new ProgramEnd(128 + Integer.parseInt(f[1]), Integer.parseInt(f[1]));
            case "unstartable" -> throw new ProgramLookup.NotRunnable(program + ": cannot be started: "
                + (f.length > 2 ? f[2] : "errno " + f[1]) + ("2".equals(f[1]) ? missingInterpreter(program) : ""),
                "2".equals(f[1]) ? ProgramLookup.NOT_FOUND : ProgramLookup.NOT_EXECUTABLE);
            default -> new ProgramEnd(jdkStatus, 0);
        };
    }

    /**
     * execve(2) answers ENOENT for a file that is there when what it names is not: the interpreter of its {@code #!}
     * line, or the ELF interpreter (dynamic loader) of a binary (bash: "cannot execute: required file not found").
     *
     * @return that explanation, naming the {@code #!} interpreter when the file has one.
     */
    private static String missingInterpreter(final String program)
    {
        final Path file = Path.of(program);
        if (!program.contains("/") || !Files.isRegularFile(file))
        {
            return " (the program is there: the interpreter it names, in its #! line or as an ELF binary's loader, "
                + "is not)";
        }
        try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.ISO_8859_1))
        {
            final String first = r.readLine();
            if (first != null && first.startsWith("#!"))
            {
                final String[] words = first.substring(2).trim().split("\\s+", 2);
                return " (the file is there; the interpreter of its #! line, '" + words[0] + "', is not: install it "
                    + "or fix that line)";
            }
        }
        catch (final IOException e)
        {
            // unreadable: say what execve(2) means without the file's first line
        }
        return " (the file is there; the ELF interpreter (dynamic loader) it names is not: 'file " + program
            + "' shows which; build it for this machine)";
    }

    /**
     * How a program ended.
     *
     * @param exitStatus its status as a shell's {@code $?} reports it: its own exit status, or 128 + the signal's
     *                   number when a signal ended it.
     * @param signal     the signal that ended it (waitpid(2)'s WTERMSIG), or 0 when it exited, whatever its status.
     */
    record ProgramEnd(int exitStatus, int signal)
    {
    }

    /** Removes the directory and what the run left in it. */
    @Override
    public void close() throws IOException
    {
        try (Stream<Path> files = Files.walk(dir))
        {
            for (final Path p : files.sorted(Comparator.reverseOrder()).toList())
            {
                Files.deleteIfExists(p);
            }
        }
        catch (final NoSuchFileException e)
        {
            // removed already
        }
    }
}
