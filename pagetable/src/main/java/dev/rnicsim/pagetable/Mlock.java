package dev.rnicsim.pagetable;

import java.util.List;

/**
 * mlock(2) and munlock(2) of a process (mm/mlock.c {@code do_mlock}, {@code apply_vma_lock_flags}): VM_LOCKED set
 * on the range's VMAs, the range faulted in, charged to RLIMIT_MEMLOCK unless the process has CAP_IPC_LOCK; and
 * {@code mm->locked_vm}, the pages of the VM_LOCKED VMAs.
 *
 * <p>Part of {@link Mappings}. Not thread safe.
 */
final class Mlock
{
    private final UserProcess process;
    private final Mappings mappings;
    private final Host host;
    private final VmaTree vmas;

    /**
     * @param process  the process.
     * @param mappings its VMA side, whose range checks, VMA changes and zaps this uses.
     */
    Mlock(final UserProcess process, final Mappings mappings)
    {
        this.process = process;
        this.mappings = mappings;
        this.host = process.host();
        this.vmas = process.vmaTree();
    }

    /** {@link UserProcess#mlock}: mm/mlock.c {@code do_mlock}. */
    void mlock(final long address, final long lengthBytes)
    {
        process.checkAlive();
        process.limits.checkCanDoMlock();
        final long start = address & -mappings.basePageBytes();
        final long end = mappings.checkAlignedRange(start, lengthBytes + (address - start), false, Errno.EINVAL,
            "len");
        mappings.checkFullyMapped(start, end, "mlock");
        if (!process.limits.capIpcLock())
        {
            long newlyLocked = 0;
            for (final Vma v : vmas.overlapping(start, end))
            {
                if (!v.has(Vma.VM_LOCKED))
                {
                    newlyLocked += Math.min(end, v.endAddress()) - Math.max(start, v.startAddress());
                }
            }
            final int shift = host.config().basePage().shift();
            final long lockedPages = process.lockedVmPages() + (newlyLocked >>> shift);
            if (lockedPages > process.limits.memlockLimitPages(shift))
            {
                throw new KernelException(Errno.ENOMEM, "locked_vm=" + lockedPages + " pages would exceed "
                    + "RLIMIT_MEMLOCK=" + process.limits.memlockLimitPages(shift) + " pages ("
                    + process.limits.rlimitMemlockBytes() + " bytes)"
                    + "; raise 'ulimit -l' or lock less");
            }
        }
        final List<Vma> before = vmas.list();
        mappings.changeVmas(start, end, v -> v.withFlags(v.flagBits() | Vma.VM_LOCKED));
        try
        {
            for (final Vma v : vmas.overlapping(start, end))
            {
                process.faults.populate(Math.max(start, v.startAddress()), Math.min(end, v.endAddress()), v.writable());
            }
        }
        catch (final KernelException e)
        {
            // __mlock_posix_error_return turns the populate ENOMEM into EAGAIN. Linux keeps VM_LOCKED on the
            // range; this model keeps its rule that a failed call changes no VMA.
            vmas.restore(before);
            throw new KernelException(e.errno() == Errno.ENOMEM ? Errno.EAGAIN : e.errno(),
                "mlock could not fault in the whole range: " + e.getMessage());
        }
    }

    /** {@link UserProcess#munlock}: mm/mlock.c {@code apply_vma_lock_flags}. */
    void munlock(final long address, final long lengthBytes)
    {
        process.checkAlive();
        final long start = address & -mappings.basePageBytes();
        final long end = mappings.checkAlignedRange(start, lengthBytes + (address - start), false, Errno.EINVAL,
            "len");
        mappings.checkFullyMapped(start, end, "munlock");
        mappings.changeVmas(start, end, v -> v.withFlags(v.flagBits() & ~Vma.VM_LOCKED));
    }

    /** {@code mm->locked_vm} in base pages: the VM_LOCKED VMAs (mm/mlock.c). */
    long lockedVmPages()
    {
        long pages = 0;
        for (final Vma v : vmas.list())
        {
            if (v.has(Vma.VM_LOCKED))
            {
                pages += v.lengthBytes() >>> host.config().basePage().shift();
            }
        }
        return pages;
    }
}
