package dev.rnicsim.pagetable;

import static dev.rnicsim.pagetable.UserProcess.TASK_SIZE;

import java.util.List;
import java.util.Set;

/**
 * The VMA side of a process's address space: mmap(2) and munmap(2) (mm/mmap.c {@code do_mmap},
 * {@code do_vmi_munmap}), mprotect(2) (mm/mprotect.c {@code mprotect_fixup}), madvise(2) (mm/madvise.c), mlock(2)
 * (mm/mlock.c) and the VMA splitting and merging they share ({@code __split_vma}, {@code vma_merge}), each checked
 * against {@code vm.max_map_count} before anything changes. Also the zap of a range's page-table entries
 * (mm/memory.c {@code zap_page_range_single}) that munmap and MADV_DONTNEED share.
 *
 * <p>madvise(2) is {@link Madvise}'s and mlock(2) {@link Mlock}'s, each on this class's range checks, VMA changes
 * and zaps.
 *
 * <p>Package-private: {@link UserProcess} is the system-call face. Not thread safe.
 */
final class Mappings
{
    private final UserProcess process;
    private final Host host;
    private final PhysicalMemory phys;
    private final FrameTable frames;
    private final VmaTree vmas;
    private final PageTable pageTable;
    /** madvise(2) (mm/madvise.c). */
    private final Madvise madvise;
    /** mlock(2) and munlock(2) (mm/mlock.c). */
    private final Mlock mlock;

    Mappings(final UserProcess process)
    {
        this.process = process;
        this.host = process.host();
        this.phys = host.physicalMemory();
        this.frames = phys.frames();
        this.vmas = process.vmaTree();
        this.pageTable = process.pageTable();
        this.madvise = new Madvise(process, this);
        this.mlock = new Mlock(process, this);
    }

