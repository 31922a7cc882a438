package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.scenarios.script.RunResult;
import dev.rnicsim.scenarios.script.ScriptRunner;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The built-in scenarios: each runs to the end with every expect held, each file is listed, each says what it
 * shows.
 */
class CatalogueTest
{
    private static final String FOLDER = "/dev/rnicsim/scenarios/catalogue/";

    @TestFactory
    Stream<DynamicTest> everyScenarioAndTheTourShouldRunWithEveryExpectHeld()
    {
        final List<Catalogue.Entry> all = new ArrayList<>(Catalogue.entries());
        all.add(new Catalogue.Entry("tour", "the tour", "", Catalogue.read("tour.rsim")));
        return all.stream().map(e -> DynamicTest.dynamicTest(e.name(), () ->
        {
            final StringWriter text = new StringWriter();
            final RunResult r = new ScriptRunner(new PrintWriter(text, true), ScriptRunner.Detail.FULL)
                .run(e.name() + ".rsim", e.script(), Path.of("."));

            assertThat(r.exitCode()).as("%s failed: %s%n%s", e.name(), r.failure(), text).isZero();
            assertThat(r.failure()).isNull();
            assertThat(r.steps()).isPositive();
            assertThat(r.expectsHeld()).isPositive();
        }));
    }

    @Test
    void catalogueShouldListScenariosInIndexOrderWithoutDuplicates()
    {
        final List<String> indexed = indexedNames();
        final List<String> names = Catalogue.entries().stream().map(Catalogue.Entry::name).toList();

        assertThat(names).isNotEmpty().containsExactlyElementsOf(indexed).doesNotHaveDuplicates()
            .doesNotContain("tour");
    }

    @Test
    void everyScriptFileInTheCatalogueFolderShouldBeIndexedOrBeTheTour() throws Exception
    {
        final Path folder = Path.of(Catalogue.class.getResource(FOLDER).toURI());
        final Set<String> files;
        try (Stream<Path> list = Files.list(folder))
        {
            files = list.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".rsim"))
                .map(n -> n.substring(0, n.length() - ".rsim".length())).collect(Collectors.toCollection(TreeSet::new));
        }
        final Set<String> listed = new TreeSet<>(indexedNames());
        listed.add("tour");

        assertThat(files).contains("tour");
        assertThat(files).as("scripts in %s not named in index.txt", folder).isSubsetOf(listed);
        assertThat(listed).as("names in index.txt without a script").isSubsetOf(files);
    }

    @Test
    void everyEntryShouldHaveATitleAndTheSourcePointsItShows()
    {
        for (final Catalogue.Entry e : Catalogue.entries())
        {
            assertThat(e.title()).as("title of %s", e.name()).isNotBlank();
            assertThat(e.shows()).as("shows of %s", e.name()).matches("S\\d+(, S\\d+)*");
            assertThat(e.script()).as("script of %s", e.name()).startsWith("# title:");
        }
    }

    @Test
    void tourShouldHaveATitleAndShowList()
    {
        final Catalogue.Entry tour = Catalogue.entry("tour").orElseThrow();

        assertThat(tour.title()).isNotBlank();
        assertThat(tour.shows()).matches("S\\d+(, S\\d+)*");
    }

    @Test
    void entryShouldRefuseNamesThatAreNoScenario()
    {
        assertThat(Catalogue.entry("nope")).isEmpty();
        assertThat(Catalogue.entry("../catalogue/index")).isEmpty();
        assertThat(Catalogue.entry("index.txt")).isEmpty();
        assertThat(Catalogue.entry("First-Registration")).isEmpty();
    }

    @Test
    void scenarioListShouldPrintEveryNameWithItsShowsAndTitle()
    {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final int code = Rnicsim.execute(new String[] {"scenario", "list"}, new PrintWriter(out, true),
            new PrintWriter(err, true));

        assertThat(code).isZero();
        assertThat(err.toString()).isEmpty();
        final List<String> names = out.toString().lines().filter(l -> !l.isBlank() && !Character.isWhitespace(
            l.charAt(0))).map(l -> l.split("\\s+", 2)[0]).toList();
        final List<Catalogue.Entry> entries = Catalogue.entries();
        assertThat(names).containsExactlyElementsOf(entries.stream().map(Catalogue.Entry::name).toList());
        for (final Catalogue.Entry e : entries)
        {
            assertThat(out.toString()).contains(e.title()).contains(e.shows());
        }
    }

    private static List<String> indexedNames()
    {
        return Catalogue.read("index.txt").lines().map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("#"))
            .toList();
    }
}
