package dev.rnicsim.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * ibv_resize_cq(3) on every device of the suite: a larger CQ is granted at least the entries asked for (rdma-core
 * tests/test_cq.py {@code test_resize_cq}), a size the device cannot give (0, above max_cqe) is EINVAL and leaves the
 * CQ as it was (the kernel's {@code rxe_cq_chk_attr}, {@code mlx5_ib_resize_cq}), and shrinking an empty CQ is
 * granted. A provider without {@code resize_cq} answers EOPNOTSUPP, and the case skips, as rdma-core's test does.
 */
class CqResizeConformanceTest
{
    static List<String> devices()
    {
        return ConformanceDevices.names();
    }

    private static Errno refused(final Runnable verb)
    {
        final VerbsException e = catchThrowableOfType(VerbsException.class, verb::run);
        assertThat(e).as("the verb fails").isNotNull();
        return e.errnoName();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void shouldGrantTheEntriesAskedForAndRefuseSizesTheDeviceCannotGive(final String name)
    {
        try (Rig rig = Rig.unconnected(name))
        {
            final CompletionQueue cq = rig.cqA;
            try
            {
                cq.resize(200);
            }
            catch (final VerbsException e)
            {
                assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, "Resize CQ is not supported: " + e.getMessage());
                throw e;
            }
            assertThat(cq.cqe()).as("granted at least the 200 entries asked for").isGreaterThanOrEqualTo(200);
            final int granted = cq.cqe();
            assertThat(refused(() -> cq.resize(0))).isEqualTo(Errno.EINVAL);
            assertThat(refused(() -> cq.resize(rig.attributes.maxCqe() + 1))).isEqualTo(Errno.EINVAL);
            assertThat(cq.cqe()).as("a refused resize keeps the size").isEqualTo(granted);
            cq.resize(1);
            assertThat(cq.cqe()).as("an empty CQ shrinks").isBetween(1, granted - 1);
        }
    }
}
