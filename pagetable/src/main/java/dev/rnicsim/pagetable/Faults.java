package dev.rnicsim.pagetable;

import static dev.rnicsim.pagetable.PhysicalMemory.FRAME_BYTES;
import static dev.rnicsim.pagetable.PhysicalMemory.FRAME_SHIFT;
import static dev.rnicsim.pagetable.UserProcess.TASK_SIZE;


/**
 * Page faults and CPU access of a process (mm/memory.c {@code handle_mm_fault}): demand paging
 * ({@code do_anonymous_page}, the shared zero page), THP ({@code do_huge_pmd_anonymous_page}), hugetlb
 * ({@code hugetlb_fault}), swap-in ({@code do_swap_page}) and copy-on-write ({@code do_wp_page}), plus the frame
 * release that follows an unmap (the deferred THP split of mm/huge_memory.c).
 *
 * <p>Copy-on-write is {@link CopyOnWrite}'s and swap-in {@link SwapIn}'s; this class dispatches each fault to
 * them, and they share its frame allocation and release.
 *
 * <p>Package-private: {@link UserProcess} is the system-call face. Not thread safe.
 */
final class Faults
{
    private final UserProcess process;
    private final Host host;
    private final PhysicalMemory phys;
    private final FrameTable frames;
    private final VmaTree vmas;
    private final PageTable pageTable;
    /** Copy-on-write faults ({@code do_wp_page}, {@code hugetlb_wp}). */
    private final CopyOnWrite cow;
    /** Swap-in faults ({@code do_swap_page}). */
    private final SwapIn swap;

    Faults(final UserProcess process)
    {
        this.process = process;
        this.host = process.host();
        this.phys = host.physicalMemory();
        this.frames = phys.frames();
        this.vmas = process.vmaTree();
        this.pageTable = process.pageTable();
        this.cow = new CopyOnWrite(this, host, pageTable);
        this.swap = new SwapIn(this, host, pageTable);
    }

    /** During an import: null follows the THP mode, TRUE forces 2 MiB folios, FALSE forbids them. */
    private Boolean importThp;

    /** {@link UserProcess#touch}: a CPU loop over the range, one {@code handle_mm_fault} per missing page. */
    long touch(final long address, final long lengthBytes, final boolean write)
    {
        process.checkAlive();
        if (lengthBytes <= 0)
        {
            return 0;
        }
        final long end = checkAccess(address, lengthBytes, write);
        final long faultsBefore = host.counter(VmEvent.PGFAULT);
        long va = address & ~(long)(FRAME_BYTES - 1);
        while (va < end)
        {
            final long entry = fault(va, write, false);
            final PageSize size = PageTable.size(entry);
            va = (va & ~(size.bytes() - 1)) + size.bytes();
        }
        return host.counter(VmEvent.PGFAULT) - faultsBefore;
    }

    /** {@link UserProcess#write}: a CPU store. */
    void write(final long address, final byte[] data)
    {
        process.checkAlive();
        if (data.length == 0)
        {
            return;
        }
        checkAccess(address, data.length, true);
        int done = 0;
        while (done < data.length)
        {
            final long va = address + done;
            final int chunk = (int)Math.min(data.length - done, FRAME_BYTES - (va & (FRAME_BYTES - 1)));
            final long entry = fault(va, true, false);
            frames.writeFrame(pfnOf(entry, va), (int)(va & (FRAME_BYTES - 1)), data, done, chunk);
            done += chunk;
        }
    }

    /** {@link UserProcess#read}: a CPU load. */
    byte[] read(final long address, final int lengthBytes)
    {
        process.checkAlive();
        if (lengthBytes <= 0)
        {
            return new byte[0];
        }
        checkAccess(address, lengthBytes, false);
        final byte[] data = new byte[lengthBytes];
        int done = 0;
        while (done < data.length)
        {
            final long va = address + done;
            final int chunk = (int)Math.min(data.length - done, FRAME_BYTES - (va & (FRAME_BYTES - 1)));
            final long entry = fault(va, false, false);
            frames.readFrame(pfnOf(entry, va), (int)(va & (FRAME_BYTES - 1)), data, done, chunk);
            done += chunk;
        }
        return data;
    }

