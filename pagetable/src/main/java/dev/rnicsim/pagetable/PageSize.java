package dev.rnicsim.pagetable;

/**
 * The page sizes of x86-64 four-level paging: a PTE maps 4 KiB, a PMD leaf 2 MiB, a PUD leaf 1 GiB
 * (Intel SDM vol. 3A section 4.5).
 *
 * <p>Immutable and thread safe.
 */
public enum PageSize
{
    /** A base page: 4 KiB, page shift 12. */
    SIZE_4K(12),
    /** A PMD-level huge page: 2 MiB, page shift 21 (THP or hugetlbfs). */
    SIZE_2M(21),
    /** A PUD-level huge page: 1 GiB, page shift 30 (hugetlbfs only). */
    SIZE_1G(30);

    private final int pageShift;

    PageSize(final int pageShift)
    {
        this.pageShift = pageShift;
    }

    /**
     * @return log2 of the page size in bytes (12, 21 or 30).
     */
    public int pageShift()
    {
        return pageShift;
    }

    /**
     * @return the page size in bytes.
     */
    public long bytes()
    {
        return 1L << pageShift;
    }

    /**
     * @return the number of 4 KiB frames in one page of this size (1, 512 or 262144).
     */
    public long frames()
    {
        return 1L << (pageShift - PhysicalMemory.FRAME_SHIFT);
    }

    /**
     * @return the buddy order of one page of this size (0, 9 or 18).
     */
    public int order()
    {
        return pageShift - PhysicalMemory.FRAME_SHIFT;
    }

    /**
     * @return the size in kB as /proc shows it (4, 2048 or 1048576).
     */
    public long kb()
    {
        return bytes() / 1024;
    }

    /**
     * @param bytes a page size in bytes.
     * @return the matching page size.
     * @throws KernelException EINVAL when {@code bytes} is not 4 KiB, 2 MiB or 1 GiB.
     */
    public static PageSize ofBytes(final long bytes)
    {
        for (final PageSize size : values())
        {
            if (size.bytes() == bytes)
            {
                return size;
            }
        }
        throw new KernelException(Errno.EINVAL, "page size " + bytes + " bytes is not 4096, 2097152 or 1073741824"
            + "; give one of those sizes");
    }
}