    /** {@link UserProcess#mmap}: mm/mmap.c {@code do_mmap}. */
    long mmap(final long addressHint, final long lengthBytes, final Set<Prot> prot, final Set<MapFlag> flags)
    {
        process.checkAlive();
        java.util.Objects.requireNonNull(prot, "prot");
        java.util.Objects.requireNonNull(flags, "flags");
        if (lengthBytes <= 0)
        {
            throw new KernelException(Errno.EINVAL, "length=" + lengthBytes + " must be positive (mmap(2))");
        }
        if (flags.contains(MapFlag.PRIVATE) == flags.contains(MapFlag.SHARED))
        {
            throw new KernelException(Errno.EINVAL, "exactly one of MAP_PRIVATE and MAP_SHARED is required, got "
                + flags);
        }
        if (flags.contains(MapFlag.SHARED))
        {
            throw new KernelException(Errno.EOPNOTSUPP, "MAP_SHARED mappings are not modelled; use MAP_PRIVATE");
        }
        if (!flags.contains(MapFlag.ANONYMOUS))
        {
            throw new KernelException(Errno.EOPNOTSUPP,
                "file mappings are not modelled except by importing an smaps file; use MAP_ANONYMOUS");
        }
        final boolean hugetlb = flags.contains(MapFlag.HUGETLB);
        final PageSize hugeSize = hugetlb ? hugetlbSize(flags) : null;
        final long pageBytes = hugetlb ? hugeSize.bytes() : basePageBytes();
        if (lengthBytes > TASK_SIZE - pageBytes)
        {
            throw new KernelException(Errno.ENOMEM, "length=" + Long.toUnsignedString(lengthBytes) + " > TASK_SIZE="
                + TASK_SIZE
                + "; map less than TASK_SIZE bytes");
        }
        final long length = UserProcess.alignUp(lengthBytes, pageBytes);
        final boolean fixed = flags.contains(MapFlag.FIXED) || flags.contains(MapFlag.FIXED_NOREPLACE);
        final long start = fixed ? fixedStart(addressHint, length, pageBytes, flags)
            : unmappedArea(addressHint, length, hugetlb ? hugeSize.bytes() : thpAlign(length));
        final Vma vma = hugetlb
            ? new Vma(start, start + length, Prot.bits(prot), Vma.VM_RESV_OWNER, VmaKind.HUGETLB, hugeSize,
                UserProcess.HUGETLB_ANON_NAME, 0)
            : new Vma(start, start + length, Prot.bits(prot), 0, VmaKind.ANONYMOUS, PageSize.SIZE_4K, "", 0);
        final int countAfter = vmas.countAfterReplace(start, start + length, vma);
        // mm/mmap.c do_mmap: "if (mm->map_count > sysctl_max_map_count) return -ENOMEM", checked before the new VMA
        // is added, so a mapping may take the count to vm.max_map_count + 1 (a split, __split_vma, may not).
        if (vmas.size() > host.config().maxMapCount() || countAfter > host.config().maxMapCount() + 1)
        {
            throw new KernelException(Errno.ENOMEM, "this mapping would make " + countAfter
                + " VMAs > vm.max_map_count=" + host.config().maxMapCount()
                + "; raise vm.max_map_count or merge mappings (fewer, larger mmaps)");
        }
        Overcommit.check(host.config(), length, prot.contains(Prot.WRITE) && !flags.contains(MapFlag.NORESERVE),
            hugetlb);
        final long hugePages = length / pageBytes;
        if (hugetlb && phys.pool(hugeSize).availablePages() < hugePages)
        {
            final HugetlbPool pool = phys.pool(hugeSize);
            throw new KernelException(Errno.ENOMEM, "MAP_HUGETLB needs " + hugePages + " pages of " + hugeSize.kb()
                + " kB but the pool has HugePages_Free=" + pool.freePages() + " with HugePages_Rsvd="
                + pool.reservedPages() + " (vm.nr_hugepages=" + pool.totalPages() + ")");
        }
        // All checks passed: from here on nothing fails.
        if (fixed && vmas.overlaps(start, start + length))
        {
            // MAP_FIXED over existing mappings unmaps them first (do_mmap: do_vmi_munmap).
            for (final java.util.function.BiConsumer<Long, Long> hook : List.copyOf(process.unmapHooks))
            {
                hook.accept(start, length);
            }
            final long at = start;
            process.notifiers.notifying(MmuNotifyEvent.UNMAP, "mmap(MAP_FIXED)", () -> unmapRange(at, at + length));
        }
        vmas.insertAndMerge(vma);
        if (hugetlb)
        {
            // hugetlb_reserve_pages: the pages are promised now, taken at fault time.
            phys.pool(hugeSize).reserve(hugePages);
            for (long va = start; va < start + length; va += pageBytes)
            {
                pageTable.setPage(va, hugeSize, -1, PageTable.RESERVED);
            }
        }
        if (flags.contains(MapFlag.POPULATE))
        {
            try
            {
                process.faults.populate(start, start + length, vma.writable());
            }
            catch (final KernelException e)
            {
                // vm_mmap_pgoff ignores what mm_populate returns: the mapping stands, partly populated.
            }
        }
        return start;
    }

    /**
     * Checks a MAP_FIXED or MAP_FIXED_NOREPLACE address (mm/mmap.c {@code do_mmap}, {@code __get_unmapped_area}).
     *
     * @return the address, which the mapping will start at.
     */
    private long fixedStart(final long addressHint, final long length, final long pageBytes, final Set<MapFlag> flags)
    {
        if (addressHint < 0 || addressHint > TASK_SIZE - length)
        {
            throw new KernelException(Errno.ENOMEM, "fixed range 0x" + Long.toHexString(addressHint) + "+"
                + length + " passes TASK_SIZE=0x" + Long.toHexString(TASK_SIZE)
                + "; pick a fixed address with the whole range below TASK_SIZE");
        }
        if ((addressHint & (pageBytes - 1)) != 0)
        {
            throw new KernelException(Errno.EINVAL, "fixed address 0x" + Long.toHexString(addressHint)
                + " is not aligned to " + pageBytes + " bytes"
                + " (MAP_FIXED needs an aligned address); align the address to the page size");
        }
        if (addressHint < host.config().mmapMinAddrBytes())
        {
            throw new KernelException(Errno.EPERM, "fixed address 0x" + Long.toHexString(addressHint)
                + " < vm.mmap_min_addr=" + host.config().mmapMinAddrBytes()
                + "; pick an address at or above vm.mmap_min_addr");
        }
        if (flags.contains(MapFlag.FIXED_NOREPLACE) && vmas.overlaps(addressHint, addressHint + length))
        {
            throw new KernelException(Errno.EEXIST, "MAP_FIXED_NOREPLACE range 0x" + Long.toHexString(addressHint)
                + "-0x" + Long.toHexString(addressHint + length) + " overlaps an existing mapping"
                + "; pick a free range or munmap the old mapping first");
        }
        checkHugetlbAligned(addressHint, addressHint + length, "MAP_FIXED");
        return addressHint;
    }