    /** {@link UserProcess#translate}: a page-table walk without a fault. */
    long translate(final long address)
    {
        if (address < 0 || address >= TASK_SIZE)
        {
            return -1;
        }
        final long entry = pageTable.lookup(address);
        if (!PageTable.present(entry))
        {
            return -1;
        }
        return (pfnOf(entry, address) << FRAME_SHIFT) | (address & (FRAME_BYTES - 1));
    }

    /**
     * {@link UserProcess#mappedPageSize}: the size of the page a walk finds: a huge page's own size (a run of leaves
     * included), else the base page.
     */
    PageSize mappedPageSize(final long address)
    {
        final long entry = address < 0 || address >= TASK_SIZE ? 0 : pageTable.lookup(address);
        if (!PageTable.present(entry))
        {
            return null;
        }
        final PageSize page = PageTable.pageSize(entry);
        return page == PageSize.SIZE_4K ? host.config().basePage().pageSize() : page;
    }

    /**
     * Faults in {@code [start, end)} for an import, with 2 MiB folios where {@code thp} and the range allows and
     * with 4 KiB pages only when not, whatever the THP mode, so that a captured process's AnonHugePages is
     * reproduced.
     *
     * @return the number of 4 KiB pages now present in the range.
     */
    long populateForImport(final long start, final long end, final boolean thp)
    {
        final Vma v = process.vmaAt(start);
        importThp = thp;
        try
        {
            populate(start, end, v.writable() || !v.readable());
        }
        finally
        {
            importThp = null;
        }
        final long[] pages = {0};
        pageTable.forEachLeaf(start, end, (va, entry, size) ->
        {
            if (PageTable.present(entry))
            {
                pages[0] += size.frames();
            }
        });
        return pages[0];
    }

    /**
     * One page fault, as {@code handle_mm_fault}: on a host of 16 or 64 KiB base pages it resolves the whole base
     * page (every 4 KiB frame of it), since PAGE_SIZE is the smallest unit the kernel maps, copies or swaps.
     *
     * @return the leaf entry now mapping {@code va}.
     */
    long fault(final long va, final boolean write, final boolean pinning)
    {
        final BasePage base = host.config().basePage();
        if (base != BasePage.SIZE_4K)
        {
            final long before = pageTable.lookup(va);
            final Vma v = process.vmaAt(va);
            if (v != null && v.kind() == VmaKind.ANONYMOUS && PageTable.size(before) == PageSize.SIZE_4K)
            {
                if ((before & PageTable.SWAP) != 0)
                {
                    host.count(VmEvent.PAGE_WALKS);
                    host.count(VmEvent.PGFAULT);
                    return swap.inBasePage(va, v, pinning);
                }
                if (write && PageTable.present(before) && (before & PageTable.WRITE) == 0 && v.writable()
                    && PageTable.pfn(before) != phys.zeroPfn())
                {
                    host.count(VmEvent.PAGE_WALKS);
                    host.count(VmEvent.PGFAULT);
                    return process.notifiers.notifying(MmuNotifyEvent.CLEAR, "copy-on-write",
                        () -> cow.basePage(va, v, pinning));
                }
            }
        }
        final long entry = faultOne(va, write, pinning, true);
        if (base == BasePage.SIZE_4K || PageTable.size(entry) != PageSize.SIZE_4K)
        {
            return entry;
        }
        final long baseVa = va & -base.bytes();
        final long frameVa = va & -(long)FRAME_BYTES;
        for (long sub = baseVa; sub < baseVa + base.bytes(); sub += FRAME_BYTES)
        {
            if (sub != frameVa)
            {
                faultOne(sub, write, pinning, false);
            }
        }
        return pageTable.lookup(va);
    }

