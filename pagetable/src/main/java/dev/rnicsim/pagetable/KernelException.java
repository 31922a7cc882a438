package dev.rnicsim.pagetable;

/**
 * A failed host-kernel call: carries the errno Linux would return and a message naming the offending value and
 * the limit that was hit. A call that throws this leaves the host as it was before the call.
 *
 * <p>Immutable.
 */
public class KernelException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final Errno errno;
    private final String detail;

    /**
     * @param errno   the Linux error number.
     * @param message what was wrong, with the value and the limit, e.g.
     *                {@code "pinned_vm=1025 pages + 1 > RLIMIT_MEMLOCK=1024 pages"}.
     */
    public KernelException(final Errno errno, final String message)
    {
        super(errno.name() + ": " + message);
        this.errno = errno;
        this.detail = message;
    }

    /**
     * @return what was wrong, with the value and the limit, without the errno name that {@link #getMessage()}
     *         starts with: callers that report the errno themselves use this.
     */
    public String detail()
    {
        return detail;
    }

    /**
     * @return the Linux error number of the failure.
     */
    public Errno errno()
    {
        return errno;
    }
}
