package dev.rnicsim.pagetable;

/**
 * Advice values of madvise(2) that the model implements.
 *
 * <p>Immutable and thread safe.
 */
public enum Madvice
{
    /** MADV_DONTNEED: drop the pages; the next touch of anonymous memory sees zeros. A pinned frame stays
     * allocated for its pin holder, so the CPU and the device then see different frames. */
    DONTNEED,
    /** MADV_HUGEPAGE: allow transparent huge pages here when THP mode is madvise. */
    HUGEPAGE,
    /** MADV_NOHUGEPAGE: never use transparent huge pages here. */
    NOHUGEPAGE,
    /** MADV_DONTFORK: a child made by fork gets no mapping of this range (what ibv_fork_init relies on). */
    DONTFORK,
    /** MADV_DOFORK: undo MADV_DONTFORK. */
    DOFORK,
    /** MADV_COLLAPSE: copy the range's base pages into transparent huge pages now (Linux 6.1); EAGAIN where a
     * page is pinned. */
    COLLAPSE
}
