package dev.rnicsim.pagetable;

import static dev.rnicsim.pagetable.PhysicalMemory.FRAME_SHIFT;

import java.util.ArrayList;
import java.util.List;

/**
 * The page-table half of fork(2) for one parent and child (mm/memory.c {@code copy_page_range}): private pages
 * become shared copy-on-write (both entries write-protected, the mapcount raised), swap entries are shared, hugetlb
 * reservations stay with the parent, and on a {@link ForkBehaviour#MODERN} kernel a possibly pinned anonymous page
 * is copied for the child at once ({@code copy_present_page}; a pinned THP has the parent's PMD split first, as
 * {@code copy_huge_pmd} does; a pinned hugetlb page takes a pool page, commit 4eae4efa2c29).
 *
 * <p>{@link #dupMm} is the address-space half of fork(2) around it (kernel/fork.c {@code dup_mmap}): every VMA
 * but those marked VM_DONTCOPY (MADV_DONTFORK) is copied, without VM_LOCKED and without the hugetlb reservation.
 *
 * <p>Not thread safe.
 */
final class ForkCopier
{
    private final Host host;
    private final PhysicalMemory phys;
    private final FrameTable frames;
    private final PageTable pageTable;
    private final PageTable childTable;
    private final boolean modern;

    ForkCopier(final Host host, final UserProcess parent, final UserProcess child, final boolean modern)
    {
        this.host = host;
        this.phys = host.physicalMemory();
        this.frames = phys.frames();
        this.pageTable = parent.pageTable();
        this.childTable = child.pageTable();
        this.modern = modern;
    }

    /**
     * kernel/fork.c {@code dup_mmap} for {@link UserProcess#fork}: a new process with the parent's limits and a copy
     * of every VMA not marked VM_DONTCOPY, as one notifier operation (MMU_NOTIFY_PROTECTION_PAGE, "fork").
     *
     * @param parent    the forking process, alive.
     * @param childName the child's name.
     * @return the child.
     * @throws KernelException ENOMEM when memory runs out while copying pinned pages (the child is then gone).
     */
    static UserProcess dupMm(final UserProcess parent, final String childName)
    {
        final Host host = parent.host();
        final UserProcess child = host.newProcess(childName);
        child.inheritLimits(parent);
        final ForkCopier copier = new ForkCopier(host, parent, child,
            host.config().forkBehaviour() == ForkBehaviour.MODERN);
        final Notifiers.NotifyScope scope = parent.notifiers.openScope(MmuNotifyEvent.PROTECTION_PAGE, "fork");
        try
        {
            for (final Vma v : parent.vmas())
            {
                if (v.has(Vma.VM_DONTCOPY))
                {
                    continue;
                }
                child.vmaTree().put(v.withFlags(v.flagBits() & ~(Vma.VM_RESV_OWNER | Vma.VM_LOCKED)));
                copier.copyRange(v);
            }
        }
        catch (final KernelException e)
        {
            child.exit();
            throw e;
        }
        finally
        {
            parent.notifiers.closeScope(scope);
        }
        return child;
    }

    /**
     * Copies the entries of one VMA into the child.
     *
     * @throws KernelException ENOMEM when memory runs out while copying a pinned page.
     */
    void copyRange(final Vma v)
    {
        final List<long[]> leaves = new ArrayList<>();
        pageTable.forEachLeaf(v.startAddress(), v.endAddress(), (va, entry, size) ->
            leaves.add(new long[] {va, entry, size.ordinal()}));
        for (final long[] leaf : leaves)
        {
            final long va = leaf[0];
            final PageSize size = PageSize.ofOrdinal((int)leaf[2]);
            final long entry = pageTable.lookup(va);
            if (PageTable.size(entry) != size && size == PageSize.SIZE_2M)
            {
                // An earlier leaf of the same THP (32 or 512 MiB, a run of leaves here) split its PMD: copy the PTEs.
                for (int i = 0; i < 512; i++)
                {
                    final long subVa = va + ((long)i << FRAME_SHIFT);
                    copyLeaf(v, subVa, pageTable.lookup(subVa), PageSize.SIZE_4K);
                }
                continue;
            }
            copyLeaf(v, va, entry, size);
        }
    }

