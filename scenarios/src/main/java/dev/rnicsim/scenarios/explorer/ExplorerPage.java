package dev.rnicsim.scenarios.explorer;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes the explorer page: the template {@code page.html} with its style sheet and script inlined and the run's
 * JSON embedded, so that the file needs nothing else (no network, no other file). Stateless.
 */
final class ExplorerPage
{
    private static final String BASE = "/dev/rnicsim/scenarios/explorer/";

    private ExplorerPage()
    {
    }

    /**
     * @param file  where.
     * @param title the page's title.
     * @param json  the run's data.
     * @return bytes written.
     * @throws IOException when the file cannot be written.
     */
    static long write(final Path file, final String title, final String json) throws IOException
    {
        final byte[] page = html(title, json).getBytes(StandardCharsets.UTF_8);
        Files.write(file, page);
        return page.length;
    }

    /**
     * @param title the page's title.
     * @param json  the run's data.
     * @return the page.
     */
    static String html(final String title, final String json)
    {
        // '<' only occurs inside JSON strings, where \u003c means the same; so no "</script>" ends the data early.
        final String data = json.replace("<", "\\u003c");
        // Each marker is filled once, in the template only: what is filled in is never searched again.
        final String[] markers = {"{{TITLE}}", "/*STYLE*/", "/*DATA*/", "/*SCRIPT*/"};
        final String[] values = {escape(title), resource("page.css"), data, resource("page.js")};
        final String template = resource("page.html");
        final StringBuilder out = new StringBuilder(template.length() + data.length() + 65_536);
        int from = 0;
        for (int i = 0; i < markers.length; i++)
        {
            final int at = template.indexOf(markers[i], from);
            if (at < 0)
            {
                throw new IllegalStateException("the explorer's page.html lacks " + markers[i] + " (in this order: "
                    + String.join(", ", markers) + ")");
            }
            out.append(template, from, at).append(values[i]);
            from = at + markers[i].length();
        }
        return out.append(template, from, template.length()).toString();
    }

    private static String escape(final String text)
    {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    private static String resource(final String name)
    {
        try (InputStream in = ExplorerPage.class.getResourceAsStream(BASE + name))
        {
            if (in == null)
            {
                throw new IllegalStateException("the explorer's " + name + " is missing from the jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }
}
