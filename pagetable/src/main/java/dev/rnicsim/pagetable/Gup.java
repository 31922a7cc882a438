package dev.rnicsim.pagetable;

import static dev.rnicsim.pagetable.PhysicalMemory.FRAME_BYTES;
import static dev.rnicsim.pagetable.PhysicalMemory.FRAME_SHIFT;
import static dev.rnicsim.pagetable.UserProcess.TASK_SIZE;

import java.util.List;
import java.util.Set;

/**
 * Pinning a process's pages (mm/gup.c {@code pin_user_pages}, {@code unpin_user_pages}) with the RDMA
 * driver's {@code pinned_vm} accounting ({@code ib_umem_get}, {@code ib_umem_release}), the unshare of a read pin
 * ({@code gup_must_unshare}) and the move of a long-term pin out of ZONE_MOVABLE
 * ({@code migrate_longterm_unpinnable_folios}).
 *
 * <p>Package-private: {@link UserProcess} is the system-call face. Not thread safe.
 */
final class Gup
{
    private final UserProcess process;
    private final Host host;
    private final PhysicalMemory phys;
    private final FrameTable frames;
    private final VmaTree vmas;
    private final PageTable pageTable;

    Gup(final UserProcess process)
    {
        this.process = process;
        this.host = process.host();
        this.phys = host.physicalMemory();
        this.frames = phys.frames();
        this.vmas = process.vmaTree();
        this.pageTable = process.pageTable();
    }