    /**
     * The hstate of a MAP_HUGETLB mapping (mm/mmap.c {@code ksys_mmap_pgoff}: {@code hstate_sizelog} of the
     * MAP_HUGE_* bits, EINVAL when the kernel has no such size; the default hstate without one).
     */
    private PageSize hugetlbSize(final Set<MapFlag> flags)
    {
        final BasePage base = host.config().basePage();
        PageSize chosen = null;
        for (final PageSize size : PageSize.values())
        {
            final MapFlag flag = MapFlag.hugeSize(size);
            if (flag != null && flags.contains(flag))
            {
                if (chosen != null)
                {
                    throw new KernelException(Errno.EINVAL, MapFlag.hugeSize(chosen) + " and " + flag
                        + " are exclusive: MAP_HUGE_* encodes one size; give only one of them");
                }
                chosen = size;
            }
        }
        if (chosen == null)
        {
            return base.defaultHugetlbSize();
        }
        if (!base.hugetlbSizes().contains(chosen))
        {
            throw new KernelException(Errno.EINVAL, "MAP_HUGETLB with MAP_HUGE_" + chosen.word().toUpperCase(java.util.Locale.ROOT)
                + "B: a host of " + base.kb() + " KiB pages has no hstate of that size (its sizes: "
                + base.hugetlbSizes().stream().map(PageSize::word).toList() + "; arch/arm64/mm/hugetlbpage.c "
                + "hugetlbpage_init); give one of those sizes, or drop MAP_HUGE_* for the default size");
        }
        return chosen;
    }

    /**
     * {@code thp_get_unmapped_area}: alignment to the THP size (the PMD: 2 MiB, or 32 or 512 MiB with 16 or 64 KiB
     * pages) for a length of whole THPs while THP is not "never".
     */
    private long thpAlign(final long length)
    {
        final long thp = host.config().basePage().thpSize().bytes();
        return host.config().thpMode() != ThpMode.NEVER && length % thp == 0 ? thp : basePageBytes();
    }

    /** {@code get_unmapped_area}: the hint when it is aligned, free and allowed, else top-down placement. */
    private long unmappedArea(final long addressHint, final long length, final long align)
    {
        final boolean hintFits = addressHint != 0 && (addressHint & (align - 1)) == 0
            && addressHint >= host.config().mmapMinAddrBytes() && addressHint <= TASK_SIZE - length
            && !vmas.overlaps(addressHint, addressHint + length);
        return hintFits ? addressHint : findFreeRange(length, align);
    }

    /** @return the host's {@code PAGE_SIZE}: what lengths round up to and addresses align to. */
    long basePageBytes()
    {
        return host.config().basePage().bytes();
    }

