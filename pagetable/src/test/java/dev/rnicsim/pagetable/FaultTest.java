package dev.rnicsim.pagetable;


import dev.rnicsim.pagetable.KernelAssertions.State;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/**
 * CPU access by virtual address: demand paging, fault counts, translation, and the SIGSEGV cases.
 */
class FaultTest
{
    private static final long MIB = 1L << 20;
    private static final long PAGE = PhysicalMemory.FRAME_BYTES;
    private static final long FIXED_BASE = 0x1000_0000L;

    private static UserProcess process(final UnaryOperator<HostConfig.Builder> config)
    {
        return new Host(config.apply(HostConfig.builder().physicalMemoryBytes(256 * MIB)).build()).spawn("app");
    }

    private static UserProcess process()
    {
        return process(c -> c.thpMode(ThpMode.NEVER));
    }

    /** Runs an access that must raise SIGSEGV (errno EFAULT) and checks that it changed nothing. */
    private static SegmentationFault assertSegfaultUnchanged(final UserProcess p, final ThrowingCallable call)
    {
        final State before = State.of(p);
        final Throwable thrown = catchThrowable(call);
        assertThat(thrown).isInstanceOf(SegmentationFault.class);
        final SegmentationFault e = (SegmentationFault)thrown;
        assertThat(e.errno()).isEqualTo(Errno.EFAULT);
        assertThat(State.of(p)).isEqualTo(before);
        return e;
    }

    private static byte[] pattern(final int length, final int seed)
    {
        final byte[] out = new byte[length];
        for (int i = 0; i < length; i++)
        {
            out[i] = (byte)(i * 31 + seed);
        }
        return out;
    }

    // ------------------------------------------------------------------------------------------------ demand paging

    @Test
    void shouldCountOneFaultPerPageOnFirstTouchOnly()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        final long before = p.host().counter(VmEvent.PGFAULT);

