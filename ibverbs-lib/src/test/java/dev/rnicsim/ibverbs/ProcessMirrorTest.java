package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.pagetable.Errno;
import dev.rnicsim.pagetable.Host;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.UserProcess;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import org.junit.jupiter.api.Test;
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

    @Test
    void aMapNoreserveMappingOfTheRealProcessIsNotAccountedByTheTwinsHost() throws Throwable
    {
        // 1 GiB with MAP_NORESERVE in this JVM, mirrored into a twin on a host of 256 MiB: its overcommit check
        // (vm.overcommit_memory=0) must not account it, as the real kernel did not (mm/mmap.c accountable_mapping)
        final Linker linker = Linker.nativeLinker();
        final MethodHandle mmap = linker.downcallHandle(linker.defaultLookup().find("mmap").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT,
                ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
        final MethodHandle munmap = linker.downcallHandle(linker.defaultLookup().find("munmap").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
        final long length = 1L << 30;
        final int protReadWrite = 0x3;
        final int privateAnonymousNoreserve = 0x02 | 0x20 | 0x4000;
        final MemorySegment at = (MemorySegment) mmap.invoke(MemorySegment.NULL, length, protReadWrite,
            privateAnonymousNoreserve, -1, 0L);
        try
        {
            final UserProcess process = new Host(HostConfig.builder().physicalMemoryBytes(256L << 20).build())
                .spawn("p");
            ProcessMirror.mirror(process, (int)ProcessHandle.current().pid(), at.address(), length);
            assertThat(process.vmaAt(at.address())).isNotNull();
        }
        finally
        {
            munmap.invoke(at, length);
        }
    }
}
