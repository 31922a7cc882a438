package dev.rnicsim.scenarios.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link Workload#parse}: YAML and JSON read to the same workload; every error names the file, the line of the
 * offending field, the group and the field; lifetimes, requestsPerSecond, iovaAlign and counts as YAML strings.
 */
class WorkloadFormatsTest
{
    private static final long K = 1L << 10;
    private static final long M = 1L << 20;

    /** Every field, every lifetime. */
    private static final String YAML = """
        # a comment
        groups:
          - name: rx-pool          # a label
            count: 4
            size: 64M
            backing: 2m
            access: lw,rw
          - name: per-request
            count: 64
            size: 1M
            lifetime: per-request
            requestsPerSecond: 20000
          - name: cache
            count: 1000
            size: 256K
            lifetime: cached
            iovaAlign: 4K
          - count: 2
            size: 4096
            backing: thp
            lifetime: static
        """;

    private static final String JSON = """
        {"groups": [
          {"name": "rx-pool", "count": 4, "size": "64M", "backing": "2m", "access": "lw,rw"},
          {"name": "per-request", "count": 64, "size": "1M", "lifetime": "per-request", "requestsPerSecond": 20000},
          {"name": "cache", "count": 1000, "size": "256K", "lifetime": "cached", "iovaAlign": "4K"},
          {"count": 2, "size": 4096, "backing": "thp", "lifetime": "static"}
        ]}
        """;

    private static String yamlGroup(final String fields)
    {
        return "groups:\n  - count: 1\n    size: 1M\n" + fields;
    }

    @Test
    void shouldReadTheSameWorkloadFromYamlAndJson()
    {
        final Workload yaml = Workload.parse("w.yaml", YAML);
        final Workload json = Workload.parse("w.json", JSON);
        assertThat(yaml).isEqualTo(json);
        assertThat(yaml.groups()).containsExactly(
            new Workload.Group("rx-pool", 4, 64 * M, "2m", "lw,rw", 0, Workload.Lifetime.STATIC, 0),
            new Workload.Group("per-request", 64, M, "4k", "lw", 0, Workload.Lifetime.PER_REQUEST, 20_000),
            new Workload.Group("cache", 1000, 256 * K, "4k", "lw", 4096, Workload.Lifetime.CACHED, 0),
            new Workload.Group("group3", 2, 4096, "thp", "lw", 0, Workload.Lifetime.STATIC, 0));
    }

