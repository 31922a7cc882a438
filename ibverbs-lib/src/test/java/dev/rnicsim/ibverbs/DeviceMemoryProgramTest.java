package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * src/test/c/device_memory.c, compiled against the distribution's {@code <infiniband/verbs.h>} and run on this
 * module's library: ibv_alloc_dm, the copies, ibv_reg_dm_mr and traffic on a DM MR answer as mlx5 and the kernel do
 * on a device with device memory, a second context imported from a dup of cmd_fd sees a DM by its handle
 * (ibv_import_dm), and a device without it (rxe) reports max_dm_size 0 and EOPNOTSUPP.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class DeviceMemoryProgramTest
{
    @TempDir
    Path dir;

    @Test
    void deviceMemoryAnswersAsMlx5AndCarriesTraffic() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/device_memory.c", "device_memory");
        try (Programs p = new Programs(dir, "mlx5_0", DeviceProfiles.connectx5()))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.out()).as(r.both()).doesNotContain("FAIL")
                .contains("max_dm_size " + DeviceProfiles.connectx5().maxDmSizeBytes())
                .contains("ok alloc-bad: comp_mask 1: NULL, EINVAL")
                .contains("ok alloc-bad: a length above max_dm_size: NULL, EINVAL")
                .contains("ok alloc-bad: a length of 0: NULL, EINVAL")
                .contains("ok copy: 64 bytes to offset 8 and back")
                .contains("ok copy-bad: offset 3: EINVAL")
                .contains("ok copy-bad: length 6: EINVAL")
                .contains("ok copy-bad: a range past the end: EFAULT")
                .contains("ok reg-bad: without IBV_ACCESS_ZERO_BASED: NULL, EINVAL")
                .contains("ok reg-bad: with IBV_ACCESS_MW_BIND: NULL, EINVAL")
                .contains("ok reg-bad: a range past the end: NULL, EINVAL")
                .contains("ok reg: a zero-based MR: addr NULL")
                .contains("ok write: IBV_WC_SUCCESS, and ibv_memcpy_from_dm reads the 256 bytes at offset 128")
                .contains("ok read: IBV_WC_SUCCESS, the DM's 512 bytes")
                .contains("ok send: IBV_WC_SUCCESS twice; the bytes are at offset 3072 of the device memory")
                .contains("ok free-busy: ibv_free_dm with an MR over it: EBUSY")
                .contains("ok free-busy: the device memory is still allocated and readable")
                .contains("ok free-busy: ibv_dereg_mr, then ibv_free_dm: 0")
                .contains("ok exhaust: all of max_dm_size; then 4 bytes more: NULL, ENOMEM")
                .contains("ok fork: the child allocated and freed device memory on its parent's context")
                .contains("ok import: 128 bytes written through the DM read back through its imported view")
                .contains("ok import: a handle of no DM: NULL, ENOENT")
                .contains("ok import: after ibv_unimport_dm the DM is still allocated and readable");
            assertThat(r.exitCode()).as(r.both()).isZero();
        }
    }

    @Test
    void aDeviceWithoutDeviceMemoryAnswersEopnotsupp() throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/device_memory.c", "device_memory");
        try (Programs p = new Programs(dir, "rxe0", DeviceProfiles.rxe()))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.out()).as(r.both()).doesNotContain("FAIL").contains("max_dm_size 0")
                .contains("ok caps: no device memory: ibv_alloc_dm NULL, EOPNOTSUPP")
                .contains("ok import: no device memory: ibv_import_dm NULL, EOPNOTSUPP");
            assertThat(r.exitCode()).as(r.both()).isZero();
        }
    }
}
