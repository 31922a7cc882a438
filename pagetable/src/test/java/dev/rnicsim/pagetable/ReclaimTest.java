package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.charset.StandardCharsets;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.Test;

/**
 * Reclaim (swap-out under pressure, swap-in on fault) and compaction, and what they must never touch: pinned and
 * mlocked pages.
 */
class ReclaimTest
{
    private static final long MIB = 1L << 20;
    private static final long PAGE = PhysicalMemory.FRAME_BYTES;

    private static Host host(final UnaryOperator<HostConfig.Builder> config)
    {
        return new Host(config.apply(HostConfig.builder().physicalMemoryBytes(256 * MIB).swapBytes(64 * MIB)
            .thpMode(ThpMode.NEVER)).build());
    }

    private static UserProcess process(final UnaryOperator<HostConfig.Builder> config)
    {
        return host(config).spawn("app").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
    }

    private static UserProcess process()
    {
        return process(c -> c);
    }

    private static byte[] tag(final int i)
    {
        return ("page-" + i).getBytes(StandardCharsets.US_ASCII);
    }

    private static void writeTags(final UserProcess p, final long va, final int pages)
    {
        for (int i = 0; i < pages; i++)
        {
            p.write(va + i * PAGE, tag(i));
        }
    }

    private static void assertTags(final UserProcess p, final long va, final int pages)
    {
        for (int i = 0; i < pages; i++)
        {
            assertThat(p.read(va + i * PAGE, tag(i).length)).as("page %d", i).isEqualTo(tag(i));
        }
    }

    // ------------------------------------------------------------------------------------------------ swap-out

    @Test
    void shouldSwapOutUnpinnedPagesOnReclaim()
    {
        final UserProcess p = process();
        final Host host = p.host();
        final long va = p.mmapAnonymous(16 * PAGE);
        writeTags(p, va, 16);
        final long free = host.physicalMemory().freeFrames();

        final long freed = host.reclaim(16);

        assertThat(freed).isEqualTo(16);
        assertThat(host.counter(VmEvent.PSWPOUT)).isEqualTo(16);
        assertThat(host.physicalMemory().freeFrames()).isEqualTo(free + 16);
        for (int i = 0; i < 16; i++)
        {
            assertThat(p.translate(va + i * PAGE)).isEqualTo(-1);
        }
        assertThat(p.vmaAt(va)).isNotNull();
    }

    @Test
    void shouldKeepDataAcrossSwapOutAndSwapIn()
    {
        final UserProcess p = process();
        final Host host = p.host();
        final long va = p.mmapAnonymous(16 * PAGE);
        writeTags(p, va, 16);
        host.reclaim(16);
        final long majorBefore = host.counter(VmEvent.PGMAJFAULT);

        assertTags(p, va, 16);

        assertThat(host.counter(VmEvent.PSWPIN)).isEqualTo(16);
        assertThat(host.counter(VmEvent.PGMAJFAULT)).isEqualTo(majorBefore + 16);
        assertThat(p.translate(va)).isNotEqualTo(-1);
    }

    @Test
    void shouldShareSwapEntriesWithAForkedChild()
    {
        // mm/swapfile.c swap_duplicate: after fork both processes hold the swap entry; each swap-in gets the data.
        final UserProcess parent = process();
        final Host host = parent.host();
        final long va = parent.mmapAnonymous(4 * PAGE);
        writeTags(parent, va, 4);
        assertThat(host.reclaim(4)).isEqualTo(4);
        final UserProcess child = parent.fork("child");

        assertTags(parent, va, 4);
        assertTags(child, va, 4);

        assertThat(host.counter(VmEvent.PSWPIN)).isEqualTo(8);
        assertThat(child.translate(va)).isNotEqualTo(parent.translate(va));
    }

    @Test
    void shouldNeverReclaimPinnedPages()
    {
        final UserProcess p = process();
        final Host host = p.host();
        final long va = p.mmapAnonymous(16 * PAGE);
        writeTags(p, va, 16);
        final PinnedPages pin = p.pinUserPages(va, 4 * PAGE, true, true);
        final long[] pinnedPhys = new long[4];
        for (int i = 0; i < 4; i++)
        {
            pinnedPhys[i] = p.translate(va + i * PAGE);
        }

        final long freed = host.reclaim(1000);

        assertThat(freed).isEqualTo(12);
        assertThat(host.counter(VmEvent.PSWPOUT)).isEqualTo(12);
        for (int i = 0; i < 4; i++)
        {
            assertThat(p.translate(va + i * PAGE)).isEqualTo(pinnedPhys[i]);
        }
        for (int i = 4; i < 16; i++)
        {
            assertThat(p.translate(va + i * PAGE)).isEqualTo(-1);
        }
        assertTags(p, va, 16);
        p.unpinUserPages(pin);
    }

