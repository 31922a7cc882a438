package dev.rnicsim.pagetable;

/**
 * The transparent huge page mode, as in {@code /sys/kernel/mm/transparent_hugepage/enabled}
 * (Documentation/admin-guide/mm/transhuge.rst).
 *
 * <p>Immutable and thread safe.
 */
public enum ThpMode
{
    /** Every anonymous VMA may get 2 MiB folios on fault, unless MADV_NOHUGEPAGE. */
    ALWAYS,
    /** Only VMAs marked MADV_HUGEPAGE get 2 MiB folios on fault. */
    MADVISE,
    /** Never: every anonymous fault maps a 4 KiB page. */
    NEVER
}
