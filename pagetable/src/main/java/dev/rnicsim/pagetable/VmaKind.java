package dev.rnicsim.pagetable;

/**
 * What backs a VMA.
 *
 * <p>Immutable and thread safe.
 */
public enum VmaKind
{
    /** Anonymous private memory: zero-filled on first touch, may use transparent huge pages, may be swapped. */
    ANONYMOUS,
    /** hugetlbfs memory (MAP_HUGETLB or an imported hugetlb VMA): pool pages only, never split or swapped. */
    HUGETLB,
    /** A file mapping, only from an imported smaps: its page contents are modelled as zeros, and reclaim drops
     * its pages instead of swapping them. */
    FILE
}
