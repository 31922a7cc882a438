package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * vm.overcommit_memory: mode 0's heuristic (mm/util.c {@code __vm_enough_memory}, OVERCOMMIT_GUESS since Linux 5.2:
 * a single accountable mapping larger than total RAM + swap is ENOMEM) on private writable mappings only
 * ({@code accountable_mapping} in mm/mmap.c); mode 1 grants everything; mode 2 is refused as not modelled.
 */
class OvercommitTest
{
    private static final long MIB = 1L << 20;

    private static UserProcess process(final int mode, final long swapBytes)
    {
        return new Host(HostConfig.builder().physicalMemoryBytes(256 * MIB).swapBytes(swapBytes)
            .overcommitMemory(mode).build()).spawn("app");
    }

    @Test
    void shouldRefuseAWritableMappingLargerThanRamPlusSwapAndChangeNothing()
    {
        final UserProcess p = process(0, 64 * MIB);
        final long vmasBefore = p.vmaCount();
        final KernelException e = catchThrowableOfType(KernelException.class, () -> p.mmapAnonymous(1L << 40));
        assertThat(e.errno()).isEqualTo(Errno.ENOMEM);
        assertThat(e.detail()).contains("larger than total RAM + swap").contains("__vm_enough_memory")
            .contains("vm.overcommit_memory=1");
        assertThat(p.vmaCount()).isEqualTo(vmasBefore);
        // RAM + swap exactly is granted; one page more is not.
        p.mmapAnonymous(320 * MIB);
        assertThat(catchThrowableOfType(KernelException.class, () -> p.mmapAnonymous(320 * MIB + 4096)).errno())
            .isEqualTo(Errno.ENOMEM);
    }

    @Test
    void shouldGrantReadOnlyMappingsAndEverythingWithModeOne()
    {
        final UserProcess p = process(0, 0);
        assertThat(p.mmap(0, 1L << 40, Set.of(Prot.READ), Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS)))
            .as("a read-only private mapping is not accountable").isPositive();
        assertThat(process(1, 0).mmapAnonymous(1L << 40)).as("OVERCOMMIT_ALWAYS").isPositive();
    }

    @Test
    void shouldGrantAMapNoreserveMappingLargerThanRamPlusSwapAndPinWhatRamHolds()
    {
        // mm/mmap.c: MAP_NORESERVE sets VM_NORESERVE in mode 0, and accountable_mapping is then false
        final UserProcess p = new Host(HostConfig.builder().physicalMemoryBytes(256 * MIB).swapBytes(0).build())
            .spawn("app").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        final long a = p.mmap(0, 17000 * MIB, Prot.READ_WRITE, Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS,
            MapFlag.NORESERVE));
        assertThat(a).isPositive();
        final PinnedPages pinned = p.pinUserPages(a, 64 * MIB, true, true);
        assertThat(pinned.lengthBytes()).isEqualTo(64 * MIB);
        p.unpinUserPages(pinned);
        assertThat(catchThrowableOfType(KernelException.class, () -> p.pinUserPages(a, 512 * MIB, true, true))
            .errno()).as("the pages themselves still need RAM").isEqualTo(Errno.ENOMEM);
    }

    @Test
    void shouldRefuseModeTwoAsNotModelled()
    {
        final KernelException e = catchThrowableOfType(KernelException.class,
            () -> HostConfig.builder().overcommitMemory(2).build());
        assertThat(e.errno()).isEqualTo(Errno.EINVAL);
        assertThat(e.detail()).contains("vm.overcommit_memory=2 is not modelled");
    }
}
