package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code devinfo --json} names each attribute as {@code ibv_devinfo -v} does, with the values it prints. */
class DevinfoJsonTest
{
    private static JsonNode json(final String... args) throws Exception
    {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final int code = Rnicsim.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
        assertThat(code).as(err.toString()).isZero();
        return new ObjectMapper().readTree(out.toString());
    }

    @Test
    void aProfilesAttributesShouldCarryIbvDevinfosNamesAndValues() throws Exception
    {
        final JsonNode a = json("devinfo", "--profile", "connectx5", "--json").get(0).get("attributes");
        final List<String> names = new ArrayList<>();
        a.fieldNames().forEachRemaining(names::add);
        assertThat(names).contains("hca_id", "fw_ver", "node_guid", "vendor_id", "vendor_part_id", "max_mr_size",
            "page_size_cap", "max_qp", "device_cap_flags", "max_mr", "max_mw", "atomic_cap", "general_odp_caps")
            .noneMatch(n -> n.chars().anyMatch(Character::isUpperCase));
        assertThat(a.get("max_mr_size").asText()).isEqualTo("0xffffffffffffffff");
        assertThat(a.get("vendor_id").asText()).isEqualTo("0x02c9");
        assertThat(a.get("max_qp").isNumber()).isTrue();
        assertThat(a.get("atomic_cap").asText()).startsWith("ATOMIC_");
    }

    @Test
    void anOpenedDevicesAttributesShouldCarryTheSameNames() throws Exception
    {
        final JsonNode a = json("devinfo", "--device", "sim:rxe", "--json").get("attributes");
        assertThat(a.has("max_mr_size")).isTrue();
        assertThat(a.has("maxMrSizeBytes")).isFalse();
        assertThat(a.get("max_pd").isNumber()).isTrue();
    }
}
