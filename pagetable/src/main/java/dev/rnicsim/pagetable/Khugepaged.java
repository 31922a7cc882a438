package dev.rnicsim.pagetable;

import static dev.rnicsim.pagetable.PhysicalMemory.FRAME_SHIFT;

/**
 * THP collapse on request, {@code madvise(MADV_COLLAPSE)} (mm/khugepaged.c {@code madvise_collapse}, Linux 6.1): each
 * THP-sized, THP-aligned part of the range that an anonymous VMA holds whole is copied into one new PMD-sized folio
 * (2 MiB, or 32 or 512 MiB with 16 or 64 KiB pages) and mapped by one PMD ({@code collapse_huge_page}), whatever the
 * THP sysfs mode; a part already PMD-mapped is left alone. Missing pages become zeros and swapped ones are read back
 * (MADV_COLLAPSE ignores {@code max_ptes_none} and {@code max_ptes_swap}). A part holding a pinned page is not
 * collapsed: its folio has references the collapse cannot account for ({@code __collapse_huge_page_isolate}:
 * SCAN_PAGE_COUNT), and the call returns EAGAIN; a part that finds no free PMD-sized block returns ENOMEM
 * (SCAN_ALLOC_HUGE_PAGE_FAIL; {@code madvise_collapse_errno}). Parts collapsed before a failing one stay collapsed.
 *
 * <p>Package-private, called by {@link Mappings#madvise}. Not thread safe.
 */
final class Khugepaged
{
    private final UserProcess process;
    private final Host host;
    private final PhysicalMemory phys;
    private final FrameTable frames;
    private final PageTable pageTable;

    Khugepaged(final UserProcess process)
    {
        this.process = process;
        this.host = process.host();
        this.phys = host.physicalMemory();
        this.frames = phys.frames();
        this.pageTable = process.pageTable();
    }

    /** {@code madvise_collapse} over {@code [start, end)}, already checked to be mapped and base-page aligned. */
    void collapse(final long start, final long end)
    {
        final Vma first = process.vmaAt(start);
        if (first.kind() != VmaKind.ANONYMOUS || first.has(Vma.VM_NOHUGEPAGE))
        {
            // thp_vma_allowable_order fails for the first VMA: the call is EINVAL before anything is scanned.
            throw new KernelException(Errno.EINVAL, "MADV_COLLAPSE at 0x" + Long.toHexString(start) + ": the VMA is "
                + (first.kind() != VmaKind.ANONYMOUS ? first.kind().name().toLowerCase(java.util.Locale.ROOT)
                    + " memory, not anonymous" : "VM_NOHUGEPAGE (MADV_NOHUGEPAGE)")
                + "; collapse only anonymous memory that allows THP (madvise MADV_HUGEPAGE undoes MADV_NOHUGEPAGE)");
        }
        final PageSize thp = host.config().basePage().thpSize();
        final long mask = thp.bytes() - 1;
        KernelException lastFail = null;
        for (long hugeVa = (start + mask) & ~mask; hugeVa + thp.bytes() <= end; hugeVa += thp.bytes())
        {
            final Vma v = process.vmaAt(hugeVa);
            if (v == null || v.kind() != VmaKind.ANONYMOUS || v.has(Vma.VM_NOHUGEPAGE) || hugeVa < v.startAddress()
                || hugeVa + thp.bytes() > v.endAddress())
            {
                lastFail = new KernelException(Errno.EINVAL, "MADV_COLLAPSE: the " + thp.word() + " at 0x"
                    + Long.toHexString(hugeVa) + " is not inside one anonymous VMA that allows THP "
                    + "(SCAN_VMA_CHECK); give a range that covers a whole aligned " + thp.word() + " of such a VMA");
                continue;
            }
            final long entry = pageTable.lookup(hugeVa);
            if (PageTable.present(entry) && PageTable.pageSize(entry) == thp)
            {
                continue;
            }
            final long at = hugeVa;
            final KernelException[] fail = new KernelException[1];
            process.notifiers.notifying(MmuNotifyEvent.CLEAR, "MADV_COLLAPSE", () -> fail[0] = collapseOne(at, thp, v));
            if (fail[0] != null)
            {
                lastFail = fail[0];
            }
        }
        if (lastFail != null)
        {
            throw lastFail;
        }
    }

    /** @return null when the part was collapsed, else why not (the call's errno if no later part fails). */
    private KernelException collapseOne(final long hugeVa, final PageSize thp, final Vma v)
    {
        for (long va = hugeVa; va < hugeVa + thp.bytes(); va += PhysicalMemory.FRAME_BYTES)
        {
            final long e = pageTable.lookup(va);
            if (PageTable.present(e) && PageTable.pfn(e) != phys.zeroPfn()
                && frames.pinCount(frames.head(Faults.pfnOf(e, va))) > 0)
            {
                host.count(VmEvent.THP_COLLAPSE_ALLOC_FAILED);
                return new KernelException(Errno.EAGAIN, "MADV_COLLAPSE: the " + thp.word() + " at 0x"
                    + Long.toHexString(hugeVa) + " holds a pinned page at 0x" + Long.toHexString(va)
                    + " (an RDMA registration or another FOLL_PIN holder): its references cannot be moved "
                    + "(SCAN_PAGE_COUNT); deregister first");
            }
        }
        final long head = host.allocate(thp.order(), true, FrameTable.KIND_ANON, false);
        if (head < 0)
        {
            host.count(VmEvent.THP_COLLAPSE_ALLOC_FAILED);
            return new KernelException(Errno.ENOMEM, "MADV_COLLAPSE: no free " + thp.word() + " block for the folio "
                + "at 0x" + Long.toHexString(hugeVa) + " (SCAN_ALLOC_HUGE_PAGE_FAIL); free memory or compact it, then "
                + "retry");
        }
        for (long va = hugeVa; va < hugeVa + thp.bytes(); va += PhysicalMemory.FRAME_BYTES)
        {
            long e = pageTable.lookup(va);
            if ((e & PageTable.SWAP) != 0)
            {
                // __collapse_huge_page_swapin: the swapped page is read back first.
                e = process.faults.fault(va, false, false);
            }
            if (PageTable.present(e) && PageTable.pfn(e) != phys.zeroPfn())
            {
                frames.copyFrame(Faults.pfnOf(e, va), head + ((va - hugeVa) >>> FRAME_SHIFT));
            }
        }
        process.mappings.zapRange(hugeVa, hugeVa + thp.bytes());
        frames.addMapCount(head, thp.frames(), 1);
        pageTable.setPage(hugeVa, thp, head, PageTable.PRESENT | (v.writable() ? PageTable.WRITE : 0));
        host.count(VmEvent.THP_COLLAPSE_ALLOC);
        return null;
    }
}
