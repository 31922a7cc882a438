package dev.rnicsim.pagetable;

import static dev.rnicsim.pagetable.KernelAssertions.assertErrno;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;

import org.junit.jupiter.api.Test;

/**
 * Read pins (FOLL_PIN without FOLL_WRITE) of a THP shared with a forked child, on a MODERN kernel: the pin unshares
 * every page the child still maps (gup_must_unshare judges a PMD-mapped THP as a whole), so the pinned page stays
 * the one the pinning process maps across its own writes, compaction and reclaim.
 */
class PinAcrossForkCompactReclaimTest
{
    private static final long PAGE = PhysicalMemory.FRAME_BYTES;
    private static final long HUGE = PageSize.SIZE_2M.bytes();
    private static final Set<MapFlag> ANON = Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS);

    private static byte[] pattern(final int s, final int n)
    {
        final byte[] out = new byte[n];
        for (int i = 0; i < n; i++)
        {
            out[i] = (byte)(s * 131 + i);
        }
        return out;
    }

    private static Host modernThpHost()
    {
        return new Host(HostConfig.builder().physicalMemoryBytes(64L << 20).movableZoneBytes(16L << 20)
            .swapBytes(64L << 20).hugepages2M(4).thpMode(ThpMode.ALWAYS).forkBehaviour(ForkBehaviour.MODERN).build());
    }

    /**
     * The child's write splits its own PMD and copies the first page; the parent's read pin starting at that page
     * must still unshare the later pages the child maps, and the parent's write to one of them keeps the pinned page.
     */
    @Test
    void readPinOfThpPartlyCopiedByChildUnsharesTheStillSharedPages()
    {
        final UserProcess parent = modernThpHost().spawn("parent").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        final long raw = parent.mmap(0, 2 * HUGE, Prot.READ_WRITE, ANON);
        final long thp = (raw + HUGE - 1) & -HUGE;
        parent.touch(thp, HUGE, true);
        assertThat(parent.mappedPageSize(thp)).isEqualTo(PageSize.SIZE_2M);
        final UserProcess child = parent.fork("child");
        child.write(thp, pattern(1, 8));
        final long shared = thp + 16 * PAGE;
        assertThat(child.translate(shared)).isEqualTo(parent.translate(shared));

        final PinnedPages pin = parent.pinUserPages(thp, 32 * PAGE, false, false);

        assertThat(pin.runs().stream().mapToLong(PhysRun::frames).sum()).isEqualTo(32);
        assertThat(parent.translate(shared)).as("the pin unshared the page the child still maps")
            .isNotEqualTo(child.translate(shared));
        parent.write(shared, pattern(2, 8));
        assertThat(parent.translate(shared)).as("the parent's write keeps the page it pinned").isEqualTo(
            pinnedPhys(pin, shared));
    }

    private static long pinnedPhys(final PinnedPages pin, final long va)
    {
        long index = (va - pin.startAddress()) / PAGE;
        for (final PhysRun run : pin.runs())
        {
            if (index < run.frames())
            {
                return run.physAddr() + index * PAGE;
            }
            index -= run.frames();
        }
        throw new AssertionError("0x" + Long.toHexString(va) + " is not pinned by " + pin);
    }

    /** Shrunk from PinningInvariantsProperties' pinned-frames invariant (seed -1476258407441839952). */
    @Test
    void readPinAfterForkStaysPutAcrossCompactionReclaimAndOwnWrite()
    {
        final Host host = modernThpHost();
        final UserProcess p0 = host.spawn("p0").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        p0.mmap(0, 2428928L, Prot.READ_WRITE, ANON);
        p0.touch(0x7effffe16000L, 1540096L, false);
        p0.read(0x7effffe2b000L, 4096);
        final UserProcess p1 = p0.fork("p1");
        p1.touch(0x7effffede000L, 782336L, true);
        p1.write(0x7efffff006bcL, pattern(531, 21));
        p1.touch(0x7effffdcf000L, 282624L, true);
        p0.write(0x7effffdcb000L, pattern(8028, 10));
        final long va = 0x7effffe1d000L;
        final PinnedPages pin0 = p0.pinUserPages(0x7effffdb2000L, 1409024L, false, false);
        final long pinnedAt = pinnedPhys(pin0, va);
        assertThat(p0.translate(va)).isEqualTo(pinnedAt).isNotEqualTo(p1.translate(va));
        p0.munmap(0x7efffff7a000L, 12288L);
        p0.madvise(0x7efffffa4000L, 307200L, Madvice.DONTNEED);
        // p1's page shares its folio (in ZONE_MOVABLE) with pages p0 holds pinned: migrate_pages cannot move it.
        assertErrno(Errno.ENOMEM, () -> p1.pinUserPages(0x7effffe1f000L, 4096L, true, true));
        p0.mmap(0, 8994816L, Prot.READ_WRITE, ANON);
        host.compact();
        host.spawn("p2").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        p0.write(0x7efffff92002L, pattern(0, 2));
        host.compact();
        host.reclaim(32L);
        p0.write(0x7effffe1d005L, pattern(247, 29));

        assertThat(p0.translate(va)).as("a read-pinned page written by its owner stays at its pinned frame")
            .isEqualTo(pinnedAt);
    }
}
