package dev.rnicsim.pagetable;

/**
 * Flags of mmap(2) that the model implements. Exactly one of {@link #PRIVATE} and {@link #SHARED} is required.
 *
 * <p>Immutable and thread safe.
 */
public enum MapFlag
{
    /** MAP_PRIVATE: a copy-on-write mapping. */
    PRIVATE,
    /** MAP_SHARED: refused with EOPNOTSUPP for anonymous memory, which this model keeps private. */
    SHARED,
    /** MAP_ANONYMOUS: memory not backed by a file, zero-filled on first touch. Required. */
    ANONYMOUS,
    /** MAP_FIXED: place the mapping exactly at the address, replacing whatever was mapped there. */
    FIXED,
    /** MAP_FIXED_NOREPLACE: place it exactly at the address, failing with EEXIST if something is mapped there. */
    FIXED_NOREPLACE,
    /** MAP_POPULATE: fault every page in at mmap time (best effort, as in Linux: a failure is not reported). */
    POPULATE,
    /** MAP_HUGETLB: back the mapping with hugetlb pool pages, 2 MiB unless {@link #HUGE_1GB} is given. */
    HUGETLB,
    /** MAP_HUGE_2MB: with {@link #HUGETLB}, 2 MiB pages. */
    HUGE_2MB,
    /** MAP_HUGE_1GB: with {@link #HUGETLB}, 1 GiB pages. */
    HUGE_1GB
}
