package dev.rnicsim.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The documentation can be found and followed: every page of docs/ is on the map (docs/README.md) and in the README's
 * table, and every relative link of every page leads to a file that exists and, with {@code #anchor}, to a heading
 * that exists there (as GitHub makes anchors of headings).
 */
class DocsMapTest
{
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

    @Test
    void everyPageIsOnTheMapAndInTheReadme()
    {
        final String map = Docs.read("docs/README.md");
        final String readme = Docs.read("README.md");
        final List<String> why = new ArrayList<>();
        for (final String page : Docs.pages())
        {
            if (page.equals("README.md") || page.equals("docs/README.md"))
            {
                continue;
            }
            final String name = page.substring("docs/".length());
            if (!map.contains("](" + name + ")"))
            {
                why.add(page + " is not linked from docs/README.md");
            }
            if (!readme.contains("](" + page + ")"))
            {
                why.add(page + " is not linked from README.md's documentation table");
            }
        }
        assertThat(why).isEmpty();
    }

    @Test
    void everyRelativeLinkLeadsToAFileAndHeadingThatExist()
    {
        final Path root = Docs.root();
        final List<String> why = new ArrayList<>();
        for (final String page : Docs.pages())
        {
            final Path dir = root.resolve(page).getParent();
            final Matcher m = LINK.matcher(withoutFences(Docs.read(page)));
            while (m.find())
            {
                final String target = m.group(1);
                if (target.matches("[a-z]+:.*"))
                {
                    continue;                           // https: and the like
                }
                final int hash = target.indexOf('#');
                final String file = hash < 0 ? target : target.substring(0, hash);
                final Path p = file.isEmpty() ? root.resolve(page) : dir.resolve(file).normalize();
                if (!Files.exists(p))
                {
                    why.add(page + ": a link to " + target + ", which does not exist");
                    continue;
                }
                if (hash >= 0 && !anchors(root.relativize(p).toString()).contains(target.substring(hash + 1)))
                {
                    why.add(page + ": a link to " + target + ", whose page has no such heading");
                }
            }
        }
        assertThat(why).isEmpty();
    }

    private static String withoutFences(final String text)
    {
        return text.replaceAll("(?s)\n```.*?\n```", "\n");
    }

    /** The anchors GitHub gives a page's headings: lower case, punctuation dropped, blanks as hyphens. */
    private static Set<String> anchors(final String page)
    {
        final Set<String> out = new HashSet<>();
        for (final String line : withoutFences(Docs.read(page)).split("\n"))
        {
            if (line.startsWith("#"))
            {
                final String text = line.replaceFirst("^#+\\s*", "").toLowerCase(Locale.ROOT);
                out.add(text.replaceAll("[^a-z0-9 _-]", "").replace(' ', '-'));
            }
        }
        return out;
    }
}
