package dev.rnicsim.scenarios.cli;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Checks and failures of the files the commands write ({@code --trace}, {@code --svg}): each message names the option,
 * the path and the cause. Folders are never created: a missing folder is an error found before anything runs.
 * Stateless.
 */
final class OutputFile
{
    private OutputFile()
    {
    }

    /**
     * @param option the option, e.g. {@code --trace}.
     * @param file   its value, or null when not given.
     * @return why the file cannot be written (empty path, a folder, a missing or unwritable folder), or null.
     */
    static String problem(final String option, final Path file)
    {
        if (file == null)
        {
            return null;
        }
        if (file.toString().isEmpty())
        {
            return option + " is empty: give the file to write";
        }
        if (Files.isDirectory(file))
        {
            return option + " " + file + ": is a folder, not a file: name a file in it";
        }
        final Path parent = file.toAbsolutePath().getParent();
        if (parent != null && !Files.exists(parent))
        {
            return option + " " + file + ": the folder " + parent + " does not exist (create it first; rnicsim "
                + "creates no folders)";
        }
        if (parent != null && !Files.isDirectory(parent))
        {
            return option + " " + file + ": " + parent + " is not a folder";
        }
        if (parent != null && !Files.isWritable(parent) || Files.exists(file) && !Files.isWritable(file))
        {
            return option + " " + file + ": permission denied";
        }
        return Files.exists(file) ? null : cannotCreate(option, file, parent);
    }

    /**
     * Creates the file and deletes it again: a folder that looks writable may still take no new file (root in
     * /proc or /sys, a read-only mount), which would otherwise show only when the run is over.
     *
     * @return why the file cannot be created, in the words of {@link #problem}, or null when it can.
     */
    private static String cannotCreate(final String option, final Path file, final Path parent)
    {
        try
        {
            Files.newOutputStream(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE).close();
        }
        catch (final FileAlreadyExistsException e)
        {
            return null;
        }
        catch (final IOException e)
        {
            final String reason = e instanceof NoSuchFileException
                ? "the folder " + parent + " takes no new files (a kernel file system such as /proc or /sys)"
                : Problems.reason(e);
            return option + " " + file + ": cannot create the file: " + reason + "; name a file in a folder you can "
                + "write to";
        }
        try
        {
            Files.deleteIfExists(file);
        }
        catch (final IOException e)
        {
            return option + " " + file + ": created to check it, but cannot delete it again: " + Problems.reason(e)
                + "; name a file in a folder you can write to";
        }
        return null;
    }

    /**
     * @param option the option.
     * @param file   the file.
     * @param e      what writing it threw.
     * @return e.g. {@code --trace out.json: cannot write: No space left on device}.
     */
    static String failed(final String option, final Path file, final IOException e)
    {
        return option + " " + file + ": cannot write: " + Problems.reason(e);
    }

    /**
     * An output file that is one of the command's inputs would replace it: refused before anything runs. Real paths
     * are compared ({@link Files#isSameFile}: {@code ./x}, {@code dir/../x}, a symbolic or hard link to the input).
     *
     * @param option the output option, e.g. {@code --trace}.
     * @param out    its file, or null when not given.
     * @param input  what names the input, e.g. {@code the FILE argument} or {@code --workload}.
     * @param in     the input file, or null.
     * @return the refusal in words, or null when the output is another file.
     */
    static String overInput(final String option, final Path out, final String input, final Path in)
    {
        if (out == null || in == null || out.toString().isEmpty() || in.toString().isEmpty() || !Files.exists(out)
            || !Files.exists(in))
        {
            return null;
        }
        try
        {
            if (!Files.isSameFile(out, in))
            {
                return null;
            }
        }
        catch (final IOException e)
        {
            return null; // an unreadable path is reported by the checks of the input or the output
        }
        return option + " " + out + " is the file " + input + " names (" + in + "): writing it would replace the "
            + "input; give " + option + " another file";
    }

    /**
     * Two output options naming one file would leave only the one written last.
     *
     * @param options the options' names, in pairs with their files: {@code "--trace", trace, "--html", html}.
     * @return the first clash in words, or null when every given file is distinct.
     */
    static String clash(final Object... options)
    {
        for (int i = 0; i < options.length; i += 2)
        {
            for (int j = i + 2; j < options.length; j += 2)
            {
                final Path a = (Path)options[i + 1];
                final Path b = (Path)options[j + 1];
                if (a != null && b != null && !a.toString().isEmpty()
                    && a.toAbsolutePath().normalize().equals(b.toAbsolutePath().normalize()))
                {
                    return options[i] + " and " + options[j] + " both name " + a + ": one would overwrite the other;"
                        + " give each its own file";
                }
            }
        }
        return null;
    }
}
