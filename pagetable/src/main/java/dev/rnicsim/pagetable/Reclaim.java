package dev.rnicsim.pagetable;

import static dev.rnicsim.pagetable.PhysicalMemory.FRAME_SHIFT;

import java.util.ArrayList;
import java.util.List;

/**
 * What reclaim, migration and THP splitting do to one process's page table: swap out or drop one folio
 * (mm/vmscan.c {@code shrink_folio_list}), point the PTEs of a moved frame at its new place (mm/migrate.c
 * {@code remove_migration_ptes}) and split the PMDs of a THP (mm/huge_memory.c {@code split_huge_pmd}).
 * {@link Host} drives them across processes.
 *
 * <p>Package-private. Not thread safe.
 */
final class Reclaim
{
    private final UserProcess process;
    private final Host host;
    private final PhysicalMemory phys;
    private final FrameTable frames;
    private final VmaTree vmas;
    private final PageTable pageTable;

    Reclaim(final UserProcess process)
    {
        this.process = process;
        this.host = process.host();
        this.phys = host.physicalMemory();
        this.frames = phys.frames();
        this.vmas = process.vmaTree();
        this.pageTable = process.pageTable();
    }

    /**
     * Swaps out or drops one reclaimable leaf (reclaim's shrink_folio_list for one folio).
     *
     * @return the number of 4 KiB pages freed; 0 when the leaf is not reclaimable now or swap is full.
     */
    long reclaimLeaf(final long va, final long entry, final PageSize size)
    {
        return process.notifiers.notifying(MmuNotifyEvent.CLEAR, "reclaim", () -> reclaimLeafNow(va, entry, size));
    }

    long reclaimLeafNow(final long leafVa, final long leafEntry, final PageSize leafSize)
    {
        final Vma v = process.vmaAt(leafVa);
        if (v == null || v.kind() == VmaKind.HUGETLB || v.has(Vma.VM_LOCKED) || !PageTable.present(leafEntry))
        {
            return 0;
        }
        // PAGE_SIZE is the smallest unit reclaim writes out: on a 16 or 64 KiB host a PTE leaf stands for its whole
        // base page (shrink_folio_list takes the folio).
        final BasePage base = host.config().basePage();
        final boolean basePage = leafSize == PageSize.SIZE_4K && base != BasePage.SIZE_4K;
        final long va = basePage ? leafVa & -base.bytes() : leafVa;
        final long unitFrames = basePage ? base.frames() : leafSize.frames();
        final long entry = basePage ? pageTable.lookup(va) : leafEntry;
        if (!PageTable.present(entry))
        {
            return 0;
        }
        final long pfn = PageTable.pfn(entry);
        if (pfn == phys.zeroPfn())
        {
            return 0;
        }
        final long head = frames.head(pfn);
        final int order = frames.order(head);
        if (frames.pinCount(head) > 0)
        {
            return 0;
        }
        // Anonymous pages are not even scanned without swap room (mm/vmscan.c can_reclaim_anon_pages).
        if (v.kind() != VmaKind.FILE && phys.swap().totalSlots() - phys.swap().usedSlots() < unitFrames)
        {
            return 0;
        }
        for (long p = head; p < head + (1L << order); p++)
        {
            if (frames.mapCount(p) > 1)
            {
                return 0;
            }
        }
        for (long p = 1; basePage && p < unitFrames; p++)
        {
            final long sub = pageTable.lookup(va + (p << FRAME_SHIFT));
            if (!PageTable.present(sub) || PageTable.pfn(sub) == phys.zeroPfn() || frames.mapCount(PageTable.pfn(sub)) > 1
                || frames.pinCount(frames.head(PageTable.pfn(sub))) > 0)
            {
                return 0;
            }
        }
        if (leafSize == PageSize.SIZE_2M)
        {
            pageTable.splitPmd(va);
            host.count(VmEvent.THP_SPLIT_PMD);
        }
        if (order > base.order())
        {
            frames.split(head, order, base.order());
            host.count(VmEvent.THP_SPLIT_PAGE);
        }
        long freed = 0;
        for (long p = 0; p < unitFrames; p++)
        {
            final long pageVa = va + (p << FRAME_SHIFT);
            final long pageEntry = pageTable.lookup(pageVa);
            final long pagePfn = PageTable.pfn(pageEntry);
            if (v.kind() == VmaKind.FILE)
            {
                pageTable.set(pageVa, PageSize.SIZE_4K, 0);
                host.count(VmEvent.PGSTEAL_FILE);
            }
            else
            {
                final long slot = phys.swap().store(frames.takeBytes(pagePfn));
                if (slot < 0)
                {
                    break;
                }
                pageTable.set(pageVa, PageSize.SIZE_4K, PageTable.make(slot, PageTable.SWAP));
                host.count(VmEvent.PSWPOUT);
            }
            frames.addMapCount(pagePfn, -1);
            if (frames.folioUnmapped(frames.head(pagePfn), frames.order(frames.head(pagePfn))))
            {
                phys.freeFolio(frames.head(pagePfn));
            }
            freed++;
        }
        return freed;
    }

    /** Points every 4 KiB PTE of this process that maps {@code oldPfn} at {@code newPfn}; returns how many. */
    int remapFrame(final long oldPfn, final long newPfn)
    {
        return (int)process.notifiers.notifying(MmuNotifyEvent.CLEAR, "migration", () -> remapFrameNow(oldPfn, newPfn));
    }

    int remapFrameNow(final long oldPfn, final long newPfn)
    {
        final int[] count = new int[1];
        for (final Vma v : vmas.list())
        {
            pageTable.forEachLeaf(v.startAddress(), v.endAddress(), (va, entry, size) ->
            {
                if (PageTable.present(entry) && size == PageSize.SIZE_4K && PageTable.pfn(entry) == oldPfn)
                {
                    pageTable.set(va, size, PageTable.make(newPfn, PageTable.flags(entry)));
                    count[0]++;
                }
            });
        }
        return count[0];
    }

    /** Splits every PMD of this process that maps the 2 MiB folio at {@code head}. */
    void splitPmdsOfFolio(final long head)
    {
        process.notifiers.notifying(MmuNotifyEvent.CLEAR, "THP split", () -> splitPmdsOfFolioNow(head));
    }

    void splitPmdsOfFolioNow(final long head)
    {
        final List<Long> found = new ArrayList<>();
        for (final Vma v : vmas.list())
        {
            if (v.kind() == VmaKind.HUGETLB)
            {
                continue;
            }
            pageTable.forEachLeaf(v.startAddress(), v.endAddress(), (va, entry, size) ->
            {
                if (PageTable.present(entry) && size == PageSize.SIZE_2M && PageTable.pfn(entry) == head)
                {
                    found.add(va);
                }
            });
        }
        for (final long va : found)
        {
            pageTable.splitPmd(va);
            host.count(VmEvent.THP_SPLIT_PMD);
        }
    }
}