        assertThat(p.touch(va, 4 * PAGE, true)).isEqualTo(4);
        assertThat(p.host().counter(VmEvent.PGFAULT)).isEqualTo(before + 4);
        assertThat(p.touch(va, 4 * PAGE, true)).isZero();
        assertThat(p.host().counter(VmEvent.PGFAULT)).isEqualTo(before + 4);
    }

    @Test
    void shouldAllocateAFrameOnlyWhenAPageIsFirstWritten()
    {
        final UserProcess p = process();
        final long free0 = p.host().physicalMemory().freeFrames();
        final long va = p.mmapAnonymous(4 * PAGE);
        assertThat(p.host().physicalMemory().freeFrames()).isEqualTo(free0);

        p.write(va + PAGE + 10, new byte[] {1});

        assertThat(p.host().physicalMemory().freeFrames()).isEqualTo(free0 - 1);
        assertThat(p.translate(va + PAGE)).isNotEqualTo(-1);
        assertThat(p.translate(va)).isEqualTo(-1);
        assertThat(p.translate(va + 2 * PAGE)).isEqualTo(-1);
    }

    @Test
    void shouldMapSharedZeroPageOnReadFaultOfUntouchedAnonymousMemory()
    {
        // mm/memory.c do_anonymous_page: a read fault on private anonymous memory maps the shared zero page
        // (my_zero_pfn) read-only and allocates nothing; the frame is allocated by the first write (wp fault).
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);
        final long free0 = p.host().physicalMemory().freeFrames();

        assertThat(p.read(va, 16)).containsOnly(0);

        assertThat(p.host().physicalMemory().freeFrames()).isEqualTo(free0);
    }

    @Test
    void shouldTakeOneFaultForTwoMibWithThp()
    {
        final UserProcess p = process(c -> c.thpMode(ThpMode.ALWAYS));
        final long va = p.mmapAnonymous(2 * MIB);

        assertThat(p.touch(va, 2 * MIB, true)).isEqualTo(1);
        assertThat(p.mappedPageSize(va + MIB)).isEqualTo(PageSize.SIZE_2M);
        assertThat(p.translate(va + MIB) - p.translate(va)).isEqualTo(MIB);
    }

    @Test
    void shouldReadZerosFromUntouchedMemory()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(4 * PAGE);

        assertThat(p.read(va + 100, 5000)).containsOnly(0);
    }

    @Test
    void shouldReturnEmptyReadAndNoFaultForZeroLength()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(PAGE);

        assertThat(p.read(va, 0)).isEmpty();
        assertThat(p.touch(va, 0, true)).isZero();
        assertThat(p.translate(va)).isEqualTo(-1);
    }

    // ------------------------------------------------------------------------------------------------ translate

    @Test
    void shouldTranslateOnlyPresentPages()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(2 * PAGE);
        p.write(va + 7, new byte[] {1});

        assertThat(p.translate(va + 7) & (PAGE - 1)).isEqualTo(7);
        assertThat(p.translate(va + PAGE)).isEqualTo(-1);
        assertThat(p.translate(FIXED_BASE)).isEqualTo(-1);
        assertThat(p.translate(-1)).isEqualTo(-1);
        assertThat(p.translate(UserProcess.TASK_SIZE)).isEqualTo(-1);
        assertThat(p.mappedPageSize(va + PAGE)).isNull();
        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_4K);
    }

    // ------------------------------------------------------------------------------------------------ across pages

    @Test
    void shouldReadBackBytesWrittenAcrossPageBoundaries()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(5 * PAGE);
        final byte[] data = pattern(10000, 3);
        final long start = va + 4000;

        p.write(start, data);

        assertThat(p.read(start, data.length)).isEqualTo(data);
        // The bytes span pages 0 to 3, each frame holding its own slice.
        final PhysicalMemory pm = p.host().physicalMemory();
        long cursor = start;
        int done = 0;
        while (done < data.length)
        {
            final int chunk = (int)Math.min(data.length - done, PAGE - (cursor & (PAGE - 1)));
            final byte[] slice = new byte[chunk];
            pm.read(p.translate(cursor), slice, 0, chunk);
            assertThat(slice).isEqualTo(Arrays.copyOfRange(data, done, done + chunk));
            done += chunk;
            cursor += chunk;
        }
        assertThat(p.translate(va + 4 * PAGE)).isEqualTo(-1);
    }

    @Test
    void shouldReadBackBytesWrittenAcrossTwoMibBoundaryOfThps()
    {
        final UserProcess p = process(c -> c.thpMode(ThpMode.ALWAYS));
        final long va = p.mmapAnonymous(4 * MIB);
        final byte[] data = pattern(3 * (int)PAGE, 9);

        p.write(va + 2 * MIB - PAGE - 5, data);

        assertThat(p.read(va + 2 * MIB - PAGE - 5, data.length)).isEqualTo(data);
        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_2M);
        assertThat(p.mappedPageSize(va + 2 * MIB)).isEqualTo(PageSize.SIZE_2M);
    }

    @Test
    void shouldReadAndWriteAcrossAdjacentVmas()
    {
        final UserProcess p = process();
        final long va = p.mmap(FIXED_BASE, 2 * PAGE, Prot.READ_WRITE,
            EnumSet.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.FIXED));
        p.madvise(va + PAGE, PAGE, Madvice.DONTFORK);
        assertThat(p.vmaCount()).isEqualTo(2);
        final byte[] data = pattern(100, 1);

        p.write(va + PAGE - 50, data);

        assertThat(p.read(va + PAGE - 50, 100)).isEqualTo(data);
    }

    // ------------------------------------------------------------------------------------------------ SIGSEGV

    @Test
    void shouldRaiseSegmentationFaultWithEfaultOnReadOfUnmappedAddress()
    {
        final UserProcess p = process();
        p.mmapAnonymous(PAGE);

        final SegmentationFault e = assertSegfaultUnchanged(p, () -> p.read(FIXED_BASE + 123, 4));

        assertThat(e.faultAddress()).isEqualTo(FIXED_BASE + 123);
    }

    @Test
    void shouldRaiseSegmentationFaultWithEfaultOnWriteToUnmappedAddress()
    {
        final UserProcess p = process();

        final SegmentationFault e = assertSegfaultUnchanged(p, () -> p.write(FIXED_BASE, new byte[] {1}));

        assertThat(e.faultAddress()).isEqualTo(FIXED_BASE);
    }

    @Test
    void shouldRaiseSegmentationFaultOnWriteToReadOnlyMappingWithoutAllocating()
    {
        final UserProcess p = process();
        final long va = p.mmap(0, 2 * PAGE, Set.of(Prot.READ), EnumSet.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS));

        final SegmentationFault e = assertSegfaultUnchanged(p, () -> p.write(va + 10, new byte[] {1}));

        assertThat(e.faultAddress()).isEqualTo(va + 10);
        assertThat(p.translate(va)).isEqualTo(-1);
        assertSegfaultUnchanged(p, () -> p.touch(va, PAGE, true));
    }

    @Test
    void shouldRaiseSegmentationFaultOnReadOfProtNoneMapping()
    {
        final UserProcess p = process();
        final long va = p.mmap(0, PAGE, Set.of(), EnumSet.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS));

        assertSegfaultUnchanged(p, () -> p.read(va, 1));
        assertSegfaultUnchanged(p, () -> p.touch(va, 1, false));
    }

    @Test
    void shouldWriteNothingWhenAWriteRunsIntoAnUnmappedPage()
    {
        final UserProcess p = process();
        final long va = p.mmap(FIXED_BASE, 2 * PAGE, Prot.READ_WRITE,
            EnumSet.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.FIXED));

        final SegmentationFault e = assertSegfaultUnchanged(p,
            () -> p.write(va + 2 * PAGE - 10, new byte[20]));

        assertThat(e.faultAddress()).isEqualTo(va + 2 * PAGE);
        assertThat(p.translate(va + PAGE)).isEqualTo(-1);
    }

    @Test
    void shouldRaiseSegmentationFaultForAccessLeavingUserSpace()
    {
        final UserProcess p = process();

        assertSegfaultUnchanged(p, () -> p.read(UserProcess.TASK_SIZE - 2, 4));
        assertSegfaultUnchanged(p, () -> p.read(-8, 4));
    }

    @Test
    void shouldRaiseSegmentationFaultAfterMunmap()
    {
        final UserProcess p = process();
        final long va = p.mmapAnonymous(PAGE);
        p.write(va, new byte[] {1});
        p.munmap(va, PAGE);

        assertSegfaultUnchanged(p, () -> p.read(va, 1));
        assertThat(p.translate(va)).isEqualTo(-1);
    }
}