    private void copyLeaf(final Vma v, final long va, final long entry, final PageSize size)
    {
        if (entry == 0)
        {
            return;
        }
        if ((entry & PageTable.RESERVED) != 0)
        {
            return;
        }
        if ((entry & PageTable.SWAP) != 0)
        {
            phys.swap().duplicate(PageTable.pfn(entry));
            childTable.set(va, size, entry);
            return;
        }
        final long pfn = PageTable.pfn(entry);
        final boolean zero = pfn == phys.zeroPfn();
        final boolean pinned = !zero && frames.pinCount(frames.head(pfn)) > 0;
        if (modern && pinned)
        {
            copyPinned(v, va, entry, size);
            return;
        }
        final long shared = entry & ~PageTable.WRITE;
        pageTable.set(va, size, shared);
        childTable.set(va, size, shared);
        if (!zero)
        {
            frames.addMapCount(pfn, size.frames(), 1);
        }
    }

    private void copyPinned(final Vma v, final long va, final long entry, final PageSize size)
    {
        final long pfn = PageTable.pfn(entry);
        if (v.kind() == VmaKind.HUGETLB)
        {
            // copy_hugetlb_page_range: the whole huge page once, at its first leaf.
            final PageSize page = PageTable.pageSize(entry);
            if ((va & (page.bytes() - 1)) != 0)
            {
                return;
            }
            final long copy = phys.pool(page).availablePages() > 0 ? phys.takeHugetlbPage(page) : -1;
            if (copy < 0)
            {
                throw new KernelException(Errno.ENOMEM, "fork must copy a pinned hugetlb page of " + page.kb()
                    + " kB for the child but the pool has no unreserved free page"
                    + "; raise vm.nr_hugepages, or fork before pinning (or use MADV_DONTFORK on the range)");
            }
            for (long i = 0; i < page.frames(); i++)
            {
                frames.copyFrame(pfn + i, copy + i);
            }
            frames.addMapCount(copy, page.frames(), 1);
            childTable.setPage(va, page, copy, PageTable.flags(entry));
            return;
        }
        if (size == PageSize.SIZE_2M)
        {
            // copy_huge_pmd refuses to share a pinned THP: the parent's PMD is split and the PTEs copied one by one.
            pageTable.splitPmd(va);
            host.count(VmEvent.THP_SPLIT_PMD);
            for (int i = 0; i < 512; i++)
            {
                final long subVa = va + ((long)i << FRAME_SHIFT);
                copyPinned(v, subVa, pageTable.lookup(subVa), PageSize.SIZE_4K);
            }
            return;
        }
        // copy_present_page copies PAGE_SIZE: on a 16 or 64 KiB host the whole base page, at its first frame.
        final BasePage base = host.config().basePage();
        if ((va & (base.bytes() - 1)) != 0)
        {
            return;
        }
        final long copy = host.allocate(base.order(), true, Faults.kindOf(v), true);
        for (int i = 0; i < base.frames(); i++)
        {
            final long subVa = va + ((long)i << FRAME_SHIFT);
            final long subEntry = i == 0 ? entry : pageTable.lookup(subVa);
            if (!PageTable.present(subEntry))
            {
                continue;
            }
            final long target = copy >= 0 ? copy + i : host.allocate(0, true, Faults.kindOf(v), true);
            if (target < 0)
            {
                throw new KernelException(Errno.ENOMEM, "fork must copy a pinned page for the child: out of memory"
                    + "; free host memory, or fork before pinning (or use MADV_DONTFORK on the range)");
            }
            frames.copyFrame(PageTable.pfn(subEntry), target);
            frames.addMapCount(target, 1);
            childTable.set(subVa, PageSize.SIZE_4K, PageTable.make(target, PageTable.flags(subEntry)));
            host.count(VmEvent.COW_COPY);
        }
    }
}
