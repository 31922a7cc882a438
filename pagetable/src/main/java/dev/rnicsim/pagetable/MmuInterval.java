package dev.rnicsim.pagetable;

/**
 * An interval notifier on part of a process's address space ({@code struct mmu_interval_notifier},
 * mm/mmu_notifier.c): its owner is told before any present page in the interval is unmapped, replaced,
 * write-protected or moved, and each such invalidation advances a sequence number, so that a reader that walked
 * the page table can tell whether an invalidation raced with it ({@code mmu_interval_read_begin},
 * {@code mmu_interval_read_retry}). On-demand-paging MRs use one each (drivers/infiniband/core/umem_odp.c).
 *
 * <p>Not thread safe.
 */
public final class MmuInterval
{
    /** What the owner does when part of the interval is invalidated. */
    @FunctionalInterface
    public interface Ops
    {
        /**
         * Called before the mapping of {@code range} changes ({@code mmu_interval_notifier_ops.invalidate}); the
         * pages are still mapped and allocated while it runs.
         *
         * @param interval the interval.
         * @param range    the leaf about to change and why.
         */
        void invalidate(MmuInterval interval, MmuRange range);
    }

    private final UserProcess process;
    private final long startVa;
    private final long endVa;
    private final Ops ops;
    private long sequence;
    private boolean removed;

    MmuInterval(final UserProcess process, final long startVa, final long endVa, final Ops ops)
    {
        this.process = process;
        this.startVa = startVa;
        this.endVa = endVa;
        this.ops = ops;
    }

    /**
     * @return first byte covered.
     */
    public long startVa()
    {
        return startVa;
    }

    /**
     * @return first byte after the interval.
     */
    public long endVa()
    {
        return endVa;
    }

    /**
     * @return the process whose address space it watches.
     */
    public UserProcess process()
    {
        return process;
    }

    /**
     * {@code mmu_interval_read_begin}: the sequence number to compare after a page-table walk.
     *
     * @return the current sequence number.
     */
    public long readBegin()
    {
        return sequence;
    }

    /**
     * {@code mmu_interval_read_retry}.
     *
     * @param sequenceSeen the value {@link #readBegin()} returned before the walk.
     * @return true when an invalidation ran since, so the walk's result must be thrown away and the walk redone.
     */
    public boolean readRetry(final long sequenceSeen)
    {
        return sequence != sequenceSeen;
    }

    /**
     * @return true once removed.
     */
    public boolean isRemoved()
    {
        return removed;
    }

    /** {@code mmu_interval_notifier_remove}. Idempotent. */
    public void remove()
    {
        if (!removed)
        {
            removed = true;
            process.notifiers.removeInterval(this);
        }
    }

    boolean overlaps(final long start, final long end)
    {
        return start < endVa && end > startVa;
    }

    void invalidate(final MmuRange range)
    {
        sequence++;
        ops.invalidate(this, range);
    }
}