    /**
     * Why a child has no VMA where its parent has one: fork(2) does not copy a VM_DONTCOPY VMA (mm/mmap.c
     * {@code dup_mmap} skips it), which MADV_DONTFORK sets; libibverbs sets it on every registered range, widened to
     * whole pages, when fork support is on (ibv_fork_init(3)).
     *
     * @param va  the address that faulted.
     * @param fix the advice to give otherwise.
     * @return the explanation and its fix for such an address, else {@code fix}.
     */
    /**
     * The fix for an access that meets unmapped memory at {@code hole}: when the range is mapped before the hole and
     * again after it, a hole inside it (memory unmapped since, as an allocator frees it), which a range that merges
     * neighbouring buffers crosses: UCX's registration cache registered such unions and {@code ibv_reg_mr} failed
     * with EFAULT from {@code pin_user_pages} (mm/gup.c: no VMA at the address); its fix registers only the range
     * asked for when a merged one fails (openucx/ucx pull request 9592). Else {@code mapFirst}: map the whole range.
     */
    private String holeFix(final long start, final long hole, final long end, final String mapFirst)
    {
        long next = -1;
        for (final Vma v : process.vmas())
        {
            if (v.startAddress() > hole && v.startAddress() < end && (next < 0 || v.startAddress() < next))
            {
                next = v.startAddress();
            }
        }
        if (hole == start || next < 0)
        {
            return mapFirst;
        }
        return ": the range is mapped before and after a hole of " + (next - hole) + " bytes [0x"
            + Long.toHexString(hole) + ", 0x" + Long.toHexString(next) + ") (unmapped since, as when an allocator "
            + "frees it); use only mapped memory: a registration cache that merges neighbouring regions must not "
            + "register a union that spans unmapped memory (register the range asked for)";
    }

    private String notCopiedAtFork(final long va, final String fix)
    {
        final UserProcess parent = process.parent();
        final Vma there = parent == null || parent.exited() ? null : parent.vmaAt(va);
        if (there == null || (there.flagBits() & Vma.VM_DONTCOPY) == 0)
        {
            return fix;
        }
        return ": the parent (pid " + parent.pid() + ") maps it in a MADV_DONTFORK (VM_DONTCOPY) VMA, which fork does "
            + "not copy; libibverbs marks registered buffers so, in whole pages, when fork support is on (ibv_fork_init, "
            + "RDMAV_FORK_SAFE); keep what the child uses off the pages of registered buffers";
    }

    private long faultOne(final long va, final boolean write, final boolean pinning, final boolean counted)
    {
        if (counted)
        {
            host.count(VmEvent.PAGE_WALKS);
        }
        final long entry = pageTable.lookup(va);
        if (PageTable.present(entry) && (!write || (entry & PageTable.WRITE) != 0))
        {
            return entry;
        }
        final Vma v = process.vmaAt(va);
        if (v == null)
        {
            throw new SegmentationFault(va, "no VMA maps it"
                + " (find_vma finds none)" + notCopiedAtFork(va, "; touch only addresses an mmap covers"));
        }
        if (counted)
        {
            host.count(VmEvent.PGFAULT);
        }
        if (PageTable.present(entry))
        {
            return process.notifiers.notifying(MmuNotifyEvent.CLEAR, "copy-on-write", () -> copyOnWrite(va, entry, v, true, pinning));
        }
        if ((entry & PageTable.SWAP) != 0)
        {
            return swap.in(va, entry, v, pinning);
        }
        return newPage(va, v, entry, write, pinning);
    }

