package dev.rnicsim.pagetable;

/**
 * The hugetlb pages reserved at boot ({@code hugepages=N} on the kernel command line), taken from ZONE_NORMAL before
 * anything else is, while aligned free blocks still exist: mm/hugetlb.c {@code hugetlb_hstate_alloc_pages}, and for a
 * page larger than the buddy allocator's largest block {@code alloc_bootmem_huge_page}, which takes it from memblock.
 * Stateless.
 */
final class BootHugepages
{
    private BootHugepages()
    {
    }

    /**
     * @param normal ZONE_NORMAL's allocator.
     * @param size   the huge page size.
     * @param count  pages to reserve.
     * @return the head frame of each page reserved.
     * @throws KernelException ENOMEM when ZONE_NORMAL has no aligned free block left for one of them.
     */
    static long[] reserve(final BuddyAllocator normal, final PageSize size, final long count)
    {
        final long[] heads = new long[(int)count];
        for (int i = 0; i < count; i++)
        {
            heads[i] = size.order() <= BuddyAllocator.MAX_ORDER ? normal.allocate(size.order())
                : reserveGigantic(normal, size);
            if (heads[i] < 0)
            {
                throw new KernelException(Errno.ENOMEM, "cannot reserve hugetlb page " + (i + 1) + " of " + count
                    + " of " + size.kb() + " kB: ZONE_NORMAL has no free aligned block left; reserve fewer huge pages"
                    + " or give the host more memory");
            }
        }
        return heads;
    }

    /**
     * A page larger than the buddy allocator's largest block (arm64's 16 GiB contiguous-PMD page), taken as
     * consecutive largest blocks.
     *
     * @return the head frame, or -1 (with the blocks given back) when the blocks are not one aligned run.
     */
    private static long reserveGigantic(final BuddyAllocator normal, final PageSize size)
    {
        final int blocks = 1 << (size.order() - BuddyAllocator.MAX_ORDER);
        final long[] taken = new long[blocks];
        boolean run = true;
        for (int b = 0; b < blocks; b++)
        {
            taken[b] = normal.allocate(BuddyAllocator.MAX_ORDER);
            run &= taken[b] >= 0 && taken[b] == taken[0] + ((long)b << BuddyAllocator.MAX_ORDER);
        }
        if (run && (taken[0] & (size.frames() - 1)) == 0)
        {
            return taken[0];
        }
        for (final long t : taken)
        {
            if (t >= 0)
            {
                normal.free(t, BuddyAllocator.MAX_ORDER);
            }
        }
        return -1;
    }
}
