package dev.rnicsim.ibverbs;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds the program a run is to start before anything starts, as a shell does: a name with a {@code /} is that
 * file; any other name is the first executable regular file of that name in a folder of {@code PATH}, or, when
 * there is none, the first file of that name that is not executable (bash's {@code search_for_command}: it is then
 * refused with {@code Permission denied}). The exit statuses are the shells' (POSIX, Shell Command Language 2.8.2):
 * 127 when the command is not found, 126 when it is found but cannot be run.
 *
 * <p>Stateless.
 */
public final class ProgramLookup
{
    /** Exit status of a command not found (POSIX sh). */
    public static final int NOT_FOUND = 127;
    /** Exit status of a command found but not executable (POSIX sh). */
    public static final int NOT_EXECUTABLE = 126;
    /** The search path when {@code PATH} is unset: the JDK's own default for starting processes. */
    static final String DEFAULT_PATH = "/bin:/usr/bin";

    /**
     * A program that cannot be started, with the shell's exit status for it.
     */
    public static final class NotRunnable extends IOException
    {
        private static final long serialVersionUID = 1L;
        /** 127 or 126. */
        private final int exitStatus;

        /**
         * @param message    what is wrong, starting with the program's name, as a shell says it.
         * @param exitStatus 127 (not found) or 126 (found, not executable).
         */
        public NotRunnable(final String message, final int exitStatus)
        {
            super(message);
            this.exitStatus = exitStatus;
        }

        /**
         * @return 127 (not found) or 126 (found, not executable).
         */
        public int exitStatus()
        {
            return exitStatus;
        }
    }

    private ProgramLookup()
    {
    }

    /**
     * @param program    the program as given (a name, or a path with a {@code /}).
     * @param searchPath the {@code PATH} to search, or null for {@link #DEFAULT_PATH}.
     * @return the file that would be run.
     * @throws NotRunnable when it cannot be: no such file or command, a folder, not executable.
     */
    public static Path find(final String program, final String searchPath) throws NotRunnable
    {
        if (program.isEmpty())
        {
            throw new NotRunnable("'': command not found (the program's name is empty)", NOT_FOUND);
        }
        if (program.contains("/"))
        {
            final Path file = Path.of(program);
            final String problem = problem(file);
            if (problem == null)
            {
                return file;
            }
            throw new NotRunnable(program + ": " + problem, problem.startsWith(NO_SUCH) ? NOT_FOUND
                : NOT_EXECUTABLE);
        }
        final String path = searchPath == null ? DEFAULT_PATH : searchPath;
        Path notExecutable = null;
        final List<String> folders = new ArrayList<>();
        for (final String folder : path.split(":", -1))
        {
            folders.add(folder);
            // an empty entry of PATH is the current folder
            final Path file = Path.of(folder.isEmpty() ? "." : folder).resolve(program);
            if (!Files.isRegularFile(file))
            {
                continue;
            }
            if (Files.isExecutable(file))
            {
                return file;
            }
            if (notExecutable == null)
            {
                notExecutable = file;
            }
        }
        if (notExecutable != null)
        {
            throw new NotRunnable(program + ": " + problem(notExecutable), NOT_EXECUTABLE);
        }
        throw new NotRunnable(program + ": command not found (searched PATH: " + String.join(":", folders)
            + "; give its folder, e.g. ./" + program + ", for a program that is not on PATH)", NOT_FOUND);
    }

    private static final String NO_SUCH = "No such file or directory";

    /** Why a file named with its folder cannot be run, in the words of strerror(3), or null when it can. */
    private static String problem(final Path file)
    {
        final PosixFileAttributes attributes;
        try
        {
            attributes = Files.readAttributes(file, PosixFileAttributes.class);
        }
        catch (final AccessDeniedException e)
        {
            return "Permission denied (a folder on the way to it cannot be searched)";
        }
        catch (final IOException | UnsupportedOperationException e)
        {
            if (Files.isSymbolicLink(file))
            {
                return NO_SUCH + " (a symbolic link to a file that does not exist)";
            }
            return NO_SUCH;
        }
        if (attributes.isDirectory())
        {
            return "Is a directory";
        }
        if (!Files.isExecutable(file))
        {
            return "Permission denied (its mode is " + PosixFilePermissions.toString(attributes.permissions())
                + ", owner " + attributes.owner().getName() + ": 'chmod +x " + file + "' makes it executable)";
        }
        return null;
    }
}
