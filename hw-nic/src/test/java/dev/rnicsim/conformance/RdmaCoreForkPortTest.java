package dev.rnicsim.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.ForkStatus;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.VerbsException;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * rdma-core's tests/test_fork.py ({@code ForkAPITest.test_is_fork_initialized}) on every device of the suite:
 * {@code ibv_fork_init} either succeeds, after which {@code ibv_is_fork_initialized} answers ENABLED or UNNEEDED, or
 * fails with EINVAL, which libibverbs answers only when memory was registered before fork support was asked for,
 * after which it answers DISABLED or UNNEEDED (UNNEEDED on a kernel that copies DMA-pinned pages at fork, Linux 5.13
 * and later; libibverbs {@code ibv_fork_init} and {@code ibv_is_fork_initialized}, libibverbs/memory.c).
 * Upstream's outcome depends on the tests run before it in the same process; here both orders run: in a process
 * that has registered nothing yet and in one that has. On the simulator each context is a process of its own; on
 * rdma-core the process is this JVM, where earlier cases registered memory, so either branch may come.
 */
class RdmaCoreForkPortTest
{
    static List<String> devices()
    {
        return ConformanceDevices.names();
    }

    /** ibv_fork_init, then the status upstream's assertion allows for its outcome. */
    private static void forkInitAndCheckTheStatus(final Context ctx, final boolean registeredBefore)
    {
        List<ForkStatus> expected;
        try
        {
            ctx.forkInit();
            expected = List.of(ForkStatus.ENABLED, ForkStatus.UNNEEDED);
        }
        catch (final VerbsException e)
        {
            assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, "the backend has no ibv_fork_init: " + e.getMessage());
            assertThat(e.errnoName()).as(e.getMessage()).isEqualTo(Errno.EINVAL);
            assertThat(registeredBefore).as("EINVAL only after a registration: " + e.getMessage()).isTrue();
            expected = List.of(ForkStatus.DISABLED, ForkStatus.UNNEEDED);
        }
        assertThat(ctx.forkStatus()).as("ibv_is_fork_initialized").isIn(expected);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void shouldTurnForkSupportOnBeforeAnyRegistrationAndReportIt(final String name)
    {
        try (Context ctx = ConformanceDevices.device(name).open())
        {
            final boolean rdmaCore = !name.startsWith("sim:");
            forkInitAndCheckTheStatus(ctx, rdmaCore);
            forkInitAndCheckTheStatus(ctx, rdmaCore); // a second call changes nothing
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void shouldRefuseForkSupportAfterARegistrationWithEinvalUnlessTheKernelCopiesPinnedPages(final String name)
    {
        try (Context ctx = ConformanceDevices.device(name).open())
        {
            final long buf = ctx.memory().allocate(Rig.PAGE, Backing.BASE_PAGES);
            final MemoryRegion mr = ctx.allocPd().regMr(buf, Rig.PAGE, Rig.LOCAL);
            forkInitAndCheckTheStatus(ctx, true);
            mr.close();
            ctx.memory().free(buf, Rig.PAGE);
        }
    }
}
