package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.DevinfoReader;
import dev.rnicsim.simnic.DevinfoResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every built-in profile through the command line: {@code devinfo --profile NAME} prints it in {@code ibv_devinfo -v}
 * form that reads back as the same driver and attributes, {@code plan --profile NAME} plans on it, and a script's
 * {@code device NAME HOST profile=NAME} line takes it.
 */
class DriverProfilesCliTest
{
    @TempDir
    Path dir;

    static Set<String> names()
    {
        return DeviceProfiles.builtIn().keySet();
    }

    @ParameterizedTest(name = "devinfo --profile {0}")
    @MethodSource("names")
    void devinfoPrintsEveryProfileInIbvDevinfoFormThatReadsBackAsItsDriver(final String name)
    {
        final DeviceProfile p = DeviceProfiles.byName(name);
        final CliRun r = CliRun.of("devinfo", "--profile", name);
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("hca_id:\t" + name + "\n")
            .contains("\ttransport:\t\t\t" + p.traits().transport().devinfo() + "\n")
            .containsPattern("page_size_cap:\\t+0x" + Long.toHexString(p.attributes().pageSizeCap()) + "\\n")
            .contains("# simulated: driver " + p.driver())
            .contains("# driver rules: key = index << " + p.traits().keyVariantBits());
        final DevinfoResult back = DevinfoReader.parse(r.out(), name);
        assertThat(back.profile().driver()).isEqualTo(p.driver());
        assertThat(back.profile().attributes()).isEqualTo(p.attributes());
    }

    @ParameterizedTest(name = "plan --profile {0}")
    @MethodSource("names")
    void planAcceptsEveryProfile(final String name) throws Exception
    {
        final Path w = dir.resolve("w.json");
        Files.writeString(w, "{\"groups\":[{\"name\":\"small\",\"count\":10,\"size\":\"64K\",\"backing\":\"4k\"}]}");
        final CliRun r = CliRun.of("plan", "--profile", name, "--workload", w.toString(), "--memlock", "unlimited",
            "--json");
        assertThat(r.code()).as(r.err()).isIn(0, 1);
        final JsonNode root = new ObjectMapper().readTree(r.out());
        assertThat(root.path("device").path("name").asText()).isEqualTo(name);
        assertThat(root.path("totals").path("mrs").asLong()).isEqualTo(10);
    }

    @Test
    void planNamesAPblDriversPerMrLimitAsTheFirstToBreak() throws Exception
    {
        final Path w = dir.resolve("big.json");
        Files.writeString(w, "{\"groups\":[{\"name\":\"big\",\"count\":2,\"size\":\"2G\",\"backing\":\"4k\"}]}");
        final JsonNode bnxt = new ObjectMapper().readTree(CliRun.of("plan", "--profile", "bnxt_re", "--workload",
            w.toString(), "--memlock", "unlimited", "--json").out());
        assertThat(bnxt.path("firstLimit").path("limit").asText()).startsWith("entries per MR");
        assertThat(bnxt.path("firstLimit").path("message").asText()).startsWith("entries per MR: group big needs "
            + "524,288").contains("262,144", "EIO");
        final JsonNode cx5 = new ObjectMapper().readTree(CliRun.of("plan", "--profile", "connectx5", "--workload",
            w.toString(), "--memlock", "unlimited", "--json").out());
        assertThat(cx5.path("firstLimit").isNull() || cx5.path("firstLimit").isMissingNode()).isTrue();
        assertThat(cx5.path("limits").toString()).doesNotContain("entries per MR");
    }

