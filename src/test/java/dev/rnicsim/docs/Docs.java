package dev.rnicsim.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The project's documentation as the tests read it: the README and every page of {@code docs/}, cut into fenced
 * blocks with their tags. Stateless.
 */
final class Docs
{
    /**
     * A fenced block.
     *
     * @param page the page, relative to the project root ({@code docs/scripts.md}).
     * @param line the line of its opening fence (1-based).
     * @param info what follows the opening fence: the language and its tags ({@code java continued}).
     * @param text the lines between the fences, each ending in a line break.
     */
    record Fence(String page, int line, String info, String text)
    {
        /** @return the first word of the info string, the language. */
        String language()
        {
            final String[] w = info.split("\\s+", 2);
            return w[0];
        }

        /**
         * @param tag a word.
         * @return true when the info string has it after the language.
         */
        boolean has(final String tag)
        {
            final String[] w = info.split("\\s+");
            for (int i = 1; i < w.length; i++)
            {
                if (w[i].equals(tag))
                {
                    return true;
                }
            }
            return false;
        }

        /**
         * @param key a {@code key=value} tag's key.
         * @return its value, or null.
         */
        String tag(final String key)
        {
            for (final String w : info.split("\\s+"))
            {
                if (w.startsWith(key + "="))
                {
                    return w.substring(key.length() + 1);
                }
            }
            return null;
        }

        /** @return {@code page:line}, for messages. */
        String where()
        {
            return page + ":" + line;
        }
    }

    private Docs()
    {
    }

    /**
     * @return the project root: the folder holding {@code bin/jdk25.sh}, above the working directory.
     */
    static Path root()
    {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.exists(dir.resolve("bin/jdk25.sh")))
        {
            dir = dir.getParent();
        }
        if (dir == null)
        {
            throw new IllegalStateException("no project root (a folder with bin/jdk25.sh) above "
                + Path.of("").toAbsolutePath());
        }
        return dir;
    }

    /**
     * @return the README and every {@code docs/*.md}, relative to the root, the README first.
     */
    static List<String> pages()
    {
        final List<String> out = new ArrayList<>();
        out.add("README.md");
        try (Stream<Path> s = Files.list(root().resolve("docs")))
        {
            s.filter(p -> p.getFileName().toString().endsWith(".md")).sorted()
                .forEach(p -> out.add("docs/" + p.getFileName()));
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /**
     * @param page a page relative to the root.
     * @return its text.
     */
    static String read(final String page)
    {
        try
        {
            return Files.readString(root().resolve(page), StandardCharsets.UTF_8);
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * @param page a page relative to the root.
     * @return its fenced blocks, in order.
     * @throws IllegalStateException for a fence left open.
     */
    static List<Fence> fences(final String page)
    {
        final List<Fence> out = new ArrayList<>();
        final String[] lines = read(page).split("\n", -1);
        for (int i = 0; i < lines.length; i++)
        {
            if (lines[i].startsWith("```"))
            {
                final int open = i;
                final String info = lines[i].substring(3).strip();
                final StringBuilder text = new StringBuilder();
                i++;
                while (i < lines.length && !lines[i].startsWith("```"))
                {
                    text.append(lines[i]).append('\n');
                    i++;
                }
                if (i == lines.length)
                {
                    throw new IllegalStateException(page + ":" + (open + 1) + ": a fence is opened and never closed");
                }
                out.add(new Fence(page, open + 1, info, text.toString()));
            }
        }
        return out;
    }

    /**
     * @param page    a page relative to the root.
     * @param heading the text of a heading ({@code ## Verbs}), whole.
     * @return the lines from after that heading to the next heading of the same or a higher level.
     * @throws IllegalStateException when the page has no such heading.
     */
    static List<String> section(final String page, final String heading)
    {
        final String[] lines = read(page).split("\n", -1);
        final int level = heading.indexOf(' ');
        final List<String> out = new ArrayList<>();
        boolean in = false;
        boolean fence = false;
        for (final String l : lines)
        {
            if (l.startsWith("```"))
            {
                fence = !fence;
            }
            if (!fence && l.startsWith("#"))
            {
                final int lv = l.indexOf(' ');
                if (in && lv > 0 && lv <= level)
                {
                    break;
                }
                if (l.strip().equals(heading))
                {
                    in = true;
                    continue;
                }
            }
            if (in)
            {
                out.add(l);
            }
        }
        if (!in)
        {
            throw new IllegalStateException(page + " has no heading '" + heading + "'");
        }
        return out;
    }

    /**
     * @param row a Markdown table row.
     * @return its cells, stripped; escaped bars ({@code \|}) stay inside their cell as {@code |}.
     */
    static List<String> cells(final String row)
    {
        final List<String> out = new ArrayList<>();
        final String r = row.strip();
        final StringBuilder cell = new StringBuilder();
        for (int i = 1; i < r.length(); i++)
        {
            final char c = r.charAt(i);
            if (c == '\\' && i + 1 < r.length() && r.charAt(i + 1) == '|')
            {
                cell.append('|');
                i++;
            }
            else if (c == '|')
            {
                out.add(cell.toString().strip());
                cell.setLength(0);
            }
            else
            {
                cell.append(c);
            }
        }
        return out;
    }

    /**
     * @param lines lines of a page.
     * @return the rows of the tables among them (header and separator rows left out), as cells.
     */
    static List<List<String>> rows(final List<String> lines)
    {
        final List<List<String>> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++)
        {
            final String l = lines.get(i);
            final boolean header = i + 1 < lines.size() && lines.get(i + 1).startsWith("|---");
            if (!l.startsWith("|") || l.startsWith("|---") || header)
            {
                continue;
            }
            out.add(cells(l));
        }
        return out;
    }

    /**
     * @param cell a table cell.
     * @return the texts of its code spans ({@code `...`}), in order.
     */
    static List<String> codeSpans(final String cell)
    {
        final List<String> out = new ArrayList<>();
        int i = cell.indexOf('`');
        while (i >= 0)
        {
            final int j = cell.indexOf('`', i + 1);
            if (j < 0)
            {
                break;
            }
            out.add(cell.substring(i + 1, j));
            i = cell.indexOf('`', j + 1);
        }
        return out;
    }
}
