package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * rdma-core's own test suite (the pyverbs unittests the distribution installs with python3-pyverbs), unmodified,
 * on the simulated device of every built-in profile but two (below) through this module's libibverbs.so.1: the outside measure of how
 * faithfully the library and the model answer. Each profile's run must show no failure or error but the known-open
 * cases of {@code rdma-core-tests/ledger.txt} (and each of those must still fail, so the ledger stays exact), and
 * every skip must give a reason of {@code rdma-core-tests/skips.txt}, each with why it is legitimate.
 *
 * <p>Under CI=true (.ci/run installs python3-pyverbs) a missing suite fails the test; elsewhere it skips saying
 * what to install.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a suite that hangs fails its profile instead of the build
class RdmaCoreTestsProgramTest
{
    private static final Path PYTHON = Path.of("/usr/bin/python3");
    private static final Path FILES = Path.of("src/test/resources/rdma-core-tests");

    @TempDir
    static Path dir;

    private static Path runTests;

    @BeforeAll
    static void copySuite() throws Exception
    {
        if (!Files.isRegularFile(RdmaCoreSuite.INSTALLED.resolve("run_tests.py")) || !Files.isExecutable(PYTHON))
        {
            missing(RdmaCoreSuite.INSTALLED + "/run_tests.py or " + PYTHON + " is not installed");
        }
        runTests = RdmaCoreSuite.copy(dir.resolve("rdma-core"));
    }

    private static void missing(final String what)
    {
        final String why = what + " (Debian/Ubuntu package python3-pyverbs, which installs rdma-core's tests in "
            + RdmaCoreSuite.INSTALLED + "; .ci/run installs it)";
        if ("true".equals(System.getenv("CI")))
        {
            fail(why);
        }
        assumeTrue(false, why);
    }

