package dev.rnicsim.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.scenarios.cli.Catalogue;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/points.md explains every point S1..S35 and lists, under each, exactly the built-in scenarios whose
 * {@code # shows:} line names it; docs/teaching.md's catalogue names every built-in scenario.
 */
class PointsReferenceTest
{
    private static final Pattern HEADING = Pattern.compile("^### S(\\d+) ");
    private static final Pattern SCENARIO = Pattern.compile("\\[`([a-z0-9-]+)`\\]");

    @Test
    void everyPointListsExactlyTheScenariosThatShowIt()
    {
        final Map<Integer, List<String>> shownBy = new LinkedHashMap<>();
        for (int s = 1; s <= 35; s++)
        {
            shownBy.put(s, new ArrayList<>());
        }
        for (final Catalogue.Entry e : Catalogue.entries())
        {
            final Matcher m = Pattern.compile("S(\\d+)").matcher(e.shows());
            while (m.find())
            {
                shownBy.get(Integer.parseInt(m.group(1))).add(e.name());
            }
        }
        final Map<Integer, List<String>> documented = new LinkedHashMap<>();
        Integer point = null;
        for (final String line : Docs.read("docs/points.md").split("\n"))
        {
            final Matcher h = HEADING.matcher(line);
            if (h.find())
            {
                point = Integer.parseInt(h.group(1));
                documented.put(point, new ArrayList<>());
            }
            else if (point != null && line.startsWith("Shown by:"))
            {
                final Matcher m = SCENARIO.matcher(line);
                while (m.find())
                {
                    documented.get(point).add(m.group(1));
                }
            }
        }
        assertThat(documented.keySet()).as("docs/points.md has a section '### Sn ...' for each point")
            .containsExactlyElementsOf(shownBy.keySet());
        final List<String> why = new ArrayList<>();
        shownBy.forEach((s, names) ->
        {
            if (!names.equals(documented.get(s)))
            {
                why.add("S" + s + ": the catalogue's scenarios " + names + ", docs/points.md lists "
                    + documented.get(s));
            }
        });
        assertThat(why).as("docs/points.md's 'Shown by:' lines and the scenarios' '# shows:' headers").isEmpty();
    }

    @Test
    void theTeachingGuidesCatalogueNamesEveryScenario()
    {
        final String teaching = Docs.read("docs/teaching.md");
        assertThat(Catalogue.entries()).allSatisfy(e -> assertThat(teaching)
            .as("docs/teaching.md's catalogue names the scenario " + e.name()).contains("| `" + e.name() + "` |"));
    }
}
