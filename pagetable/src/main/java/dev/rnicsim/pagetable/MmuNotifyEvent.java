package dev.rnicsim.pagetable;

/**
 * Why the host is invalidating a range of a process's page table, with the names of the kernel's
 * {@code enum mmu_notifier_event} (include/linux/mmu_notifier.h).
 *
 * <p>Immutable and thread safe.
 */
public enum MmuNotifyEvent
{
    /** The range is being unmapped (munmap). */
    UNMAP,
    /** The PTEs are cleared or replaced: madvise(MADV_DONTNEED), reclaim, migration, a copy-on-write break, a THP
     * split. */
    CLEAR,
    /** The protection of a VMA changes (mprotect). */
    PROTECTION_VMA,
    /** The protection of pages changes (fork write-protecting copy-on-write pages). */
    PROTECTION_PAGE,
    /** The address space is torn down (exit). */
    RELEASE
}
