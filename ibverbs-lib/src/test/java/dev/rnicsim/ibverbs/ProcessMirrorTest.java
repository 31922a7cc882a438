package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.pagetable.Errno;
import dev.rnicsim.pagetable.Host;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.UserProcess;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link ProcessMirror}: a range at or above TASK_SIZE is not mirrored (nothing maps there), so the model's pin answers
 * EFAULT as pin_user_pages_fast's {@code access_ok} does under ib_umem_get; a range that wraps past 2^64 stays EINVAL.
 */
class ProcessMirrorTest
{
    @ParameterizedTest
    @CsvSource({"ffff888000000000, 4096, EFAULT", "7ffffffff000, 4096, EFAULT", "800000000000, 4096, EFAULT",
        "7fffffffe000, 8192, EFAULT", "fffffffffffff000, 8192, EINVAL"})
    void aRangeOutsideUserSpaceIsNotMirroredAndThePinAnswersAsTheKernel(final String addrHex, final long length,
        final Errno expected)
    {
        final UserProcess process = new Host(HostConfig.builder().physicalMemoryBytes(256L << 20).build())
            .spawn("p");
        final long addr = Long.parseUnsignedLong(addrHex, 16);
        ProcessMirror.mirror(process, (int)ProcessHandle.current().pid(), addr, length);

        final KernelException e = catchThrowableOfType(KernelException.class,
            () -> process.pinUserPages(addr, length, true, true));
        assertThat(e).isNotNull();
        assertThat(e.errno()).isEqualTo(expected);
    }
}
