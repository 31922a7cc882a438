package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * src/test/python/pyverbs_extended_cq.py, the distribution's pyverbs on the simulated ConnectX-5: the completion
 * clock of ibv_query_device_ex, ibv_query_rt_values_ex, an extended CQ with completion timestamps, ibv_resize_cq, and a
 * parent domain whose allocator callbacks (Python functions, through pyverbs' C trampolines) serve a QP's buffers and
 * get them back when it is destroyed.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class PyverbsExtendedCqTest
{
    @TempDir
    Path dir;

    @Test
    void pyverbsSeesTheClockResizesACqAndServesAParentDomainsAllocator() throws Exception
    {
        Programs.require("python3", "python3-pyverbs");
        final Path python = Path.of("/usr/bin/python3");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run probe = p.run(false, python.toString(), "-c", "import pyverbs.device");
            if (probe.exitCode() != 0)
            {
                Programs.require("pyverbs-module-of-" + python, "python3-pyverbs");
            }
            final Programs.Run r = p.run(false, python.toString(), "src/test/python/pyverbs_extended_cq.py");
            assertThat(r.exitCode()).as(r.both()).isZero();
            assertThat(r.out()).contains("hca_core_clock 156250 kHz")
                .contains("extended CQ with timestamps: created, empty").contains("resized to 7 entries")
                .contains("parent domain: 2 buffers from the allocator, 2 given back");
        }
    }
}
