package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.w3c.dom.Document;

/**
 * The {@code rnicsim} command line: help, the scenario commands, devinfo, run, and the files it writes.
 */
class CliTest
{
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** A script of two hosts that registers a buffer and writes into it remotely. */
    private static final String WRITE_SCRIPT = """
        host alpha ram=256M
        host beta ram=256M
        device nic_a alpha profile=connectx5
        device nic_b beta profile=connectx5
        open app_a nic_a
        open app_b nic_b
        pd pd_a app_a
        pd pd_b app_b
        cq cq_a app_a
        cq cq_b app_b
        qp qp_a pd_a cq_a
        qp qp_b pd_b cq_b
        connect qp_a qp_b
        mmap src app_a 4K
        mmap dst app_b 4K
        write src "traced"
        reg mr_src pd_a src 4K
        reg mr_dst pd_b dst 4K access=local_write,remote_write
        post write qp_a sgl=mr_src:6 remote=mr_dst
        poll cq_a
        expect SUCCESS
        expect bytes dst "traced"
        """;

    @TempDir
    Path dir;

    static Stream<Arguments> subcommandsAndTheirOptions()
    {
        return Stream.of(
            Arguments.of(List.of(), List.of("tour", "run", "scenario", "devinfo", "--version", "Exit codes:")),
            Arguments.of(List.of("tour"), List.of("--verbose", "--trace", "FILE")),
            Arguments.of(List.of("run"), List.of("FILE", "--quiet", "--trace", "Exit codes:")),
            Arguments.of(List.of("scenario"), List.of("list", "run", "show")),
            Arguments.of(List.of("scenario", "list"), List.of("--json")),
            Arguments.of(List.of("scenario", "run"), List.of("NAME", "--svg", "--trace", "--quiet")),
            Arguments.of(List.of("scenario", "show"), List.of("NAME")),
            Arguments.of(List.of("devinfo"), List.of("--profile", "--file", "--json", "e810", "connectx5")));
    }

