package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rnicsim.scenarios.plan.Sweep;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code rnicsim plan} options: {@code --set}, {@code --processes}, YAML workloads, {@code --sweep} with
 * {@code --json} and {@code --cpu-pages}.
 */
class PlanOptionsCommandTest
{
    private static final long M = 1L << 20;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private static JsonNode json(final CliRun r) throws Exception
    {
        assertThat(r.code()).as(r.err()).isZero();
        return JSON.readTree(r.out());
    }

    private static JsonNode limit(final JsonNode plan, final String name)
    {
        for (final JsonNode l : plan.path("limits"))
        {
            if (l.path("name").asText().equals(name))
            {
                return l;
            }
        }
        throw new AssertionError("no limit " + name + " in " + plan.path("limits"));
    }

    private Path file(final String name, final String text) throws Exception
    {
        final Path f = dir.resolve(name);
        Files.writeString(f, text);
        return f;
    }

    private String workload(final long count, final String size, final String backing) throws Exception
    {
        return file("w" + count + size + backing + ".json", "{\"groups\":[{\"name\":\"g\",\"count\":" + count
            + ",\"size\":\"" + size + "\",\"backing\":\"" + backing + "\"}]}").toString();
    }

    @Test
    void shouldOverrideMaxMrWithSet() throws Exception
    {
        final String w = workload(200, "4K", "4k");
        final JsonNode plain = json(CliRun.of("plan", "--workload", w, "--json"));
        final JsonNode few = json(CliRun.of("plan", "--workload", w, "--json", "--set", "max_mr=100"));
        assertThat(limit(plain, "max_mr").path("fits").asBoolean()).isTrue();
        assertThat(plain.path("firstLimit").isNull()).isTrue();
        final long available = limit(few, "max_mr").path("available").asLong();
        // A device reporting max_mr=100 takes 100 MRs.
        assertThat(available).isEqualTo(100);
        assertThat(limit(few, "max_mr").path("fits").asBoolean()).isFalse();
        assertThat(few.path("firstLimit").path("limit").asText()).isEqualTo("max_mr");
        assertThat(few.path("firstLimit").path("atMr").asLong()).isEqualTo(available + 1);
        // The profile keeps its name; the attribute says where it came from.
        assertThat(few.path("device").path("name").asText()).isEqualTo(plain.path("device").path("name").asText())
            .isEqualTo("connectx5");
        assertThat(few.path("device").path("attributes").path("max_mr").path("from").asText()).isEqualTo("--set");
        assertThat(few.path("device").path("attributes").path("max_mr").path("value").asLong()).isEqualTo(100);
        assertThat(plain.path("device").path("attributes").path("max_mr").path("from").asText())
            .isEqualTo("profile");
        // A later --set wins.
        final JsonNode later = json(CliRun.of("plan", "--workload", w, "--json", "--set", "max_mr=100", "--set",
            "max_mr=1000"));
        assertThat(limit(later, "max_mr").path("fits").asBoolean()).isTrue();
        assertThat(limit(later, "max_mr").path("available").asLong()).isEqualTo(1000);
    }

    @Test
    void shouldOverridePageSizeCapAndTheCacheWithSet() throws Exception
    {
        final String w = workload(2, "4M", "2m");
        final JsonNode plain = json(CliRun.of("plan", "--workload", w, "--hugepages2m", "64", "--json"));
        final JsonNode capped = json(CliRun.of("plan", "--workload", w, "--hugepages2m", "64", "--json", "--set",
            "page_size_cap=0x1000", "--set", "cache_entries=1024", "--set", "cache_ways=4"));
        assertThat(plain.path("groups").get(0).path("pageSizeBytes").asLong()).isGreaterThanOrEqualTo(2 * M);
        assertThat(capped.path("groups").get(0).path("pageSizeBytes").asLong()).isEqualTo(4096);
        assertThat(capped.path("groups").get(0).path("mttEntriesPerMr").asLong()).isEqualTo(4 * M / 4096);
        assertThat(capped.path("totals").path("mttEntries").asLong()).isEqualTo(2 * 4 * M / 4096);
        assertThat(capped.path("totals").path("cacheEntries").asLong()).isEqualTo(1024);
        assertThat(plain.path("totals").path("cacheEntries").asLong()).isNotEqualTo(1024);
    }

