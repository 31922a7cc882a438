package dev.rnicsim.pagetable;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * A user process of the simulated host: its address space (VMAs and a four-level page table), its page faults,
 * its RLIMIT_MEMLOCK and CAP_IPC_LOCK, and its {@code pinned_vm}. The system calls mirror Linux's, with the same
 * errno; every call checks its arguments and limits before changing anything, so a call refused for its
 * arguments or a limit leaves the process and the host as they were. The one exception is running out of memory
 * part way through faulting pages in ({@code touch}, {@code read}, {@code write}, {@code mlock}, a pin): as in
 * Linux, the pages faulted in before the failure stay mapped, while no pin, VMA change or charge is left behind.
 * A null argument throws NullPointerException.
 *
 * <p>Not thread safe: a host and its processes are driven by one thread.
 */
public final class UserProcess
{
    /** Highest user address + 1 with four-level paging: 0x7ffffffff000 (arch/x86 {@code TASK_SIZE_MAX}). */
    public static final long TASK_SIZE = 0x7fff_ffff_f000L;
    /** Where top-down placement of new mappings starts; fixed, as with ASLR off, so runs are repeatable. */
    public static final long MMAP_BASE = 0x7f00_0000_0000L;
    /** RLIM_INFINITY for {@link #rlimitMemlockBytes(long)}. */
    public static final long RLIM_INFINITY = -1;
    /** The default RLIMIT_MEMLOCK of current distributions: 8 MiB ({@code ulimit -l} 8192; systemd 253+). */
    public static final long DEFAULT_RLIMIT_MEMLOCK_BYTES = 8L << 20;
    /** The name /proc shows for MAP_HUGETLB anonymous memory, which lives in an unlinked hugetlbfs file. */
    public static final String HUGETLB_ANON_NAME = "/anon_hugepage (deleted)";

    private final Host host;
    private final int pid;
    private final String name;
    /** The mm_struct's state, shared with the collaborators below, which model the kernel's mm/ files. */
    private final VmaTree vmas;
    private final PageTable pageTable = new PageTable();
    long pinnedVmPages;
    /** RLIMIT_MEMLOCK, CAP_IPC_LOCK and the environment: the task's, beside its mm. */
    final TaskLimits limits = new TaskLimits();
    private boolean exited;
    /** The process that forked this one, or null. */
    private UserProcess parent;
    private final ExitFiles exitFiles = new ExitFiles();
    final List<BiConsumer<Long, Long>> unmapHooks = new ArrayList<>();
    /** mmap, munmap, mprotect, madvise, mlock: mm/mmap.c, mprotect.c, madvise.c, mlock.c. */
    final Mappings mappings;
    /** Page faults and CPU access: mm/memory.c. */
    final Faults faults;
    /** pin_user_pages with the RDMA driver's pinned_vm accounting: mm/gup.c. */
    final Gup gup;
    /** Interval notifiers and hmm_range_fault: mm/mmu_notifier.c, mm/hmm.c. */
    final Notifiers notifiers;
    /** Reclaim, migration and THP splits of this process's pages: mm/vmscan.c, mm/migrate.c. */
    final Reclaim reclaim;

    UserProcess(final Host host, final int pid, final String name)
    {
        this.host = host;
        this.pid = pid;
        this.name = name;
        this.vmas = new VmaTree(n -> host.count(VmEvent.VMA_VISITS, n));
        this.notifiers = new Notifiers(this);
        this.faults = new Faults(this);
        this.mappings = new Mappings(this);
        this.gup = new Gup(this);
        this.reclaim = new Reclaim(this);
    }

    // ------------------------------------------------------------------ identity and limits

    /**
     * @return the process id.
     */
    public int pid()
    {
        return pid;
    }

    /**
     * @return the process name (the Name: line of /proc/PID/status).
     */
    public String name()
    {
        return name;
    }

    /**
     * @return the process that forked this one ({@code getppid}), or null for a process spawned on the host.
     */
    public UserProcess parent()
    {
        return parent;
    }

