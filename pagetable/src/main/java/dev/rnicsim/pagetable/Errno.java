package dev.rnicsim.pagetable;

/**
 * The Linux error numbers the host model raises, with their x86-64 values ({@code asm-generic/errno-base.h},
 * {@code errno.h}).
 *
 * <p>Immutable and thread safe.
 */
public enum Errno
{
    /** Operation not permitted (1): e.g. RLIMIT_MEMLOCK is 0 without CAP_IPC_LOCK, or an address below
     * {@code mmap_min_addr}. */
    EPERM(1),
    /** Try again (11): e.g. a pinned folio cannot be split or migrated. */
    EAGAIN(11),
    /** Out of memory (12): no free frames, a limit such as RLIMIT_MEMLOCK or {@code vm.max_map_count}
     * exceeded, or an address range that is not mapped. */
    ENOMEM(12),
    /** Bad address (14): an access or pin outside any mapping or against its protection. */
    EFAULT(14),
    /** Device or resource busy (16). */
    EBUSY(16),
    /** File exists (17): a fixed mapping that must not replace an existing one. */
    EEXIST(17),
    /** Invalid argument (22). */
    EINVAL(22),
    /** Operation not supported (95): a Linux feature this model does not cover. */
    EOPNOTSUPP(95);

    private final int value;

    Errno(final int value)
    {
        this.value = value;
    }

    /**
     * @return the numeric errno value as on x86-64 Linux.
     */
    public int value()
    {
        return value;
    }
}
