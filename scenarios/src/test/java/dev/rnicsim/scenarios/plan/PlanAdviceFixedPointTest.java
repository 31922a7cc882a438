package dev.rnicsim.scenarios.plan;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The advice is a fixed point: for every workload of the test data and of the docs' planning examples, on mlx4,
 * mlx5 and irdma, on a small host with one process and a larger one with four, applying every setting the advice
 * gives and planning again fits, or the advice says what no setting fixes (and that claim holds: the plan with the
 * settings still breaks). Huge-page advice never takes more than RAM less what the plan's other memory needs. The
 * settings are applied here by their names, independently of the planner's own check.
 */
class PlanAdviceFixedPointTest
{
    private static final long GIB = 1L << 30;

    /** The workloads: the test data and the planning guide's examples. */
    static List<Path> workloads() throws IOException
    {
        final List<Path> out = new ArrayList<>();
        for (final Path dir : List.of(Path.of("src/test/resources/plan"), Path.of("../docs/plan-examples")))
        {
            try (Stream<Path> s = Files.list(dir))
            {
                s.filter(p -> p.toString().matches(".*\\.(ya?ml|json)")).sorted().forEach(out::add);
            }
        }
        return out;
    }

    @TestFactory
    Stream<DynamicTest> applyingEveryAdviceLineFitsOrTheAdviceSaysWhatNoSettingFixes() throws IOException
    {
        final List<Planner.HostSpec> hosts = List.of(
            new Planner.HostSpec(16 * GIB, 8L << 20, false, 0, 0, 65_530, 1),
            new Planner.HostSpec(64 * GIB, 64L << 10, false, 0, 0, 1024, 4));
        final List<DynamicTest> tests = new ArrayList<>();
        assertThat(workloads()).hasSizeGreaterThanOrEqualTo(7);
        for (final Path file : workloads())
        {
            final Workload w = Workload.parse(file.toString(), Files.readString(file, StandardCharsets.UTF_8));
            for (final DeviceProfile device : List.of(DeviceProfiles.connectx3(), DeviceProfiles.connectx5(),
                DeviceProfiles.e810()))
            {
                for (final Planner.HostSpec host : hosts)
                {
                    tests.add(DynamicTest.dynamicTest(file.getFileName() + " on " + device.name() + " with "
                        + host.processes() + " process(es)", () -> check(device, host, w)));
                }
            }
        }
        return tests.stream();
    }

    private static void check(final DeviceProfile device, final Planner.HostSpec host, final Workload w)
    {
        final Plan plan = Planner.plan(device, host, w);
        Planner.HostSpec applied = host;
        DeviceProfile appliedDevice = device;
        long poolBytes = 0;
        for (final Plan.Setting s : plan.settings())
        {
            switch (s.name())
            {
                case "vm.nr_hugepages" ->
                {
                    applied = new Planner.HostSpec(applied.ramBytes(), applied.memlockBytes(), applied.capIpcLock(),
                        s.value(), applied.hugepages1G(), applied.maxMapCount(), applied.processes());
                    poolBytes += s.value() * (2L << 20);
                }
                case "hugepages1g" ->
                {
                    applied = new Planner.HostSpec(applied.ramBytes(), applied.memlockBytes(), applied.capIpcLock(),
                        applied.hugepages2M(), s.value(), applied.maxMapCount(), applied.processes());
                    poolBytes += s.value() * GIB;
                }
                case "RLIMIT_MEMLOCK" -> applied = new Planner.HostSpec(applied.ramBytes(), s.value(),
                    applied.capIpcLock(), applied.hugepages2M(), applied.hugepages1G(), applied.maxMapCount(),
                    applied.processes());
                case "vm.max_map_count" -> applied = new Planner.HostSpec(applied.ramBytes(),
                    applied.memlockBytes(), applied.capIpcLock(), applied.hugepages2M(), applied.hugepages1G(),
                    (int)s.value(), applied.processes());
                case "log_num_mtt" -> appliedDevice = device.withMtt(MttConfig.buddy((int)s.value(),
                    device.mtt().logMttsPerSeg()));
                default -> throw new AssertionError("unknown setting " + s);
            }
        }
        final long otherRam = plan.limits().stream().filter(l -> l.name().equals("RAM")).findFirst().orElseThrow()
            .required();
        assertThat(poolBytes).as("huge-page advice within RAM less the other memory: %s", plan.advice())
            .isLessThanOrEqualTo(Math.max(0, host.ramBytes() - otherRam));
        final Plan again = Planner.plan(appliedDevice, applied, w);
        final boolean beyond = plan.advice().stream().anyMatch(a -> a.startsWith("no setting fixes "));
        if (beyond)
        {
            assertThat(again.breach()).as("a claim that no setting fixes it holds: %s", plan.advice()).isNotNull();
        }
        else
        {
            assertThat(again.breach()).as("advice %s applied", plan.advice()).isNull();
        }
        if (plan.breach() == null)
        {
            assertThat(beyond).as("a plan that fits says nothing is beyond settings").isFalse();
        }
    }
}