    @Test
    void shouldReadYamlByExtensionAndJsonTextInAYamlFile()
    {
        assertThat(Workload.parse("W.YML", YAML)).isEqualTo(Workload.parse("w.json", JSON));
        assertThat(Workload.parse("dir/w.yaml", JSON)).isEqualTo(Workload.parse("w.json", JSON));
        // JSON text in a .yaml file is read, and refused, as JSON.
        assertThatThrownBy(() -> Workload.parse("w.yaml", "{oops")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("w.yaml:1: not JSON");
        // YAML text in a .json file is not JSON.
        assertThatThrownBy(() -> Workload.parse("w.json", YAML)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("w.json:").hasMessageContaining("not JSON");
    }

    @Test
    void shouldGiveTheLineOfTheOffendingFieldInYaml()
    {
        final String text = """
            groups:
              - name: a
                count: 4
                size: 64M
              - name: b
                size: 1M
                backing: 2m
                count: lots
            """;
        assertThatThrownBy(() -> Workload.parse("w.yaml", text)).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("w.yaml:8: groups[1].count: expected a whole number of regions, 1 or more, got 'lots'");
        final String badBacking = text.replace("count: lots", "count: 1").replace("backing: 2m", "backing: 8m");
        assertThatThrownBy(() -> Workload.parse("w.yaml", badBacking))
            .hasMessageStartingWith("w.yaml:7: groups[1].backing: expected 4k, thp, 2m, 1g or gpu");
        final String badFirst = text.replace("count: lots", "count: 1").replace("size: 64M", "size: big");
        assertThatThrownBy(() -> Workload.parse("w.yaml", badFirst))
            .hasMessageStartingWith("w.yaml:4: groups[0].size: expected a size");
    }

    @Test
    void shouldGiveTheLineOfTheOffendingFieldInJson()
    {
        final String text = """
            {
              "groups": [
                {"name": "a", "count": 4, "size": "64M"},
                {
                  "name": "b",
                  "count": 1,
                  "size": "1M",
                  "iovaAlign": "3K"
                }
              ]
            }
            """;
        assertThatThrownBy(() -> Workload.parse("w.json", text)).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("w.json:8: groups[1].iovaAlign: expected a power of two of at least 4K, got '3K'");
        final String badAccess = text.replace("\"iovaAlign\": \"3K\"", "\"access\": \"lw,bogus\"");
        assertThatThrownBy(() -> Workload.parse("w.json", badAccess))
            .hasMessageStartingWith("w.json:8: groups[1].access: ").hasMessageContaining("bogus");
        final String badFirst = text.replace("\"count\": 4", "\"count\": 0");
        assertThatThrownBy(() -> Workload.parse("w.json", badFirst))
            .hasMessageStartingWith("w.json:3: groups[0].count: ");
    }

    @Test
    void shouldGiveTheLineOfTheGroupWhenARequiredFieldIsMissing()
    {
        final String yaml = """
            groups:
              - count: 1
                size: 1M

              - name: no-size
                count: 2
            """;
        assertThatThrownBy(() -> Workload.parse("w.yaml", yaml))
            .hasMessageStartingWith("w.yaml:5: groups[1].size: missing");
        final String json = "{\"groups\": [\n  {\"count\": 1, \"size\": \"1M\"},\n  {\"size\": \"1M\"}\n]}";
        assertThatThrownBy(() -> Workload.parse("w.json", json))
            .hasMessageStartingWith("w.json:3: groups[1].count: missing");
    }

    @Test
    void shouldRefuseAnUnknownFieldInAGroupWithItsLine()
    {
        assertThatThrownBy(() -> Workload.parse("w.yaml", yamlGroup("    backing: 4k\n    sizee: 2M\n")))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("w.yaml:5: groups[0].sizee: unknown field; expected one of ")
            .hasMessageContaining(Workload.FIELDS.toString());
        assertThatThrownBy(() -> Workload.parse("w.json", "{\"groups\": [\n{\"count\": 1,\n\"size\": \"1M\",\n"
            + "\"lifetme\": \"cached\"}]}")).hasMessageStartingWith("w.json:4: groups[0].lifetme: unknown field");
    }

    @Test
    void shouldRefuseAnUnknownTopLevelFieldWithItsLine()
    {
        assertThatThrownBy(() -> Workload.parse("w.yaml", yamlGroup("") + "processes: 4\n"))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("w.yaml:4: unknown field \"processes\"; a workload has only \"groups\"");
        assertThatThrownBy(() -> Workload.parse("w.json", "{\n  \"version\": 2,\n  \"groups\": [{\"count\": 1, "
            + "\"size\": \"1M\"}]\n}")).hasMessage("w.json:2: unknown field \"version\"; a workload has only "
            + "\"groups\"");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "groups: []\n", "groups: 4\n", "- count: 1\n  size: 1M\n", "name: x\n"})
    void shouldRefuseYamlWithoutANonEmptyGroupsList(final String text)
    {
        assertThatThrownBy(() -> Workload.parse("w.yaml", text)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("w.yaml:1: ");
    }

    @Test
    void shouldReadEveryLifetimeWordAndDefaultToStatic()
    {
        assertThat(Workload.parse("w.yaml", yamlGroup("")).groups().get(0).lifetime())
            .isEqualTo(Workload.Lifetime.STATIC);
        for (final Workload.Lifetime l : Workload.Lifetime.values())
        {
            assertThat(Workload.parse("w.yaml", yamlGroup("    lifetime: " + l.word() + "\n")).groups().get(0)
                .lifetime()).isEqualTo(l);
        }
        assertThat(List.of(Workload.Lifetime.values())).extracting(Workload.Lifetime::word)
            .containsExactly("static", "per-request", "cached");
    }

    @ParameterizedTest
    @ValueSource(strings = {"per_request", "perrequest", "dynamic", "''", "1"})
    void shouldRefuseAnUnknownLifetime(final String word)
    {
        assertThatThrownBy(() -> Workload.parse("w.yaml", yamlGroup("    access: lw\n    lifetime: " + word + "\n")))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("w.yaml:5: groups[0].lifetime: expected static, per-request or cached");
    }

    @Test
    void shouldTakeRequestsPerSecondOnlyWithPerRequest()
    {
        final Workload w = Workload.parse("w.yaml", yamlGroup("    lifetime: per-request\n    requestsPerSecond: 0\n"));
        assertThat(w.groups().get(0).requestsPerSecond()).isZero();
        assertThat(Workload.parse("w.yaml", yamlGroup("    lifetime: per-request\n")).groups().get(0)
            .requestsPerSecond()).isZero();
        assertThat(Workload.parse("w.yaml", yamlGroup("    requestsPerSecond: '500'\n    lifetime: per-request\n"))
            .groups().get(0).requestsPerSecond()).isEqualTo(500);
        for (final String lifetime : List.of("", "    lifetime: static\n", "    lifetime: cached\n"))
        {
            assertThatThrownBy(() -> Workload.parse("w.yaml", yamlGroup(lifetime + "    requestsPerSecond: 100\n")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("w.yaml:" + (lifetime.isEmpty() ? 4 : 5) + ": groups[0].requestsPerSecond: ")
                .hasMessageContaining("with lifetime per-request");
        }
        for (final String bad : List.of("-1", "1.5", "many"))
        {
            assertThatThrownBy(() -> Workload.parse("w.yaml", yamlGroup("    lifetime: per-request\n"
                + "    requestsPerSecond: " + bad + "\n")))
                .hasMessageStartingWith("w.yaml:5: groups[0].requestsPerSecond: expected a whole number from 0 to "
                    + "10^12");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"4K", "4096", "8K", "64K", "2M", "1G", "0x1000"})
    void shouldTakeAnIovaAlignThatIsAPowerOfTwoOfAtLeast4K(final String align)
    {
        final long bytes = Workload.parse("w.yaml", yamlGroup("    iovaAlign: " + align + "\n")).groups().get(0)
            .iovaAlignBytes();
        assertThat(bytes).isGreaterThanOrEqualTo(4096);
        assertThat(Long.bitCount(bytes)).isEqualTo(1);
        assertThat(Workload.parse("w.json", "{\"groups\":[{\"count\":1,\"size\":\"1M\",\"iovaAlign\":\"" + align
            + "\"}]}").groups().get(0).iovaAlignBytes()).isEqualTo(bytes);
    }

    @Test
    void shouldReadIovaAlignAsTheSizeItNames()
    {
        assertThat(Workload.parse("w.yaml", yamlGroup("    iovaAlign: 2M\n")).groups().get(0).iovaAlignBytes())
            .isEqualTo(2 * M);
        assertThat(Workload.parse("w.yaml", yamlGroup("")).groups().get(0).iovaAlignBytes()).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"2K", "2048", "3K", "6K", "12288", "-4K", "1", "big", "''"})
    void shouldRefuseAnIovaAlignThatIsNotAPowerOfTwoOfAtLeast4K(final String align)
    {
        assertThatThrownBy(() -> Workload.parse("w.yaml", yamlGroup("    iovaAlign: " + align + "\n")))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("w.yaml:4: groups[0].iovaAlign: expected a power of two of at least 4K, got '");
    }

    @Test
    void shouldReadACountGivenAsYamlStringDigits()
    {
        assertThat(Workload.parse("w.yaml", "groups:\n  - count: '12'\n    size: 1M\n").groups().get(0).count())
            .isEqualTo(12);
        assertThat(Workload.parse("w.yaml", "groups:\n  - count: \"0064\"\n    size: 1M\n").groups().get(0).count())
            .isEqualTo(64);
        assertThat(Workload.parse("w.json", "{\"groups\":[{\"count\":\"7\",\"size\":\"1M\"}]}").groups().get(0)
            .count()).isEqualTo(7);
    }

    @ParameterizedTest
    @ValueSource(strings = {"'0'", "'-3'", "'1e3'", "'12 MRs'", "'4K'", "1.5", "0", "-1", "true",
        "'1234567890123456789'"})
    void shouldRefuseACountThatIsNotAWholeNumberOfOneOrMore(final String count)
    {
        assertThatThrownBy(() -> Workload.parse("w.yaml", "groups:\n  - size: 1M\n    count: " + count + "\n"))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("w.yaml:3: groups[0].count: expected a whole number of regions, 1 or more");
    }
}