    long newPage(final long va, final Vma v, final long oldEntry, final boolean write, final boolean pinning)
    {
        final long writeBit = v.writable() ? PageTable.WRITE : 0;
        if (v.kind() == VmaKind.HUGETLB)
        {
            final PageSize size = v.hugePageSize();
            final HugetlbPool pool = phys.pool(size);
            final boolean reserved = (oldEntry & PageTable.RESERVED) != 0;
            if (!reserved && pool.availablePages() <= 0)
            {
                throw new KernelException(Errno.ENOMEM, "hugetlb fault (SIGBUS in a CPU) at 0x" + Long.toHexString(va)
                    + ": the " + size.kb() + " kB pool has no unreserved free page (HugePages_Free="
                    + pool.freePages() + ", HugePages_Rsvd=" + pool.reservedPages()
                    + "); raise vm.nr_hugepages or map fewer huge pages");
            }
            if (reserved)
            {
                pool.unreserve(1);
            }
            final long head = phys.takeHugetlbPage(size);
            final long hugeVa = va & ~(size.bytes() - 1);
            frames.addMapCount(head, size.frames(), 1);
            pageTable.setPage(hugeVa, size, head, PageTable.PRESENT | writeBit);
            return pageTable.lookup(va);
        }
        final BasePage base = host.config().basePage();
        final PageSize thp = base.thpSize();
        final long hugeVa = va & ~(thp.bytes() - 1);
        if ((importThp != null ? importThp : thpEligible(v)) && v.kind() == VmaKind.ANONYMOUS
            && hugeVa >= v.startAddress() && hugeVa + thp.bytes() <= v.endAddress() && pmdsNone(hugeVa, thp))
        {
            // do_huge_pmd_anonymous_page: one PMD-sized folio (2 MiB, or 32 or 512 MiB with 16 or 64 KiB pages).
            final long head = host.allocate(thp.order(), !pinning, FrameTable.KIND_ANON, false);
            if (head >= 0)
            {
                host.count(VmEvent.THP_FAULT_ALLOC);
                frames.addMapCount(head, thp.frames(), 1);
                pageTable.setPage(hugeVa, thp, head, PageTable.PRESENT | writeBit);
                return pageTable.lookup(va);
            }
            host.count(VmEvent.THP_FAULT_FALLBACK);
        }
        if (base != BasePage.SIZE_4K && v.kind() == VmaKind.ANONYMOUS)
        {
            return newBasePage(va, v, write, pinning);
        }
        if (!write && v.kind() == VmaKind.ANONYMOUS && importThp == null)
        {
            // do_anonymous_page: a read fault maps the shared zero page read-only and allocates nothing.
            final long entry = PageTable.make(phys.zeroPfn(), PageTable.PRESENT);
            pageTable.set(va, PageSize.SIZE_4K, entry);
            return entry;
        }
        final long pfn = allocatePageOrFail(v, pinning, va);
        final long entry = PageTable.make(pfn, PageTable.PRESENT | writeBit);
        frames.addMapCount(pfn, 1);
        pageTable.set(va, PageSize.SIZE_4K, entry);
        return entry;
    }

    /**
     * {@code do_anonymous_page} on a host of 16 or 64 KiB pages: a read fault maps the zero page over the whole base
     * page; a write fault allocates one naturally aligned folio of the base page's frames and maps all of them
     * (falling back to single frames when no such block is free).
     */
    private long newBasePage(final long va, final Vma v, final boolean write, final boolean pinning)
    {
        final BasePage base = host.config().basePage();
        final long baseVa = va & -base.bytes();
        if (!write && importThp == null)
        {
            final long zero = PageTable.make(phys.zeroPfn(), PageTable.PRESENT);
            for (long sub = baseVa; sub < baseVa + base.bytes(); sub += FRAME_BYTES)
            {
                if (pageTable.lookup(sub) == 0)
                {
                    pageTable.set(sub, PageSize.SIZE_4K, zero);
                }
            }
            return zero;
        }
        return mapBasePage(baseVa, va, v, pinning, sub -> pageTable.lookup(sub) == 0);
    }

