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
