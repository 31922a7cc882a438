package dev.rnicsim.scenarios.cli;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;

/**
 * Plain-words reasons for file errors, so that users never read Java class names. Stateless.
 */
public final class Problems
{
    private Problems()
    {
    }

    /** Largest script or dump read, in bytes. */
    public static final long MAX_INPUT_BYTES = 64L << 20;

    /**
     * @param file a file to read.
     * @return why it cannot be read as a script or dump (not a regular file, too large), or null when it can.
     */
    public static String unreadable(final java.nio.file.Path file)
    {
        return unreadable(null, file);
    }

    /**
     * @param option the option or parameter that named the file (e.g. {@code --workload}), or null.
     * @param file   a file to read.
     * @return why it cannot be read (the option empty, no such file, not a regular file, too large), or null.
     */
    public static String unreadable(final String option, final java.nio.file.Path file)
    {
        if (file.toString().isEmpty())
        {
            return (option == null ? "the path" : option) + " is empty: give the file to read";
        }
        try
        {
            if (!java.nio.file.Files.exists(file))
            {
                return "-".equals(file.toString()) ? "no such file ('-' is not standard input here: save the input "
                    + "to a file and give its name)" : "no such file";
            }
            if (java.nio.file.Files.isDirectory(file))
            {
                return "a folder, not a file";
            }
            if (!java.nio.file.Files.isRegularFile(file))
            {
                return "not a regular file (a pipe or a device: save its content to a file and give its name)";
            }
            final long size = java.nio.file.Files.size(file);
            if (size > MAX_INPUT_BYTES)
            {
                return "the file has " + size + " bytes, more than the " + MAX_INPUT_BYTES
                    + " a script or dump may have";
            }
            return null;
        }
        catch (final IOException e)
        {
            return reason(e);
        }
    }

    /**
     * @param e a file error.
     * @return why it failed, in plain words.
     */
    public static String reason(final IOException e)
    {
        if (e instanceof NoSuchFileException)
        {
            return "no such file";
        }
        if (e instanceof java.nio.charset.CharacterCodingException)
        {
            return "not UTF-8 text (a binary file, or another encoding)";
        }
        if (e instanceof AccessDeniedException)
        {
            return "permission denied";
        }
        if (e instanceof FileSystemException f && f.getReason() != null)
        {
            return f.getReason();
        }
        final String m = e.getMessage();
        return m == null || m.isBlank() ? "input/output error" : m;
    }
}