    /**
     * Maps fresh zeroed frames at the 4 KiB slots of the base page at {@code baseVa} that {@code replace} selects:
     * one folio of the base page's order when the buddy allocator has one, else single frames.
     *
     * @return the entry now mapping {@code va}.
     */
    long mapBasePage(final long baseVa, final long va, final Vma v, final boolean pinning,
        final java.util.function.LongPredicate replace)
    {
        final BasePage base = host.config().basePage();
        final long writeBit = v.writable() ? PageTable.WRITE : 0;
        final long head = host.allocate(base.order(), !pinning, kindOf(v), true);
        for (int i = 0; i < base.frames(); i++)
        {
            final long sub = baseVa + ((long)i << FRAME_SHIFT);
            final long old = pageTable.lookup(sub);
            if (!replace.test(sub))
            {
                continue;
            }
            final long pfn = head >= 0 ? head + i : allocatePageOrFail(v, pinning, sub);
            frames.addMapCount(pfn, 1);
            pageTable.set(sub, PageSize.SIZE_4K, PageTable.make(pfn, PageTable.PRESENT | writeBit));
            if (PageTable.present(old) && PageTable.pfn(old) != phys.zeroPfn())
            {
                frames.addMapCount(PageTable.pfn(old), -1);
                releaseIfUnused(PageTable.pfn(old));
            }
        }
        if (head >= 0)
        {
            // Slots not replaced leave frames of the folio unmapped: give them back as the deferred split does.
            releaseIfUnused(head);
        }
        return pageTable.lookup(va);
    }

    /** @return true when nothing is mapped, swapped or reserved under any PMD of the THP at {@code hugeVa}. */
    private boolean pmdsNone(final long hugeVa, final PageSize thp)
    {
        for (long at = hugeVa; at < hugeVa + thp.bytes(); at += PageSize.SIZE_2M.bytes())
        {
            if (!pageTable.pmdNone(at))
            {
                return false;
            }
        }
        return true;
    }

    /**
     * {@code vma_thp_order}/{@code thp_vma_allowable_order}: anonymous memory not marked VM_NOHUGEPAGE, under THP
     * "always", or "madvise" with VM_HUGEPAGE. The size is the host's PMD ({@link BasePage#thpSize()}).
     */
    boolean thpEligible(final Vma v)
    {
        if (v.kind() != VmaKind.ANONYMOUS || v.has(Vma.VM_NOHUGEPAGE))
        {
            return false;
        }
        return switch (host.config().thpMode())
        {
            case ALWAYS -> true;
            case MADVISE -> v.has(Vma.VM_HUGEPAGE);
            case NEVER -> false;
        };
    }

    long allocatePageOrFail(final Vma v, final boolean pinning, final long va)
    {
        final long pfn = host.allocate(0, !pinning, kindOf(v), true);
        if (pfn < 0)
        {
            throw new KernelException(Errno.ENOMEM, "out of memory at 0x" + Long.toHexString(va) + ": no free frame"
                + (pinning ? " in ZONE_NORMAL" : "") + " and nothing left to reclaim (MemFree="
                + (phys.freeFrames() << 2) + " kB, swap used " + phys.swap().usedSlots() + " of "
                + phys.swap().totalSlots() + " slots)");
        }
        return pfn;
    }

    /**
     * Write fault on a write-protected present page, or an unshare for a read pin: {@link CopyOnWrite#copy}.
     */
    long copyOnWrite(final long va, final long entry, final Vma v, final boolean makeWritable,
        final boolean pinning)
    {
        return cow.copy(va, entry, v, makeWritable, pinning);
    }