    private final Set<PinnedPages> livePins = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());

    /** {@link UserProcess#pinUserPages}: mm/gup.c {@code pin_user_pages} under {@code ib_umem_get}. */
    PinnedPages pinUserPages(final long address, final long lengthBytes, final boolean write,
        final boolean longterm)
    {
        process.checkAlive();
        // Checks in ib_umem_get's order: overflow, can_do_mlock, zero pages, the RLIMIT_MEMLOCK charge, the pin.
        // Unsigned, as ib_umem_get compares: an address in the upper half is not an overflow (it faults later).
        if (Long.compareUnsigned(address + lengthBytes, address) < 0
            || Long.compareUnsigned(UserProcess.alignUp(address + lengthBytes, host.config().basePage().bytes()),
                address + lengthBytes) < 0)
        {
            throw new KernelException(Errno.EINVAL, "pin range address=0x" + Long.toHexString(address)
                + " length=" + lengthBytes + " overflows"
                + "; give a range that ends below 2^64");
        }
        process.limits.checkCanDoMlock();
        if (lengthBytes == 0)
        {
            throw new KernelException(Errno.EINVAL, "length=0: nothing to pin"
                + "; register at least one byte");
        }
        // ib_umem_get counts PAGE_SIZE pages: ib_umem_num_pages over the range widened to base pages.
        final BasePage base = host.config().basePage();
        final long start = address & -base.bytes();
        final long end = UserProcess.alignUp(address + lengthBytes, base.bytes());
        final long pages = (end - start) >>> base.shift();
        if (pages > 0xffff_ffffL)
        {
            throw new KernelException(Errno.EINVAL, "npages=" + pages + " > UINT_MAX (ib_umem_get)"
                + "; register the range in smaller MRs");
        }
        checkPinnedVmLimit(pages);
        if (Long.compareUnsigned(end, TASK_SIZE) > 0)
        {
            throw new KernelException(Errno.EFAULT, "pin range ends at 0x" + Long.toHexString(end)
                + " past TASK_SIZE=0x" + Long.toHexString(TASK_SIZE)
                + "; pin only user-space addresses");
        }
        process.faults.checkAccess(start, end - start, write, false);
        process.pinnedVmPages += pages;
        final PhysRunList runs = new PhysRunList();
        final boolean unshareReadPins = host.config().forkBehaviour() == ForkBehaviour.MODERN;
        long va = start;
        try
        {
            while (va < end)
            {
                long entry = pageTable.lookup(va);
                if (!PageTable.present(entry) || (write && (entry & PageTable.WRITE) == 0))
                {
                    entry = process.faults.fault(va, write, longterm);
                }
                // Also after a read fault, which maps the shared zero page.
                if (!write && unshareReadPins && mustUnshare(entry, va, longterm))
                {
                    entry = process.faults.copyOnWrite(va, entry, process.vmaAt(va), false, longterm);
                }
                long pfn = Faults.pfnOf(entry, va);
                if (longterm && pfn >= 0 && phys.zoneOf(pfn) == Zone.MOVABLE)
                {
                    entry = migrateForLongtermPin(va, entry);
                    pfn = Faults.pfnOf(entry, va);
                }
                final PageSize size = PageTable.size(entry);
                final long leafEnd = (va & ~(size.bytes() - 1)) + size.bytes();
                final long chunkEnd = Math.min(end, leafEnd);
                final long chunkPages = (chunkEnd - va) >>> FRAME_SHIFT;
                final long head = frames.head(pfn);
                if (frames.pinCount(head) + chunkPages > Integer.MAX_VALUE)
                {
                    // try_grab_folio refuses a reference that would overflow the folio's count.
                    throw new KernelException(Errno.ENOMEM, "pin count of the folio at pfn 0x" + Long.toHexString(head)
                        + " would pass " + Integer.MAX_VALUE
                        + " (try_grab_folio: the pin count would overflow); release pins of this page first");
                }
                frames.addPinCount(head, (int)chunkPages);
                // The run's page size is the mapping's: a huge page's own size, a run of leaves included, else PAGE_SIZE.
                final PageSize page = PageTable.pageSize(entry);
                runs.append(pfn, chunkPages, (page == PageSize.SIZE_4K ? base.pageSize() : page).pageShift());
                va = chunkEnd;
            }
        }
        catch (final KernelException e)
        {
            releasePins(runs);
            process.pinnedVmPages -= pages;
            throw e;
        }
        host.count(VmEvent.NR_FOLL_PIN_ACQUIRED, pages);
        host.count(VmEvent.PAGE_WALKS, pages);
        final PinnedPages pinned = new PinnedPages(process, start, pages, write, longterm, runs.freeze());
        livePins.add(pinned);
        return pinned;
    }

    /** {@link UserProcess#unpinUserPages}: mm/gup.c {@code unpin_user_pages} under {@code ib_umem_release}. */
    void unpinUserPages(final PinnedPages pinned)
    {
        if (pinned.process() != process)
        {
            throw new KernelException(Errno.EINVAL, "pinned pages of "
                + (pinned.process() == null ? "no process" : "pid " + pinned.process().pid()) + " given to pid " + process.pid()
                + ": only the pinning process's mm drops its pinned_vm (ib_umem_release)"
                + "; unpin pages with the process that pinned them");
        }
        if (!livePins.remove(pinned))
        {
            throw new KernelException(Errno.EINVAL, "these pinned pages (0x" + Long.toHexString(pinned.startAddress())
                + ", " + pinned.pageCount() + " pages) were unpinned already"
                + " (a double unpin); unpin each pin once");
        }
        releasePins(pinned.runs());
        process.pinnedVmPages -= pinned.pageCount();
        host.count(VmEvent.NR_FOLL_PIN_RELEASED, pinned.pageCount());
    }

    /**
     * {@code gup_must_unshare} for a read pin on a modern kernel: a page shared with another mapping, or the shared
     * zero page under FOLL_LONGTERM (it is no anonymous page of this process), is replaced by a private copy first,
     * so that the pin and the CPU keep seeing the same page.
     *
     * <p>A PMD-mapped THP is judged as a whole (mm/huge_memory.c {@code follow_trans_huge_pmd} asks
     * {@code gup_must_unshare} about the PMD's head page, whose {@code PageAnonExclusive} stands for the whole PMD
     * mapping; fork's {@code copy_huge_pmd} clears it): if any of its pages is mapped elsewhere too (a forked child
     * still maps it, maybe through PTEs of its own split PMD), the PMD is not exclusive, and the unshare fault
     * ({@code do_huge_pmd_wp_page} with FAULT_FLAG_UNSHARE) splits the PMD and unshares page by page. Judging only
     * the page at the start of the pinned part of the PMD would pin a page the child still maps, which the pinning
     * process's next write then copies away from (the pin and the CPU would see different pages).
     */
    boolean mustUnshare(final long entry, final long va, final boolean longterm)
    {
        final long pfn = Faults.pfnOf(entry, va);
        if (pfn == phys.zeroPfn())
        {
            return longterm;
        }
        if (PageTable.size(entry) != PageSize.SIZE_4K && pfn >= 0)
        {
            final long head = frames.head(pfn);
            if (frames.kind(head) != FrameTable.KIND_HUGETLB)
            {
                final long leafFrames = PageTable.size(entry).frames();
                final long first = PageTable.pfn(entry);
                for (long f = 0; f < leafFrames; f++)
                {
                    if (frames.mapCount(first + f) > 1)
                    {
                        return true;
                    }
                }
                return false;
            }
        }
        return frames.mapCount(pfn) > 1;
    }

    /**
     * What the ENOMEM of a pin past RLIMIT_MEMLOCK adds to its fix: pinned_vm is the sum of every pin the process
     * holds (its MRs, and the CQ and QP rings the providers pin: ib_umem_get charges all of them alike), and in a
     * container the runtime sets the limit (NVIDIA/cudf-spark pull request 7632: 64 MiB on the reviewer's host, and an
     * ibv_create_cq ENOMEM after UCX's registrations, fixed with {@code docker run --ulimit memlock=-1}; open-mpi/ompi
     * issue 6468).
     */
    private static final String MEMLOCK_NOTE = " (pinned_vm counts every MR and CQ or QP ring the process pins; in a "
        + "container the runtime sets the limit: docker run --ulimit memlock=-1, or --cap-add=IPC_LOCK)";

    void checkPinnedVmLimit(final long pages)
    {
        if (!process.limits.capIpcLock())
        {
            final long limitPages = process.limits.memlockLimitPages(host.config().basePage().shift());
            if (process.pinnedVmPages + pages > limitPages)
            {
                throw new KernelException(Errno.ENOMEM, "pinned_vm=" + process.pinnedVmPages + " pages + " + pages
                    + " > RLIMIT_MEMLOCK=" + limitPages + " pages (" + process.limits.rlimitMemlockBytes()
                    + " bytes); raise "
                    + "'ulimit -l' or grant CAP_IPC_LOCK" + MEMLOCK_NOTE);
            }
        }
    }

    void releasePins(final List<PhysRun> runs)
    {
        if (runs instanceof final PhysRunList compact)
        {
            for (int i = 0; i < compact.size(); i++)
            {
                release(compact.firstPfn(i), compact.frames(i));
            }
            return;
        }
        for (final PhysRun run : runs)
        {
            release(run.firstPfn(), run.frames());
        }
    }

    private void release(final long first, final long count)
    {
        final long last = first + count;
        long pfn = first;
        while (pfn < last)
        {
            final long head = frames.head(pfn);
            final long folioEnd = head + (1L << frames.order(head));
            final long n = Math.min(last, folioEnd) - pfn;
            frames.addPinCount(head, (int)-n);
            process.faults.releaseIfUnused(pfn);
            pfn += n;
        }
    }

    /**
     * The cause and fix an ENOMEM of a long-term pin's migration names: {@code pin_user_pages} with FOLL_LONGTERM
     * (as {@code ib_umem_get} pins an MR) first migrates every page that must not be pinned for long, those of
     * ZONE_MOVABLE and of MIGRATE_CMA pageblocks, and answers ENOMEM when that migration fails (mm/gup.c
     * {@code migrate_longterm_unpinnable_folios}). The text never says the errno again (it leads the message once).
     * CMA pageblocks also come from what the kernel donates at boot: the
     * scratch area of Kexec HandOver (KHO) is released as MIGRATE_CMA, and booting with {@code kho=off} fixed an
     * {@code ibv_reg_mr} ENOMEM (MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark issue 259).
     */
    static final String LONGTERM_MIGRATION_FIX = " (pin_user_pages with FOLL_LONGTERM first migrates pages out of "
        + "ZONE_MOVABLE and CMA pageblocks, and fails the pin when that migration fails, in "
        + "migrate_longterm_unpinnable_folios); "
        + "free memory in ZONE_NORMAL, or boot with less memory the kernel keeps movable: a smaller movablecore= or "
        + "cma=, or kho=off where Kexec HandOver's scratch area was released as CMA pageblocks";

    /** {@link #migrateBasePageForPin}'s answer when the base page cannot move as one folio. */
    private static final long NOT_MOVED = Long.MIN_VALUE;

    /**
     * On a host of 16 or 64 KiB pages a long-term pin moves the whole base page out of ZONE_MOVABLE, as one folio
     * (mm/gup.c {@code migrate_longterm_unpinnable_folios} isolates folios; mm/migrate.c {@code migrate_folio}).
     *
     * @return the entry now mapping {@code va}, or {@link #NOT_MOVED} when the base page is not one folio mapped
     * once by this process (its frames then move one by one).
     */
    private long migrateBasePageForPin(final long va, final long pfn, final int baseOrder)
    {
        final long head = frames.head(pfn);
        final int n = 1 << baseOrder;
        final long baseVa = va & -host.config().basePage().bytes();
        if (frames.order(head) != baseOrder || head != (pfn & -(long)n))
        {
            return NOT_MOVED;
        }
        for (int i = 0; i < n; i++)
        {
            final long sub = pageTable.lookup(baseVa + ((long)i << PhysicalMemory.FRAME_SHIFT));
            if (!PageTable.present(sub) || PageTable.pfn(sub) != head + i || frames.mapCount(head + i) != 1)
            {
                return NOT_MOVED;
            }
        }
        // Hold the folio while the target is found, so that reclaim does not take it meanwhile.
        frames.addPinCount(head, 1);
        final long target = host.allocate(baseOrder, false, frames.kind(head), true);
        frames.addPinCount(head, -1);
        if (target < 0)
        {
            throw new KernelException(Errno.ENOMEM, "long-term pin must move the " + host.config().basePage().kb()
                + " KiB page at 0x" + Long.toHexString(baseVa) + " out of ZONE_MOVABLE but ZONE_NORMAL has no free "
                + "base page (" + phys.zoneFreeFrames(Zone.NORMAL) + " free 4 KiB frames) and nothing to reclaim"
                + LONGTERM_MIGRATION_FIX);
        }
        host.migrateBasePage(head, target, process, baseVa);
        host.count(VmEvent.PGMIGRATE_LONGTERM_PIN, n);
        return pageTable.lookup(va);
    }

    long migrateForLongtermPin(final long va, final long entry)
    {
        return process.notifiers.notifying(MmuNotifyEvent.CLEAR, "migration for a long-term pin", () -> migrateNow(va, entry));
    }

    long migrateNow(final long va, final long entry)
    {
        final PageSize size = PageTable.size(entry);
        final long pfn = Faults.pfnOf(entry, va);
        final long head = frames.head(pfn);
        final int order = frames.order(head);
        if (frames.pinCount(head) > 0)
        {
            throw new KernelException(Errno.ENOMEM, "page at 0x" + Long.toHexString(va) + " is in ZONE_MOVABLE and "
                + "already pinned without FOLL_LONGTERM, so migrate_pages cannot move it for a long-term pin "
                + "(migrate_longterm_unpinnable_folios); release the short-term pin first, or keep buffers for RDMA "
                + "out of ZONE_MOVABLE");
        }
        if (size == PageSize.SIZE_2M)
        {
            final long target = host.allocate(order, false, FrameTable.KIND_ANON, false);
            boolean exclusive = true;
            for (long p = head; p < head + (1L << order); p++)
            {
                exclusive &= frames.mapCount(p) == 1;
            }
            if (target >= 0 && exclusive)
            {
                process.faults.copyFrames(head, target, 1L << order);
                frames.addMapCount(target, 1L << order, 1);
                final PageSize page = PageTable.pageSize(entry);
                final long hugeVa = va & ~(page.bytes() - 1);
                pageTable.setPage(hugeVa, page, target, PageTable.flags(entry));
                final long moved = pageTable.lookup(va);
                frames.addMapCount(head, 1L << order, -1);
                phys.freeFolio(head);
                host.count(VmEvent.PGMIGRATE_SUCCESS, 1L << order);
                host.count(VmEvent.PGMIGRATE_LONGTERM_PIN, 1L << order);
                return moved;
            }
            if (target >= 0)
            {
                phys.freeFolio(target);
            }
        }
        final int baseOrder = host.config().basePage().order();
        if (order > baseOrder)
        {
            // split_huge_page leaves folios of PAGE_SIZE (order 0 on a 4 KiB host).
            host.splitPmdsOfFolio(head);
            frames.split(head, order, baseOrder);
            host.count(VmEvent.THP_SPLIT_PAGE);
        }
        if (baseOrder > 0)
        {
            final long moved = migrateBasePageForPin(va, pfn, baseOrder);
            if (moved != NOT_MOVED)
            {
                return moved;
            }
        }
        // Hold the page while the target is found, so that reclaim does not take it meanwhile.
        frames.addPinCount(pfn, 1);
        final long target = host.allocate(0, false, frames.kind(pfn), true);
        frames.addPinCount(pfn, -1);
        if (target < 0)
        {
            throw new KernelException(Errno.ENOMEM, "long-term pin must move the page at 0x" + Long.toHexString(va)
                + " out of ZONE_MOVABLE but ZONE_NORMAL has no free frame (" + (phys.zoneFreeFrames(Zone.NORMAL))
                + " free) and nothing to reclaim" + LONGTERM_MIGRATION_FIX);
        }
        host.migrateFrame(pfn, target, process, va & ~(long)(FRAME_BYTES - 1));
        host.count(VmEvent.PGMIGRATE_LONGTERM_PIN);
        return pageTable.lookup(va);
    }
}