    /** {@link UserProcess#munmap}: mm/mmap.c {@code do_vmi_munmap}. */
    void munmap(final long address, final long lengthBytes)
    {
        process.checkAlive();
        final long end = checkAlignedRange(address, lengthBytes, true, Errno.EINVAL, "length");
        checkHugetlbAligned(address, end, "munmap");
        final int countAfter = vmas.countAfterCarve(address, end);
        if (countAfter > vmas.size() && countAfter > host.config().maxMapCount())
        {
            throw new KernelException(Errno.ENOMEM, "munmap would split a VMA into " + countAfter
                + " VMAs > vm.max_map_count=" + host.config().maxMapCount()
                + "; raise vm.max_map_count or change whole VMAs");
        }
        for (final java.util.function.BiConsumer<Long, Long> hook : List.copyOf(process.unmapHooks))
        {
            hook.accept(address, end - address);
        }
        process.notifiers.notifying(MmuNotifyEvent.UNMAP, "munmap", () -> unmapRange(address, end));
    }

    /** {@link UserProcess#mprotect}: mm/mprotect.c {@code do_mprotect_pkey}. */
    void mprotect(final long address, final long lengthBytes, final Set<Prot> prot)
    {
        process.checkAlive();
        if (lengthBytes == 0 && (address & (basePageBytes() - 1)) == 0)
        {
            return;
        }
        final long end = checkAlignedRange(address, lengthBytes, false, Errno.ENOMEM, "len");
        checkFullyMapped(address, end, "mprotect");
        checkHugetlbAligned(address, end, "mprotect");
        final int bits = Prot.bits(prot);
        changeVmas(address, end, v -> v.withProt(bits));
        if ((bits & Prot.READ.bit()) == 0)
        {
            // change_protection tells the notifiers of the whole range (MMU_NOTIFY_PROTECTION_VMA): a device holding
            // even a read-only translation of a page that may no longer be read must drop it.
            process.notifiers.notifying(MmuNotifyEvent.PROTECTION_VMA, "mprotect", () -> process.notifiers.notifyPresent(address, end));
        }
        if ((bits & Prot.WRITE.bit()) == 0)
        {
            process.notifiers.notifying(MmuNotifyEvent.PROTECTION_VMA, "mprotect", () -> pageTable.forEachLeaf(address, end,
                (va, entry, size) ->
                {
                    if (PageTable.present(entry))
                    {
                        pageTable.set(va, size, entry & ~PageTable.WRITE);
                    }
                }));
        }
    }

    /** {@link UserProcess#madvise}: {@link Madvise#madvise}. */
    void madvise(final long address, final long lengthBytes, final Madvice advice)
    {
        madvise.madvise(address, lengthBytes, advice);
    }

    /** {@link UserProcess#mlock}: {@link Mlock#mlock}. */
    void mlock(final long address, final long lengthBytes)
    {
        mlock.mlock(address, lengthBytes);
    }

    /** {@link UserProcess#munlock}: {@link Mlock#munlock}. */
    void munlock(final long address, final long lengthBytes)
    {
        mlock.munlock(address, lengthBytes);
    }

    /**
     * Adds a VMA at a fixed place, as an import from /proc/PID/smaps does.
     *
     * @throws KernelException EINVAL when it overlaps a VMA or leaves the user address range; ENOMEM past
     *                         {@code vm.max_map_count}; ENOMEM when a hugetlb VMA finds too few pool pages.
     */
    void addImportedVma(final Vma vma)
    {
        process.checkAlive();
        if (vma.startAddress() < 0 || vma.endAddress() > TASK_SIZE || vma.startAddress() >= vma.endAddress()
            || vmas.overlaps(vma.startAddress(), vma.endAddress()))
        {
            throw new KernelException(Errno.EINVAL, "imported VMA 0x" + Long.toHexString(vma.startAddress()) + "-0x"
                + Long.toHexString(vma.endAddress()) + " is empty, outside user space or overlaps another"
                + "; import a capture whose areas are non-empty, in user space and disjoint");
        }
        if (vmas.size() + 1 > host.config().maxMapCount())
        {
            throw new KernelException(Errno.ENOMEM, "VMA " + (vmas.size() + 1) + " > vm.max_map_count="
                + host.config().maxMapCount()
                + "; raise vm.max_map_count");
        }
        if (vma.kind() == VmaKind.HUGETLB)
        {
            final long pages = vma.lengthBytes() / vma.hugePageSize().bytes();
            final HugetlbPool pool = phys.pool(vma.hugePageSize());
            if (pool.availablePages() < pages)
            {
                throw new KernelException(Errno.ENOMEM, "hugetlb VMA needs " + pages + " pages of "
                    + vma.hugePageSize().kb() + " kB; pool has " + pool.availablePages() + " unreserved free"
                    + "; raise vm.nr_hugepages or map fewer huge pages");
            }
            pool.reserve(pages);
            for (long va = vma.startAddress(); va < vma.endAddress(); va += vma.hugePageSize().bytes())
            {
                pageTable.setPage(va, vma.hugePageSize(), -1, PageTable.RESERVED);
            }
        }
        vmas.put(vma);
    }