    @Test
    void planAndScriptsOfAnUnrecognisedDumpShouldSayItIsSimulatedAsGeneric() throws Exception
    {
        final Path dump = dir.resolve("odd.txt");
        Files.writeString(dump, "hca_id:\tfoo_0\n\tvendor_id:\t\t\t0x4242\n\tmax_mr:\t\t\t1000\n");
        final Path w = dir.resolve("w.json");
        Files.writeString(w, "{\"groups\":[{\"name\":\"g\",\"count\":1,\"size\":\"64K\"}]}");
        final Path script = dir.resolve("s.rsim");
        Files.writeString(script, "host h\ndevice d h devinfo=odd.txt\n");

        final CliRun plan = CliRun.of("plan", "--devinfo", dump.toString(), "--workload", w.toString());
        final CliRun run = CliRun.of("run", script.toString());

        assertThat(plan.err()).contains("warning").contains("no rule recognises").contains("generic");
        assertThat(run.code()).as(run.err()).isZero();
        assertThat(run.out()).contains("warnings:").contains("no rule recognises");
    }

    @Test
    void devinfoOfAnIdentityOnlyDumpSaysWhichProfileTheDefaultsCameFrom() throws Exception
    {
        final Path dump = dir.resolve("efa.txt");
        Files.writeString(dump, "hca_id:\tefa_0\n\ttransport:\t\t\tunspecified (4)\n\tvendor_id:\t\t\t0x1d0f\n"
            + "\tvendor_part_id:\t\t\t61344\n");
        final CliRun r = CliRun.of("devinfo", "--file", dump.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("transport:\t\t\tunspecified (4)")
            .contains("# not in the source dump, defaulted from built-in profile efa-gen1 (driver efa): ")
            .contains("page_size_cap").contains("# simulated: driver efa");
        final JsonNode json = new ObjectMapper().readTree(CliRun.of("devinfo", "--file", dump.toString(), "--json")
            .out());
        assertThat(json.get(0).path("defaults_from").asText()).isEqualTo("efa-gen1");
        assertThat(json.get(0).path("driver").asText()).isEqualTo("efa");
    }

    @Test
    void anUnknownDumpIsGenericAndSaysSo() throws Exception
    {
        final Path dump = dir.resolve("x.txt");
        Files.writeString(dump, "hca_id:\tfoo0\n\tvendor_id:\t\t\t0x4321\n\tmax_qp:\t\t\t\t12\n");
        final CliRun r = CliRun.of("devinfo", "--file", dump.toString());
        assertThat(r.code()).isZero();
        assertThat(r.out()).contains("# simulated: driver generic").contains("# warning: ")
            .contains("no rule recognises").doesNotContain("driver mlx5");
    }

    @Test
    void scriptKeysSplitAtTheProfilesVariantWidthAndTakeTheNewKeyPolicies() throws Exception
    {
        final Path f = dir.resolve("keys.rsim");
        Files.writeString(f, """
            host h ram=256M
            device opa h profile=hfi1
            device chelsio h profile=cxgb4 keys=fixed
            open a opa
            open b chelsio
            pd pa a
            pd pb b
            mmap ba a 8K
            mmap bb b 8K
            reg m1 pa ba 4K
            reg m2 pa ba+4096 4K
            expect m1.index == 1
            expect m2.index == 2
            expect m1.lkey == 65536
            reg c1 pb bb 4K
            reg c2 pb bb+4096 4K
            expect c1.variant == 0
            expect c2.variant == 0
            show mr m2
            """);
        final CliRun r = CliRun.of("run", f.toString());
        assertThat(r.code()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("MPT index 2, variant 1");
    }

    @Test
    void aScriptDeviceLineTakesEveryProfile() throws Exception
    {
        final StringBuilder script = new StringBuilder("host h ram=1G\n");
        int i = 0;
        for (final String name : names())
        {
            script.append("device d").append(i).append(" h profile=").append(name).append('\n')
                .append("open a").append(i).append(" d").append(i).append('\n')
                .append("pd p").append(i).append(" a").append(i).append('\n')
                .append("mmap b").append(i).append(" a").append(i).append(" 4K\n")
                .append("reg m").append(i).append(" p").append(i).append(" b").append(i).append(" 4K\n")
                .append("expect ok\n");
            i++;
        }
        final Path f = dir.resolve("all.rsim");
        Files.writeString(f, script);
        final CliRun r = CliRun.of("run", f.toString(), "--quiet");
        assertThat(r.code()).as(r.out() + r.err()).isZero();
    }
}
