package dev.rnicsim.pagetable;

import java.util.Locale;

/**
 * A host's base page size, the kernel's {@code PAGE_SIZE}: what mmap rounds lengths to, what munmap, mprotect,
 * madvise and mlock need addresses aligned to, what a page fault maps at once, what {@code pinned_vm} and
 * RLIMIT_MEMLOCK count in, what /proc/PID/smaps shows as KernelPageSize, and what {@code sysconf(_SC_PAGESIZE)}
 * tells libibverbs. x86-64 has only 4 KiB; arm64 builds with 4, 16 or 64 KiB (arch/arm64/Kconfig
 * {@code ARM64_4K_PAGES}, {@code ARM64_16K_PAGES}, {@code ARM64_64K_PAGES}) and ppc64 with 4 or 64 KiB.
 *
 * <p>The model keeps its physical frames at 4 KiB: a base page of 16 or 64 KiB is a naturally aligned folio of 4 or
 * 16 frames, mapped and faulted as one. The base page decides the huge page sizes: THP is a PMD
 * ({@link #thpSize()}: 2 MiB, 32 MiB or 512 MiB), and hugetlbfs offers the sizes of {@link #hugetlbSizes()}.
 *
 * <p>Immutable and thread safe.
 */
public enum BasePage
{
    /** 4 KiB: x86-64, and arm64 with ARM64_4K_PAGES. */
    SIZE_4K(12),
    /** 16 KiB: arm64 with ARM64_16K_PAGES (e.g. Asahi Linux on Apple silicon). */
    SIZE_16K(14),
    /** 64 KiB: arm64 with ARM64_64K_PAGES (RHEL 8 for arm64, RHEL 9's kernel-64k) and ppc64. */
    SIZE_64K(16);

    private final int shift;

    BasePage(final int shift)
    {
        this.shift = shift;
    }

    /**
     * @return {@code PAGE_SHIFT}.
     */
    public int shift()
    {
        return shift;
    }

    /**
     * @return {@code PAGE_SIZE} in bytes.
     */
    public long bytes()
    {
        return 1L << shift;
    }

    /**
     * @return the page size in kB, as /proc shows it.
     */
    public long kb()
    {
        return bytes() >>> 10;
    }

    /**
     * @return 4 KiB frames per base page.
     */
    public int frames()
    {
        return 1 << (shift - PhysicalMemory.FRAME_SHIFT);
    }

    /**
     * @return the folio order of one base page in 4 KiB frames.
     */
    public int order()
    {
        return shift - PhysicalMemory.FRAME_SHIFT;
    }

    /**
     * @return what one PMD entry maps, the THP size: {@code PAGE_SIZE * PTRS_PER_PTE} with 8-byte entries, so 2 MiB,
     * 32 MiB or 512 MiB (arch/arm64/include/asm/pgtable-hwdef.h).
     */
    public long pmdBytes()
    {
        return 1L << (shift + shift - 3);
    }

    /**
     * @return the base page as a page size.
     */
    public PageSize pageSize()
    {
        return PageSize.ofBytes(bytes());
    }

    /**
     * @return the size of a transparent huge page: one PMD, {@link #pmdBytes()} (mm/huge_memory.c
     * {@code HPAGE_PMD_ORDER} is {@code PMD_SHIFT - PAGE_SHIFT}).
     */
    public PageSize thpSize()
    {
        return PageSize.ofBytes(pmdBytes());
    }

    /**
     * @return the hugetlbfs page sizes the kernel registers, smallest first (arch/arm64/mm/hugetlbpage.c
     * {@code hugetlbpage_init}: CONT_PTE, PMD, CONT_PMD, and PUD where {@code pud_sect_supported}, that is with 4 KiB
     * pages). A 4 KiB host also stands for x86-64, whose sizes (2 MiB and 1 GiB, arch/x86/mm/hugetlbpage.c
     * {@code arch_hugetlb_valid_size}) are among them; 64 KiB and 32 MiB pools exist only on arm64.
     */
    public java.util.List<PageSize> hugetlbSizes()
    {
        return switch (this)
        {
            case SIZE_4K -> java.util.List.of(PageSize.SIZE_64K, PageSize.SIZE_2M, PageSize.SIZE_32M, PageSize.SIZE_1G);
            case SIZE_16K -> java.util.List.of(PageSize.SIZE_2M, PageSize.SIZE_32M, PageSize.SIZE_1G);
            case SIZE_64K -> java.util.List.of(PageSize.SIZE_2M, PageSize.SIZE_512M, PageSize.SIZE_16G);
        };
    }

    /**
     * @return the default hugetlb page size, the one MAP_HUGETLB without a MAP_HUGE_* size gets and /proc/meminfo's
     * Hugepagesize: {@code HPAGE_SIZE}, the PMD size (mm/hugetlb.c {@code default_hstate_size} without
     * {@code default_hugepagesz=}).
     */
    public PageSize defaultHugetlbSize()
    {
        return thpSize();
    }

    /**
     * @return the word scripts use: 4k, 16k or 64k.
     */
    public String word()
    {
        return (bytes() >>> 10) + "k";
    }

    /**
     * @param word 4k, 16k or 64k (any case).
     * @return the base page.
     * @throws IllegalArgumentException for another word.
     */
    public static BasePage of(final String word)
    {
        for (final BasePage p : values())
        {
            if (p.word().equals(word.toLowerCase(Locale.ROOT)))
            {
                return p;
            }
        }
        throw new IllegalArgumentException("page=" + word + ": a base page is 4k, 16k or 64k");
    }
}