    /** {@code mm->locked_vm} in base pages: {@link Mlock#lockedVmPages}. */
    long lockedVmPages()
    {
        return mlock.lockedVmPages();
    }

    /** Removes every mapping, as exit does, without ending the process. */
    void unmapAll()
    {
        unmapRange(0, TASK_SIZE);
    }

    void unmapRange(final long start, final long end)
    {
        splitHugePmdsAtEdges(start, end);
        zapRange(start, end);
        vmas.carve(start, end);
    }

    void zapRange(final long start, final long end)
    {
        pageTable.forEachLeaf(start, end, (va, entry, size) ->
        {
            pageTable.set(va, size, 0);
            final PageSize page = PageTable.pageSize(entry);
            if ((entry & PageTable.RESERVED) != 0)
            {
                // One reservation per huge page: given back at the page's first leaf (hugetlb_vm_op_close).
                if ((va & (page.bytes() - 1)) == 0)
                {
                    phys.pool(page).unreserve(1);
                }
            }
            else if ((entry & PageTable.SWAP) != 0)
            {
                phys.swap().release(PageTable.pfn(entry));
            }
            else if (PageTable.present(entry) && PageTable.pfn(entry) != phys.zeroPfn())
            {
                final long pfn = PageTable.pfn(entry);
                frames.addMapCount(pfn, size.frames(), -1);
                process.faults.releaseIfUnused(pfn);
            }
        });
    }

    void splitHugePmdsAtEdges(final long start, final long end)
    {
        for (final long edge : new long[] {start, end})
        {
            if (edge <= 0 || edge >= TASK_SIZE)
            {
                continue;
            }
            final long entry = pageTable.lookup(edge);
            final Vma v = process.vmaAt(edge);
            if (PageTable.present(entry) && PageTable.size(entry) == PageSize.SIZE_2M
                && (edge & (PageTable.pageSize(entry).bytes() - 1)) != 0 && v != null && v.kind() != VmaKind.HUGETLB)
            {
                pageTable.splitPmd(edge);
                host.count(VmEvent.THP_SPLIT_PMD);
            }
        }
    }

    /**
     * Applies a change to the VMAs of a range, splitting and merging them, after checking (before anything changes)
     * that no hugetlb VMA is cut inside a huge page (hugetlb_vm_op_split: EINVAL) and that the VMA count after the
     * change, merges included, stays within {@code vm.max_map_count} (ENOMEM).
     */
    void changeVmas(final long start, final long end, final java.util.function.UnaryOperator<Vma> change)
    {
        checkHugetlbAligned(start, end, "splitting a VMA");
        // vma_modify splits and merges around the range only: the count is found from its neighbourhood, so a
        // change costs the VMAs it touches, not all of the process's (mm/madvise.c madvise_update_vma).
        final int countAfter = vmas.countAfterChange(start, end, change);
        // Only a split checks the limit (__split_vma: map_count >= sysctl_max_map_count); a change of whole VMAs
        // needs none, so it passes even when an mmap took the count one past the limit.
        if (countAfter > vmas.size() && countAfter > host.config().maxMapCount())
        {
            throw new KernelException(Errno.ENOMEM, "the change would leave " + countAfter
                + " VMAs > vm.max_map_count=" + host.config().maxMapCount() + "; raise vm.max_map_count or munmap "
                + "VMAs first");
        }
        // __split_vma -> vma_adjust_trans_huge: a PMD mapping never straddles two VMAs.
        splitHugePmdsAtEdges(start, end);
        vmas.change(start, end, change);
    }

