package dev.rnicsim.pagetable;

/**
 * The page sizes a mapping can have. x86-64 four-level paging has three: a PTE maps 4 KiB, a PMD leaf 2 MiB, a PUD
 * leaf 1 GiB (Intel SDM vol. 3A section 4.5). arm64 adds the base pages of 16 and 64 KiB, their PMD sizes (32 MiB
 * and 512 MiB) and the contiguous-bit sizes of hugetlbfs, a run of CONT_PTES or CONT_PMDS entries that one TLB entry
 * caches (arch/arm64/mm/hugetlbpage.c, its support matrix and {@code num_contig_ptes}: 64 KiB and 32 MiB with 4 KiB
 * pages, 2 MiB and 1 GiB with 16 KiB pages, 2 MiB and 16 GiB with 64 KiB pages).
 *
 * <p>The model's page table has x86's three leaf sizes ({@link #leaf()}); a larger page is a run of naturally aligned
 * leaves over one physically contiguous folio, as arm64 sets {@code ncontig} entries for a contiguous page.
 *
 * <p>Immutable and thread safe.
 */
public enum PageSize
{
    /** A base page: 4 KiB, page shift 12. */
    SIZE_4K(12),
    /** The base page of an arm64 16 KiB kernel. */
    SIZE_16K(14),
    /** The base page of an arm64 or ppc64 64 KiB kernel, or a contiguous-PTE hugetlb page of a 4 KiB arm64 one. */
    SIZE_64K(16),
    /** A PMD-level huge page of a 4 KiB host (THP or hugetlbfs), or a contiguous-PTE hugetlb page on arm64 with 16 or
     * 64 KiB pages. */
    SIZE_2M(21),
    /** The PMD size of a 16 KiB host (THP or hugetlbfs), or a contiguous-PMD hugetlb page of a 4 KiB arm64 host. */
    SIZE_32M(25),
    /** The PMD size of a 64 KiB host (THP or hugetlbfs). */
    SIZE_512M(29),
    /** A PUD-level huge page of a 4 KiB host (hugetlbfs only), or a contiguous-PMD one of a 16 KiB host. */
    SIZE_1G(30),
    /** A contiguous-PMD hugetlb page of a 64 KiB host: 32 entries of 512 MiB. */
    SIZE_16G(34);

    /** Every size, in declaration order: read without the copy {@code values()} makes each call. */
    private static final PageSize[] ALL = values();

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
     * @return the page-table leaf the model stores this size in: 4 KiB below 2 MiB, 2 MiB below 1 GiB, else 1 GiB.
     */
    public PageSize leaf()
    {
        if (pageShift >= 30)
        {
            return SIZE_1G;
        }
        return pageShift >= 21 ? SIZE_2M : SIZE_4K;
    }

    /**
     * @return how many leaves of {@link #leaf()} one page of this size takes.
     */
    public long leaves()
    {
        return 1L << (pageShift - leaf().pageShift);
    }

    /**
     * @return the name a size takes in scripts and MAP_HUGE_* flags: 4k, 64k, 2m, 32m, 512m, 1g, 16g.
     */
    public String word()
    {
        if (pageShift >= 30)
        {
            return (1L << (pageShift - 30)) + "g";
        }
        return pageShift >= 20 ? (1L << (pageShift - 20)) + "m" : (1L << (pageShift - 10)) + "k";
    }

    /** @return the size of ordinal {@code ordinal} (as {@code values()[ordinal]}). */
    static PageSize ofOrdinal(final int ordinal)
    {
        return ALL[ordinal];
    }

    /**
     * @param order a folio order in 4 KiB frames.
     * @return the size of that order, or null when no page size has it.
     */
    static PageSize ofOrder(final int order)
    {
        for (final PageSize size : ALL)
        {
            if (size.order() == order)
            {
                return size;
            }
        }
        return null;
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
     * @throws KernelException EINVAL when {@code bytes} is no page size of x86-64 or arm64.
     */
    public static PageSize ofBytes(final long bytes)
    {
        for (final PageSize size : ALL)
        {
            if (size.bytes() == bytes)
            {
                return size;
            }
        }
        throw new KernelException(Errno.EINVAL, "page size " + bytes + " bytes is not one of x86-64's or arm64's "
            + "(4 KiB, 16 KiB, 64 KiB, 2 MiB, 32 MiB, 512 MiB, 1 GiB, 16 GiB); give one of those sizes");
    }
}
