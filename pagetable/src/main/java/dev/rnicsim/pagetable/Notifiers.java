package dev.rnicsim.pagetable;

import static dev.rnicsim.pagetable.PhysicalMemory.FRAME_BYTES;
import static dev.rnicsim.pagetable.PhysicalMemory.FRAME_SHIFT;
import static dev.rnicsim.pagetable.UserProcess.TASK_SIZE;

import java.util.ArrayList;
import java.util.List;

/**
 * Interval notifiers on a process's address space (mm/mmu_notifier.c {@code mmu_interval_notifier_insert},
 * {@code mmu_notifier_invalidate_range_start}) and {@code hmm_range_fault} (mm/hmm.c). Every page-table change
 * runs inside a {@link NotifyScope} that names its cause, so that one reclaim pass, one fork or one compaction is
 * one operation to the notifiers.
 *
 * <p>Package-private: {@link UserProcess} is the system-call face. Not thread safe.
 */
final class Notifiers
{
    private final UserProcess process;
    private final Host host;
    private final PhysicalMemory phys;
    private final FrameTable frames;
    private final VmaTree vmas;
    private final PageTable pageTable;

    Notifiers(final UserProcess process)
    {
        this.process = process;
        this.host = process.host();
        this.phys = host.physicalMemory();
        this.frames = phys.frames();
        this.vmas = process.vmaTree();
        this.pageTable = process.pageTable();
    }

    /** Interval notifiers, in insertion order; {@link #intervalArray} is their snapshot for delivery. */
    private final List<MmuInterval> intervals = new ArrayList<>();
    private MmuInterval[] intervalArray = new MmuInterval[0];
    /** The cause of the page-table changes made now, told to interval notifiers. */
    private MmuNotifyEvent notifyEvent = MmuNotifyEvent.CLEAR;
    private String notifyReason = "page-table change";
    private long notifyOperation = -1;
    private long operations;

    /**
     * The notification cause that {@link #openScope} replaced and {@link #closeScope} restores.
     *
     * @param event     the cause told to interval notifiers.
     * @param reason    the operation's name, as told.
     * @param operation the operation number, or -1 outside any operation.
     */
    record NotifyScope(MmuNotifyEvent event, String reason, long operation)
    {
    }

    /** {@link UserProcess#insertIntervalNotifier}: mm/mmu_notifier.c {@code mmu_interval_notifier_insert}. */
    MmuInterval insertIntervalNotifier(final long address, final long lengthBytes, final MmuInterval.Ops ops)
    {
        process.checkAlive();
        java.util.Objects.requireNonNull(ops, "ops");
        final long start = address & ~(long)(FRAME_BYTES - 1);
        final long end = address + lengthBytes;
        if (lengthBytes <= 0 || address < 0 || end < address || end > TASK_SIZE)
        {
            throw new KernelException(Errno.EINVAL, "interval 0x" + Long.toHexString(address) + "+" + lengthBytes
                + " is empty, wraps or leaves user space (TASK_SIZE=0x" + Long.toHexString(TASK_SIZE) + ")"
                + "; give a non-empty range in user space");
        }
        final MmuInterval interval = new MmuInterval(process, start, UserProcess.alignUp(end, FRAME_BYTES), ops);
        intervals.add(interval);
        intervalArray = intervals.toArray(new MmuInterval[0]);
        pageTable.listener(this::leafChanging);
        return interval;
    }

    /** {@link UserProcess#intervalNotifierCount}: the interval notifiers installed now. */
    int intervalNotifierCount()
    {
        return intervals.size();
    }

    void removeInterval(final MmuInterval interval)
    {
        intervals.remove(interval);
        intervalArray = intervals.toArray(new MmuInterval[0]);
        if (intervals.isEmpty())
        {
            pageTable.listener(null);
        }
    }