    @ParameterizedTest
    @ValueSource(strings = {"max_foo=1", "max_mr", "max_mr=lots", "max_mr=1", "max_mr=16777217", "cache_entries=1001",
        "page_size_cap=0xZZ"})
    void shouldExitTwoForABadSetNamingIt(final String assignment) throws Exception
    {
        final CliRun r = CliRun.of("plan", "--workload", workload(1, "1M", "4k"), "--set", assignment);
        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).startsWith("--set ").contains(assignment.substring(0, assignment.indexOf('=') < 0
            ? assignment.length() : assignment.indexOf('='))).doesNotContain("Exception");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void shouldPlanSeveralProcesses() throws Exception
    {
        final String w = workload(10, "1M", "4k");
        final JsonNode one = json(CliRun.of("plan", "--workload", w, "--json", "--memlock", "unlimited"));
        final JsonNode three = json(CliRun.of("plan", "--workload", w, "--json", "--memlock", "unlimited",
            "--processes", "3"));
        assertThat(three.path("host").path("processes").asInt()).isEqualTo(3);
        assertThat(three.path("totals").path("processes").asInt()).isEqualTo(3);
        assertThat(one.path("totals").path("processes").asInt()).isEqualTo(1);
        assertThat(three.path("totals").path("mrs").asLong()).isEqualTo(30);
        for (final String total : List.of("mttEntries", "pinnedBytes", "cacheFootprint"))
        {
            assertThat(three.path("totals").path(total).asLong()).as(total)
                .isEqualTo(3 * one.path("totals").path(total).asLong()).isPositive();
        }
        assertThat(three.path("totals").path("registrationTimeNs").asLong())
            .isEqualTo(one.path("totals").path("registrationTimeNs").asLong());
        assertThat(limit(three, "RAM").path("required").asLong()).isEqualTo(30 * M);
        assertThat(limit(three, "RLIMIT_MEMLOCK").path("required").asLong()).isEqualTo(10 * M);
        assertThat(limit(three, "vm.max_map_count").path("required").asLong()).isEqualTo(10);

        final CliRun text = CliRun.of("plan", "--workload", w, "--memlock", "unlimited", "--processes", "3");
        assertThat(text.code()).as(text.err()).isZero();
        assertThat(text.out()).contains("total over 3 processes: 30 MRs").contains("time per process: ");
    }

