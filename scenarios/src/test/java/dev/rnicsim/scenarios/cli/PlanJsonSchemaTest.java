package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rnicsim plan --json} matches the JSON Schema the repository publishes
 * ({@code dev/rnicsim/scenarios/plan/plan.schema.json}), for plans that fit, break, refuse, and come from a profile,
 * a dump, {@code --set} and {@code --log-num-mtt}; and the schema rejects what the output must not be.
 */
class PlanJsonSchemaTest
{
    private static Schema schema;

    @TempDir
    Path dir;

    @BeforeAll
    static void loadSchema() throws Exception
    {
        try (InputStream in = PlanReport.class.getResourceAsStream(PlanReport.SCHEMA))
        {
            assertThat(in).as("schema on the class path").isNotNull();
            schema = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(in);
        }
    }

    private static JsonNode plan(final String... args) throws Exception
    {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final int code = Rnicsim.execute(args, new PrintWriter(out), new PrintWriter(err));
        assertThat(code).as(err.toString()).isZero();
        return new ObjectMapper().readTree(out.toString());
    }

    private Path file(final String name, final String text) throws Exception
    {
        final Path p = dir.resolve(name);
        Files.writeString(p, text);
        return p;
    }

    @Test
    void shouldMatchTheSchemaForPlansThatFitBreakAndRefuse() throws Exception
    {
        final Path ml = Path.of("../docs/plan-examples/ml-node.yaml");
        final Path odpGpu = Path.of("../docs/plan-examples/odp-gpu.yaml");
        final Path devinfo = Path.of("src/test/resources/devinfo/connectx4-mlx5.txt");
        final List<JsonNode> outputs = List.of(
            plan("plan", "--workload", ml.toString(), "--json"),
            plan("plan", "--workload", ml.toString(), "--json", "--hugepages2m", "4096", "--memlock", "unlimited"),
            plan("plan", "--workload", odpGpu.toString(), "--json", "--profile", "connectx3", "--log-num-mtt", "22"),
            plan("plan", "--workload", odpGpu.toString(), "--json", "--devinfo", devinfo.toString(), "--set",
                "max_mr=1000", "--processes", "2", "--contiguity", "best"));
        for (final JsonNode out : outputs)
        {
            final List<Error> errors = schema.validate(out);
            assertThat(errors).as(out.toPrettyString()).isEmpty();
        }
        assertThat(outputs.get(0).path("firstLimit").path("limit").asText()).isEqualTo("hugetlb 2 MiB pool");
        assertThat(outputs.get(1).path("firstLimit").isNull()).isTrue();
        assertThat(outputs.get(2).path("firstLimit").path("limit").asText()).isEqualTo("registration refused");
        final JsonNode attributes = outputs.get(3).path("device").path("attributes");
        assertThat(attributes.path("max_mr").path("from").asText()).isEqualTo("--set");
        assertThat(attributes.path("page_size_cap").path("from").asText()).isEqualTo("dump");
        assertThat(attributes.path("cache_entries").path("from").asText()).isEqualTo("default");
        assertThat(outputs.get(3).path("device").path("source").asText()).startsWith("dump ");
    }

    @Test
    void shouldRejectOutputWhoseFirstLimitIsProseOrWhoseSizesAreText() throws Exception
    {
        final Path w = file("w.json", "{\"groups\":[{\"count\":2000,\"size\":\"64K\"}]}");
        final ObjectNode out = (ObjectNode)plan("plan", "--workload", w.toString(), "--json", "--set", "max_mr=100");
        assertThat(schema.validate(out)).isEmpty();
        final ObjectNode prose = out.deepCopy();
        prose.put("firstLimit", "max_mr exhausted at the 100th MR");
        assertThat(schema.validate(prose)).isNotEmpty();
        final ObjectNode text = out.deepCopy();
        ((ObjectNode)text.path("host")).put("ramBytes", "16G");
        assertThat(schema.validate(text)).isNotEmpty();
        final ObjectNode name = out.deepCopy();
        name.put("device", "connectx5 (mlx5)");
        assertThat(schema.validate(name)).isNotEmpty();
    }
}
