package dev.rnicsim.simnic;

import dev.rnicsim.pagetable.PhysRun;
import dev.rnicsim.pagetable.PinnedPages;

/**
 * Which frame a pin holds for a page: what an MR's DMA reaches, to compare with what the process maps there now.
 * Stateless and thread safe.
 */
final class PinnedFrames
{
    private PinnedFrames()
    {
    }

    /**
     * @param pin  a pin.
     * @param page the virtual address of a page.
     * @return the physical address of the 4 KiB frame pinned for it, or -1 when the page is outside the pin.
     */
    static long frameAt(final PinnedPages pin, final long page)
    {
        long offset = page - pin.startAddress();
        if (offset < 0 || offset >= pin.lengthBytes())
        {
            return -1;
        }
        for (final PhysRun r : pin.runs())
        {
            if (offset < r.lengthBytes())
            {
                return (r.physAddr() + offset) & ~4095L;
            }
            offset -= r.lengthBytes();
        }
        return -1;
    }
}
