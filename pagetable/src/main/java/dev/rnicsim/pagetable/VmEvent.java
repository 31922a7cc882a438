package dev.rnicsim.pagetable;

/**
 * The counters the host model keeps: what happened, counted, never timed (a cost model elsewhere prices
 * them). Each has the name /proc/vmstat uses where Linux has one, and a unit; counters Linux does not have are
 * named with a {@code sim_} prefix so that nobody looks for them on a real machine.
 *
 * <p>Immutable and thread safe.
 */
public enum VmEvent
{
    /** Page faults handled (minor and major). */
    PGFAULT("pgfault", "faults"),
    /** Faults that had to read a page back from swap. */
    PGMAJFAULT("pgmajfault", "faults"),
    /** Write faults on a copy-on-write page that copied it. */
    COW_COPY("sim_cow_copy", "pages"),
    /** Pages read from swap. */
    PSWPIN("pswpin", "pages"),
    /** Pages written to swap. */
    PSWPOUT("pswpout", "pages"),
    /** Clean file pages dropped by reclaim. */
    PGSTEAL_FILE("pgsteal_file", "pages"),
    /** Pages migrated (compaction or long-term pin). */
    PGMIGRATE_SUCCESS("pgmigrate_success", "pages"),
    /** Pages migrated because a long-term pin found them in ZONE_MOVABLE. */
    PGMIGRATE_LONGTERM_PIN("sim_pgmigrate_longterm_pin", "pages"),
    /** Pages compaction left in place because they are pinned. */
    COMPACT_PINNED_SKIPPED("sim_compact_pinned_skipped", "pages"),
    /** 2 MiB folios allocated on fault. */
    THP_FAULT_ALLOC("thp_fault_alloc", "folios"),
    /** Faults that wanted a 2 MiB folio and fell back to 4 KiB. */
    THP_FAULT_FALLBACK("thp_fault_fallback", "faults"),
    /** PMD mappings split into 512 PTEs. */
    THP_SPLIT_PMD("thp_split_pmd", "mappings"),
    /** 2 MiB folios split into 4 KiB pages. */
    THP_SPLIT_PAGE("thp_split_page", "folios"),
    /** THP folios built by collapsing base pages (MADV_COLLAPSE). */
    THP_COLLAPSE_ALLOC("thp_collapse_alloc", "folios"),
    /** Collapses refused: a pinned page, or no free PMD-sized block. */
    THP_COLLAPSE_ALLOC_FAILED("thp_collapse_alloc_failed", "collapses"),
    /** Folio splits refused because the folio is pinned (left for a deferred split). */
    THP_SPLIT_PAGE_FAILED("thp_split_page_failed", "folios"),
    /** Pages pinned with FOLL_PIN. */
    NR_FOLL_PIN_ACQUIRED("nr_foll_pin_acquired", "pages"),
    /** Pages unpinned. */
    NR_FOLL_PIN_RELEASED("nr_foll_pin_released", "pages"),
    /** Page-table walks done for a fault, a pin or a lookup. */
    PAGE_WALKS("sim_page_walks", "walks"),
    /** VMAs read or written by the VMA tree's operations: the work of mmap, munmap, mprotect and madvise, counted so
     * that a test can hold a change to the VMAs around the range (mm/vma.c {@code vma_modify}), not to all of them. */
    VMA_VISITS("sim_vma_visits", "VMAs");

    private final String procName;
    private final String unit;

    VmEvent(final String procName, final String unit)
    {
        this.procName = procName;
        this.unit = unit;
    }

    /**
     * @return the counter's name in /proc/vmstat style.
     */
    public String procName()
    {
        return procName;
    }

    /**
     * @return what one count is (pages, faults, folios, ...).
     */
    public String unit()
    {
        return unit;
    }
}
