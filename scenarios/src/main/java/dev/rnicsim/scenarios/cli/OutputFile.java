package dev.rnicsim.scenarios.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

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
