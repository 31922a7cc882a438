package dev.rnicsim.verbs;

/**
 * A verb failed. Carries the raw errno as the backend reported it, its {@link Errno} constant, the verb, and a
 * message naming the value that was wrong and the limit it hit ({@code length=… > max_mr_size=…}). A
 * failed verb changed nothing: no half-created object, no pin, no table entry is left behind.
 *
 * <p>Unchecked, so that resources can be used in try-with-resources without wrapping.
 */
public class VerbsException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final String verb;
    private final int errno;
    private final String detail;

    /**
     * @param verb    the verb that failed, e.g. {@code ibv_reg_mr}.
     * @param errno   the errno number.
     * @param message what was wrong, with the value and the limit.
     */
    public VerbsException(final String verb, final int errno, final String message)
    {
        super(verb + ": " + Errno.of(errno).name() + ": " + message);
        this.verb = verb;
        this.errno = errno;
        this.detail = message;
    }

    /**
     * @param verb    the verb that failed.
     * @param errno   the errno number.
     * @param message what was wrong.
     * @param cause   the lower-level failure.
     */
    public VerbsException(final String verb, final int errno, final String message, final Throwable cause)
    {
        this(verb, errno, message);
        initCause(cause);
    }

    /**
     * @return the verb that failed.
     */
    public String verb()
    {
        return verb;
    }

    /**
     * @return what was wrong, with the value and the limit, without the verb and errno name that
     *         {@link #getMessage()} starts with.
     */
    public String detail()
    {
        return detail;
    }

    /**
     * @return the raw errno number.
     */
    public int errno()
    {
        return errno;
    }

    /**
     * @return the errno as a constant ({@link Errno#UNKNOWN} for numbers without one).
     */
    public Errno errnoName()
    {
        return Errno.of(errno);
    }
}
