package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.DriverProfiles;
import dev.rnicsim.verbs.OdpCaps;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The memory-side rules rdma-core's own test suite checks (tests/test_mr.py's rereg cases, test_odp.py,
 * test_qpex.py's atomic write on mlx5 and rxe, test_shared_pd.py), through this module's libibverbs.so.1 from pyverbs
 * (src/test/python/pyverbs_memory_rules.py, one check per run): each fails if the library or the fabric answered
 * otherwise than the real stack, as the suite's case did before the rule was carried to the library.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class MemoryRulesProgramTest
{
    private static final String SCRIPT = "src/test/python/pyverbs_memory_rules.py";

    @TempDir
    Path dir;

    private Programs.Run check(final String hcaId, final DeviceProfile profile, final String... args) throws Exception
    {
        Programs.require("python3", "python3-pyverbs");
        try (Programs p = new Programs(dir, hcaId, profile))
        {
            final String[] argv = new String[args.length + 2];
            argv[0] = "/usr/bin/python3";
            argv[1] = SCRIPT;
            System.arraycopy(args, 0, argv, 2, args.length);
            final Programs.Run r = p.run(false, argv);
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("ok " + args[0]);
            return r;
        }
    }

    static Stream<Arguments> resetCleaning()
    {
        // mlx5 cleans the QP's completions from its CQ at RESET (mlx5_cq_clean); rxe keeps the CQ in the kernel.
        return Stream.of(Arguments.of("mlx5_0", DeviceProfiles.connectx5(), "0"),
            Arguments.of("mlx4_0", DeviceProfiles.connectx3(), "0"), Arguments.of("rxe0", DeviceProfiles.rxe(), "2"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("resetCleaning")
    void resetLeavesTheQpsFlushesInItsCqOnlyWhereTheProviderDoesNotCleanIt(final String hcaId,
        final DeviceProfile profile, final String left) throws Exception
    {
        check(hcaId, profile, "reset-clean", left);
    }

    @Test
    void reregMrIsEopnotsuppWhereTheProviderHasNone() throws Exception
    {
        check("bnxt_re0", DriverProfiles.bnxtRe(), "rereg-unsupported");
        check("rxe0", DeviceProfiles.rxe(), "rereg-unsupported");
    }

    @Test
    void onDemandInQpAccessFlagsIsTakenAtInit() throws Exception
    {
        check("mlx5_0", DeviceProfiles.connectx5(), "odp-qp-access");
        check("rxe0", DeviceProfiles.rxe(), "odp-qp-access");
    }

    @Test
    void anImplicitOdpMrCoversABufferMappedAfterItsRegistration() throws Exception
    {
        check("mlx5_0", DeviceProfiles.connectx5(), "odp-implicit");
    }

    @Test
    void queryDeviceExReportsTheUdAndXrcOdpCapabilities() throws Exception
    {
        final OdpCaps c = DeviceProfiles.connectx5().attributes().odpCaps();
        assertThat(c.udOdpCaps()).isNotZero();
        assertThat(c.xrcOdpCaps()).isNotZero();
        check("mlx5_0", DeviceProfiles.connectx5(), "odp-caps", Integer.toString(c.udOdpCaps()),
            Integer.toString(c.xrcOdpCaps()));
    }

    @Test
    void sendOpsFlagsTheProviderLacksAreRefusedAtCreation() throws Exception
    {
        check("mlx5_0", DeviceProfiles.connectx5(), "send-ops-eopnotsupp");
    }

    @Test
    void anAtomicWriteOfAnRxeQpPlacesItsEightBytes() throws Exception
    {
        check("rxe0", DeviceProfiles.rxe(), "atomic-write");
    }

    @Test
    void aSecondContextImportsTheDevicePdAndMrByTheirHandles() throws Exception
    {
        check("mlx5_0", DeviceProfiles.connectx5(), "import-device");
    }
}
