package dev.rnicsim.simnic;

import dev.rnicsim.mtt.DmaRun;
import dev.rnicsim.pagetable.PhysRun;
import java.util.AbstractList;
import java.util.List;
import java.util.RandomAccess;

/**
 * The DMA runs of a pin as the tables take them, read through from the pin's own runs rather than copied: a pin
 * of scattered 4 KiB frames has a run per page, and a copy would cost another object a page while the MR is
 * registered. From the 4 KiB page holding the MR's address: on a host of 16 or 64 KiB pages the pin starts at the
 * base page, and the bytes before that 4 KiB page are skipped, as the kernel's umem offset does. Read-only.
 */
final class PinnedDmaRuns extends AbstractList<DmaRun> implements RandomAccess
{
    private final List<PhysRun> runs;
    /** Runs of the pin wholly before the MR's first 4 KiB page. */
    private final int dropped;
    /** Bytes cut from the front of the first run kept. */
    private final long cut;

    /**
     * @param runs      the pin's runs, in virtual-address order.
     * @param skipBytes bytes of the pin before the MR's first 4 KiB page (a multiple of 4096).
     */
    PinnedDmaRuns(final List<PhysRun> runs, final long skipBytes)
    {
        this.runs = runs;
        int whole = 0;
        long skip = skipBytes;
        while (whole < runs.size() && skip >= runs.get(whole).lengthBytes())
        {
            skip -= runs.get(whole).lengthBytes();
            whole++;
        }
        this.dropped = whole;
        this.cut = whole < runs.size() ? skip : 0;
    }

    @Override
    public DmaRun get(final int index)
    {
        java.util.Objects.checkIndex(index, size());
        final PhysRun run = runs.get(index + dropped);
        return index == 0 && cut > 0 ? new DmaRun(run.physAddr() + cut, run.lengthBytes() - cut)
            : new DmaRun(run.physAddr(), run.lengthBytes());
    }

    @Override
    public int size()
    {
        return runs.size() - dropped;
    }
}
