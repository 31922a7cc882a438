package dev.rnicsim.mtt;

/**
 * Hands out contiguous ranges of MTT entries.
 *
 * <p>Not thread safe.
 */
sealed interface MttAllocator permits BuddyMttAllocator, ExactMttAllocator
{
    /**
     * @param entries entries wanted, at least 1.
     * @return the first entry and the entries reserved, or null when no free block is large enough.
     */
    MttRange allocate(long entries);

    /**
     * @param range a range this allocator returned and that is still allocated.
     */
    void free(MttRange range);

    /**
     * @return entries one allocation could get now.
     */
    long largestFreeBlock();

    /**
     * @return entries not reserved.
     */
    long freeEntries();

    /**
     * @return entries in the table.
     */
    long capacityEntries();

    /**
     * @param entries entries wanted.
     * @return entries an allocation of that size would reserve.
     */
    long reservedFor(long entries);
}
