package dev.rnicsim.pagetable;

import static dev.rnicsim.pagetable.PhysicalMemory.FRAME_BYTES;
import static dev.rnicsim.pagetable.PhysicalMemory.FRAME_SHIFT;

/**
 * Copy-on-write faults of a process (mm/memory.c {@code do_wp_page}, mm/hugetlb.c {@code hugetlb_wp}): a write to a
 * write-protected present page reuses it when this mapping holds it alone, else copies it; a write to the shared
 * zero page gets a fresh page; a THP is split first ({@code do_huge_pmd_wp_page}); an unshare for a read pin takes
 * the same path without making the page writable.
 *
 * <p>Part of {@link Faults}. Not thread safe.
 */
final class CopyOnWrite
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
    CopyOnWrite(final Faults faults, final Host host, final PageTable pageTable)
    {
        this.faults = faults;
        this.host = host;
        this.phys = host.physicalMemory();
        this.frames = phys.frames();
        this.pageTable = pageTable;
    }

    /**
     * Write fault on a write-protected present page (or, with {@code makeWritable} false, an unshare for a read
     * pin): reuse the page when this mapping is its only one, else copy it (mm/memory.c {@code do_wp_page}).
     */
    long copy(final long va, final long entry, final Vma v, final boolean makeWritable,
        final boolean pinning)
    {
        final PageSize size = PageTable.size(entry);
        final long writeBit = makeWritable ? PageTable.WRITE : (entry & PageTable.WRITE);
        if (v.kind() == VmaKind.HUGETLB)
        {
            // hugetlb_wp: the whole huge page, every leaf of a contiguous-bit page included.
            final PageSize page = PageTable.pageSize(entry);
            final long hugeVa = va & ~(page.bytes() - 1);
            final long head = frames.head(PageTable.pfn(entry));
            if (frames.mapCount(head) == 1)
            {
                pageTable.setPage(hugeVa, page, head, PageTable.flags(entry) | writeBit);
                return pageTable.lookup(va);
            }
            if (phys.pool(page).availablePages() <= 0)
            {
                throw new KernelException(Errno.ENOMEM, "copy-on-write of a hugetlb page (SIGBUS in a CPU) at 0x"
                    + Long.toHexString(va) + ": the " + page.kb() + " kB pool has no unreserved free page");
            }
            final long copy = phys.takeHugetlbPage(page);
            faults.copyFrames(head, copy, page.frames());
            frames.addMapCount(head, page.frames(), -1);
            frames.addMapCount(copy, page.frames(), 1);
            pageTable.setPage(hugeVa, page, copy, PageTable.flags(entry) | writeBit);
            host.count(VmEvent.COW_COPY, page.frames());
            faults.releaseIfUnused(head);
            return pageTable.lookup(va);
        }
        if (size == PageSize.SIZE_2M)
        {
            // do_huge_pmd_wp_page falls back to splitting the PMD and handling the 4 KiB page.
            pageTable.splitPmd(va);
            host.count(VmEvent.THP_SPLIT_PMD);
            return copy(va, pageTable.lookup(va), v, makeWritable, pinning);
        }
        final long pageVa = va & ~(long)(FRAME_BYTES - 1);
        final long pfn = PageTable.pfn(entry);
        if (pfn == phys.zeroPfn() && host.config().basePage() != BasePage.SIZE_4K && makeWritable)
        {
            // A write to a base page that maps the zero page: the whole base page gets one fresh folio.
            final BasePage base = host.config().basePage();
            return faults.mapBasePage(va & -base.bytes(), va, v, pinning, sub ->
            {
                final long e = pageTable.lookup(sub);
                return e == 0 || (PageTable.present(e) && PageTable.pfn(e) == phys.zeroPfn());
            });
        }
        if (pfn == phys.zeroPfn())
        {
            // wp_page_copy from the zero page: a fresh zeroed page, nothing to copy or release.
            final long fresh = faults.allocatePageOrFail(v, pinning, va);
            frames.addMapCount(fresh, 1);
            final long freshEntry = PageTable.make(fresh, PageTable.PRESENT | writeBit);
            pageTable.set(pageVa, size, freshEntry);
            return freshEntry;
        }
        if (frames.mapCount(pfn) == 1)
        {
            final long reused = entry | writeBit;
            pageTable.set(pageVa, size, reused);
            return reused;
        }
        final long copy = faults.allocatePageOrFail(v, pinning, va);
        frames.copyFrame(pfn, copy);
        frames.addMapCount(pfn, -1);
        frames.addMapCount(copy, 1);
        final long copied = PageTable.make(copy, PageTable.flags(entry) | writeBit);
        pageTable.set(pageVa, size, copied);
        host.count(VmEvent.COW_COPY);
        faults.releaseIfUnused(pfn);
        return copied;
    }

    /**
     * {@code do_wp_page} on a host of 16 or 64 KiB pages: a write to a write-protected base page reuses it when this
     * mapping holds it alone, else copies the whole base page into a fresh folio (PAGE_SIZE is the unit of
     * copy-on-write).
     */
    long basePage(final long va, final Vma v, final boolean pinning)
    {
        final BasePage base = host.config().basePage();
        final long baseVa = va & -base.bytes();
        boolean exclusive = true;
        for (int i = 0; i < base.frames(); i++)
        {
            final long e = pageTable.lookup(baseVa + ((long)i << FRAME_SHIFT));
            exclusive &= PageTable.present(e) && PageTable.pfn(e) != phys.zeroPfn()
                && frames.mapCount(PageTable.pfn(e)) == 1;
        }
        if (exclusive)
        {
            for (int i = 0; i < base.frames(); i++)
            {
                final long sub = baseVa + ((long)i << FRAME_SHIFT);
                pageTable.set(sub, PageSize.SIZE_4K, pageTable.lookup(sub) | PageTable.WRITE);
            }
            return pageTable.lookup(va);
        }
        final long head = host.allocate(base.order(), !pinning, Faults.kindOf(v), true);
        for (int i = 0; i < base.frames(); i++)
        {
            final long sub = baseVa + ((long)i << FRAME_SHIFT);
            final long old = pageTable.lookup(sub);
            final long pfn = head >= 0 ? head + i : faults.allocatePageOrFail(v, pinning, sub);
            if (PageTable.present(old) && PageTable.pfn(old) != phys.zeroPfn())
            {
                frames.copyFrame(PageTable.pfn(old), pfn);
                frames.addMapCount(PageTable.pfn(old), -1);
            }
            frames.addMapCount(pfn, 1);
            pageTable.set(sub, PageSize.SIZE_4K, PageTable.make(pfn, PageTable.PRESENT | PageTable.WRITE));
            if (PageTable.present(old) && PageTable.pfn(old) != phys.zeroPfn())
            {
                faults.releaseIfUnused(PageTable.pfn(old));
            }
        }
        host.count(VmEvent.COW_COPY, base.frames());
        return pageTable.lookup(va);
    }
}
