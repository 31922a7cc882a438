package dev.rnicsim.pagetable;

/**
 * Receives what one page of a {@link UserProcess#hmmRangeFault} walk found: an entry of the {@code hmm_pfns} array
 * that mm/hmm.c fills for an on-demand-paging driver.
 */
@FunctionalInterface
public interface HmmVisitor
{
    /**
     * @param va        the 4 KiB page's virtual address.
     * @param physAddr  the physical address of its frame.
     * @param writable  true when the CPU mapping is writable now (the device may be given write access).
     */
    void page(long va, long physAddr, boolean writable);
}