    @ParameterizedTest(name = "{0} --help")
    @MethodSource("subcommandsAndTheirOptions")
    void helpOfEveryCommandShouldExitZeroAndNameItsOptions(final List<String> command, final List<String> words)
    {
        final List<String> args = new ArrayList<>(command);
        args.add("--help");
        final CliRun r = CliRun.of(args.toArray(String[]::new));

        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.err()).isEmpty();
        assertThat(r.out()).contains("Usage:").contains("--help");
        for (final String w : words)
        {
            assertThat(r.out()).as("help of %s", command).contains(w);
        }
    }

    @Test
    void unknownSubcommandOrOptionShouldExitTwoWithUsage()
    {
        final CliRun verb = CliRun.of("frobnicate");
        final CliRun option = CliRun.of("scenario", "list", "--yaml");

        assertThat(verb.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(verb.err()).contains("frobnicate").contains("Usage:");
        assertThat(option.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(option.err()).contains("--yaml");
    }

    @Test
    void scenarioListJsonShouldParseToTheCatalogueEntries() throws Exception
    {
        final CliRun r = CliRun.of("scenario", "list", "--json");

        assertThat(r.code()).isZero();
        final JsonNode list = MAPPER.readTree(r.out());
        assertThat(list.isArray()).isTrue();
        final List<Catalogue.Entry> entries = Catalogue.entries();
        assertThat(list).hasSize(entries.size());
        for (int i = 0; i < entries.size(); i++)
        {
            assertThat(list.get(i).get("name").asText()).isEqualTo(entries.get(i).name());
            assertThat(list.get(i).get("title").asText()).isEqualTo(entries.get(i).title());
            assertThat(list.get(i).get("shows").asText()).isEqualTo(entries.get(i).shows());
        }
    }

    @Test
    void scenarioRunFirstRegistrationShouldExitZeroWithItsSummary()
    {
        final CliRun r = CliRun.of("scenario", "run", "first-registration");

        assertThat(r.code()).as(r.out() + r.err()).isZero();
        assertThat(r.err()).isEmpty();
        assertThat(r.out()).contains("== first-registration.rsim:").contains("expects held")
            .contains("IBV_WC_REM_ACCESS_ERR");
    }

    @Test
    void scenarioRunOfAnUnknownNameShouldExitTwo()
    {
        final CliRun r = CliRun.of("scenario", "run", "nope");

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("no scenario 'nope'").contains("scenario list");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void scenarioShowShouldPrintTheScriptAsShipped()
    {
        final CliRun r = CliRun.of("scenario", "show", "first-registration");
        final CliRun none = CliRun.of("scenario", "show", "nope");

        assertThat(r.code()).isZero();
        assertThat(r.out()).isEqualTo(Catalogue.entry("first-registration").orElseThrow().script())
            .startsWith("# title:").contains("reg mr_dst");
        assertThat(none.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(none.err()).contains("no scenario 'nope'");
    }

    @Test
    void devinfoOfE810ShouldPrintItsPageSizesAndNoAtomics()
    {
        final CliRun r = CliRun.of("devinfo", "--profile", "e810");

        assertThat(r.code()).isZero();
        assertThat(r.out()).containsPattern("page_size_cap:\\s+0x40201000\\b");
        assertThat(r.out()).containsPattern("atomic_cap:\\s+ATOMIC_NONE");
        assertThat(r.out()).contains("# simulated: driver irdma");
    }

    @Test
    void devinfoWithoutOptionsShouldPrintEveryBuiltInProfile()
    {
        final CliRun r = CliRun.of("devinfo");

        assertThat(r.code()).isZero();
        assertThat(r.out()).contains("# simulated: driver irdma").contains("# simulated: driver mlx5")
            .contains("# simulated: driver mlx4");
    }

    @Test
    void devinfoOfAnUnknownProfileShouldExitTwoNamingTheBuiltInOnes()
    {
        final CliRun r = CliRun.of("devinfo", "--profile", "nope");

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("no built-in profile 'nope'").contains("e810");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void devinfoOfATruncatedDumpAsJsonShouldListTheDefaultedFields() throws Exception
    {
        final Path dump = Path.of(CliTest.class.getResource("/devinfo/connectx4-mlx5.txt").toURI());
        final CliRun r = CliRun.of("devinfo", "--file", dump.toString(), "--json");

        assertThat(r.code()).as(r.err()).isZero();
        final JsonNode list = MAPPER.readTree(r.out());
        assertThat(list.isArray()).isTrue();
        assertThat(list).hasSize(1);
        final JsonNode p = list.get(0);
        assertThat(p.get("driver").asText()).isEqualTo("mlx5");
        assertThat(p.get("attributes").isObject()).isTrue();
        final List<String> defaulted = new ArrayList<>();
        p.get("defaulted_fields").forEach(n -> defaulted.add(n.asText()));
        assertThat(defaulted).contains("max_mr", "max_sge", "atomic_cap")
            .doesNotContain("page_size_cap", "max_qp", "max_mr_size", "vendor_part_id");
        assertThat(p.get("warnings").isArray()).isTrue();
    }

    @Test
    void devinfoOfAMissingFileShouldExitTwo()
    {
        final Path missing = dir.resolve("no-such-dump.txt");
        final CliRun r = CliRun.of("devinfo", "--file", missing.toString());

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains(missing.toString());
    }

    @Test
    void runOfTwoFilesShouldRunBothAndExitWithTheWorstCode() throws Exception
    {
        final Path failing = write("failing.rsim", "host h ram=256M\nexpect h.mem_total == 1\n");
        final Path passing = write("passing.rsim", "say second file ran\nhost h ram=256M\nexpect h.mem_total == 256M\n");
        final CliRun both = CliRun.of("run", passing.toString(), passing.toString());
        final CliRun worst = CliRun.of("run", failing.toString(), passing.toString());

        assertThat(both.code()).as(both.out() + both.err()).isZero();
        assertThat(both.out().split("== " + Pattern.quote(passing.toString()) + ": 1 steps, 1 expects held", -1))
            .hasSize(3);
        assertThat(worst.code()).isEqualTo(Rnicsim.EXPECT_FAILED);
        assertThat(worst.out()).contains("== " + failing + ": FAILED: " + failing + ":2: expect h.mem_total == 1")
            .contains("second file ran").contains("== " + passing + ": 1 steps");
    }

    @Test
    void runOfAMissingFileShouldExitTwoNamingIt()
    {
        final Path missing = dir.resolve("missing.rsim");
        final CliRun r = CliRun.of("run", missing.toString());

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains(missing + ": cannot read the script: no such file");
        assertThat(r.err()).doesNotContain("\tat ");
    }

    @Test
    void runOfAMissingFileShouldNotShowJavaClassNames()
    {
        final Path missing = dir.resolve("missing.rsim");
        final CliRun r = CliRun.of("run", missing.toString());

        assertThat(r.err()).doesNotContainPattern("[A-Za-z]+Exception").doesNotContain("java.");
    }

    @Test
    void runOfNoFileShouldExitTwoWithUsage()
    {
        final CliRun r = CliRun.of("run");

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("FILE").contains("Usage:");
    }

    @Test
    void scenarioRunWithSvgShouldWriteAnSvgDocument() throws Exception
    {
        final Optional<String> name = Pictures.names().stream().filter(n -> Catalogue.entry(n).isPresent())
            .findFirst();
        assumeTrue(name.isPresent(), "no scenario of " + Pictures.names() + " in the catalogue yet");
        final Path svg = dir.resolve("chart.svg");
        final CliRun r = CliRun.of("scenario", "run", name.get(), "--quiet", "--svg", svg.toString());

        assertThat(r.code()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("chart written to " + svg);
        assertThat(svg).isRegularFile();
        final DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setNamespaceAware(true);
        factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
        final Document doc = factory.newDocumentBuilder().parse(svg.toFile());
        assertThat(doc.getDocumentElement().getLocalName()).isEqualTo("svg");
    }

    @Test
    void scenarioRunWithSvgOfAScenarioWithoutAChartShouldExitTwo()
    {
        final Path svg = dir.resolve("none.svg");
        final CliRun r = CliRun.of("scenario", "run", "first-registration", "--quiet", "--svg", svg.toString());

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("has no chart");
        assertThat(svg).doesNotExist();
    }

    @Test
    void runWithTraceShouldWriteChromeTraceJsonWithTheRegistrations() throws Exception
    {
        final Path script = write("traced.rsim", WRITE_SCRIPT);
        final Path trace = dir.resolve("trace.json");
        final CliRun r = CliRun.of("run", script.toString(), "--trace", trace.toString());

        assertThat(r.code()).as(r.out() + r.err()).isZero();
        assertThat(trace).isRegularFile();
        final JsonNode root = MAPPER.readTree(trace.toFile());
        final JsonNode events = root.get("traceEvents");
        assertThat(events).isNotNull();
        assertThat(events.isArray()).isTrue();
        final List<String> names = new ArrayList<>();
        events.forEach(e -> names.add(e.path("name").asText()));
        assertThat(names).contains("reg_mr");
        assertThat(names.stream().filter("reg_mr"::equals).count()).isEqualTo(2);
    }

    @Test
    void runQuietShouldPrintOnlyNarrationAndTheSummary() throws Exception
    {
        final Path script = write("quiet.rsim", "say told\nhost h ram=256M\nexpect h.mem_total == 256M\n");
        final CliRun r = CliRun.of("run", "--quiet", script.toString());

        assertThat(r.code()).isZero();
        assertThat(r.out()).isEqualTo("told\n== " + script + ": 1 steps, 1 expects held, simulated time 0 ns\n");
    }

    private Path write(final String name, final String text) throws Exception
    {
        final Path p = dir.resolve(name);
        Files.writeString(p, text, StandardCharsets.UTF_8);
        return p;
    }
}
