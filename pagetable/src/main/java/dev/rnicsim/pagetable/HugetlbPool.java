package dev.rnicsim.pagetable;

/**
 * A hugetlbfs pool of one page size, filled at boot ({@code vm.nr_hugepages}, or {@code hugepages=} for 1 GiB):
 * pages taken from the buddy allocator once and held for hugetlb mappings only. {@code reserved} counts pages
 * promised to MAP_HUGETLB mappings at mmap time but not yet faulted in (mm/hugetlb.c
 * {@code hugetlb_reserve_pages}), the {@code HugePages_Rsvd} of /proc/meminfo.
 *
 * <p>Not thread safe.
 */
final class HugetlbPool
{
    private final PageSize pageSize;
    private final long totalPages;
    private final long[] freeStack;
    private int freeCount;
    private long reservedPages;

    HugetlbPool(final PageSize pageSize, final long[] pagesHeadPfn)
    {
        this.pageSize = pageSize;
        this.totalPages = pagesHeadPfn.length;
        this.freeStack = new long[pagesHeadPfn.length];
        for (int i = 0; i < pagesHeadPfn.length; i++)
        {
            freeStack[i] = pagesHeadPfn[pagesHeadPfn.length - 1 - i];
        }
        this.freeCount = pagesHeadPfn.length;
    }

    PageSize pageSize()
    {
        return pageSize;
    }

    long totalPages()
    {
        return totalPages;
    }

    long freePages()
    {
        return freeCount;
    }

    long reservedPages()
    {
        return reservedPages;
    }

    /** @return free pages not promised to any mapping. */
    long availablePages()
    {
        return freeCount - reservedPages;
    }

    void reserve(final long pages)
    {
        reservedPages += pages;
    }

    void unreserve(final long pages)
    {
        reservedPages -= pages;
    }

    /** @return the head frame of a free page (lowest address first), or -1 when the pool is empty. */
    long take()
    {
        return freeCount == 0 ? -1 : freeStack[--freeCount];
    }

    void give(final long headPfn)
    {
        freeStack[freeCount++] = headPfn;
    }
}
