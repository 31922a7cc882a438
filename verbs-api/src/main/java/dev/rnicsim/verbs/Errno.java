package dev.rnicsim.verbs;

/**
 * The Linux errno values a verb can fail with (asm-generic/errno-base.h, asm-generic/errno.h), with their numbers,
 * so that an error from the simulator and one from rdma-core read the same. Numbers without a constant map to
 * {@link #UNKNOWN}.
 *
 * <p>Immutable and thread safe.
 */
public enum Errno
{
    /** Operation not permitted. */
    EPERM(1),
    /** No such file or directory (also: lkeys inconsistent with MRs, ibv_advise_mr). */
    ENOENT(2),
    /** Interrupted system call. */
    EINTR(4),
    /** I/O error. */
    EIO(5),
    /** Argument list too long (7): e.g. an SRQ larger than cxgb4's max_srq_wr ({@code c4iw_create_srq}). */
    E2BIG(7),
    /** Bad file descriptor (9): e.g. a dma-buf fd that names no open file. */
    EBADF(9),
    /** Resource temporarily unavailable. */
    EAGAIN(11),
    /** Out of memory, or a device or memlock limit reached. */
    ENOMEM(12),
    /** Permission denied. */
    EACCES(13),
    /** Bad address. */
    EFAULT(14),
    /** Device or resource busy. */
    EBUSY(16),
    /** File exists (e.g. MAP_FIXED_NOREPLACE over a mapping). */
    EEXIST(17),
    /** No such device. */
    ENODEV(19),
    /** Invalid argument. */
    EINVAL(22),
    /** Function not implemented. */
    ENOSYS(38),
    /** No data available (61): e.g. an empty entry of a port's GID table (ibv_query_gid_ex). */
    ENODATA(61),
    /** Value too large for defined data type (75): e.g. an ODP MR whose end wraps past 2^64. */
    EOVERFLOW(75),
    /** Operation not supported. */
    EOPNOTSUPP(95),
    /** A number with no constant here. */
    UNKNOWN(-1);

    private static final Errno[] VALUES = values();

    private final int code;

    Errno(final int code)
    {
        this.code = code;
    }

    /**
     * @return the errno number (-1 for UNKNOWN).
     */
    public int code()
    {
        return code;
    }

    /**
     * @param code an errno number.
     * @return its constant, or UNKNOWN.
     */
    public static Errno of(final int code)
    {
        for (final Errno e : VALUES)
        {
            if (e.code == code)
            {
                return e;
            }
        }
        return UNKNOWN;
    }
}
