package dev.rnicsim.pagetable;

import static dev.rnicsim.pagetable.PhysicalMemory.FRAME_BYTES;
import static dev.rnicsim.pagetable.PhysicalMemory.FRAME_SHIFT;

/**
 * Swap-in faults of a process (mm/memory.c {@code do_swap_page}): a swapped-out page comes back into a fresh frame,
 * its swap slot released, counted as a major fault; on a host of 16 or 64 KiB pages the whole base page comes back as
 * one folio.
 *
 * <p>Part of {@link Faults}. Not thread safe.
 */
final class SwapIn
{
    private final Faults faults;
    private final Host host;
    private final PhysicalMemory phys;
    private final FrameTable frames;
    private final PageTable pageTable;

    /**
     * @param faults    the process's fault handler, whose frame allocation and release this shares.
     * @param host      the process's host.
     * @param pageTable the process's page table.
     */
    SwapIn(final Faults faults, final Host host, final PageTable pageTable)
    {
        this.faults = faults;
        this.host = host;
        this.phys = host.physicalMemory();
        this.frames = phys.frames();
        this.pageTable = pageTable;
    }

    /**
     * {@code do_swap_page}: the swapped-out 4 KiB page at {@code va} comes back into a fresh frame.
     *
     * @return the entry now mapping {@code va}.
     */
    long in(final long va, final long entry, final Vma v, final boolean pinning)
    {
        final long slot = PageTable.pfn(entry);
        final long pfn = faults.allocatePageOrFail(v, pinning, va);
        final byte[] bytes = phys.swap().bytes(slot);
        if (bytes != null)
        {
            frames.writeFrame(pfn, 0, bytes, 0, bytes.length);
        }
        phys.swap().release(slot);
        final long newEntry = PageTable.make(pfn, PageTable.PRESENT | (v.writable() ? PageTable.WRITE : 0));
        frames.addMapCount(pfn, 1);
        pageTable.set(va & ~(long)(FRAME_BYTES - 1), PageSize.SIZE_4K, newEntry);
        host.count(VmEvent.PGMAJFAULT);
        host.count(VmEvent.PSWPIN);
        return newEntry;
    }

    /**
     * {@code do_swap_page} on a host of 16 or 64 KiB pages: the whole base page comes back as one folio of its
     * frames (PAGE_SIZE is the unit swap writes and reads), with one major fault.
     */
    long inBasePage(final long va, final Vma v, final boolean pinning)
    {
        final BasePage base = host.config().basePage();
        final long baseVa = va & -base.bytes();
        final long head = host.allocate(base.order(), !pinning, Faults.kindOf(v), true);
        for (int i = 0; i < base.frames(); i++)
        {
            final long sub = baseVa + ((long)i << FRAME_SHIFT);
            final long old = pageTable.lookup(sub);
            if ((old & PageTable.SWAP) == 0 && head < 0)
            {
                continue;
            }
            final long pfn = head >= 0 ? head + i : faults.allocatePageOrFail(v, pinning, sub);
            if ((old & PageTable.SWAP) != 0)
            {
                final long slot = PageTable.pfn(old);
                final byte[] bytes = phys.swap().bytes(slot);
                if (bytes != null)
                {
                    frames.writeFrame(pfn, 0, bytes, 0, bytes.length);
                }
                phys.swap().release(slot);
                host.count(VmEvent.PSWPIN);
            }
            else if (PageTable.present(old))
            {
                // A frame of the base page still resident: moved into the new folio so that it stays one folio.
                frames.copyFrame(PageTable.pfn(old), pfn);
                frames.addMapCount(PageTable.pfn(old), -1);
            }
            frames.addMapCount(pfn, 1);
            pageTable.set(sub, PageSize.SIZE_4K, PageTable.make(pfn, PageTable.PRESENT
                | (v.writable() && (!PageTable.present(old) || (old & PageTable.WRITE) != 0) ? PageTable.WRITE : 0)));
            if (PageTable.present(old) && PageTable.pfn(old) != phys.zeroPfn())
            {
                faults.releaseIfUnused(PageTable.pfn(old));
            }
        }
        host.count(VmEvent.PGMAJFAULT);
        return pageTable.lookup(va);
    }
}
