package dev.rnicsim.verbs;

/**
 * What backs a buffer allocated with {@link HostMemory#allocate(long, Backing)}.
 *
 * <p>Immutable and thread safe.
 */
public enum Backing
{
    /** Anonymous memory in 4 KiB pages (MADV_NOHUGEPAGE). */
    BASE_PAGES,
    /** Anonymous memory advised MADV_HUGEPAGE: 2 MiB transparent huge pages where the kernel can build them. */
    TRANSPARENT_HUGE_PAGES,
    /** MAP_HUGETLB with 2 MiB pages from the host's hugetlb pool ({@code vm.nr_hugepages}). */
    HUGETLB_2M,
    /** MAP_HUGETLB | MAP_HUGE_1GB from the host's 1 GiB pool. */
    HUGETLB_1G
}
