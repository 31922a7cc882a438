package dev.rnicsim.scenarios.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What a file given as an {@code ibv_devinfo -v} dump is instead, when the dump reader finds no device in it: the
 * JSON of {@code rnicsim devinfo --json}, the list {@code ibv_devices} prints, or something else; and how to make a
 * dump. Stateless.
 */
final class DumpFormat
{
    /** Bytes of the file's start looked at. */
    private static final int HEAD_BYTES = 4096;

    private DumpFormat()
    {
    }

    /**
     * @param file    the file given as a dump.
     * @param message the dump reader's refusal.
     * @return the refusal, with what the file looks like and how to make a dump when the reader found no device.
     */
    static String explain(final Path file, final String message)
    {
        if (message == null || !message.contains("not an ibv_devinfo dump"))
        {
            return message;
        }
        final String head = head(file).strip();
        if (head.startsWith("{") || head.startsWith("["))
        {
            return message + "; this file is JSON, and a dump is the text 'ibv_devinfo -v' prints (the JSON of "
                + "'rnicsim devinfo --json' is not read back: give the profile's name with --profile instead)";
        }
        if (head.contains("node GUID") && !head.contains("hca_id"))
        {
            return message + "; this file is what 'ibv_devices' prints (a list of devices): a dump is what "
                + "'ibv_devinfo -v' prints of one";
        }
        return message + "; make a dump with 'ibv_devinfo -v > FILE' on the host with the device";
    }

    private static String head(final Path file)
    {
        try (InputStream in = Files.newInputStream(file))
        {
            return new String(in.readNBytes(HEAD_BYTES), StandardCharsets.UTF_8);
        }
        catch (final IOException e)
        {
            return "";
        }
    }
}