    @Test
    void shouldNotReclaimMlockedPages()
    {
        final UserProcess p = process();
        final Host host = p.host();
        final long va = p.mmapAnonymous(16 * PAGE);
        writeTags(p, va, 16);
        p.mlock(va, 8 * PAGE);

        final long freed = host.reclaim(1000);

        assertThat(freed).isEqualTo(8);
        for (int i = 0; i < 8; i++)
        {
            assertThat(p.translate(va + i * PAGE)).isNotEqualTo(-1);
        }
    }

    @Test
    void shouldNotReclaimAnMlockedPageInsideAThp()
    {
        // mm/vma.c __split_vma splits the PMD at the new VMA edges (vma_adjust_trans_huge), and mm/rmap.c
        // try_to_unmap_one aborts on a VM_LOCKED VMA, so the mlocked 4 KiB page stays resident.
        final UserProcess p = process(c -> c.thpMode(ThpMode.ALWAYS));
        final Host host = p.host();
        final long va = p.mmapAnonymous(2 * MIB);
        p.write(va + PAGE, tag(1));
        p.mlock(va + PAGE, PAGE);
        final long locked = p.translate(va + PAGE);

        host.reclaim(1000);

        assertThat(p.translate(va + PAGE)).isEqualTo(locked);
    }

    @Test
    void shouldReclaimNothingWithoutSwap()
    {
        final UserProcess p = process(c -> c.swapBytes(0));
        final Host host = p.host();
        final long va = p.mmapAnonymous(16 * PAGE);
        writeTags(p, va, 16);
        final long free = host.physicalMemory().freeFrames();
        final long phys = p.translate(va);

        assertThat(host.reclaim(1000)).isZero();

        assertThat(host.physicalMemory().freeFrames()).isEqualTo(free);
        assertThat(host.counter(VmEvent.PSWPOUT)).isZero();
        assertThat(p.translate(va)).isEqualTo(phys);
    }

    @Test
    void shouldLeaveThpsIntactWhenReclaimHasNoSwap()
    {
        // With no swap, anonymous LRUs are not scanned at all (mm/vmscan.c can_reclaim_anon_pages() is false when
        // get_nr_swap_pages() <= 0), so nothing is split for a swap-out that cannot happen.
        final UserProcess p = process(c -> c.swapBytes(0).thpMode(ThpMode.ALWAYS));
        final Host host = p.host();
        final long va = p.mmapAnonymous(2 * MIB);
        p.touch(va, 2 * MIB, true);

        assertThat(host.reclaim(1000)).isZero();

        assertThat(p.mappedPageSize(va)).isEqualTo(PageSize.SIZE_2M);
        assertThat(host.counter(VmEvent.THP_SPLIT_PMD)).isZero();
        assertThat(host.counter(VmEvent.THP_SPLIT_PAGE)).isZero();
    }

    @Test
    void shouldSplitAThpToSwapItOut()
    {
        final UserProcess p = process(c -> c.thpMode(ThpMode.ALWAYS));
        final Host host = p.host();
        final long va = p.mmapAnonymous(2 * MIB);
        p.write(va + MIB, tag(7));

        final long freed = host.reclaim(1000);

        assertThat(freed).isEqualTo(512);
        assertThat(host.counter(VmEvent.THP_SPLIT_PAGE)).isEqualTo(1);
        assertThat(p.read(va + MIB, tag(7).length)).isEqualTo(tag(7));
    }

    // ------------------------------------------------------------------------------------------------ overcommit

    @Test
    void shouldTouchMoreThanRamWhenSwapIsConfigured()
    {
        final Host host = new Host(HostConfig.builder().physicalMemoryBytes(64 * MIB).swapBytes(128 * MIB)
            .thpMode(ThpMode.NEVER).build());
        final UserProcess p = host.spawn("big");
        final long length = 128 * MIB;
        final long va = p.mmapAnonymous(length);
        final int pages = (int)(length / PAGE);
        for (int i = 0; i < pages; i += 64)
        {
            p.write(va + i * PAGE, tag(i));
        }

        p.touch(va, length, true);

        assertThat(host.counter(VmEvent.PSWPOUT)).isGreaterThanOrEqualTo(pages - host.physicalMemory().totalFrames());
        for (int i = 0; i < pages; i += 64)
        {
            assertThat(p.read(va + i * PAGE, tag(i).length)).as("page %d", i).isEqualTo(tag(i));
        }
        assertThat(host.counter(VmEvent.PSWPIN)).isPositive();
    }

