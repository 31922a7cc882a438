package dev.rnicsim.pagetable;

/**
 * One invalidation delivered to an interval notifier ({@code struct mmu_notifier_range}): the leaf whose mapping is
 * about to change, before it changes. The range is the leaf's, not clipped to the interval (drivers clip it, as
 * {@code mlx5_ib_invalidate_range} does).
 *
 * @param startVa     first byte of the range, page aligned.
 * @param endVa       first byte after it.
 * @param event       why.
 * @param reason      the operation that caused it, for people: "munmap", "reclaim", "copy-on-write", ...
 * @param operationId the operation it belongs to: every leaf of one munmap, one reclaim pass, one fork, ... carries
 *                    the same id, so a consumer can treat them as the one call the kernel makes per operation.
 */
public record MmuRange(long startVa, long endVa, MmuNotifyEvent event, String reason, long operationId)
{
    /**
     * @return bytes in the range.
     */
    public long lengthBytes()
    {
        return endVa - startVa;
    }
}
