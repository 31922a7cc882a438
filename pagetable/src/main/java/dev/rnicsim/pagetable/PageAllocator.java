package dev.rnicsim.pagetable;

import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Where a host's frames come from: ZONE_NORMAL (low) and ZONE_MOVABLE (high, none when the host has no movable
 * zone), each with a buddy allocator (mm/page_alloc.c), and the hugetlb pools reserved at boot (mm/hugetlb.c), which
 * hand out and take back huge pages of one size without going through the buddy allocators. Every folio taken or
 * given back is marked in the host's {@link FrameTable}. Part of {@link PhysicalMemory}, which answers for it.
 *
 * <p>Not thread safe: one host is driven by one thread.
 */
final class PageAllocator
{
    private final BuddyAllocator normal;
    private final BuddyAllocator movable;
    private final Map<PageSize, HugetlbPool> pools = new EnumMap<>(PageSize.class);
    private final FrameTable frames;

    /**
     * Splits the frames into the zones and reserves the boot-time hugetlb pools from ZONE_NORMAL, largest pages
     * first: they need aligned free blocks, which exist only before anything else is taken.
     *
     * @param config      the host's memory, movable zone, aging and huge page counts.
     * @param totalFrames the host's frames.
     * @param frames      the per-frame state the allocations are marked in.
     * @throws KernelException ENOMEM when ZONE_NORMAL cannot hold the huge pages asked for.
     */
    PageAllocator(final HostConfig config, final long totalFrames, final FrameTable frames)
    {
        this.frames = frames;
        final long movableFrames = config.movableZoneBytes() >>> PhysicalMemory.FRAME_SHIFT;
        normal = new BuddyAllocator(0, totalFrames - movableFrames, config.aged());
        movable = movableFrames == 0 ? null : new BuddyAllocator(totalFrames - movableFrames, totalFrames,
            config.aged());
        final PageSize[] sizes = PageSize.values();
        for (int i = sizes.length - 1; i >= 0; i--)
        {
            final long count = config.hugepages(sizes[i]);
            if (count > 0 || sizes[i] == PageSize.SIZE_2M || sizes[i] == PageSize.SIZE_1G)
            {
                pools.put(sizes[i], new HugetlbPool(sizes[i], BootHugepages.reserve(normal, sizes[i], count)));
            }
        }
    }

    /**
     * @return the frames free in the buddy allocators of both zones.
     */
    long freeFrames()
    {
        return normal.freeFrames() + (movable == null ? 0 : movable.freeFrames());
    }

    /**
     * @return the frames of the free pages of every hugetlb pool.
     */
    long freePoolFrames()
    {
        long poolFrames = 0;
        for (final HugetlbPool pool : pools.values())
        {
            poolFrames += pool.freePages() * pool.pageSize().frames();
        }
        return poolFrames;
    }

    /**
     * @param pfn a frame number of the host.
     * @return the zone it belongs to.
     */
    Zone zoneOf(final long pfn)
    {
        return movable != null && movable.contains(pfn) ? Zone.MOVABLE : Zone.NORMAL;
    }

    /**
     * @param zone a zone.
     * @return frames in the zone, or 0 when the host has no such zone.
     */
    long zoneFrames(final Zone zone)
    {
        final BuddyAllocator b = buddy(zone);
        return b == null ? 0 : b.spannedFrames();
    }

    /**
     * @param zone a zone.
     * @return free frames in the zone, or 0 when the host has no such zone.
     */
    long zoneFreeFrames(final Zone zone)
    {
        final BuddyAllocator b = buddy(zone);
        return b == null ? 0 : b.freeFrames();
    }

    /**
     * @param zone a zone.
     * @return counts of free blocks for orders 0 to {@link BuddyAllocator#MAX_ORDER}; empty when the host has no such
     * zone.
     */
    List<Integer> buddyInfo(final Zone zone)
    {
        final BuddyAllocator b = buddy(zone);
        final List<Integer> counts = new ArrayList<>();
        if (b != null)
        {
            for (int order = 0; order <= BuddyAllocator.MAX_ORDER; order++)
            {
                counts.add(b.freeBlocksOfOrder(order));
            }
        }
        return counts;
    }

    /**
     * @param size a huge page size.
     * @return the pool of that size; an empty one when the host reserved no page of it.
     */
    HugetlbPool pool(final PageSize size)
    {
        final HugetlbPool pool = pools.get(size);
        return pool != null ? pool : new HugetlbPool(size, new long[0]);
    }

    /**
     * @return the pools the host has, smallest page size first.
     */
    Collection<HugetlbPool> pools()
    {
        return pools.values();
    }

    /**
     * Takes a folio from the buddy allocators, MOVABLE first when allowed (GFP_HIGHUSER_MOVABLE), then NORMAL.
     *
     * @param order        log2 of the folio's frames.
     * @param allowMovable true when ZONE_MOVABLE may serve it.
     * @param kind         what the frames are marked as ({@code FrameTable.KIND_*}).
     * @return the head frame, or -1 when no zone allowed has a free block of that order.
     */
    long allocateFolio(final int order, final boolean allowMovable, final byte kind)
    {
        long pfn = -1;
        if (allowMovable && movable != null)
        {
            pfn = movable.allocate(order);
        }
        if (pfn < 0)
        {
            pfn = normal.allocate(order);
        }
        if (pfn >= 0)
        {
            frames.markAllocated(pfn, order, kind);
        }
        return pfn;
    }

    /**
     * Takes the highest free folio of a zone when it lies above {@code abovePfn} (for compaction).
     *
     * @param zone     the zone.
     * @param abovePfn the frame the folio must lie above.
     * @param kind     what the frames are marked as.
     * @param order    log2 of the folio's frames (above 0 for a base page of a 16 or 64 KiB host).
     * @return the head frame, or -1 when the zone has none above {@code abovePfn}.
     */
    long allocateHighestIn(final Zone zone, final long abovePfn, final byte kind, final int order)
    {
        final BuddyAllocator b = buddy(zone);
        if (b == null)
        {
            return -1;
        }
        final long pfn = b.allocateHighest(order);
        if (pfn < 0)
        {
            return -1;
        }
        if (pfn <= abovePfn)
        {
            b.free(pfn, order);
            return -1;
        }
        frames.markAllocated(pfn, order, kind);
        return pfn;
    }

    /**
     * Takes a page from a hugetlb pool and marks its frames.
     *
     * @param size the huge page size.
     * @return the head frame, or -1 when the pool is empty.
     */
    long takeHugetlbPage(final PageSize size)
    {
        final long head = pool(size).take();
        if (head >= 0)
        {
            frames.markAllocated(head, size.order(), FrameTable.KIND_HUGETLB);
        }
        return head;
    }

    /**
     * Returns a folio: hugetlb folios go back to their pool, others to the buddy allocator of their zone.
     *
     * @param head the folio's head frame.
     */
    void freeFolio(final long head)
    {
        final int order = frames.order(head);
        final byte kind = frames.kind(head);
        frames.markFree(head, order);
        if (kind == FrameTable.KIND_HUGETLB)
        {
            pools.get(PageSize.ofOrder(order)).give(head);
        }
        else if (movable != null && movable.contains(head))
        {
            movable.free(head, order);
        }
        else
        {
            normal.free(head, order);
        }
    }

    private BuddyAllocator buddy(final Zone zone)
    {
        return zone == Zone.NORMAL ? normal : movable;
    }
}
