package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.ProviderRule;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code MLX_CQ_ALLOC_TYPE=HUGE} is read by the provider of a profile with {@link
 * ProviderRule#QUEUE_ALLOC_TYPE_FROM_ENV} (mlx5's {@code mlx5_get_alloc_type}), whatever the device is named, and by no
 * other: the library asks the context's provider capabilities, not the device name.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class AllocTypeProgramTest
{
    private static final String CREATE_CQ = String.join("\n",
        "import sys",
        "from pyverbs.device import Context",
        "from pyverbs.cq import CQ",
        "from pyverbs.pyverbs_error import PyverbsRDMAError",
        "ctx = Context(name=sys.argv[1])",
        "try:",
        "    CQ(ctx, 8).close()",
        "    print('created')",
        "except PyverbsRDMAError as e:",
        "    print('errno', e.error_code)");

    @TempDir
    Path dir;

    /** @return HugePages_Free of /proc/meminfo (the default huge page size's free pages), or -1 when unreadable. */
    private static long freeHugePages() throws Exception
    {
        for (final String line : Files.readAllLines(Path.of("/proc/meminfo")))
        {
            if (line.startsWith("HugePages_Free:"))
            {
                return Long.parseLong(line.substring("HugePages_Free:".length()).strip());
            }
        }
        return -1;
    }

    private static String createCq(final String hcaId, final DeviceProfile profile, final Path dir) throws Exception
    {
        Programs.require("python3", "python3-pyverbs");
        try (Programs p = new Programs(dir, hcaId, profile))
        {
            final Programs.Run probe = p.run(false, "/usr/bin/python3", "-c", "import pyverbs.device");
            if (probe.exitCode() != 0)
            {
                Programs.require("pyverbs-module-of-/usr/bin/python3", "python3-pyverbs");
            }
            final Programs.Run r = p.run(false, "/usr/bin/env", "MLX_CQ_ALLOC_TYPE=HUGE", "/usr/bin/python3", "-c",
                CREATE_CQ, hcaId);
            assertThat(r.exitCode()).as(r.both()).isZero();
            return r.out().strip();
        }
    }

    @Test
    void onlyAProfileWhoseProviderReadsTheVariableFailsTheCreateWithoutHugePages() throws Exception
    {
        final Set<ProviderRule> without = EnumSet.copyOf(DeviceProfiles.connectx5().providerRules());
        without.remove(ProviderRule.QUEUE_ALLOC_TYPE_FROM_ENV);
        // An mlx5_N device whose profile lacks the rule ignores the variable: the name decides nothing.
        assertThat(createCq("mlx5_0", DeviceProfiles.connectx5().withProviderRules(without), dir)).isEqualTo("created");
        assertThat(createCq("rxe0", DeviceProfiles.rxe(), dir)).isEqualTo("created");
        if (freeHugePages() == 0)
        {
            // No huge page to give: mlx5's alloc_huge_buf fails and HUGE has no fallback.
            assertThat(createCq("mlx5_0", DeviceProfiles.connectx5(), dir)).isEqualTo("errno 12");
            final Set<ProviderRule> with = EnumSet.copyOf(DeviceProfiles.rxe().providerRules());
            with.add(ProviderRule.QUEUE_ALLOC_TYPE_FROM_ENV);
            assertThat(createCq("rxe0", DeviceProfiles.rxe().withProviderRules(with), dir)).isEqualTo("errno 12");
        }
    }
}