    long findFreeRange(final long length, final long align)
    {
        final long start = vmas.findFreeRange(length, align, host.config().mmapMinAddrBytes(), UserProcess.MMAP_BASE);
        if (start < 0)
        {
            throw new KernelException(Errno.ENOMEM, "no free range of " + length + " bytes aligned to " + align
                + " below UserProcess.MMAP_BASE=0x" + Long.toHexString(UserProcess.MMAP_BASE)
                + "; munmap what is no longer used or map less");
        }
        return start;
    }

    /**
     * Checks address alignment and length; returns the page-aligned end.
     *
     * @param lengthName the system call's name of its length argument in its man page: {@code length} (munmap(2),
     *                   madvise(2)) or {@code len} (mprotect(2), mlock(2)).
     */
    long checkAlignedRange(final long address, final long lengthBytes, final boolean zeroIsError,
        final Errno overflowErrno, final String lengthName)
    {
        if (address < 0 || address >= TASK_SIZE)
        {
            // munmap: EINVAL for start > TASK_SIZE; mprotect, madvise, mlock: ENOMEM, nothing is mapped there.
            throw new KernelException(zeroIsError ? Errno.EINVAL : Errno.ENOMEM, "address 0x" + Long.toHexString(address)
                + " is outside the user address space (TASK_SIZE=0x" + Long.toHexString(TASK_SIZE) + ")"
                + " and must be below it; give a user-space address");
        }
        if ((address & (basePageBytes() - 1)) != 0)
        {
            throw new KernelException(Errno.EINVAL, "address 0x" + Long.toHexString(address)
                + " is not aligned to the " + basePageBytes() + "-byte base page"
                + " (PAGE_MASK); align the address to the base page size");
        }
        if (lengthBytes < 0)
        {
            throw new KernelException(overflowErrno, lengthName + "=" + lengthBytes + " is negative"
                + "; give a positive length");
        }
        if (lengthBytes == 0 && zeroIsError)
        {
            throw new KernelException(Errno.EINVAL, lengthName + "=0 must be positive");
        }
        final long end = UserProcess.alignUp(address + lengthBytes, basePageBytes());
        if (address + lengthBytes < address || end < address || end > TASK_SIZE)
        {
            throw new KernelException(zeroIsError ? Errno.EINVAL : overflowErrno, "range 0x"
                + Long.toHexString(address) + "+" + lengthBytes + " passes TASK_SIZE=0x" + Long.toHexString(TASK_SIZE)
                + "; keep the range below TASK_SIZE");
        }
        return end;
    }

    void checkFullyMapped(final long start, final long end, final String call)
    {
        final long cursor = vmas.firstHole(start, end);
        if (cursor < end)
        {
            throw new KernelException(Errno.ENOMEM, call + ": 0x" + Long.toHexString(cursor)
                + " in range 0x" + Long.toHexString(start) + "-0x" + Long.toHexString(end) + " is not mapped"
                + " (find_vma finds none for it); mmap the range first");
        }
    }

    void checkHugetlbAligned(final long start, final long end, final String call)
    {
        for (final Vma v : vmas.overlapping(start, end))
        {
            if (v.kind() != VmaKind.HUGETLB)
            {
                continue;
            }
            final long mask = v.hugePageSize().bytes() - 1;
            if ((start > v.startAddress() && (start & mask) != 0) || (end < v.endAddress() && (end & mask) != 0))
            {
                throw new KernelException(Errno.EINVAL, call + " range 0x" + Long.toHexString(start) + "-0x"
                    + Long.toHexString(end) + " cuts through a " + v.hugePageSize().kb() + " kB hugetlb page"
                    + " (hugetlb_vm_op_split refuses it); give a range aligned to the huge page size");
            }
        }
    }
}