    @Test
    void shouldFailWithEnomemWhenTouchingMoreThanRamWithoutSwap()
    {
        // Linux would invoke the OOM killer; the model reports ENOMEM instead. Documented (UserProcess.touch): the
        // pages faulted in before memory ran out stay mapped, as after a CPU loop that was killed, so this failure
        // does change the host. munmap gives everything back.
        final Host host = new Host(HostConfig.builder().physicalMemoryBytes(64 * MIB).thpMode(ThpMode.NEVER)
            .overcommitMemory(1).build());
        final PhysicalMemory pm = host.physicalMemory();
        final UserProcess p = host.spawn("big");
        final long va = p.mmapAnonymous(128 * MIB);

        final Throwable thrown = catchThrowable(() -> p.touch(va, 128 * MIB, true));

        assertThat(thrown).isInstanceOf(KernelException.class).isNotInstanceOf(SegmentationFault.class);
        assertThat(((KernelException)thrown).errno()).isEqualTo(Errno.ENOMEM);
        assertThat(pm.freeFrames()).isZero();
        assertThat(p.translate(va)).isNotEqualTo(-1);
        assertThat(p.translate(va + 127 * MIB)).isEqualTo(-1);
        assertThat(p.vmaAt(va).lengthBytes()).isEqualTo(128 * MIB);
        p.munmap(va, 128 * MIB);
        assertThat(pm.freeFrames()).isEqualTo(pm.totalFrames());
    }

    @Test
    void shouldFailWithEnomemWhenOnlyPinnedPagesAreLeft()
    {
        final Host host = new Host(HostConfig.builder().physicalMemoryBytes(64 * MIB).swapBytes(64 * MIB)
            .thpMode(ThpMode.NEVER).build());
        final UserProcess p = host.spawn("pinner").capIpcLock(true);
        final long all = 64 * MIB;
        final long va = p.mmapAnonymous(all + PAGE);
        p.pinUserPages(va, all, true, true);

        final Throwable thrown = catchThrowable(() -> p.touch(va + all, PAGE, true));

        assertThat(thrown).isInstanceOf(KernelException.class);
        assertThat(((KernelException)thrown).errno()).isEqualTo(Errno.ENOMEM);
        assertThat(host.counter(VmEvent.PSWPOUT)).isZero();
        assertThat(p.translate(va + all)).isEqualTo(-1);
    }

    // ------------------------------------------------------------------------------------------------ compaction

    @Test
    void shouldMigrateUnpinnedPagesOnCompactionKeepingTheData()
    {
        final UserProcess p = process();
        final Host host = p.host();
        final long va = p.mmapAnonymous(8 * PAGE);
        writeTags(p, va, 8);
        final long[] before = new long[8];
        for (int i = 0; i < 8; i++)
        {
            before[i] = p.translate(va + i * PAGE);
        }
        final long free = host.physicalMemory().freeFrames();

        final long migrated = host.compact();

        assertThat(migrated).isEqualTo(8);
        assertThat(host.counter(VmEvent.PGMIGRATE_SUCCESS)).isEqualTo(8);
        for (int i = 0; i < 8; i++)
        {
            assertThat(p.translate(va + i * PAGE)).isGreaterThan(before[i]);
            assertThat(host.physicalMemory().isAllocated(before[i] >>> 12)).isFalse();
        }
        assertTags(p, va, 8);
        assertThat(host.physicalMemory().freeFrames()).isEqualTo(free);
    }

    @Test
    void shouldNotMigratePinnedPagesOnCompaction()
    {
        final UserProcess p = process();
        final Host host = p.host();
        final long va = p.mmapAnonymous(8 * PAGE);
        writeTags(p, va, 8);
        final PinnedPages pin2 = p.pinUserPages(va + 2 * PAGE, PAGE, true, true);
        final PinnedPages pin5 = p.pinUserPages(va + 5 * PAGE, PAGE, true, true);
        final long phys2 = p.translate(va + 2 * PAGE);
        final long phys5 = p.translate(va + 5 * PAGE);

        final long migrated = host.compact();

        assertThat(migrated).isEqualTo(6);
        assertThat(host.counter(VmEvent.COMPACT_PINNED_SKIPPED)).isEqualTo(2);
        assertThat(p.translate(va + 2 * PAGE)).isEqualTo(phys2);
        assertThat(p.translate(va + 5 * PAGE)).isEqualTo(phys5);
        assertThat(pin2.runs().get(0).physAddr()).isEqualTo(phys2);
        assertThat(pin5.runs().get(0).physAddr()).isEqualTo(phys5);
        assertTags(p, va, 8);
    }

    @Test
    void shouldCoalesceFreeMemoryByCompaction()
    {
        final UserProcess p = process();
        final Host host = p.host();
        final long va = p.mmapAnonymous(64 * PAGE);
        p.touch(va, 64 * PAGE, true);
        for (int i = 0; i < 64; i += 2)
        {
            p.munmap(va + i * PAGE, PAGE);
        }
        final int smallBlocksBefore = host.physicalMemory().buddyInfo(Zone.NORMAL).get(0);

        host.compact();

        assertThat(host.physicalMemory().buddyInfo(Zone.NORMAL).get(0)).isLessThan(smallBlocksBefore);
    }
}
