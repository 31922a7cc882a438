package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PlanCommandTest
{
    @TempDir
    Path dir;

    @Test
    void shouldPrintThePlanAsDocumentedJson() throws Exception
    {
        final Path w = dir.resolve("w.json");
        Files.writeString(w, "{\"groups\":[{\"name\":\"small\",\"count\":1000,\"size\":\"64K\",\"backing\":\"4k\"}]}");
        final CliRun r = CliRun.of("plan", "--profile", "connectx3", "--log-num-mtt", "8", "--workload", w.toString(),
            "--memlock", "unlimited", "--json");
        assertThat(r.code()).as(r.err()).isZero();
        final JsonNode root = new ObjectMapper().readTree(r.out());
        assertThat(root.path("device").path("name").asText()).isEqualTo("connectx3");
        assertThat(root.path("device").path("driver").asText()).isEqualTo("mlx4");
        assertThat(root.path("device").path("attributes").path("log_num_mtt").path("value").asInt()).isEqualTo(8);
        assertThat(root.path("device").path("attributes").path("log_num_mtt").path("from").asText())
            .isEqualTo("--log-num-mtt");
        assertThat(root.path("device").path("attributes").path("max_mr").path("from").asText()).isEqualTo("profile");
        assertThat(root.path("totals").path("mrs").asLong()).isEqualTo(1000);
        assertThat(root.path("totals").path("mttEntries").asLong()).isEqualTo(16_000);
        assertThat(root.path("limits").isArray()).isTrue();
        assertThat(root.path("firstLimit").path("limit").asText()).isEqualTo("MTT entries");
        assertThat(root.path("firstLimit").path("atMr").asLong()).isEqualTo(129);
        assertThat(root.path("firstLimit").path("group").asText()).isEqualTo("small");
        assertThat(root.path("firstLimit").path("process").asInt()).isEqualTo(1);
        assertThat(root.path("firstLimit").path("message").asText())
            .startsWith("MTT entries exhausted at the 129th MR");
    }

    @Test
    void shouldSayEverythingFitsAndExitZero() throws Exception
    {
        final Path w = dir.resolve("w.json");
        Files.writeString(w, "{\"groups\":[{\"count\":4,\"size\":\"1M\"}]}");
        final CliRun r = CliRun.of("plan", "--workload", w.toString());
        assertThat(r.code()).isZero();
        assertThat(r.out()).contains("everything fits").contains("MTT entries");
    }

    @Test
    void shouldExitTwoForAMalformedWorkloadOrProfile() throws Exception
    {
        final Path w = dir.resolve("w.json");
        Files.writeString(w, "{\"groups\":[{\"count\":-1,\"size\":\"1M\"}]}");
        final CliRun bad = CliRun.of("plan", "--workload", w.toString());
        assertThat(bad.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(bad.err()).contains("w.json:1: groups[0].count: expected").doesNotContain("Exception");
        assertThat(CliRun.of("plan", "--profile", "nope", "--workload", w.toString()).code())
            .isEqualTo(Rnicsim.MALFORMED);
        assertThat(CliRun.of("plan", "--workload", dir.resolve("missing.json").toString()).err())
            .contains("no such file");
        assertThat(CliRun.of("plan", "--ram", "0", "--workload", w.toString()).code()).isEqualTo(Rnicsim.MALFORMED);
    }
}
