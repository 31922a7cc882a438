package dev.rnicsim.pagetable;

import java.util.List;

/**
 * What one {@code pin_user_pages} call pinned: the virtual range and the physically contiguous runs of frames
 * behind it, in virtual-address order. Hand it back to {@link UserProcess#unpinUserPages(PinnedPages)} exactly
 * once.
 *
 * <p>Immutable and thread safe.
 *
 * @param process      the process whose pages are pinned and whose {@code pinned_vm} is charged.
 * @param startAddress first virtual address pinned (page aligned).
 * @param pageCount    number of base pages ({@link BasePage}) pinned, the amount charged to {@code pinned_vm}.
 * @param write        FOLL_WRITE: the pages were made writable (copy-on-write broken) before pinning.
 * @param longterm     FOLL_LONGTERM: the pages were moved out of ZONE_MOVABLE before pinning.
 * @param runs         the physically contiguous runs, in virtual-address order.
 */
public record PinnedPages(UserProcess process, long startAddress, long pageCount, boolean write, boolean longterm,
                          List<PhysRun> runs)
{
    /**
     * @return the pinned length in bytes.
     */
    public long lengthBytes()
    {
        return pageCount << (process == null ? PhysicalMemory.FRAME_SHIFT : process.host().config().basePage().shift());
    }
}
