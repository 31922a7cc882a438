/**
 * The host memory model: a simulated Linux host whose memory behaves as the kernel's does for RDMA registration.
 *
 * <p>{@link dev.rnicsim.pagetable.Host} boots {@link dev.rnicsim.pagetable.PhysicalMemory} (4 KiB frames, zones
 * NORMAL and MOVABLE, a buddy allocator, hugetlb pools, swap, sparse off-heap bytes) from a
 * {@link dev.rnicsim.pagetable.HostConfig}, runs reclaim and compaction, and counts events
 * ({@link dev.rnicsim.pagetable.VmEvent}). A {@link dev.rnicsim.pagetable.UserProcess} has VMAs and a four-level
 * page table, takes page faults (demand paging, THP, hugetlb, swap-in, copy-on-write, the zero page), implements
 * mmap, munmap, mprotect, madvise, mlock, fork and exit, and pins pages as {@code ib_umem_get} does, charged to
 * {@code pinned_vm} against RLIMIT_MEMLOCK. {@link dev.rnicsim.pagetable.ProcFs} renders /proc views and
 * {@link dev.rnicsim.pagetable.SmapsImporter} rebuilds a real process from its smaps. Nothing here knows of RDMA
 * or reads a clock. Failed calls throw {@link dev.rnicsim.pagetable.KernelException} with the Linux errno; a null
 * argument throws NullPointerException.
 */
package dev.rnicsim.pagetable;