    /** {@link UserProcess#hmmRangeFault}: mm/hmm.c {@code hmm_range_fault}. */
    long hmmRangeFault(final long address, final long lengthBytes, final boolean fault, final boolean write,
        final HmmVisitor visitor)
    {
        process.checkAlive();
        final long end = address + lengthBytes;
        if (lengthBytes <= 0 || address < 0 || end < address || end > TASK_SIZE)
        {
            throw new KernelException(Errno.EFAULT, "hmm range 0x" + Long.toHexString(address) + "+" + lengthBytes
                + " is empty or leaves user space"
                + " (TASK_SIZE); give a non-empty range in user space");
        }
        // hmm_range_fault walks PAGE_SIZE entries: on a 16 or 64 KiB host a base page is one walk and one report,
        // though the visitor is still told each 4 KiB frame of it.
        final long baseMask = host.config().basePage().bytes() - 1;
        long reported = 0;
        long va = address & ~(long)(FRAME_BYTES - 1);
        while (va < end)
        {
            final boolean pageStart = va == (address & ~(long)(FRAME_BYTES - 1)) || (va & baseMask) == 0;
            final long entry;
            if (fault)
            {
                final Vma v = process.vmaAt(va);
                if (v == null)
                {
                    throw new KernelException(Errno.EFAULT, "hmm_range_fault at 0x" + Long.toHexString(va)
                        + ": no VMA maps it"
                        + " (find_vma finds none); mmap the range first");
                }
                if (write ? !v.writable() : !v.readable())
                {
                    throw new KernelException(Errno.EFAULT, "hmm_range_fault at 0x" + Long.toHexString(va)
                        + ": the VMA (" + v.permissions() + ") does not allow a device " + (write ? "write" : "read")
                        + "; mprotect the range to allow it, or fault it for " + (write ? "read only" : "write"));
                }
                entry = process.faults.fault(va, write, false);
            }
            else
            {
                if (pageStart)
                {
                    host.count(VmEvent.PAGE_WALKS);
                }
                final Vma v = process.vmaAt(va);
                // hmm_vma_walk_test: pages of a VMA without VM_READ are reported as errors, not mapped.
                entry = v == null || !v.readable() ? 0 : pageTable.lookup(va);
            }
            if (PageTable.present(entry))
            {
                visitor.page(va, Faults.pfnOf(entry, va) << FRAME_SHIFT, (entry & PageTable.WRITE) != 0);
                reported += pageStart ? 1 : 0;
            }
            va += FRAME_BYTES;
        }
        return reported;
    }

    void leafChanging(final long va, final PageSize size)
    {
        final long end = va + size.bytes();
        final long op = notifyOperation >= 0 ? notifyOperation : ++operations;
        MmuRange range = null;
        for (final MmuInterval i : intervalArray)
        {
            if (i.overlaps(va, end) && !i.isRemoved())
            {
                if (range == null)
                {
                    range = new MmuRange(va, end, notifyEvent, notifyReason, op);
                }
                i.invalidate(range);
            }
        }
    }

    /** Runs {@code body} with page-table changes told to interval notifiers as caused by one operation. */
    void notifying(final MmuNotifyEvent event, final String reason, final Runnable body)
    {
        notifying(event, reason, () ->
        {
            body.run();
            return 0L;
        });
    }

    long notifying(final MmuNotifyEvent event, final String reason,
        final java.util.function.LongSupplier body)
    {
        final NotifyScope saved = openScope(event, reason);
        try
        {
            return body.getAsLong();
        }
        finally
        {
            closeScope(saved);
        }
    }

    /**
     * Opens a scope in which page-table changes are told to interval notifiers as one operation with this cause. A
     * scope opened inside one with the same cause joins it (every page of one reclaim pass, one fork, one compaction
     * is one operation); another cause opens an operation of its own (reclaim run by an allocation inside a
     * copy-on-write fault is reclaim).
     *
     * @return what {@link #closeScope} restores.
     */
    NotifyScope openScope(final MmuNotifyEvent event, final String reason)
    {
        final NotifyScope saved = new NotifyScope(notifyEvent, notifyReason, notifyOperation);
        if (notifyOperation < 0 || notifyEvent != event || !notifyReason.equals(reason))
        {
            notifyEvent = event;
            notifyReason = reason;
            notifyOperation = ++operations;
        }
        return saved;
    }

    void closeScope(final NotifyScope saved)
    {
        notifyEvent = saved.event();
        notifyReason = saved.reason();
        notifyOperation = saved.operation();
    }

    /** Tells interval notifiers about every present leaf of the range, as a change of protection does. */
    void notifyPresent(final long start, final long end)
    {
        if (intervals.isEmpty())
        {
            return;
        }
        pageTable.forEachLeaf(start, end, (va, entry, size) ->
        {
            if (PageTable.present(entry))
            {
                leafChanging(va, size);
            }
        });
    }
}
