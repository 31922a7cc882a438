package dev.rnicsim.pagetable;

/**
 * How {@code fork()} treats anonymous pages that may be DMA-pinned: a property of the host kernel's version.
 *
 * <p>Immutable and thread safe.
 */
public enum ForkBehaviour
{
    /**
     * Linux 5.9 and later (commits 70e806e4e645 "mm: Do early cow for pinned pages during fork() for ptes" and
     * 4eae4efa2c29 for hugetlb): a possibly pinned anonymous page is copied for the child at fork, and the
     * parent keeps the pinned frame. rdma-core then reports {@code IBV_FORK_UNNEEDED}.
     */
    MODERN,
    /**
     * Older kernels: every private page is shared copy-on-write, pinned or not. The parent's next write moves
     * its virtual address to a new frame while the pinned old frame stays with the child (and the NIC), unless
     * the range was MADV_DONTFORK, in which case the child gets no mapping (what {@code ibv_fork_init()} does).
     */
    LEGACY
}