    @Test
    void shouldCountAllProcessesInTheFirstLimit() throws Exception
    {
        // 50 MRs of one 2 MiB page per process, 3 processes, a pool of 120 pages: 50 + 50 fit, the 3rd process's 21st
        // MR (the 121st) breaks it.
        final CliRun r = CliRun.of("plan", "--workload", workload(50, "2M", "2m"), "--memlock", "unlimited",
            "--hugepages2m", "120", "--processes", "3");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("first limit to break: hugetlb 2 MiB pool exhausted at the 121st MR "
            + "(counting all 3 processes, in process 3, group 'g', 2 MiB each)");
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "-1", "1048577", "99999999999", "many"})
    void shouldExitTwoForABadProcessCount(final String processes) throws Exception
    {
        final CliRun r = CliRun.of("plan", "--workload", workload(1, "1M", "4k"), "--processes", processes);
        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("--processes").doesNotContain("Exception");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void shouldAcceptTheLargestProcessCount() throws Exception
    {
        final JsonNode p = json(CliRun.of("plan", "--workload", workload(1, "4K", "4k"), "--json", "--processes",
            String.valueOf(PlanCommand.MAX_PROCESSES)));
        assertThat(p.path("totals").path("mrs").asLong()).isEqualTo(PlanCommand.MAX_PROCESSES);
    }

    @Test
    void shouldPlanAYamlWorkloadAsItsJsonTwin() throws Exception
    {
        final Path yaml = file("w.yaml", """
            groups:
              - name: rx-pool
                count: 4
                size: 64M
                backing: 2m
                access: lw,rw
              - name: per-request
                count: '64'
                size: 1M
                lifetime: per-request
                requestsPerSecond: 20000
            """);
        final Path json = file("w.json", "{\"groups\": [{\"name\": \"rx-pool\", \"count\": 4, \"size\": \"64M\", "
            + "\"backing\": \"2m\", \"access\": \"lw,rw\"}, {\"name\": \"per-request\", \"count\": 64, \"size\": "
            + "\"1M\", \"lifetime\": \"per-request\", \"requestsPerSecond\": 20000}]}");
        final JsonNode fromYaml = json(CliRun.of("plan", "--workload", yaml.toString(), "--json", "--memlock",
            "unlimited", "--hugepages2m", "128"));
        final JsonNode fromJson = json(CliRun.of("plan", "--workload", json.toString(), "--json", "--memlock",
            "unlimited", "--hugepages2m", "128"));
        assertThat(fromYaml.path("workload")).isEqualTo(fromJson.path("workload"));
        assertThat(fromYaml.path("totals")).isEqualTo(fromJson.path("totals"));
        assertThat(fromYaml.path("totals").path("mrs").asLong()).isEqualTo(68);
        assertThat(fromYaml.path("firstLimit").isNull()).isTrue();
        assertThat(fromYaml.path("totals").path("hotPathNsPerSecond").asLong()).isPositive();

        final Path bad = file("bad.yml", "groups:\n  - count: 1\n    size: 1M\n    lifetime: forever\n");
        final CliRun r = CliRun.of("plan", "--workload", bad.toString());
        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).startsWith(bad + ":4: groups[0].lifetime: expected static, per-request or cached")
            .doesNotContain("Exception");
    }

    /** The values and backings a size sweep plans, by the rule of {@link Sweep}. */
    private static List<String> expectedRows(final long from, final long to)
    {
        final List<String> out = new ArrayList<>();
        for (final long v : Sweep.values(from, to))
        {
            out.add(v + " 4k");
            if (v >= 2 * M)
            {
                out.add(v + " 2m");
            }
            if (v >= 1L << 30)
            {
                out.add(v + " 1g");
            }
        }
        return out;
    }

    @Test
    void shouldPrintASweepAsJson() throws Exception
    {
        final String w = workload(3, "1M", "4k");
        final Path svg = dir.resolve("sweep.svg");
        final JsonNode s = json(CliRun.of("plan", "--workload", w, "--sweep", "size", "--from", "1M", "--to", "64M",
            "--svg", svg.toString(), "--json", "--memlock", "unlimited", "--hugepages2m", "1024"));
        assertThat(Files.exists(svg)).isTrue();
        assertThat(s.path("device").path("name").asText()).isEqualTo("connectx5");
        assertThat(s.path("device").path("attributes").path("page_size_cap").path("from").asText())
            .isEqualTo("profile");
        assertThat(s.path("sweep").asText()).isEqualTo("size");
        assertThat(s.path("cpuPages").isBoolean()).isTrue();
        assertThat(s.path("cpuPages").asBoolean()).isFalse();
        assertThat(s.path("chart").asText()).isEqualTo(svg.toString());
        assertThat(s.path("group").path("name").asText()).isEqualTo("g");
        assertThat(s.path("group").path("count").asLong()).isEqualTo(3);
        final JsonNode rows = s.path("rows");
        assertThat(rows.isArray()).isTrue();
        final List<String> planned = new ArrayList<>();
        for (final JsonNode row : rows)
        {
            assertThat(row.properties()).extracting(java.util.Map.Entry::getKey).containsExactly("value", "backing",
                "pageSizeBytes", "mttEntries", "mttEntriesReserved", "pinnedBytes", "registrationTimeNs",
                "firstLimit");
            final long value = row.path("value").asLong();
            planned.add(value + " " + row.path("backing").asText());
            assertThat(row.path("pinnedBytes").asLong()).isEqualTo(3 * value);
            assertThat(row.path("mttEntries").asLong() * row.path("pageSizeBytes").asLong())
                .isGreaterThanOrEqualTo(3 * value);
            assertThat(row.path("mttEntriesReserved").asLong()).isGreaterThanOrEqualTo(row.path("mttEntries")
                .asLong());
            assertThat(row.path("registrationTimeNs").asLong()).isPositive();
            assertThat(row.path("firstLimit").isNull()).as(row.toString()).isTrue();
            if (row.path("backing").asText().equals("4k"))
            {
                assertThat(row.path("pageSizeBytes").asLong()).isEqualTo(4096);
            }
        }
        assertThat(planned).containsExactlyElementsOf(expectedRows(M, 64 * M));
    }

    @Test
    void shouldForceTheCpuPageWithCpuPages() throws Exception
    {
        final String w = workload(3, "1M", "2m");
        final String[] sweep = {"plan", "--workload", w, "--sweep", "size", "--from", "1M", "--to", "64M", "--svg",
            dir.resolve("s.svg").toString(), "--json", "--memlock", "unlimited", "--hugepages2m", "1024"};
        final JsonNode merged = json(CliRun.of(sweep));
        final List<String> withCpuPages = new ArrayList<>(List.of(sweep));
        withCpuPages.add("--cpu-pages");
        final JsonNode cpu = json(CliRun.of(withCpuPages.toArray(String[]::new)));
        assertThat(cpu.path("cpuPages").asBoolean()).isTrue();
        int rows2m = 0;
        for (final JsonNode row : cpu.path("rows"))
        {
            final long value = row.path("value").asLong();
            final long page = row.path("backing").asText().equals("2m") ? 2 * M : 4096;
            assertThat(row.path("pageSizeBytes").asLong()).as(row.toString()).isEqualTo(page);
            assertThat(row.path("mttEntries").asLong()).as(row.toString()).isEqualTo(3 * value / page);
            rows2m += page == 2 * M ? 1 : 0;
        }
        assertThat(rows2m).isEqualTo((int)expectedRows(M, 64 * M).stream().filter(r -> r.endsWith("2m")).count());
        // Without it, mlx5 merges contiguous huge pages: some 2m row has MR pages above 2 MiB and fewer entries.
        boolean larger = false;
        for (final JsonNode row : merged.path("rows"))
        {
            if (row.path("backing").asText().equals("2m") && row.path("pageSizeBytes").asLong() > 2 * M)
            {
                larger = true;
                assertThat(row.path("mttEntries").asLong()).isLessThan(3 * row.path("value").asLong() / (2 * M));
            }
        }
        assertThat(larger).isTrue();

        final CliRun text = CliRun.of("plan", "--workload", w, "--sweep", "size", "--from", "1M", "--to", "64M",
            "--svg", dir.resolve("t.svg").toString(), "--cpu-pages");
        assertThat(text.code()).as(text.err()).isZero();
        assertThat(text.out()).contains("MR page forced to the CPU page");
    }

    @Test
    void shouldExitTwoForCpuPagesWithoutSweep() throws Exception
    {
        final CliRun r = CliRun.of("plan", "--workload", workload(1, "1M", "4k"), "--cpu-pages");
        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("--cpu-pages").contains("--sweep");
        assertThat(r.out()).isEmpty();
    }
}
