package dev.rnicsim.pagetable;

import static dev.rnicsim.pagetable.PhysicalMemory.FRAME_BYTES;
import static dev.rnicsim.pagetable.PhysicalMemory.FRAME_SHIFT;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

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
    private final PhysicalMemory phys;
    private final FrameTable frames;
    private final int pid;
    private final String name;
    private final VmaTree vmas = new VmaTree();
    private final PageTable pageTable = new PageTable();
    private long pinnedVmPages;
    private long rlimitMemlockBytes = DEFAULT_RLIMIT_MEMLOCK_BYTES;
    private boolean capIpcLock;
    private boolean exited;
    private final List<Runnable> exitHooks = new ArrayList<>();
    private final List<java.util.function.BiConsumer<Long, Long>> unmapHooks = new ArrayList<>();
    private final Set<PinnedPages> livePins = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    /** During an import: null follows the THP mode, TRUE forces 2 MiB folios, FALSE forbids them. */
    private Boolean importThp;
    /** Interval notifiers, in insertion order; {@link #intervalArray} is their snapshot for delivery. */
    private final List<MmuInterval> intervals = new ArrayList<>();
    private MmuInterval[] intervalArray = new MmuInterval[0];
    /** The cause of the page-table changes made now, told to interval notifiers. */
    private MmuNotifyEvent notifyEvent = MmuNotifyEvent.CLEAR;
    private String notifyReason = "page-table change";
    private long notifyOperation = -1;
    private long operations;

    UserProcess(final Host host, final int pid, final String name)
    {
        this.host = host;
        this.phys = host.physicalMemory();
        this.frames = phys.frames();
        this.pid = pid;
        this.name = name;
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
        return rlimitMemlockBytes;
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
        if (bytes < 0 && bytes != RLIM_INFINITY)
        {
            throw new KernelException(Errno.EINVAL, "RLIMIT_MEMLOCK=" + bytes + " is negative");
        }
        this.rlimitMemlockBytes = bytes;
        return this;
    }

    /**
     * @return true when the process holds CAP_IPC_LOCK, which lifts RLIMIT_MEMLOCK for mlock and RDMA pins.
     */
    public boolean capIpcLock()
    {
        return capIpcLock;
    }

    /**
     * @param held whether the process holds CAP_IPC_LOCK.
     * @return this process.
     */
    public UserProcess capIpcLock(final boolean held)
    {
        this.capIpcLock = held;
        return this;
    }

    /**
     * @return {@code mm->pinned_vm}: 4 KiB pages pinned through {@link #pinUserPages}, the VmPin of
     * /proc/PID/status.
     */
    public long pinnedVmPages()
    {
        return pinnedVmPages;
    }

    /**
     * @return {@code mm->locked_vm}: 4 KiB pages in VM_LOCKED areas, the VmLck of /proc/PID/status.
     */
    public long lockedVmPages()
    {
        long pages = 0;
        for (final Vma v : vmas.list())
        {
            if (v.has(Vma.VM_LOCKED))
            {
                pages += v.lengthBytes() >>> FRAME_SHIFT;
            }
        }
        return pages;
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

    // ------------------------------------------------------------------ mmap family

    /**
     * Anonymous private read-write memory: {@code mmap(NULL, lengthBytes, PROT_READ|PROT_WRITE,
     * MAP_PRIVATE|MAP_ANONYMOUS, -1, 0)}.
     *
     * @param lengthBytes length in bytes, rounded up to 4 KiB.
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
     * <p>Placement is top-down from {@link #MMAP_BASE}, aligned to 2 MiB for anonymous mappings whose length is
     * a multiple of 2 MiB while THP is not "never" (mm/mmap.c {@code thp_get_unmapped_area}; commits efa7df3e3bb5
     * and d4148aeab412), and to the huge page size for MAP_HUGETLB. MAP_HUGETLB reserves its pool pages at once
     * (mm/hugetlb.c {@code hugetlb_reserve_pages}), so a pool too small fails here, not at the first touch.
     *
     * @param addressHint   the address for MAP_FIXED / MAP_FIXED_NOREPLACE, else a hint (0 for none).
     * @param lengthBytes   length in bytes, rounded up to 4 KiB (to the huge page size for MAP_HUGETLB).
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
        checkAlive();
        java.util.Objects.requireNonNull(prot, "prot");
        java.util.Objects.requireNonNull(flags, "flags");
        if (lengthBytes <= 0)
        {
            throw new KernelException(Errno.EINVAL, "lengthBytes=" + lengthBytes + " must be positive");
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
        if (hugetlb && flags.contains(MapFlag.HUGE_2MB) && flags.contains(MapFlag.HUGE_1GB))
        {
            throw new KernelException(Errno.EINVAL, "MAP_HUGE_2MB and MAP_HUGE_1GB are exclusive");
        }
        if (lengthBytes <= 0)
        {
            throw new KernelException(Errno.EINVAL, "lengthBytes=" + lengthBytes + " must be positive");
        }
        final PageSize hugeSize = flags.contains(MapFlag.HUGE_1GB) ? PageSize.SIZE_1G : PageSize.SIZE_2M;
        final long pageBytes = hugetlb ? hugeSize.bytes() : FRAME_BYTES;
        if (lengthBytes > TASK_SIZE - pageBytes)
        {
            throw new KernelException(Errno.ENOMEM, "lengthBytes=" + lengthBytes + " > TASK_SIZE=" + TASK_SIZE);
        }
        final long length = alignUp(lengthBytes, pageBytes);
        final boolean fixed = flags.contains(MapFlag.FIXED) || flags.contains(MapFlag.FIXED_NOREPLACE);
        long start;
        if (fixed)
        {
            if (addressHint < 0 || addressHint > TASK_SIZE - length)
            {
                throw new KernelException(Errno.ENOMEM, "fixed range 0x" + Long.toHexString(addressHint) + "+"
                    + length + " passes TASK_SIZE=0x" + Long.toHexString(TASK_SIZE));
            }
            if ((addressHint & (pageBytes - 1)) != 0)
            {
                throw new KernelException(Errno.EINVAL, "fixed address 0x" + Long.toHexString(addressHint)
                    + " is not aligned to " + pageBytes + " bytes");
            }
            if (addressHint < host.config().mmapMinAddrBytes())
            {
                throw new KernelException(Errno.EPERM, "fixed address 0x" + Long.toHexString(addressHint)
                    + " < vm.mmap_min_addr=" + host.config().mmapMinAddrBytes());
            }
            if (addressHint > TASK_SIZE - length)
            {
                throw new KernelException(Errno.ENOMEM, "fixed range 0x" + Long.toHexString(addressHint) + "+"
                    + length + " passes TASK_SIZE=0x" + Long.toHexString(TASK_SIZE));
            }
            start = addressHint;
            if (flags.contains(MapFlag.FIXED_NOREPLACE) && vmas.overlaps(start, start + length))
            {
                throw new KernelException(Errno.EEXIST, "MAP_FIXED_NOREPLACE range 0x" + Long.toHexString(start)
                    + "-0x" + Long.toHexString(start + length) + " overlaps an existing mapping");
            }
            checkHugetlbAligned(start, start + length, "MAP_FIXED");
        }
        else
        {
            final long align = hugetlb ? hugeSize.bytes()
                : (host.config().thpMode() != ThpMode.NEVER && length % PageSize.SIZE_2M.bytes() == 0
                    ? PageSize.SIZE_2M.bytes() : FRAME_BYTES);
            start = addressHint != 0 && (addressHint & (align - 1)) == 0 && addressHint >= host.config()
                .mmapMinAddrBytes() && addressHint <= TASK_SIZE - length && !vmas.overlaps(addressHint,
                addressHint + length) ? addressHint : findFreeRange(length, align);
        }
        final VmaTree trial = vmas.copy();
        trial.carve(start, start + length);
        trial.insertAndMerge(hugetlb
            ? new Vma(start, start + length, Prot.bits(prot), Vma.VM_RESV_OWNER, VmaKind.HUGETLB, hugeSize,
                HUGETLB_ANON_NAME, 0)
            : new Vma(start, start + length, Prot.bits(prot), 0, VmaKind.ANONYMOUS, PageSize.SIZE_4K, "", 0));
        final int countAfter = trial.size();
        if (countAfter > host.config().maxMapCount())
        {
            throw new KernelException(Errno.ENOMEM, "this mapping would make " + countAfter
                + " VMAs > vm.max_map_count=" + host.config().maxMapCount());
        }
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
            for (final java.util.function.BiConsumer<Long, Long> hook : List.copyOf(unmapHooks))
            {
                hook.accept(start, length);
            }
            final long at = start;
            notifying(MmuNotifyEvent.UNMAP, "mmap(MAP_FIXED)", () -> unmapRange(at, at + length));
        }
        final Vma vma = hugetlb
            ? new Vma(start, start + length, Prot.bits(prot), Vma.VM_RESV_OWNER, VmaKind.HUGETLB, hugeSize,
                HUGETLB_ANON_NAME, 0)
            : new Vma(start, start + length, Prot.bits(prot), 0, VmaKind.ANONYMOUS, PageSize.SIZE_4K, "", 0);
        vmas.insertAndMerge(vma);
        if (hugetlb)
        {
            phys.pool(hugeSize).reserve(hugePages);
            for (long va = start; va < start + length; va += pageBytes)
            {
                pageTable.set(va, hugeSize, PageTable.RESERVED);
            }
        }
        if (flags.contains(MapFlag.POPULATE))
        {
            try
            {
                populate(start, start + length, vma.writable());
            }
            catch (final KernelException e)
            {
                // vm_mmap_pgoff ignores what mm_populate returns: the mapping stands, partly populated.
            }
        }
        return start;
    }

    /**
     * munmap(2). Pages in the range are unmapped; a frame that is pinned stays allocated, with its bytes, until
     * its last pin is dropped. A THP cut by the range has its PMD split and, when not pinned, is split into
     * 4 KiB pages so that the unmapped part is freed.
     *
     * @param address     start, 4 KiB aligned (huge-page aligned inside a hugetlb VMA).
     * @param lengthBytes length in bytes, rounded up to 4 KiB; nothing mapped in the range is not an error.
     * @throws KernelException EINVAL for an unaligned address, a zero length, a range past TASK_SIZE, or a cut
     *                         through a huge page of a hugetlb VMA; ENOMEM when splitting a VMA would exceed
     *                         {@code vm.max_map_count}.
     */
    public void munmap(final long address, final long lengthBytes)
    {
        checkAlive();
        final long end = checkAlignedRange(address, lengthBytes, true, Errno.EINVAL);
        checkHugetlbAligned(address, end, "munmap");
        final int countAfter = vmas.countAfterCarve(address, end);
        if (countAfter > host.config().maxMapCount())
        {
            throw new KernelException(Errno.ENOMEM, "munmap would split a VMA into " + countAfter
                + " VMAs > vm.max_map_count=" + host.config().maxMapCount());
        }
        for (final java.util.function.BiConsumer<Long, Long> hook : List.copyOf(unmapHooks))
        {
            hook.accept(address, end - address);
        }
        notifying(MmuNotifyEvent.UNMAP, "munmap", () -> unmapRange(address, end));
    }

    /**
     * mprotect(2). Removing PROT_WRITE write-protects the mapped pages at once; adding it leaves them to the
     * next write fault.
     *
     * @param address     start, 4 KiB aligned.
     * @param lengthBytes length in bytes, rounded up; 0 does nothing.
     * @param prot        the new protection.
     * @throws KernelException EINVAL for an unaligned address or a cut through a hugetlb page; ENOMEM when part
     *                         of the range is not mapped or {@code vm.max_map_count} would be exceeded.
     */
    public void mprotect(final long address, final long lengthBytes, final Set<Prot> prot)
    {
        checkAlive();
        if (lengthBytes == 0 && (address & (FRAME_BYTES - 1)) == 0)
        {
            return;
        }
        final long end = checkAlignedRange(address, lengthBytes, false, Errno.ENOMEM);
        checkFullyMapped(address, end, "mprotect");
        checkHugetlbAligned(address, end, "mprotect");
        final int bits = Prot.bits(prot);
        changeVmas(address, end, v -> v.withProt(bits));
        if ((bits & Prot.READ.bit()) == 0)
        {
            // change_protection tells the notifiers of the whole range (MMU_NOTIFY_PROTECTION_VMA): a device holding
            // even a read-only translation of a page that may no longer be read must drop it.
            notifying(MmuNotifyEvent.PROTECTION_VMA, "mprotect", () -> notifyPresent(address, end));
        }
        if ((bits & Prot.WRITE.bit()) == 0)
        {
            notifying(MmuNotifyEvent.PROTECTION_VMA, "mprotect", () -> pageTable.forEachLeaf(address, end,
                (va, entry, size) ->
                {
                    if (PageTable.present(entry))
                    {
                        pageTable.set(va, size, entry & ~PageTable.WRITE);
                    }
                }));
        }
    }

    /**
     * madvise(2) with the advice values of {@link Madvice}.
     *
     * @param address     start, 4 KiB aligned.
     * @param lengthBytes length in bytes, rounded up; 0 does nothing.
     * @param advice      the advice.
     * @throws KernelException EINVAL for an unaligned address, DONTNEED on a VM_LOCKED area or starting inside a
     *                         hugetlb page, other advice that would split a hugetlb VMA inside a huge page; ENOMEM when part of the range is not mapped or {@code vm.max_map_count} would
     *                         be exceeded. Unlike Linux, which applies the advice to the mapped parts before
     *                         reporting ENOMEM, nothing is changed when the call fails.
     */
    public void madvise(final long address, final long lengthBytes, final Madvice advice)
    {
        checkAlive();
        if (lengthBytes == 0 && (address & (FRAME_BYTES - 1)) == 0)
        {
            return;
        }
        final long end = checkAlignedRange(address, lengthBytes, false, Errno.EINVAL);
        checkFullyMapped(address, end, "madvise");
        if (advice == Madvice.DONTNEED)
        {
            for (final Vma v : vmas.overlapping(address, end))
            {
                if (v.has(Vma.VM_LOCKED))
                {
                    throw new KernelException(Errno.EINVAL, "MADV_DONTNEED on a VM_LOCKED area at 0x"
                        + Long.toHexString(v.startAddress()));
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
                            + " is not aligned to the " + v.hugePageSize().kb() + " kB pages of its hugetlb VMA");
                    }
                    if (end < v.endAddress())
                    {
                        zapEnd = Math.max(address, end & ~mask);
                    }
                }
            }
            final long zapTo = zapEnd;
            notifying(MmuNotifyEvent.CLEAR, "madvise(MADV_DONTNEED)", () ->
            {
                splitHugePmdsAtEdges(address, zapTo);
                zapRange(address, zapTo);
            });
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
        changeVmas(address, end, v -> v.withFlags((v.flagBits() | set) & ~clear));
    }

    /**
     * mlock(2): marks the range VM_LOCKED (never reclaimed) and faults it in. Charged to {@code locked_vm}
     * against RLIMIT_MEMLOCK unless CAP_IPC_LOCK (mm/mlock.c {@code do_mlock}, {@code can_do_mlock}).
     *
     * @param address     start; rounded down to 4 KiB.
     * @param lengthBytes length in bytes; the end is rounded up to 4 KiB.
     * @throws KernelException EPERM when RLIMIT_MEMLOCK is 0 without CAP_IPC_LOCK; ENOMEM when part of the
     *                         range is unmapped or the limit would be exceeded; EINVAL when it would split a hugetlb
     *                         VMA inside a huge page; EAGAIN when memory runs out while
     *                         faulting in (then no VMA is left VM_LOCKED).
     */
    public void mlock(final long address, final long lengthBytes)
    {
        checkAlive();
        if (!capIpcLock && rlimitMemlockBytes == 0)
        {
            throw new KernelException(Errno.EPERM, "RLIMIT_MEMLOCK=0 and no CAP_IPC_LOCK (can_do_mlock)");
        }
        final long start = address & ~(long)(FRAME_BYTES - 1);
        final long end = checkAlignedRange(start, lengthBytes + (address - start), false, Errno.EINVAL);
        checkFullyMapped(start, end, "mlock");
        if (!capIpcLock)
        {
            long newlyLocked = 0;
            for (final Vma v : vmas.overlapping(start, end))
            {
                if (!v.has(Vma.VM_LOCKED))
                {
                    newlyLocked += Math.min(end, v.endAddress()) - Math.max(start, v.startAddress());
                }
            }
            final long lockedPages = lockedVmPages() + (newlyLocked >>> FRAME_SHIFT);
            if (rlimitMemlockBytes != RLIM_INFINITY && lockedPages > rlimitMemlockBytes >>> FRAME_SHIFT)
            {
                throw new KernelException(Errno.ENOMEM, "locked_vm=" + lockedPages + " pages would exceed "
                    + "RLIMIT_MEMLOCK=" + (rlimitMemlockBytes >>> FRAME_SHIFT) + " pages (" + rlimitMemlockBytes
                    + " bytes)");
            }
        }
        final List<Vma> before = vmas.list();
        changeVmas(start, end, v -> v.withFlags(v.flagBits() | Vma.VM_LOCKED));
        try
        {
            for (final Vma v : vmas.overlapping(start, end))
            {
                populate(Math.max(start, v.startAddress()), Math.min(end, v.endAddress()), v.writable());
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

    /**
     * munlock(2): clears VM_LOCKED.
     *
     * @param address     start; rounded down to 4 KiB.
     * @param lengthBytes length in bytes; the end is rounded up.
     * @throws KernelException ENOMEM when part of the range is unmapped or {@code vm.max_map_count} would be
     *                         exceeded; EINVAL when it would split a hugetlb VMA inside a huge page.
     */
    public void munlock(final long address, final long lengthBytes)
    {
        checkAlive();
        final long start = address & ~(long)(FRAME_BYTES - 1);
        final long end = checkAlignedRange(start, lengthBytes + (address - start), false, Errno.EINVAL);
        checkFullyMapped(start, end, "munlock");
        changeVmas(start, end, v -> v.withFlags(v.flagBits() & ~Vma.VM_LOCKED));
    }

    // ------------------------------------------------------------------ CPU access

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
        checkAlive();
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
        checkAlive();
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
        checkAlive();
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

    /**
     * Translates a virtual address without faulting: what a page-table walk finds now.
     *
     * @param address a virtual address.
     * @return the physical address, or -1 when the page is not present (never touched, swapped out, unmapped).
     */
    public long translate(final long address)
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
     * @param address a virtual address.
     * @return the size of the present leaf mapping it (4 KiB, 2 MiB, 1 GiB), or null when not present.
     */
    public PageSize mappedPageSize(final long address)
    {
        final long entry = address < 0 || address >= TASK_SIZE ? 0 : pageTable.lookup(address);
        return PageTable.present(entry) ? PageTable.size(entry) : null;
    }

    // ------------------------------------------------------------------ pinning

    /**
     * {@code pin_user_pages(start, nr_pages, FOLL_PIN [| FOLL_WRITE] [| FOLL_LONGTERM])} with the RDMA driver's
     * accounting around it, as {@code ib_umem_get} does (drivers/infiniband/core/umem.c): the page count is
     * charged to {@code pinned_vm} first and checked against RLIMIT_MEMLOCK unless CAP_IPC_LOCK; then every page
     * is faulted in (for writing with FOLL_WRITE, which breaks copy-on-write; a read pin of a shared anonymous
     * page unshares it on a modern kernel), moved out of ZONE_MOVABLE when long-term (mm/gup.c
     * {@code check_and_migrate_movable_folios}), and its folio's pin count is raised by one per 4 KiB page.
     * Physically contiguous pages of the same page size are merged into runs.
     *
     * @param address     first byte; the range is widened to whole 4 KiB pages.
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
        checkAlive();
        // Checks in ib_umem_get's order: overflow, can_do_mlock, zero pages, the RLIMIT_MEMLOCK charge, the pin.
        // Unsigned, as ib_umem_get compares: an address in the upper half is not an overflow (it faults later).
        if (Long.compareUnsigned(address + lengthBytes, address) < 0
            || Long.compareUnsigned(alignUp(address + lengthBytes, FRAME_BYTES), address + lengthBytes) < 0)
        {
            throw new KernelException(Errno.EINVAL, "pin range address=0x" + Long.toHexString(address)
                + " lengthBytes=" + lengthBytes + " overflows");
        }
        if (!capIpcLock && rlimitMemlockBytes == 0)
        {
            throw new KernelException(Errno.EPERM, "RLIMIT_MEMLOCK=0 and no CAP_IPC_LOCK (can_do_mlock)");
        }
        if (lengthBytes == 0)
        {
            throw new KernelException(Errno.EINVAL, "lengthBytes=0: nothing to pin");
        }
        final long start = address & ~(long)(FRAME_BYTES - 1);
        final long end = alignUp(address + lengthBytes, FRAME_BYTES);
        final long pages = (end - start) >>> FRAME_SHIFT;
        if (pages > 0xffff_ffffL)
        {
            throw new KernelException(Errno.EINVAL, "npages=" + pages + " > UINT_MAX (ib_umem_get)");
        }
        checkPinnedVmLimit(pages);
        if (Long.compareUnsigned(end, TASK_SIZE) > 0)
        {
            throw new KernelException(Errno.EFAULT, "pin range ends at 0x" + Long.toHexString(end)
                + " past TASK_SIZE=0x" + Long.toHexString(TASK_SIZE));
        }
        checkAccess(start, end - start, write, false);
        pinnedVmPages += pages;
        final List<PhysRun> runs = new ArrayList<>();
        final RunBuilder builder = new RunBuilder(runs);
        final boolean unshareReadPins = host.config().forkBehaviour() == ForkBehaviour.MODERN;
        long va = start;
        try
        {
            while (va < end)
            {
                long entry = pageTable.lookup(va);
                if (!PageTable.present(entry) || (write && (entry & PageTable.WRITE) == 0))
                {
                    entry = fault(va, write, longterm);
                }
                // Also after a read fault, which maps the shared zero page.
                if (!write && unshareReadPins && mustUnshare(pfnOf(entry, va), longterm))
                {
                    entry = copyOnWrite(va, entry, vmaAt(va), false, longterm);
                }
                long pfn = pfnOf(entry, va);
                if (longterm && pfn >= 0 && phys.zoneOf(pfn) == Zone.MOVABLE)
                {
                    entry = migrateForLongtermPin(va, entry);
                    pfn = pfnOf(entry, va);
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
                        + " would pass " + Integer.MAX_VALUE);
                }
                frames.addPinCount(head, (int)chunkPages);
                builder.add(pfn, chunkPages, size);
                va = chunkEnd;
            }
        }
        catch (final KernelException e)
        {
            builder.flush();
            releasePins(runs);
            pinnedVmPages -= pages;
            throw e;
        }
        builder.flush();
        host.count(VmEvent.NR_FOLL_PIN_ACQUIRED, pages);
        host.count(VmEvent.PAGE_WALKS, pages);
        final PinnedPages pinned = new PinnedPages(this, start, pages, write, longterm, List.copyOf(runs));
        livePins.add(pinned);
        return pinned;
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
        if (pinned.process() != this)
        {
            throw new KernelException(Errno.EINVAL, "pinned pages of "
                + (pinned.process() == null ? "no process" : "pid " + pinned.process().pid()) + " given to pid " + pid);
        }
        if (!livePins.remove(pinned))
        {
            throw new KernelException(Errno.EINVAL, "these pinned pages (0x" + Long.toHexString(pinned.startAddress())
                + ", " + pinned.pageCount() + " pages) were unpinned already");
        }
        releasePins(pinned.runs());
        pinnedVmPages -= pinned.pageCount();
        host.count(VmEvent.NR_FOLL_PIN_RELEASED, pinned.pageCount());
    }

    /**
     * {@code gup_must_unshare} for a read pin on a modern kernel: a page shared with another mapping, or the shared
     * zero page under FOLL_LONGTERM (it is no anonymous page of this process), is replaced by a private copy first,
     * so that the pin and the CPU keep seeing the same page.
     */
    private boolean mustUnshare(final long pfn, final boolean longterm)
    {
        if (pfn == phys.zeroPfn())
        {
            return longterm;
        }
        return frames.mapCount(pfn) > 1;
    }

    private void checkPinnedVmLimit(final long pages)
    {
        if (!capIpcLock)
        {
            final long limitPages = rlimitMemlockBytes == RLIM_INFINITY ? Long.MAX_VALUE
                : rlimitMemlockBytes >>> FRAME_SHIFT;
            if (pinnedVmPages + pages > limitPages)
            {
                throw new KernelException(Errno.ENOMEM, "pinned_vm=" + pinnedVmPages + " pages + " + pages
                    + " > RLIMIT_MEMLOCK=" + limitPages + " pages (" + rlimitMemlockBytes + " bytes); raise "
                    + "'ulimit -l' or grant CAP_IPC_LOCK");
            }
        }
    }

    private void releasePins(final List<PhysRun> runs)
    {
        for (final PhysRun run : runs)
        {
            final long first = run.firstPfn();
            final long last = first + run.frames();
            long pfn = first;
            while (pfn < last)
            {
                final long head = frames.head(pfn);
                final long folioEnd = head + (1L << frames.order(head));
                final long n = Math.min(last, folioEnd) - pfn;
                frames.addPinCount(head, (int)-n);
                releaseIfUnused(pfn);
                pfn += n;
            }
        }
    }

    /** Builds runs of physically contiguous pages of one page size. */
    private static final class RunBuilder
    {
        private final List<PhysRun> runs;
        private long startPfn = -1;
        private long frameCount;
        private PageSize size;

        RunBuilder(final List<PhysRun> runs)
        {
            this.runs = runs;
        }

        void add(final long pfn, final long count, final PageSize pageSize)
        {
            if (startPfn >= 0 && pageSize == size && startPfn + frameCount == pfn)
            {
                frameCount += count;
                return;
            }
            flush();
            startPfn = pfn;
            frameCount = count;
            size = pageSize;
        }

        void flush()
        {
            if (startPfn >= 0)
            {
                runs.add(new PhysRun(startPfn << FRAME_SHIFT, frameCount << FRAME_SHIFT, size.bytes()));
                startPfn = -1;
            }
        }
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
        final UserProcess child = host.newProcess(childName);
        child.rlimitMemlockBytes = rlimitMemlockBytes;
        child.capIpcLock = capIpcLock;
        final ForkCopier copier = new ForkCopier(host, this, child,
            host.config().forkBehaviour() == ForkBehaviour.MODERN);
        final Object[] scope = openScope(MmuNotifyEvent.PROTECTION_PAGE, "fork");
        try
        {
            for (final Vma v : vmas.list())
            {
                if (v.has(Vma.VM_DONTCOPY))
                {
                    continue;
                }
                child.vmas.put(v.withFlags(v.flagBits() & ~(Vma.VM_RESV_OWNER | Vma.VM_LOCKED)));
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
            closeScope(scope);
        }
        return child;
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
        notifying(MmuNotifyEvent.RELEASE, "exit", () -> unmapRange(0, TASK_SIZE));
        exited = true;
        host.removeProcess(this);
        RuntimeException failure = null;
        for (final Runnable hook : List.copyOf(exitHooks))
        {
            try
            {
                hook.run();
            }
            catch (final RuntimeException e)
            {
                if (failure == null)
                {
                    failure = e;
                }
                else
                {
                    failure.addSuppressed(e);
                }
            }
        }
        exitHooks.clear();
        if (failure != null)
        {
            throw failure;
        }
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
        exitHooks.add(java.util.Objects.requireNonNull(hook, "hook"));
    }

    /**
     * Registers what runs at every munmap(2) of this process, before the range is unmapped: the memory hooks that
     * UCX and Open MPI install (by intercepting munmap) so that a registration cache drops its entries for memory
     * that is going away.
     *
     * @param hook receives the start address and the length in bytes (4 KiB aligned) of each munmap.
     * @throws KernelException EINVAL when the process has exited already.
     */
    public void onUnmap(final java.util.function.BiConsumer<Long, Long> hook)
    {
        checkAlive();
        unmapHooks.add(java.util.Objects.requireNonNull(hook, "hook"));
    }


    // ------------------------------------------------------------------ interval notifiers and hmm

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
        checkAlive();
        java.util.Objects.requireNonNull(ops, "ops");
        final long start = address & ~(long)(FRAME_BYTES - 1);
        final long end = address + lengthBytes;
        if (lengthBytes <= 0 || address < 0 || end < address || end > TASK_SIZE)
        {
            throw new KernelException(Errno.EINVAL, "interval 0x" + Long.toHexString(address) + "+" + lengthBytes
                + " is empty, wraps or leaves user space (TASK_SIZE=0x" + Long.toHexString(TASK_SIZE) + ")");
        }
        final MmuInterval interval = new MmuInterval(this, start, alignUp(end, FRAME_BYTES), ops);
        intervals.add(interval);
        intervalArray = intervals.toArray(new MmuInterval[0]);
        pageTable.listener(this::leafChanging);
        return interval;
    }

    /**
     * @return interval notifiers installed now.
     */
    public int intervalNotifierCount()
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

    /** Receives what one page of an {@link #hmmRangeFault} walk found. */
    @FunctionalInterface
    public interface HmmVisitor
    {
        /**
         * @param va        the 4 KiB page's virtual address.
         * @param physAddr  the physical address of its frame.
         * @param writable  true when the CPU mapping is writable now (the device may be given write access).
         */
        void page(long va, long physAddr, boolean writable);
    }

    /**
     * {@code hmm_range_fault} (mm/hmm.c) as an on-demand-paging driver calls it: walks the page table over
     * {@code [address, address + lengthBytes)} 4 KiB page by page and reports each page's frame. With
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
     * @return the number of pages reported.
     * @throws KernelException EFAULT when, with {@code fault}, a page has no VMA or its VMA does not allow the
     *                         access (hmm returns -EFAULT or -EPERM); ENOMEM when memory and swap run out. Pages
     *                         reported before the failure stay faulted in, as in the kernel.
     */
    public long hmmRangeFault(final long address, final long lengthBytes, final boolean fault, final boolean write,
        final HmmVisitor visitor)
    {
        checkAlive();
        final long end = address + lengthBytes;
        if (lengthBytes <= 0 || address < 0 || end < address || end > TASK_SIZE)
        {
            throw new KernelException(Errno.EFAULT, "hmm range 0x" + Long.toHexString(address) + "+" + lengthBytes
                + " is empty or leaves user space");
        }
        long reported = 0;
        long va = address & ~(long)(FRAME_BYTES - 1);
        while (va < end)
        {
            final long entry;
            if (fault)
            {
                final Vma v = vmaAt(va);
                if (v == null)
                {
                    throw new KernelException(Errno.EFAULT, "hmm_range_fault at 0x" + Long.toHexString(va)
                        + ": no VMA maps it");
                }
                if (write ? !v.writable() : !v.readable())
                {
                    throw new KernelException(Errno.EFAULT, "hmm_range_fault at 0x" + Long.toHexString(va)
                        + ": the VMA (" + v.permissions() + ") does not allow a device " + (write ? "write" : "read"));
                }
                entry = fault(va, write, false);
            }
            else
            {
                host.count(VmEvent.PAGE_WALKS);
                final Vma v = vmaAt(va);
                // hmm_vma_walk_test: pages of a VMA without VM_READ are reported as errors, not mapped.
                entry = v == null || !v.readable() ? 0 : pageTable.lookup(va);
            }
            if (PageTable.present(entry))
            {
                visitor.page(va, pfnOf(entry, va) << FRAME_SHIFT, (entry & PageTable.WRITE) != 0);
                reported++;
            }
            va += FRAME_BYTES;
        }
        return reported;
    }

    private void leafChanging(final long va, final PageSize size)
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
    private void notifying(final MmuNotifyEvent event, final String reason, final Runnable body)
    {
        notifying(event, reason, () ->
        {
            body.run();
            return 0L;
        });
    }

    private long notifying(final MmuNotifyEvent event, final String reason,
        final java.util.function.LongSupplier body)
    {
        final Object[] saved = openScope(event, reason);
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
    Object[] openScope(final MmuNotifyEvent event, final String reason)
    {
        final Object[] saved = {notifyEvent, notifyReason, notifyOperation};
        if (notifyOperation < 0 || notifyEvent != event || !notifyReason.equals(reason))
        {
            notifyEvent = event;
            notifyReason = reason;
            notifyOperation = ++operations;
        }
        return saved;
    }

    void closeScope(final Object[] saved)
    {
        notifyEvent = (MmuNotifyEvent)saved[0];
        notifyReason = (String)saved[1];
        notifyOperation = (Long)saved[2];
    }

    /** Tells interval notifiers about every present leaf of the range, as a change of protection does. */
    private void notifyPresent(final long start, final long end)
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

    // ------------------------------------------------------------------ package-private: import and host hooks

    /**
     * Adds a VMA at a fixed place, as an import from /proc/PID/smaps does.
     *
     * @throws KernelException EINVAL when it overlaps a VMA or leaves the user address range; ENOMEM past
     *                         {@code vm.max_map_count}; ENOMEM when a hugetlb VMA finds too few pool pages.
     */
    void addImportedVma(final Vma vma)
    {
        checkAlive();
        if (vma.startAddress() < 0 || vma.endAddress() > TASK_SIZE || vma.startAddress() >= vma.endAddress()
            || vmas.overlaps(vma.startAddress(), vma.endAddress()))
        {
            throw new KernelException(Errno.EINVAL, "imported VMA 0x" + Long.toHexString(vma.startAddress()) + "-0x"
                + Long.toHexString(vma.endAddress()) + " is empty, outside user space or overlaps another");
        }
        if (vmas.size() + 1 > host.config().maxMapCount())
        {
            throw new KernelException(Errno.ENOMEM, "VMA " + (vmas.size() + 1) + " > vm.max_map_count="
                + host.config().maxMapCount());
        }
        if (vma.kind() == VmaKind.HUGETLB)
        {
            final long pages = vma.lengthBytes() / vma.hugePageSize().bytes();
            final HugetlbPool pool = phys.pool(vma.hugePageSize());
            if (pool.availablePages() < pages)
            {
                throw new KernelException(Errno.ENOMEM, "hugetlb VMA needs " + pages + " pages of "
                    + vma.hugePageSize().kb() + " kB; pool has " + pool.availablePages() + " unreserved free");
            }
            pool.reserve(pages);
            for (long va = vma.startAddress(); va < vma.endAddress(); va += vma.hugePageSize().bytes())
            {
                pageTable.set(va, vma.hugePageSize(), PageTable.RESERVED);
            }
        }
        vmas.put(vma);
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
        final Vma v = vmaAt(start);
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

    /** Removes every mapping, as exit does, without ending the process. */
    void unmapAll()
    {
        unmapRange(0, TASK_SIZE);
    }

    PageTable pageTable()
    {
        return pageTable;
    }

    /**
     * Swaps out or drops one reclaimable leaf (reclaim's shrink_folio_list for one folio).
     *
     * @return the number of 4 KiB pages freed; 0 when the leaf is not reclaimable now or swap is full.
     */
    long reclaimLeaf(final long va, final long entry, final PageSize size)
    {
        return notifying(MmuNotifyEvent.CLEAR, "reclaim", () -> reclaimLeafNow(va, entry, size));
    }

    private long reclaimLeafNow(final long va, final long entry, final PageSize size)
    {
        final Vma v = vmaAt(va);
        if (v == null || v.kind() == VmaKind.HUGETLB || v.has(Vma.VM_LOCKED) || !PageTable.present(entry))
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
        if (v.kind() != VmaKind.FILE && phys.swap().totalSlots() - phys.swap().usedSlots() < size.frames())
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
        if (size == PageSize.SIZE_2M)
        {
            pageTable.splitPmd(va);
            host.count(VmEvent.THP_SPLIT_PMD);
        }
        if (order > 0)
        {
            frames.split(head, order);
            host.count(VmEvent.THP_SPLIT_PAGE);
        }
        long freed = 0;
        for (long p = 0; p < size.frames(); p++)
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
            phys.freeFolio(pagePfn);
            freed++;
        }
        return freed;
    }

    /** Points every 4 KiB PTE of this process that maps {@code oldPfn} at {@code newPfn}; returns how many. */
    int remapFrame(final long oldPfn, final long newPfn)
    {
        return (int)notifying(MmuNotifyEvent.CLEAR, "migration", () -> remapFrameNow(oldPfn, newPfn));
    }

    private int remapFrameNow(final long oldPfn, final long newPfn)
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
        notifying(MmuNotifyEvent.CLEAR, "THP split", () -> splitPmdsOfFolioNow(head));
    }

    private void splitPmdsOfFolioNow(final long head)
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

    // ------------------------------------------------------------------ faults

    private long fault(final long va, final boolean write, final boolean pinning)
    {
        host.count(VmEvent.PAGE_WALKS);
        final long entry = pageTable.lookup(va);
        if (PageTable.present(entry) && (!write || (entry & PageTable.WRITE) != 0))
        {
            return entry;
        }
        final Vma v = vmaAt(va);
        if (v == null)
        {
            throw new SegmentationFault(va, "no VMA maps it");
        }
        host.count(VmEvent.PGFAULT);
        if (PageTable.present(entry))
        {
            return notifying(MmuNotifyEvent.CLEAR, "copy-on-write", () -> copyOnWrite(va, entry, v, true, pinning));
        }
        if ((entry & PageTable.SWAP) != 0)
        {
            return swapIn(va, entry, v, pinning);
        }
        return newPage(va, v, entry, write, pinning);
    }

    private long newPage(final long va, final Vma v, final long oldEntry, final boolean write, final boolean pinning)
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
                    + pool.freePages() + ", HugePages_Rsvd=" + pool.reservedPages() + ")");
            }
            if (reserved)
            {
                pool.unreserve(1);
            }
            final long head = phys.takeHugetlbPage(size);
            final long hugeVa = va & ~(size.bytes() - 1);
            final long entry = PageTable.make(head, PageTable.PRESENT | writeBit
                | (size == PageSize.SIZE_1G ? PageTable.HUGE_1G : PageTable.HUGE_2M));
            frames.addMapCount(head, size.frames(), 1);
            pageTable.set(hugeVa, size, entry);
            return entry;
        }
        final long hugeVa = va & ~(PageSize.SIZE_2M.bytes() - 1);
        if ((importThp != null ? importThp : thpEligible(v)) && v.kind() == VmaKind.ANONYMOUS && hugeVa >= v.startAddress() && hugeVa + PageSize.SIZE_2M.bytes() <= v.endAddress()
            && pageTable.pmdNone(hugeVa))
        {
            final long head = host.allocate(PageSize.SIZE_2M.order(), !pinning, FrameTable.KIND_ANON, false);
            if (head >= 0)
            {
                host.count(VmEvent.THP_FAULT_ALLOC);
                final long entry = PageTable.make(head, PageTable.PRESENT | writeBit | PageTable.HUGE_2M);
                frames.addMapCount(head, PageSize.SIZE_2M.frames(), 1);
                pageTable.set(hugeVa, PageSize.SIZE_2M, entry);
                return entry;
            }
            host.count(VmEvent.THP_FAULT_FALLBACK);
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

    private boolean thpEligible(final Vma v)
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

    private long allocatePageOrFail(final Vma v, final boolean pinning, final long va)
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

    private long swapIn(final long va, final long entry, final Vma v, final boolean pinning)
    {
        final long slot = PageTable.pfn(entry);
        final long pfn = allocatePageOrFail(v, pinning, va);
        final byte[] bytes = phys.swap().bytes(slot);
        if (bytes != null)
        {
            frames.writeFrame(pfn, 0, bytes, 0, bytes.length);
        }
        phys.swap().release(slot);
        final long newEntry = PageTable.make(pfn, PageTable.PRESENT | (v.writable() ? PageTable.WRITE : 0));
        frames.addMapCount(pfn, 1);
        pageTable.set(va & ~(long)(FRAME_BYTES - 1), PageSize.SIZE_4K, newEntry);
        host.count(VmEvent.PGMAJFAULT);
        host.count(VmEvent.PSWPIN);
        return newEntry;
    }

    /**
     * Write fault on a write-protected present page (or, with {@code makeWritable} false, an unshare for a read
     * pin): reuse the page when this mapping is its only one, else copy it (mm/memory.c {@code do_wp_page}).
     */
    private long copyOnWrite(final long va, final long entry, final Vma v, final boolean makeWritable,
        final boolean pinning)
    {
        final PageSize size = PageTable.size(entry);
        final long writeBit = makeWritable ? PageTable.WRITE : (entry & PageTable.WRITE);
        if (v.kind() == VmaKind.HUGETLB)
        {
            final long head = PageTable.pfn(entry);
            final long hugeVa = va & ~(size.bytes() - 1);
            if (frames.mapCount(head) == 1)
            {
                final long reused = entry | writeBit;
                pageTable.set(hugeVa, size, reused);
                return reused;
            }
            if (phys.pool(size).availablePages() <= 0)
            {
                throw new KernelException(Errno.ENOMEM, "copy-on-write of a hugetlb page (SIGBUS in a CPU) at 0x"
                    + Long.toHexString(va) + ": the " + size.kb() + " kB pool has no unreserved free page");
            }
            final long copy = phys.takeHugetlbPage(size);
            copyFrames(head, copy, size.frames());
            frames.addMapCount(head, size.frames(), -1);
            frames.addMapCount(copy, size.frames(), 1);
            final long copied = PageTable.make(copy, PageTable.flags(entry) | writeBit);
            pageTable.set(hugeVa, size, copied);
            host.count(VmEvent.COW_COPY, size.frames());
            releaseIfUnused(head);
            return copied;
        }
        if (size == PageSize.SIZE_2M)
        {
            // do_huge_pmd_wp_page falls back to splitting the PMD and handling the 4 KiB page.
            pageTable.splitPmd(va);
            host.count(VmEvent.THP_SPLIT_PMD);
            return copyOnWrite(va, pageTable.lookup(va), v, makeWritable, pinning);
        }
        final long pageVa = va & ~(long)(FRAME_BYTES - 1);
        final long pfn = PageTable.pfn(entry);
        if (pfn == phys.zeroPfn())
        {
            // wp_page_copy from the zero page: a fresh zeroed page, nothing to copy or release.
            final long fresh = allocatePageOrFail(v, pinning, va);
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
        final long copy = allocatePageOrFail(v, pinning, va);
        frames.copyFrame(pfn, copy);
        frames.addMapCount(pfn, -1);
        frames.addMapCount(copy, 1);
        final long copied = PageTable.make(copy, PageTable.flags(entry) | writeBit);
        pageTable.set(pageVa, size, copied);
        host.count(VmEvent.COW_COPY);
        releaseIfUnused(pfn);
        return copied;
    }

    private long migrateForLongtermPin(final long va, final long entry)
    {
        return notifying(MmuNotifyEvent.CLEAR, "migration for a long-term pin", () -> migrateNow(va, entry));
    }

    private long migrateNow(final long va, final long entry)
    {
        final PageSize size = PageTable.size(entry);
        final long pfn = pfnOf(entry, va);
        final long head = frames.head(pfn);
        final int order = frames.order(head);
        if (frames.pinCount(head) > 0)
        {
            throw new KernelException(Errno.ENOMEM, "page at 0x" + Long.toHexString(va) + " is in ZONE_MOVABLE and "
                + "already pinned without FOLL_LONGTERM, so migrate_pages cannot move it for a long-term pin "
                + "(migrate_longterm_unpinnable_folios)");
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
                copyFrames(head, target, 1L << order);
                frames.addMapCount(target, 1L << order, 1);
                final long hugeVa = va & ~(size.bytes() - 1);
                final long moved = PageTable.make(target, PageTable.flags(entry));
                pageTable.set(hugeVa, size, moved);
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
        if (order > 0)
        {
            host.splitPmdsOfFolio(head);
            frames.split(head, order);
            host.count(VmEvent.THP_SPLIT_PAGE);
        }
        // Hold the page while the target is found, so that reclaim does not take it meanwhile.
        frames.addPinCount(pfn, 1);
        final long target = host.allocate(0, false, frames.kind(pfn), true);
        frames.addPinCount(pfn, -1);
        if (target < 0)
        {
            throw new KernelException(Errno.ENOMEM, "long-term pin must move the page at 0x" + Long.toHexString(va)
                + " out of ZONE_MOVABLE but ZONE_NORMAL has no free frame (" + (phys.zoneFreeFrames(Zone.NORMAL))
                + " free) and nothing to reclaim");
        }
        host.migrateFrame(pfn, target, this, va & ~(long)(FRAME_BYTES - 1));
        host.count(VmEvent.PGMIGRATE_LONGTERM_PIN);
        return pageTable.lookup(va);
    }

    // ------------------------------------------------------------------ unmapping

    private void unmapRange(final long start, final long end)
    {
        splitHugePmdsAtEdges(start, end);
        zapRange(start, end);
        vmas.carve(start, end);
    }

    private void zapRange(final long start, final long end)
    {
        pageTable.forEachLeaf(start, end, (va, entry, size) ->
        {
            pageTable.set(va, size, 0);
            if ((entry & PageTable.RESERVED) != 0)
            {
                final Vma v = vmaAt(va);
                phys.pool(v != null ? v.hugePageSize() : size).unreserve(1);
            }
            else if ((entry & PageTable.SWAP) != 0)
            {
                phys.swap().release(PageTable.pfn(entry));
            }
            else if (PageTable.present(entry) && PageTable.pfn(entry) != phys.zeroPfn())
            {
                final long pfn = PageTable.pfn(entry);
                frames.addMapCount(pfn, size.frames(), -1);
                releaseIfUnused(pfn);
            }
        });
    }

    /**
     * Frees a folio that is neither pinned nor mapped; splits an unpinned large anonymous folio that is only
     * partly mapped and frees its unmapped pages (the deferred split of mm/huge_memory.c).
     */
    private void releaseIfUnused(final long pfn)
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
        if (order > 0 && frames.kind(head) != FrameTable.KIND_HUGETLB && frames.anyUnmapped(head, order))
        {
            frames.split(head, order);
            host.count(VmEvent.THP_SPLIT_PAGE);
            for (long p = head; p < head + (1L << order); p++)
            {
                if (frames.mapCount(p) == 0)
                {
                    phys.freeFolio(p);
                }
            }
        }
    }

    private void splitHugePmdsAtEdges(final long start, final long end)
    {
        for (final long edge : new long[] {start, end})
        {
            if (edge <= 0 || edge >= TASK_SIZE)
            {
                continue;
            }
            final long entry = pageTable.lookup(edge);
            final Vma v = vmaAt(edge);
            if (PageTable.present(entry) && PageTable.size(entry) == PageSize.SIZE_2M
                && (edge & (PageSize.SIZE_2M.bytes() - 1)) != 0 && v != null && v.kind() != VmaKind.HUGETLB)
            {
                pageTable.splitPmd(edge);
                host.count(VmEvent.THP_SPLIT_PMD);
            }
        }
    }

    // ------------------------------------------------------------------ VMA bookkeeping

    /**
     * Applies a change to the VMAs of a range, splitting and merging them, after checking (before anything changes)
     * that no hugetlb VMA is cut inside a huge page (hugetlb_vm_op_split: EINVAL) and that the VMA count after the
     * change, merges included, stays within {@code vm.max_map_count} (ENOMEM).
     */
    private void changeVmas(final long start, final long end, final java.util.function.UnaryOperator<Vma> change)
    {
        checkHugetlbAligned(start, end, "splitting a VMA");
        final VmaTree trial = vmas.copy();
        trial.change(start, end, change);
        if (trial.size() > host.config().maxMapCount())
        {
            throw new KernelException(Errno.ENOMEM, "the change would leave " + trial.size()
                + " VMAs > vm.max_map_count=" + host.config().maxMapCount());
        }
        // __split_vma -> vma_adjust_trans_huge: a PMD mapping never straddles two VMAs.
        splitHugePmdsAtEdges(start, end);
        vmas.change(start, end, change);
    }

    private long findFreeRange(final long length, final long align)
    {
        final long start = vmas.findFreeRange(length, align, host.config().mmapMinAddrBytes(), MMAP_BASE);
        if (start < 0)
        {
            throw new KernelException(Errno.ENOMEM, "no free range of " + length + " bytes aligned to " + align
                + " below MMAP_BASE=0x" + Long.toHexString(MMAP_BASE));
        }
        return start;
    }

    // ------------------------------------------------------------------ checks and helpers

    private void checkAlive()
    {
        if (exited)
        {
            throw new KernelException(Errno.EINVAL, "process " + pid + " (" + name + ") has exited");
        }
    }

    /** Checks address alignment and length; returns the page-aligned end. */
    private long checkAlignedRange(final long address, final long lengthBytes, final boolean zeroIsError,
        final Errno overflowErrno)
    {
        if (address < 0 || address >= TASK_SIZE)
        {
            // munmap: EINVAL for start > TASK_SIZE; mprotect, madvise, mlock: ENOMEM, nothing is mapped there.
            throw new KernelException(zeroIsError ? Errno.EINVAL : Errno.ENOMEM, "address 0x" + Long.toHexString(address)
                + " is outside the user address space (TASK_SIZE=0x" + Long.toHexString(TASK_SIZE) + ")");
        }
        if ((address & (FRAME_BYTES - 1)) != 0)
        {
            throw new KernelException(Errno.EINVAL, "address 0x" + Long.toHexString(address)
                + " is not 4096-byte aligned");
        }
        if (lengthBytes < 0)
        {
            throw new KernelException(overflowErrno, "lengthBytes=" + lengthBytes + " is negative");
        }
        if (lengthBytes == 0 && zeroIsError)
        {
            throw new KernelException(Errno.EINVAL, "lengthBytes=0 must be positive");
        }
        final long end = alignUp(address + lengthBytes, FRAME_BYTES);
        if (address + lengthBytes < address || end < address || end > TASK_SIZE)
        {
            throw new KernelException(zeroIsError ? Errno.EINVAL : overflowErrno, "range 0x"
                + Long.toHexString(address) + "+" + lengthBytes + " passes TASK_SIZE=0x" + Long.toHexString(TASK_SIZE));
        }
        return end;
    }

    private void checkFullyMapped(final long start, final long end, final String call)
    {
        final long cursor = vmas.firstHole(start, end);
        if (cursor < end)
        {
            throw new KernelException(Errno.ENOMEM, call + ": 0x" + Long.toHexString(cursor)
                + " in range 0x" + Long.toHexString(start) + "-0x" + Long.toHexString(end) + " is not mapped");
        }
    }

    private void checkHugetlbAligned(final long start, final long end, final String call)
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
                    + Long.toHexString(end) + " cuts through a " + v.hugePageSize().kb() + " kB hugetlb page");
            }
        }
    }

    /** Checks that every byte of the range is mapped with the needed protection; returns the page-aligned end. */
    private long checkAccess(final long address, final long lengthBytes, final boolean write)
    {
        return checkAccess(address, lengthBytes, write, true);
    }

    /**
     * @param cpu a CPU access, which on x86 may read any accessible VMA (arch/x86/mm/fault.c {@code access_error}:
     *            {@code vma_is_accessible}); else a get_user_pages access, which needs VM_READ to read
     *            (mm/gup.c {@code check_vma_flags}).
     */
    private long checkAccess(final long address, final long lengthBytes, final boolean write, final boolean cpu)
    {
        final long end = address + lengthBytes;
        if (address < 0 || end < address || end > TASK_SIZE)
        {
            throw new SegmentationFault(address, "range of " + lengthBytes + " bytes leaves user space");
        }
        long cursor = address;
        while (cursor < end)
        {
            final Vma v = vmaAt(cursor);
            if (v == null)
            {
                throw new SegmentationFault(cursor, "no VMA maps it");
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
        return alignUp(end, FRAME_BYTES);
    }

    private void populate(final long start, final long end, final boolean write)
    {
        long va = start;
        while (va < end)
        {
            final long entry = fault(va, write, false);
            final PageSize size = PageTable.size(entry);
            va = (va & ~(size.bytes() - 1)) + size.bytes();
        }
    }

    private void copyFrames(final long from, final long to, final long count)
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
    private static long pfnOf(final long entry, final long va)
    {
        final PageSize size = PageTable.size(entry);
        return PageTable.pfn(entry) + ((va & (size.bytes() - 1)) >>> FRAME_SHIFT);
    }

    private static long alignUp(final long value, final long align)
    {
        return (value + align - 1) & ~(align - 1);
    }

    @Override
    public String toString()
    {
        return "UserProcess[pid=" + pid + ", name=" + name + ", vmas=" + vmas.size() + "]";
    }
}
