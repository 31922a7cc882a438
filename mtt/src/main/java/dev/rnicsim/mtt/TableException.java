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

    /**
     * @param errno   the Linux error number.
     * @param message what was wrong, with the value and the limit.
     */
    public TableException(final Errno errno, final String message)
    {
        super(errno.name() + ": " + message);
        this.errno = errno;
    }

    /**
     * @return the Linux error number.
     */
    public Errno errno()
    {
        return errno;
    }
}
