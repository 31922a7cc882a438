package dev.rnicsim.mtt;

/**
 * A refused operation on the adapter tables, with the errno the driver would return and a message naming the
 * value and the limit. An operation that throws this leaves the tables as they were.
 *
 * <p>Immutable.
 */
public final class TableException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final Errno errno;
    private final String detail;

    /**
     * @param errno   the Linux error number.
     * @param message what was wrong, with the value and the limit.
     */
    public TableException(final Errno errno, final String message)
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
     * @return the Linux error number.
     */
    public Errno errno()
    {
        return errno;
    }
}
