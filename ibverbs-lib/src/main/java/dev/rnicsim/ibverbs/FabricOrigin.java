package dev.rnicsim.ibverbs;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

/**
 * What the run that started a fabric was asked for: its devices, its trace and its server's settings. The run writes it beside the
 * fabric's socket while it serves the fabric, so that a run joining the fabric can compare what it asks for with
 * what the fabric is, and say so, instead of silently running on other devices than those it named.
 *
 * <p>Immutable and thread safe.
 *
 * @param hostPid the process id of the run serving the fabric.
 * @param devices the fabric's devices in words (e.g. {@code profile rxe (device rxe0)}).
 * @param trace   the file the fabric's timeline is written to, or null when no trace is kept.
 * @param settings the fabric server's settings ({@link FabricSettings}) set in the environment of the run that
 *                started it, by name.
 */
public record FabricOrigin(long hostPid, String devices, String trace, Map<String, String> settings)
{
    private static final String SETTING = "setting.";

    /**
     * @throws NullPointerException when devices or settings is null.
     */
    public FabricOrigin
    {
        Objects.requireNonNull(devices, "devices");
        settings = Map.copyOf(settings);
    }

    /**
     * An origin with no server setting of its own.
     *
     * @param hostPid the process id of the run serving the fabric.
     * @param devices the fabric's devices in words.
     * @param trace   the trace file, or null.
     */
    public FabricOrigin(final long hostPid, final String devices, final String trace)
    {
        this(hostPid, devices, trace, Map.of());
    }

    /**
     * @param fabricName a fabric's name.
     * @return the file its serving run writes, beside its socket.
     */
    static Path fileOf(final String fabricName)
    {
        return ProgramRunner.socketOf(fabricName).resolveSibling("rnicsim-fabric-" + fabricName + ".origin");
    }

    /** Writes this origin to the file (replacing it). */
    void write(final Path file) throws IOException
    {
        final Properties p = new Properties();
        p.setProperty("pid", Long.toString(hostPid));
        p.setProperty("devices", devices);
        if (trace != null)
        {
            p.setProperty("trace", trace);
        }
        settings.forEach((name, value) -> p.setProperty(SETTING + name, value));
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8))
        {
            p.store(w, "the run serving this fabric");
        }
    }

    /**
     * @param file an origin file.
     * @return its origin, or null when there is none to read (a fabric served by a test, or a file being replaced).
     */
    static FabricOrigin read(final Path file)
    {
        final Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8))
        {
            p.load(r);
            final String devices = p.getProperty("devices");
            final Map<String, String> settings = new java.util.HashMap<>();
            for (final String name : FabricSettings.NAMES)
            {
                if (p.getProperty(SETTING + name) != null)
                {
                    settings.put(name, p.getProperty(SETTING + name));
                }
            }
            return devices == null ? null : new FabricOrigin(Long.parseLong(p.getProperty("pid", "0")), devices,
                p.getProperty("trace"), settings);
        }
        catch (final IOException | IllegalArgumentException e)
        {
            return null;
        }
    }
}