    /**
     * @return the host this process runs on.
     */
    public Host host()
    {
        return host;
    }

    /**
     * @return true after {@link #exit()}.
     */
    public boolean exited()
    {
        return exited;
    }

    /**
     * @return RLIMIT_MEMLOCK in bytes, or {@link #RLIM_INFINITY}.
     */
    public long rlimitMemlockBytes()
    {
        return limits.rlimitMemlockBytes();
    }

    /**
     * Sets RLIMIT_MEMLOCK (setrlimit(2); {@code ulimit -l} is this in kB).
     *
     * @param bytes the limit in bytes, or {@link #RLIM_INFINITY}.
     * @return this process.
     * @throws KernelException EINVAL when {@code bytes} is negative and not RLIM_INFINITY.
     */
    public UserProcess rlimitMemlockBytes(final long bytes)
    {
        limits.rlimitMemlockBytes(bytes);
        return this;
    }

    /**
     * @return the environment variables, read-only, in the order they were set (what {@code getenv(3)} reads).
     */
    public java.util.Map<String, String> environment()
    {
        return limits.environment();
    }

    /**
     * setenv(3).
     *
     * @param variable the variable's name: not empty, without '='.
     * @param value    its value, possibly empty.
     * @return this process.
     * @throws KernelException EINVAL for an empty name or one holding '=' (setenv(3)).
     */
    public UserProcess setenv(final String variable, final String value)
    {
        limits.setenv(variable, value);
        return this;
    }

    /**
     * @return true when the process holds CAP_IPC_LOCK, which lifts RLIMIT_MEMLOCK for mlock and RDMA pins.
     */
    public boolean capIpcLock()
    {
        return limits.capIpcLock();
    }

    /**
     * @param held whether the process holds CAP_IPC_LOCK.
     * @return this process.
     */
    public UserProcess capIpcLock(final boolean held)
    {
        limits.capIpcLock(held);
        return this;
    }

    /**
     * @return {@code mm->pinned_vm}: base pages ({@link BasePage}) pinned through {@link #pinUserPages}, the VmPin of
     * /proc/PID/status.
     */
    public long pinnedVmPages()
    {
        return pinnedVmPages;
    }

    /**
     * @return {@code mm->locked_vm}: base pages in VM_LOCKED areas, the VmLck of /proc/PID/status.
     */
    public long lockedVmPages()
    {
        return mappings.lockedVmPages();
    }

    /**
     * @return the VMAs in address order.
     */
    public List<Vma> vmas()
    {
        return vmas.list();
    }

    /**
     * @return the number of VMAs, the count {@code vm.max_map_count} limits.
     */
    public int vmaCount()
    {
        return vmas.size();
    }

    /**
     * @param address a virtual address.
     * @return the VMA containing it, or null.
     */
    public Vma vmaAt(final long address)
    {
        return vmas.at(address);
    }


    // ------------------------------------------------------------------ mmap family (Mappings)


