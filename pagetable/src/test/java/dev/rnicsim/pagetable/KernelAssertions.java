package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/**
 * Assertions shared by the example tests: the exact errno of a failed call, and that a failed call changed
 * nothing a user can observe.
 */
final class KernelAssertions
{
    private KernelAssertions()
    {
    }

    /** What a failed call must leave unchanged. */
    record State(long freeFrames, long usedFrames, long pinnedVmPages, long lockedVmPages, List<Vma> vmas,
                 long hugeFree2M, long hugeRsvd2M, long hugeFree1G, long hugeRsvd1G)
    {
        static State of(final UserProcess p)
        {
            final Host h = p.host();
            final PhysicalMemory pm = h.physicalMemory();
            return new State(pm.freeFrames(), pm.usedFrames(), p.pinnedVmPages(), p.lockedVmPages(), p.vmas(),
                h.hugepagesFree(PageSize.SIZE_2M), h.hugepagesReserved(PageSize.SIZE_2M),
                h.hugepagesFree(PageSize.SIZE_1G), h.hugepagesReserved(PageSize.SIZE_1G));
        }
    }

    /** Asserts that {@code call} throws a KernelException with {@code errno}, and returns it. */
    static KernelException assertErrno(final Errno errno, final ThrowingCallable call)
    {
        final Throwable thrown = catchThrowable(call);
        assertThat(thrown).isInstanceOf(KernelException.class);
        final KernelException e = (KernelException)thrown;
        assertThat(e.errno()).as("errno of: %s", e.getMessage()).isEqualTo(errno);
        return e;
    }

    /** Runs a call that must fail with {@code errno} and checks that it changed nothing. */
    static KernelException assertFailsUnchanged(final UserProcess p, final Errno errno, final ThrowingCallable call)
    {
        final State before = State.of(p);
        final KernelException e = assertErrno(errno, call);
        assertThat(State.of(p)).isEqualTo(before);
        return e;
    }

    static byte[] ascii(final String s)
    {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
