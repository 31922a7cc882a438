package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * src/test/c/extended_cq.c on this module's library, per device: on mlx5 completion timestamps from the simulated
 * clock at the profile's hca_core_clock, ibv_query_rt_values_ex, ibv_resize_cq's rules, thread and parent domains
 * whose allocator the library calls for each QP, SRQ and CQ buffer; on rxe the standard extended CQ and resize only,
 * EOPNOTSUPP for the rest, as rxe's provider answers.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class ExtendedCqProgramTest
{
    @TempDir
    Path dir;

    static Stream<Arguments> devices()
    {
        return Stream.of(Arguments.of("mlx5_0", DeviceProfiles.connectx5(), "mlx5"),
            Arguments.of("rxe0", DeviceProfiles.rxe(), "rxe"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void extendedCqVerbsAnswerAsTheDevicesProvider(final String hcaId, final DeviceProfile profile,
        final String driver) throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/extended_cq.c", "extended_cq");
        try (Programs p = new Programs(dir, hcaId, profile))
        {
            final Programs.Run r = p.run(false, exe.toString(), driver);
            assertThat(r.out()).as(r.both()).doesNotContain("FAIL")
                .contains("ok resize: to 3 with 4 completions waiting: EINVAL, 7 entries kept")
                .contains("ok resize: once polled: 7 -> 1 granted")
                .contains("ok resize: 3 -> 1: granted 1");
            if (driver.equals("mlx5"))
            {
                assertThat(r.out()).as(r.both())
                    .contains("ok clock: hca_core_clock 156250 kHz, completion_timestamp_mask 0x7fffffffffffffff")
                    .contains("ok ts: read_completion_ts gives the same times in cycles of hca_core_clock")
                    .contains("ok ts: the wallclock times grow from one completion to the next")
                    .contains("ok legacy: ibv_poll_cq on ibv_cq_ex_to_cq")
                    .contains("ok rt-values: RAW_CLOCK: cycles of hca_core_clock in tv_nsec")
                    .contains("ok td: ibv_dealloc_td while the parent domain holds it: EBUSY")
                    .contains("ok pd-alloc: the allocator gave 2 QP, 1 SRQ, 1 CQ and 4 doorbell buffers")
                    .contains("ok pd-alloc: every buffer freed once, with the pointer the allocator gave")
                    .contains("ok pd-busy: ibv_dealloc_pd of its protection domain: EBUSY")
                    .contains("ok pd-cq: IBV_CQ_INIT_ATTR_MASK_PD naming a plain PD: NULL, EINVAL")
                    .contains("ok pd-nomem: an allocator that gives NULL: ibv_create_qp NULL, ENOMEM");
            }
            else
            {
                assertThat(r.out()).as(r.both())
                    .contains("ok clock: hca_core_clock 0 kHz, completion_timestamp_mask 0x0")
                    .contains("ok ts: completion timestamps on rxe: NULL with EOPNOTSUPP")
                    .contains("ok td: ibv_alloc_td on rxe: NULL with EOPNOTSUPP")
                    .contains("ok pd: ibv_alloc_parent_domain on rxe: NULL with EOPNOTSUPP")
                    .contains("ok rt-values: rxe has no query_rt_values: EOPNOTSUPP");
            }
            assertThat(r.out()).as(r.both()).contains("0 failed");
            assertThat(r.exitCode()).as(r.both()).isZero();
        }
    }
}
