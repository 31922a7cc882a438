package dev.rnicsim.hwnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Native host memory: mmap through java.lang.foreign, page aligned, zeroed, read and written through
 * MemorySegments, munmap on free; addresses outside its mappings refused instead of touched; huge pages asked for
 * and refused cleanly when the pool is empty; the memlock limit read with getrlimit.
 */
class NativeHostMemoryTest
{
    private static final int PAGE = 4096;

    private final NativeHostMemory memory = new NativeHostMemory();

    @Test
    void shouldMapZeroedPageAlignedMemoryThatReadsBackWhatWasWritten()
    {
        final long a = memory.allocate(10_000, Backing.BASE_PAGES);

        assertThat(a % PAGE).isZero();
        assertThat(memory.mappedBytes()).isEqualTo(3 * PAGE);
        assertThat(memory.read(a, 3 * PAGE)).isEqualTo(new byte[3 * PAGE]);
        memory.write(a + 4090, "hello rdma".getBytes());
        assertThat(new String(memory.read(a + 4090, 10))).isEqualTo("hello rdma");
        memory.writeLong(a + 64, 0x1122_3344_5566_7788L);
        assertThat(memory.readLong(a + 64)).isEqualTo(0x1122_3344_5566_7788L);
        assertThat(memory.segment(a, 3 * PAGE).byteSize()).isEqualTo(3 * PAGE);
        memory.free(a, 10_000);
        assertThat(memory.mappedBytes()).isZero();
    }

    @Test
    void shouldRefuseWithEfaultToTouchMemoryItDidNotMap()
    {
        final long a = memory.allocate(PAGE, Backing.BASE_PAGES);

        assertThat(catchThrowableOfType(VerbsException.class, () -> memory.read(a + PAGE - 2, 4)).errno())
            .isEqualTo(Errno.EFAULT.code());
        assertThat(catchThrowableOfType(VerbsException.class, () -> memory.write(12345, new byte[1])).errno())
            .isEqualTo(Errno.EFAULT.code());
        memory.free(a, PAGE);
        assertThat(catchThrowableOfType(VerbsException.class, () -> memory.read(a, 1)).errno())
            .as("after munmap").isEqualTo(Errno.EFAULT.code());
    }

    @Test
    void shouldUnmapPartOfAMappingAndKeepTheRest()
    {
        final long a = memory.allocate(3 * PAGE, Backing.BASE_PAGES);
        memory.write(a + 2 * PAGE, new byte[] {7});
        final List<long[]> unmapped = new ArrayList<>();
        memory.onUnmap((address, length) -> unmapped.add(new long[] {address, length}));

        memory.free(a + PAGE, 1);

        assertThat(unmapped).containsExactly(new long[] {a + PAGE, PAGE});
        assertThat(memory.read(a + 2 * PAGE, 1)).containsExactly(7);
        assertThat(memory.read(a, PAGE)).hasSize(PAGE);
        assertThat(catchThrowableOfType(VerbsException.class, () -> memory.read(a + PAGE, 1)).errno())
            .isEqualTo(Errno.EFAULT.code());
        assertThat(memory.mappedBytes()).isEqualTo(2 * PAGE);
        memory.free(a, PAGE);
        memory.free(a + 2 * PAGE, PAGE);
        assertThat(memory.mappedBytes()).isZero();
    }

    @Test
    void shouldRefuseWithEinvalToFreeWhatItDidNotMapOrAnUnalignedOrOverlongRange()
    {
        final long a = memory.allocate(PAGE, Backing.BASE_PAGES);

        assertThat(catchThrowableOfType(VerbsException.class, () -> memory.free(a + 1, PAGE)).errno())
            .isEqualTo(Errno.EINVAL.code());
        assertThat(catchThrowableOfType(VerbsException.class, () -> memory.free(a, 2 * PAGE)).errno())
            .isEqualTo(Errno.EINVAL.code());
        assertThat(catchThrowableOfType(VerbsException.class, () -> memory.free(0x1000, PAGE)).errno())
            .isEqualTo(Errno.EINVAL.code());
        assertThat(catchThrowableOfType(VerbsException.class, () -> memory.allocate(0, Backing.BASE_PAGES)).errno())
            .isEqualTo(Errno.EINVAL.code());
        assertThat(memory.read(a, 1)).hasSize(1);
        memory.free(a, PAGE);
    }

    @Test
    void shouldAlignTransparentHugePagesTo2MiB()
    {
        final long a = memory.allocate(3 << 20, Backing.TRANSPARENT_HUGE_PAGES);

        assertThat(a % NativeHostMemory.HUGE_2M).isZero();
        memory.write(a + (3 << 20) - 1, new byte[] {1});
        memory.free(a, 3 << 20);
    }

    @Test
    void shouldMapHugetlbPagesOrFailWithEnomemNamingThePool() throws IOException
    {
        final Path free = Path.of("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages");
        final long freePages = Files.exists(free) ? Long.parseLong(Files.readString(free).strip()) : 0;

        if (freePages == 0)
        {
            final VerbsException e = catchThrowableOfType(VerbsException.class,
                () -> memory.allocate(100, Backing.HUGETLB_2M));
            assertThat(e.verb()).isEqualTo("mmap");
            assertThat(e.errno()).isEqualTo(Errno.ENOMEM.code());
            assertThat(e.getMessage()).contains("2 MiB", "vm.nr_hugepages");
            assertThat(memory.mappedBytes()).isZero();
        }
        else
        {
            final long a = memory.allocate(100, Backing.HUGETLB_2M);
            assertThat(a % NativeHostMemory.HUGE_2M).isZero();
            memory.write(a + 100, new byte[] {1});
            memory.free(a, 100);
        }
    }

    @Test
    void shouldReadTheMemlockLimitWithGetrlimitAsProcSelfLimitsShowsIt() throws IOException
    {
        final long[] limit = Libc.memlockLimitBytes();
        String line = null;
        for (final String l : Files.readAllLines(Path.of("/proc/self/limits")))
        {
            if (l.startsWith("Max locked memory"))
            {
                line = l;
            }
        }
        assertThat(line).isNotNull();
        final String[] f = line.substring("Max locked memory".length()).trim().split("\\s+");

        assertThat(limit).hasSize(2);
        assertThat(limit[0]).isEqualTo(f[0].equals("unlimited") ? Libc.RLIM_INFINITY : Long.parseLong(f[0]));
        assertThat(limit[1]).isEqualTo(f[1].equals("unlimited") ? Libc.RLIM_INFINITY : Long.parseLong(f[1]));
        assertThat(Diagnosis.memlock()).contains("RLIMIT_MEMLOCK=" + Libc.describeLimit(limit[0]), "ulimit -l");
    }
}