    /**
     * Anonymous private read-write memory: {@code mmap(NULL, lengthBytes, PROT_READ|PROT_WRITE,
     * MAP_PRIVATE|MAP_ANONYMOUS, -1, 0)}.
     *
     * @param lengthBytes length in bytes, rounded up to the base page (4 KiB unless {@link HostConfig#basePage()}).
     * @return the start address.
     * @throws KernelException as {@link #mmap}.
     */
    public long mmapAnonymous(final long lengthBytes)
    {
        return mmap(0, lengthBytes, Prot.READ_WRITE, Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS));
    }

    /**
     * mmap(2) of anonymous memory.
     *

    /**
     * mmap(2) of anonymous memory.
     *
     * <p>Placement is top-down from {@link #MMAP_BASE}, aligned to 2 MiB for anonymous mappings whose length is
     * a multiple of 2 MiB while THP is not "never" (mm/mmap.c {@code thp_get_unmapped_area}; commits efa7df3e3bb5
     * and d4148aeab412), and to the huge page size for MAP_HUGETLB. MAP_HUGETLB reserves its pool pages at once
     * (mm/hugetlb.c {@code hugetlb_reserve_pages}), so a pool too small fails here, not at the first touch.
     *
     * @param addressHint   the address for MAP_FIXED / MAP_FIXED_NOREPLACE, else a hint (0 for none).
     * @param lengthBytes   length in bytes, rounded up to the base page (to the huge page size for MAP_HUGETLB).
     * @param prot          protection; empty for PROT_NONE.
     * @param flags         mapping flags.
     * @return the start address of the new mapping.
     * @throws KernelException EINVAL for a zero length, both or neither of PRIVATE and SHARED, both huge page
     *                         sizes (sizes without HUGETLB are ignored, as in Linux), or an unaligned fixed address; EOPNOTSUPP for shared or file
     *                         mappings; EPERM for a fixed address below {@code vm.mmap_min_addr}; EEXIST for
     *                         MAP_FIXED_NOREPLACE over a mapping; ENOMEM when the length does not fit, the
     *                         address space is full, {@code vm.max_map_count} would be exceeded or the hugetlb
     *                         pool has too few unreserved pages.
     */
    public long mmap(final long addressHint, final long lengthBytes, final Set<Prot> prot, final Set<MapFlag> flags)
    {
        return mappings.mmap(addressHint, lengthBytes, prot, flags);
    }

    /**
     * munmap(2). Pages in the range are unmapped; a frame that is pinned stays allocated, with its bytes, until
     * its last pin is dropped. A THP cut by the range has its PMD split and, when not pinned, is split into
     * 4 KiB pages so that the unmapped part is freed.
     *
     * @param address     start, base-page aligned (huge-page aligned inside a hugetlb VMA).
     * @param lengthBytes length in bytes, rounded up to the base page; nothing mapped in the range is not an error.
     * @throws KernelException EINVAL for an unaligned address, a zero length, a range past TASK_SIZE, or a cut
     *                         through a huge page of a hugetlb VMA; ENOMEM when splitting a VMA would exceed
     *                         {@code vm.max_map_count}.
     */
    public void munmap(final long address, final long lengthBytes)
    {
        mappings.munmap(address, lengthBytes);
    }

    /**
     * mprotect(2). Removing PROT_WRITE write-protects the mapped pages at once; adding it leaves them to the
     * next write fault.
     *
     * @param address     start, base-page aligned.
     * @param lengthBytes length in bytes, rounded up; 0 does nothing.
     * @param prot        the new protection.
     * @throws KernelException EINVAL for an unaligned address or a cut through a hugetlb page; ENOMEM when part
     *                         of the range is not mapped or {@code vm.max_map_count} would be exceeded.
     */
    public void mprotect(final long address, final long lengthBytes, final Set<Prot> prot)
    {
        mappings.mprotect(address, lengthBytes, prot);
    }

    /**
     * madvise(2) with the advice values of {@link Madvice}.
     *
     * @param address     start, base-page aligned.
     * @param lengthBytes length in bytes, rounded up; 0 does nothing.
     * @param advice      the advice.
     * @throws KernelException EINVAL for an unaligned address, DONTNEED on a VM_LOCKED area or starting inside a
     *                         hugetlb page, other advice that would split a hugetlb VMA inside a huge page; ENOMEM when part of the range is not mapped or {@code vm.max_map_count} would
     *                         be exceeded. Unlike Linux, which applies the advice to the mapped parts before
     *                         reporting ENOMEM, nothing is changed when the call fails.
     */
    public void madvise(final long address, final long lengthBytes, final Madvice advice)
    {
        mappings.madvise(address, lengthBytes, advice);
    }

    /**
     * mlock(2): marks the range VM_LOCKED (never reclaimed) and faults it in. Charged to {@code locked_vm}
     * against RLIMIT_MEMLOCK unless CAP_IPC_LOCK (mm/mlock.c {@code do_mlock}, {@code can_do_mlock}).
     *
     * @param address     start; rounded down to the base page.
     * @param lengthBytes length in bytes; the end is rounded up to the base page.
     * @throws KernelException EPERM when RLIMIT_MEMLOCK is 0 without CAP_IPC_LOCK; ENOMEM when part of the
     *                         range is unmapped or the limit would be exceeded; EINVAL when it would split a hugetlb
     *                         VMA inside a huge page; EAGAIN when memory runs out while
     *                         faulting in (then no VMA is left VM_LOCKED).
     */
    public void mlock(final long address, final long lengthBytes)
    {
        mappings.mlock(address, lengthBytes);
    }

    /**
     * munlock(2): clears VM_LOCKED.
     *
     * @param address     start; rounded down to the base page.
     * @param lengthBytes length in bytes; the end is rounded up.
     * @throws KernelException ENOMEM when part of the range is unmapped or {@code vm.max_map_count} would be
     *                         exceeded; EINVAL when it would split a hugetlb VMA inside a huge page.
     */
    public void munlock(final long address, final long lengthBytes)
    {
        mappings.munlock(address, lengthBytes);
    }

    // ------------------------------------------------------------------ CPU access (Faults)

    /**
     * Touches every page of a range as a CPU would, faulting in what is missing: demand paging, THP, hugetlb,
     * swap-in and copy-on-write.
     *
     * @param address     first byte.
     * @param lengthBytes bytes to touch; 0 touches nothing.
     * @param write       a write touch (breaks copy-on-write) instead of a read.
     * @return the number of page faults taken.
     * @throws SegmentationFault when a byte is unmapped or its protection forbids the access (checked for the
     *                           whole range before any page is touched).
     * @throws KernelException   ENOMEM when memory and swap run out; pages touched before stay mapped, as after
     *                           a CPU loop that was killed.
     */
    public long touch(final long address, final long lengthBytes, final boolean write)
    {
        return faults.touch(address, lengthBytes, write);
    }

    /**
     * Stores bytes at a virtual address as a CPU would, faulting pages in for writing.
     *
     * @param address first byte.
     * @param data    bytes to store.
     * @throws SegmentationFault when a byte is unmapped or not writable (checked before anything is written).
     * @throws KernelException   ENOMEM when memory and swap run out.
     */
    public void write(final long address, final byte[] data)
    {
        faults.write(address, data);
    }

    /**
     * Loads bytes from a virtual address as a CPU would, faulting pages in for reading.
     *
     * @param address     first byte.
     * @param lengthBytes bytes to load.
     * @return the bytes.
     * @throws SegmentationFault when a byte is unmapped or not readable.
     * @throws KernelException   ENOMEM when memory and swap run out.
     */
    public byte[] read(final long address, final int lengthBytes)
    {
        return faults.read(address, lengthBytes);
    }

    /**
     * Translates a virtual address without faulting: what a page-table walk finds now.
     *
     * @param address a virtual address.
     * @return the physical address, or -1 when the page is not present (never touched, swapped out, unmapped).
     */
    public long translate(final long address)
    {
        return faults.translate(address);
    }

    /**
     * @param address a virtual address.
     * @return the size of the present leaf mapping it (4 KiB, 2 MiB, 1 GiB), or null when not present.
     */
    public PageSize mappedPageSize(final long address)
    {
        return faults.mappedPageSize(address);
    }

    // ------------------------------------------------------------------ pinning (Gup)

    /**
     * {@code pin_user_pages(start, nr_pages, FOLL_PIN [| FOLL_WRITE] [| FOLL_LONGTERM])} with the RDMA driver's
     * accounting around it, as {@code ib_umem_get} does (drivers/infiniband/core/umem.c): the page count is
     * charged to {@code pinned_vm} first and checked against RLIMIT_MEMLOCK unless CAP_IPC_LOCK; then every page
     * is faulted in (for writing with FOLL_WRITE, which breaks copy-on-write; a read pin of a shared anonymous
     * page unshares it on a modern kernel), moved out of ZONE_MOVABLE when long-term (mm/gup.c
     * {@code check_and_migrate_movable_folios}), and its folio's pin count is raised by one per 4 KiB page.
     * Physically contiguous pages of the same page size are merged into runs.
     *
     * @param address     first byte; the range is widened to whole base pages.
     * @param lengthBytes bytes to pin.
     * @param write       FOLL_WRITE.
     * @param longterm    FOLL_LONGTERM, as RDMA registration uses.
     * @return the pinned runs; give them back with {@link #unpinUserPages(PinnedPages)}.
     * @throws KernelException in ib_umem_get's order: EINVAL for an overflowing range; EPERM when RLIMIT_MEMLOCK
     *                         is 0 without CAP_IPC_LOCK; EINVAL for a zero length; ENOMEM when {@code pinned_vm}
     *                         would pass RLIMIT_MEMLOCK; EFAULT when part of the range is unmapped, or not writable
     *                         for a write pin, or not readable; ENOMEM when
     *                         memory runs out, or when a page in ZONE_MOVABLE that must move is already held by
     *                         a short-term pin. On failure no pin is held and {@code pinned_vm} is unchanged.
     */
    public PinnedPages pinUserPages(final long address, final long lengthBytes, final boolean write,
        final boolean longterm)
    {
        return gup.pinUserPages(address, lengthBytes, write, longterm);
    }

    /**
     * {@code unpin_user_pages} plus the driver's {@code pinned_vm} decrement ({@code ib_umem_release}). A frame
     * whose last pin goes and that is no longer mapped (its range was unmapped while pinned) is freed now.
     *
     * @param pinned what {@link #pinUserPages} returned, given back once.
     * @throws KernelException EINVAL when {@code pinned} belongs to another process or was unpinned already.
     */
    public void unpinUserPages(final PinnedPages pinned)
    {
        gup.unpinUserPages(pinned);
    }

    // ------------------------------------------------------------------ fork and exit

    /**
     * fork(2): a child with copies of every VMA but those marked MADV_DONTFORK, sharing private pages
     * copy-on-write. Pinned anonymous pages are copied for the child at once on a {@link ForkBehaviour#MODERN}
     * kernel (mm/memory.c {@code copy_present_page}), shared like any other on a {@link ForkBehaviour#LEGACY} one.
     * The child inherits RLIMIT_MEMLOCK and CAP_IPC_LOCK; its {@code pinned_vm} starts at 0.
     *
     * @param childName name of the child process.
     * @return the child.
     * @throws KernelException ENOMEM when memory runs out while copying pinned pages (the child is then gone).
     */
    public UserProcess fork(final String childName)
    {
        checkAlive();
        return ForkCopier.dupMm(this, childName);
    }

    /**
     * exit(2) of the address space: every mapping is removed. Pins held on its pages stay until their holder
     * unpins them; those frames stay allocated.
     */
    public void exit()
    {
        if (exited)
        {
            return;
        }
        notifiers.notifying(MmuNotifyEvent.RELEASE, "exit", () -> mappings.unmapRange(0, TASK_SIZE));
        exited = true;
        host.removeProcess(this);
        exitFiles.closeAll();
    }

    /**
     * Registers what runs when the process exits, after its address space is torn down: the kernel's
     * {@code exit_files} after {@code exit_mm}, which closes the files a process held open (an RDMA device file
     * deregisters its MRs then, unpinning pages that stayed allocated because they were pinned).
     *
     * @param hook run once, at exit; every hook runs even when one throws (the first failure is rethrown).
     * @throws KernelException EINVAL when the process has exited already.
     */
    public void onExit(final Runnable hook)
    {
        checkAlive();
        exitFiles.add(java.util.Objects.requireNonNull(hook, "hook"));
    }

    /**
     * Registers what runs at every munmap(2) of this process, before the range is unmapped: the memory hooks that
     * UCX and Open MPI install (by intercepting munmap) so that a registration cache drops its entries for memory
     * that is going away.
     *
     * @param hook receives the start address and the length in bytes (4 KiB aligned) of each munmap.
     * @throws KernelException EINVAL when the process has exited already.
     */
    public void onUnmap(final BiConsumer<Long, Long> hook)
    {
        checkAlive();
        unmapHooks.add(java.util.Objects.requireNonNull(hook, "hook"));
    }


    // ------------------------------------------------------------------ interval notifiers and hmm (Notifiers)

    /**
     * {@code mmu_interval_notifier_insert}: watches {@code [address, address + lengthBytes)} (widened to 4 KiB
     * pages). From now on, before any present page in it is unmapped, replaced (copy-on-write, migration, reclaim),
     * write-protected (fork, mprotect) or split, {@code ops} is called with the leaf and the cause, and the
     * interval's sequence number advances.
     *
     * @param address     first byte watched.
     * @param lengthBytes bytes watched, more than 0.
     * @param ops         what runs on each invalidation.
     * @return the interval; {@link MmuInterval#remove()} stops the notifications.
     * @throws KernelException EINVAL for an empty or wrapping range or one past TASK_SIZE, or when the process has
     *                         exited.
     */
    public MmuInterval insertIntervalNotifier(final long address, final long lengthBytes, final MmuInterval.Ops ops)
    {
        return notifiers.insertIntervalNotifier(address, lengthBytes, ops);
    }

    /**
     * @return interval notifiers installed now.
     */
    public int intervalNotifierCount()
    {
        return notifiers.intervalNotifierCount();
    }


    /**
     * {@code hmm_range_fault} (mm/hmm.c) as an on-demand-paging driver calls it: walks the page table over
     * {@code [address, address + lengthBytes)} and reports the frame of every 4 KiB of each present page. With
     * {@code fault} (HMM_PFN_REQ_FAULT) a missing page is faulted in as a CPU access would (demand paging,
     * swap-in, THP) and with {@code write} (HMM_PFN_REQ_WRITE) a read-only one is made writable (breaking
     * copy-on-write); without {@code fault} only present pages are reported (the snapshot an ODP MR takes at
     * registration, and PREFETCH_NO_FAULT). Nothing is pinned.
     *
     * @param address     first byte.
     * @param lengthBytes bytes to walk, more than 0.
     * @param fault       fault missing pages in.
     * @param write       ask for write access (only with {@code fault}).
     * @param visitor     receives every page present after the walk, in address order.
     * @return the number of base pages (PAGE_SIZE: 4, 16 or 64 KiB) reported, the entries hmm fills.
     * @throws KernelException EFAULT when, with {@code fault}, a page has no VMA or its VMA does not allow the
     *                         access (hmm returns -EFAULT or -EPERM); ENOMEM when memory and swap run out. Pages
     *                         reported before the failure stay faulted in, as in the kernel.
     */
    public long hmmRangeFault(final long address, final long lengthBytes, final boolean fault, final boolean write,
        final HmmVisitor visitor)
    {
        return notifiers.hmmRangeFault(address, lengthBytes, fault, write, visitor);
    }

    // ------------------------------------------------------------------ package-private: state and host hooks

    VmaTree vmaTree()
    {
        return vmas;
    }

    PageTable pageTable()
    {
        return pageTable;
    }

    /** Copies RLIMIT_MEMLOCK, CAP_IPC_LOCK and the environment to a child at fork (kernel/fork.c). */
    void inheritLimits(final UserProcess parent)
    {
        limits.inheritFrom(parent.limits);
        this.parent = parent;
    }

    void checkAlive()
    {
        if (exited)
        {
            throw new KernelException(Errno.EINVAL, "process " + pid + " (" + name + ") has exited"
                + "; create a new process (the exited one keeps nothing)");
        }
    }

    static long alignUp(final long value, final long align)
    {
        return (value + align - 1) & ~(align - 1);
    }

    @Override
    public String toString()
    {
        return "UserProcess[pid=" + pid + ", name=" + name + ", vmas=" + vmas.size() + "]";
    }
}
