package dev.rnicsim.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The picture of docs/architecture.md has an arrow for each compile-scope dependency between the project's modules,
 * as their pom.xml files declare them, and no other.
 */
class ArchitectureReferenceTest
{
    private static final Pattern ARROW = Pattern.compile("^\\s*(\\w+)(?:\\[[^\\]]*\\])?\\s*-->\\s*(\\w+)");
    private static final Pattern NODE = Pattern.compile("(\\w+)\\[\"?([^\\]\"]+?)(?: \\(.*\\))?\"?\\]");
    private static final Pattern DEPENDENCY = Pattern.compile("<dependency>\\s*<groupId>dev\\.rnicsim</groupId>\\s*"
        + "<artifactId>([a-z-]+)</artifactId>(\\s*<scope>(\\w+)</scope>)?");
    private static final Pattern MODULE = Pattern.compile("<module>([a-z-]+)</module>");

    @Test
    void thePicturesArrowsAreTheModulesCompileDependencies() throws IOException
    {
        final Path root = Docs.root();
        final Set<String> poms = new TreeSet<>();
        final Matcher modules = MODULE.matcher(Files.readString(root.resolve("pom.xml")));
        while (modules.find())
        {
            final String module = modules.group(1);
            final Matcher d = DEPENDENCY.matcher(Files.readString(root.resolve(module).resolve("pom.xml")));
            while (d.find())
            {
                if (d.group(3) == null || d.group(3).equals("compile"))
                {
                    poms.add(module + " -> " + d.group(1));
                }
            }
        }
        final Map<String, String> names = new LinkedHashMap<>();
        final String picture = Docs.fences("docs/architecture.md").stream().filter(f -> f.language().equals("mermaid"))
            .findFirst().orElseThrow().text();
        final Matcher n = NODE.matcher(picture);
        while (n.find())
        {
            names.put(n.group(1), n.group(2));
        }
        final Set<String> arrows = new TreeSet<>();
        for (final String line : picture.split("\n"))
        {
            final Matcher a = ARROW.matcher(line);
            if (a.find())
            {
                arrows.add(names.getOrDefault(a.group(1), a.group(1)) + " -> "
                    + names.getOrDefault(a.group(2), a.group(2)));
            }
        }
        assertThat(arrows).as("docs/architecture.md's arrows, against the compile-scope dependencies of the poms")
            .containsExactlyInAnyOrderElementsOf(poms);
    }
}
