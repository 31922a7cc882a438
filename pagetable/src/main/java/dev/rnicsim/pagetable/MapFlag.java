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
    /** MAP_HUGETLB: back the mapping with hugetlb pool pages of the host's default size (its PMD: 2 MiB, or 32 or
     * 512 MiB with 16 or 64 KiB base pages) unless a MAP_HUGE_* size is given. */
    HUGETLB,
    /** MAP_HUGE_2MB: with {@link #HUGETLB}, 2 MiB pages. */
    HUGE_2MB,
    /** MAP_HUGE_1GB: with {@link #HUGETLB}, 1 GiB pages. */
    HUGE_1GB,
    /** MAP_HUGE_64KB: with {@link #HUGETLB}, arm64's contiguous-PTE 64 KiB pages (4 KiB base pages). */
    HUGE_64KB,
    /** MAP_HUGE_32MB: with {@link #HUGETLB}, 32 MiB pages (arm64). */
    HUGE_32MB,
    /** MAP_HUGE_512MB: with {@link #HUGETLB}, 512 MiB pages (arm64 with 64 KiB base pages). */
    HUGE_512MB,
    /** MAP_HUGE_16GB: with {@link #HUGETLB}, 16 GiB contiguous-PMD pages (arm64 with 64 KiB base pages). */
    HUGE_16GB,
    /**
     * MAP_NORESERVE: reserve no swap for the mapping: with {@code vm.overcommit_memory} 0 or 1 the kernel sets
     * VM_NORESERVE (mm/mmap.c {@code do_mmap}) and does not account the mapping ({@code accountable_mapping}), so the
     * heuristic overcommit check never refuses it; pages are still allocated (and may then run out) when touched or
     * pinned.
     */
    NORESERVE;

    /**
     * @param size a hugetlb page size.
     * @return its MAP_HUGE_* flag (include/uapi/asm-generic/hugetlb_encode.h), or null for a size without one.
     */
    public static MapFlag hugeSize(final PageSize size)
    {
        return switch (size)
        {
            case SIZE_64K -> HUGE_64KB;
            case SIZE_2M -> HUGE_2MB;
            case SIZE_32M -> HUGE_32MB;
            case SIZE_512M -> HUGE_512MB;
            case SIZE_1G -> HUGE_1GB;
            case SIZE_16G -> HUGE_16GB;
            default -> null;
        };
    }
}
