package dev.rnicsim.pagetable;

/**
 * madvise(2) of a process (mm/madvise.c {@code do_madvise}): MADV_DONTNEED zaps the range (refused on VM_LOCKED
 * areas, clipped to whole huge pages in a hugetlb VMA), MADV_COLLAPSE runs khugepaged's collapse, and the flag
 * advices (HUGEPAGE, NOHUGEPAGE, DONTFORK, DOFORK) change the VMAs, a split past {@code vm.max_map_count} turning
 * into EAGAIN.
 *
 * <p>Part of {@link Mappings}. Not thread safe.
 */
final class Madvise
{
    private final UserProcess process;
    private final Mappings mappings;
    private final VmaTree vmas;

    /**
     * @param process  the process.
     * @param mappings its VMA side, whose range checks, VMA changes and zaps this uses.
     */
    Madvise(final UserProcess process, final Mappings mappings)
    {
        this.process = process;
        this.mappings = mappings;
        this.vmas = process.vmaTree();
    }

    /** {@link UserProcess#madvise}: mm/madvise.c {@code do_madvise}. */
    void madvise(final long address, final long lengthBytes, final Madvice advice)
    {
        process.checkAlive();
        if (lengthBytes == 0 && (address & (mappings.basePageBytes() - 1)) == 0)
        {
            return;
        }
        final long end = mappings.checkAlignedRange(address, lengthBytes, false, Errno.EINVAL, "length");
        mappings.checkFullyMapped(address, end, "madvise");
        if (advice == Madvice.DONTNEED)
        {
            for (final Vma v : vmas.overlapping(address, end))
            {
                if (v.has(Vma.VM_LOCKED))
                {
                    throw new KernelException(Errno.EINVAL, "MADV_DONTNEED on a VM_LOCKED area at 0x"
                        + Long.toHexString(v.startAddress())
                        + "; munlock the range first");
                }
            }
            // madvise_dontneed_free_valid_vma: in a hugetlb VMA the start must be huge-page aligned and the end is
            // rounded down to a huge page (Linux 6.2+), so a partial huge page is left alone.
            long zapEnd = end;
            for (final Vma v : vmas.overlapping(address, end))
            {
                if (v.kind() == VmaKind.HUGETLB)
                {
                    final long mask = v.hugePageSize().bytes() - 1;
                    if (address > v.startAddress() && (address & mask) != 0)
                    {
                        throw new KernelException(Errno.EINVAL, "MADV_DONTNEED start 0x" + Long.toHexString(address)
                            + " is not aligned to the " + v.hugePageSize().kb() + " kB pages of its hugetlb VMA"
                            + "; align the start to the huge page size");
                    }
                    if (end < v.endAddress())
                    {
                        zapEnd = Math.max(address, end & ~mask);
                    }
                }
            }
            final long zapTo = zapEnd;
            process.notifiers.notifying(MmuNotifyEvent.CLEAR, "madvise(MADV_DONTNEED)", () ->
            {
                mappings.splitHugePmdsAtEdges(address, zapTo);
                mappings.zapRange(address, zapTo);
            });
            return;
        }
        if (advice == Madvice.COLLAPSE)
        {
            new Khugepaged(process).collapse(address, end);
            return;
        }
        final int set;
        final int clear;
        switch (advice)
        {
            case HUGEPAGE -> { set = Vma.VM_HUGEPAGE; clear = Vma.VM_NOHUGEPAGE; }
            case NOHUGEPAGE -> { set = Vma.VM_NOHUGEPAGE; clear = Vma.VM_HUGEPAGE; }
            case DONTFORK -> { set = Vma.VM_DONTCOPY; clear = 0; }
            case DOFORK -> { set = 0; clear = Vma.VM_DONTCOPY; }
            default -> throw new IllegalStateException(advice.name());
        }
        try
        {
            mappings.changeVmas(address, end, v -> v.withFlags((v.flagBits() | set) & ~clear));
        }
        catch (final KernelException e)
        {
            // mm/madvise.c madvise_vma_behavior: "madvise() returns EAGAIN if kernel resources, such as slab, are
            // temporarily unavailable": the ENOMEM of a split past vm.max_map_count reaches the caller as EAGAIN
            // (madvise(2), ERRORS). The range is known to be mapped here, so ENOMEM can only be that split.
            if (e.errno() != Errno.ENOMEM)
            {
                throw e;
            }
            throw new KernelException(Errno.EAGAIN, "madvise(MADV_" + advice.name() + ") would split VMAs past "
                + "vm.max_map_count (madvise turns the split's ENOMEM into EAGAIN): " + e.detail());
        }
    }
}
