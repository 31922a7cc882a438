package dev.rnicsim.scenarios.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The built-in scenario scripts, shipped as resources: {@code catalogue/index.txt} lists their names in order, and
 * each {@code NAME.rsim} starts with {@code # title:} and {@code # shows:} (the points it demonstrates). Stateless.
 */
public final class Catalogue
{
    private static final String BASE = "/dev/rnicsim/scenarios/catalogue/";

    /**
     * A built-in scenario.
     *
     * @param name   its name ({@code scenario run NAME}).
     * @param title  one line saying what it shows.
     * @param shows  the points of the source document it demonstrates, e.g. {@code S5, S7}.
     * @param script its text.
     */
    public record Entry(String name, String title, String shows, String script)
    {
    }

    private Catalogue()
    {
    }

    /**
     * @return every built-in scenario, in catalogue order.
     */
    public static List<Entry> entries()
    {
        final List<Entry> out = new ArrayList<>();
        for (final String line : read("index.txt").split("\n"))
        {
            final String name = line.strip();
            if (!name.isEmpty() && !name.startsWith("#"))
            {
                out.add(entry(name).orElseThrow(() -> new IllegalStateException("catalogue/index.txt names '" + name
                    + "' but there is no " + name + ".rsim")));
            }
        }
        return out;
    }

    /**
     * @param name a scenario name.
     * @return the scenario, if there is one of that name.
     */
    public static Optional<Entry> entry(final String name)
    {
        if (!name.matches("[a-z0-9-]+"))
        {
            return Optional.empty();
        }
        final String text = readOrNull(name + ".rsim");
        if (text == null)
        {
            return Optional.empty();
        }
        return Optional.of(new Entry(name, header(text, "title"), header(text, "shows"), text));
    }

    /**
     * @param name a resource in the catalogue folder.
     * @return its text.
     */
    public static String read(final String name)
    {
        final String text = readOrNull(name);
        if (text == null)
        {
            throw new IllegalStateException("missing catalogue resource " + name);
        }
        return text;
    }

    private static String readOrNull(final String name)
    {
        try (InputStream in = Catalogue.class.getResourceAsStream(BASE + name))
        {
            return in == null ? null : new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    private static String header(final String text, final String key)
    {
        for (final String line : text.split("\n"))
        {
            final String t = line.strip();
            if (t.startsWith("# " + key + ":"))
            {
                return t.substring(key.length() + 3).strip();
            }
        }
        return "";
    }
}