    /**
     * Every built-in profile but two: {@code generic} is no device (the safe minimum for a dump no rule recognises:
     * max_sge 1 and max_qp_rd_atom 0, on which upstream's helpers draw from empty ranges), and {@code mana} models the
     * kernel driver's registration rules but not rdma-core 44's libmana, which serves DPDK only ({@code
     * mana_create_cq} refuses a CQ without a parent domain's allocators with EINVAL, {@code mana_create_qp} takes raw
     * packet QPs only), so the suite would measure nothing real there.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"connectx5", "connectx4", "rxe", "bnxt_re", "siw", "efa", "connectx3", "connectx4lx",
        "connectx4-forced-ro", "connectx5ex", "connectx6", "connectx6dx", "connectx6lx", "connectx7", "bluefield2",
        "bluefield3", "rxe-legacy", "e810", "e810-iwarp", "efa-gen1", "efa-gen3", "hns", "qedr", "erdma", "cxgb4",
        "hfi1"})
    void rdmaCoreSuitePassesButTheLedgeredCasesAndSkipsOnlyForAllowedReasons(final String profileName)
        throws Exception
    {
        final DeviceProfile profile = DeviceProfiles.byName(profileName);
        final RdmaCoreSuite.Result r;
        try (Programs p = new Programs(dir, hcaIdOf(profile), profile))
        {
            final Programs.Run probe = p.run(false, PYTHON.toString(), "-c", "import pyverbs.device");
            if (probe.exitCode() != 0)
            {
                missing("pyverbs is not importable by " + PYTHON + ": " + probe.err().strip());
            }
            final Programs.Run run = p.run(false, PYTHON.toString(), runTests.toString(), "-v");
            // unittest -v writes its report on stderr; what the tests print goes to stdout
            final Path log = Path.of("target", "rdma-core-tests", profileName + ".txt");
            Files.createDirectories(log.getParent());
            Files.writeString(log, run.err() + "\n---- stdout ----\n" + run.out());
            r = RdmaCoreSuite.parse(run.err());
        }
        System.out.printf("rdma-core tests on %-10s %3d tests: %3d ok, %2d failures, %2d errors, %3d skipped (%s)%n",
            profileName, r.ran(), r.count(RdmaCoreSuite.Status.OK), r.count(RdmaCoreSuite.Status.FAIL),
            r.count(RdmaCoreSuite.Status.ERROR), r.count(RdmaCoreSuite.Status.SKIP), r.summary());
        final List<String> problems = new ArrayList<>();
        final Map<String, RdmaCoreSuite.LedgerEntry> open = new TreeMap<>();
        for (final RdmaCoreSuite.LedgerEntry e : RdmaCoreSuite.ledger(FILES.resolve("ledger.txt")))
        {
            if (e.appliesTo(profileName))
            {
                open.put(e.id(), e);
            }
        }
        final List<RdmaCoreSuite.AllowedSkip> allowed = RdmaCoreSuite.allowedSkips(FILES.resolve("skips.txt"));
        for (final RdmaCoreSuite.Outcome o : r.outcomes().values())
        {
            final boolean failed = o.status() == RdmaCoreSuite.Status.FAIL || o.status() == RdmaCoreSuite.Status.ERROR
                || o.status() == RdmaCoreSuite.Status.UNEXPECTED_SUCCESS;
            final RdmaCoreSuite.LedgerEntry known = open.remove(o.id());
            if (failed && known == null)
            {
                problems.add(o.status() + " " + o.id() + " (not in ledger.txt for " + profileName + ")");
            }
            else if (!failed && known != null && !known.varies())
            {
                problems.add(o.id() + " is ledgered as open (" + known.reason() + ") but now ends " + o.status()
                    + (o.reason().isEmpty() ? "" : " '" + o.reason() + "'") + ": remove it from ledger.txt");
            }
            if (o.status() == RdmaCoreSuite.Status.SKIP
                && allowed.stream().noneMatch(a -> a.allows(profileName, o.reason())))
            {
                problems.add("skip of " + o.id() + " for a reason skips.txt does not allow on " + profileName + ": '"
                    + o.reason() + "'");
            }
        }
        for (final RdmaCoreSuite.LedgerEntry e : open.values())
        {
            problems.add(e.id() + " is ledgered for " + profileName + " but did not run: fix ledger.txt");
        }
        assertThat(problems).as("rdma-core's tests on " + profileName + " (" + r.summary() + "; the tracebacks are in "
            + "target/rdma-core-tests/" + profileName + ".txt)").isEmpty();
    }

    @Test
    void theSuiteRunsOnEveryBuiltInProfileButGenericAndMana() throws Exception
    {
        final ValueSource profiles = RdmaCoreTestsProgramTest.class.getDeclaredMethod(
            "rdmaCoreSuitePassesButTheLedgeredCasesAndSkipsOnlyForAllowedReasons", String.class)
            .getAnnotation(ValueSource.class);
        final java.util.Set<String> expected = new java.util.TreeSet<>(DeviceProfiles.builtIn().keySet());
        expected.removeAll(List.of(DeviceProfiles.GENERIC, "mana"));
        assertThat(new java.util.TreeSet<>(List.of(profiles.strings()))).isEqualTo(expected);
    }

    @Test
    void theParserReadsEachTestsStatusAfterItsDocstringAndWhatItPrinted()
    {
        final String out = """
            test_a (tests.test_x.A.test_a) ... ok
            test_b (tests.test_x.A.test_b)
            The docstring's first line ... FAIL
            test_c (tests.test_x.A.test_c) ... printed by the test = 2
            ok
            test_d (tests.test_x.A.test_d) ... skipped "Device mlx5_0 doesn't have net interface"
            test_e (tests.test_x.A.test_e)
            Docstring ... skipped 'Extended CQ is not supported'
            ======================================================================
            FAIL: test_b (tests.test_x.A.test_b)
            ----------------------------------------------------------------------
            AssertionError: 1 != 0 ... ok
            ----------------------------------------------------------------------
            Ran 5 tests in 0.010s

            FAILED (failures=1, skipped=2)
            """;
        final RdmaCoreSuite.Result r = RdmaCoreSuite.parse(out);
        assertThat(r.outcomes().values()).extracting(RdmaCoreSuite.Outcome::status).containsExactly(
            RdmaCoreSuite.Status.OK, RdmaCoreSuite.Status.FAIL, RdmaCoreSuite.Status.OK, RdmaCoreSuite.Status.SKIP,
            RdmaCoreSuite.Status.SKIP);
        assertThat(r.outcomes().get("tests.test_x.A.test_d").reason()).isEqualTo("Device mlx5_0 doesn't have net "
            + "interface");
        assertThat(r.summary()).isEqualTo("FAILED (failures=1, skipped=2)");
    }

    @Test
    void theParserRefusesAnOutputWhoseCountDiffersFromUnittests()
    {
        final String out = "test_a (tests.test_x.A.test_a) ... ok\n\n-----\nRan 2 tests in 0.1s\n\nOK\n";
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> RdmaCoreSuite.parse(out))
            .hasMessageContaining("unittest ran 2 tests, the output shows 1");
    }

    @Test
    void everyLedgerEntryAndAllowedSkipSaysWhy() throws Exception
    {
        assertThat(RdmaCoreSuite.ledger(FILES.resolve("ledger.txt"))).allSatisfy(e ->
            assertThat(e.reason()).as(e.id()).hasSizeGreaterThan(10));
        assertThat(RdmaCoreSuite.allowedSkips(FILES.resolve("skips.txt"))).allSatisfy(a ->
            assertThat(a.why()).as(a.reason().pattern()).hasSizeGreaterThan(10));
    }

    /** The device name rnicsim exec gives a profile (ExecCommand): the driver's prefix and 0, mlx5_0, rxe0, efa_0. */
    private static String hcaIdOf(final DeviceProfile p)
    {
        return p.traits().hcaIdPrefix() + "0";
    }
}