    /**
     * Frees a folio that is neither pinned nor mapped; splits an unpinned large anonymous folio that is only
     * partly mapped and frees its unmapped pages (the deferred split of mm/huge_memory.c).
     */
    void releaseIfUnused(final long pfn)
    {
        final long head = frames.head(pfn);
        final int order = frames.order(head);
        if (frames.kind(head) == FrameTable.KIND_FREE || frames.kind(head) == FrameTable.KIND_ZERO)
        {
            return;
        }
        if (frames.pinCount(head) > 0)
        {
            if (order > 0 && frames.kind(head) != FrameTable.KIND_HUGETLB && !frames.folioUnmapped(head, order)
                && frames.mapCount(pfn) == 0)
            {
                host.count(VmEvent.THP_SPLIT_PAGE_FAILED);
            }
            return;
        }
        if (frames.folioUnmapped(head, order))
        {
            phys.freeFolio(head);
            return;
        }
        final int baseOrder = host.config().basePage().order();
        if (order > baseOrder && frames.kind(head) != FrameTable.KIND_HUGETLB && frames.anyUnmapped(head, order))
        {
            // split_huge_page makes folios of PAGE_SIZE (4 frames with 16 KiB pages, 16 with 64 KiB ones).
            frames.split(head, order, baseOrder);
            host.count(VmEvent.THP_SPLIT_PAGE);
            for (long p = head; p < head + (1L << order); p += 1L << baseOrder)
            {
                if (frames.folioUnmapped(p, baseOrder))
                {
                    phys.freeFolio(p);
                }
            }
        }
    }

    /** Checks that every byte of the range is mapped with the needed protection; returns the page-aligned end. */
    long checkAccess(final long address, final long lengthBytes, final boolean write)
    {
        return checkAccess(address, lengthBytes, write, true);
    }

    /**
     * @param cpu a CPU access, which on x86 may read any accessible VMA (arch/x86/mm/fault.c {@code access_error}:
     *            {@code vma_is_accessible}); else a get_user_pages access, which needs VM_READ to read
     *            (mm/gup.c {@code check_vma_flags}).
     */
    long checkAccess(final long address, final long lengthBytes, final boolean write, final boolean cpu)
    {
        final long end = address + lengthBytes;
        if (address < 0 || end < address || end > TASK_SIZE)
        {
            throw new SegmentationFault(address, "range of " + lengthBytes + " bytes leaves user space"
                + " (TASK_SIZE); keep the range below the end of user space");
        }
        long cursor = address;
        while (cursor < end)
        {
            final Vma v = process.vmaAt(cursor);
            if (v == null)
            {
                throw new SegmentationFault(cursor, "no VMA maps it"
                    + " (find_vma finds none)" + notCopiedAtFork(cursor, holeFix(address, cursor, end,
                    "; mmap the whole range first")));
            }
            if (write && !v.writable())
            {
                throw new SegmentationFault(cursor, "write to a VMA without PROT_WRITE (" + v.permissions() + ")");
            }
            if (!write && !v.readable() && (!cpu || (!v.writable() && !v.executable())))
            {
                throw new SegmentationFault(cursor, "read of a VMA without PROT_READ (" + v.permissions() + ")");
            }
            cursor = v.endAddress();
        }
        return UserProcess.alignUp(end, FRAME_BYTES);
    }

    void populate(final long start, final long end, final boolean write)
    {
        long va = start;
        while (va < end)
        {
            final long entry = fault(va, write, false);
            final PageSize size = PageTable.size(entry);
            va = (va & ~(size.bytes() - 1)) + size.bytes();
        }
    }

    void copyFrames(final long from, final long to, final long count)
    {
        for (long i = 0; i < count; i++)
        {
            frames.copyFrame(from + i, to + i);
        }
    }

    static byte kindOf(final Vma v)
    {
        return v.kind() == VmaKind.FILE ? FrameTable.KIND_FILE : FrameTable.KIND_ANON;
    }

    /** @return the frame number that maps {@code va} within the leaf {@code entry}. */
    static long pfnOf(final long entry, final long va)
    {
        final PageSize size = PageTable.size(entry);
        return PageTable.pfn(entry) + ((va & (size.bytes() - 1)) >>> FRAME_SHIFT);
    }
}
