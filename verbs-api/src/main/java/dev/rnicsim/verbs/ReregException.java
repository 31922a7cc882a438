package dev.rnicsim.verbs;

/**
 * A failed {@code ibv_rereg_mr}: besides the errno, the library's negative return value, which says what state the
 * MR is in (ibv_rereg_mr(3)). Whatever the code, the application must still deregister the MR.
 */
public final class ReregException extends VerbsException
{
    /** IBV_REREG_MR_ERR_INPUT: the library refused the input; the old MR is still valid. */
    public static final int ERR_INPUT = -1;
    /**
     * IBV_REREG_MR_ERR_DONT_FORK_NEW: with fork support on, MADV_DONTFORK of the new range was refused; the old MR is
     * still valid (libibverbs verbs.c {@code ibv_rereg_mr}).
     */
    public static final int ERR_DONT_FORK_NEW = -2;
    /** IBV_REREG_MR_ERR_CMD: the kernel command failed; the MR must not be used any more. */
    public static final int ERR_CMD = -4;

    private static final long serialVersionUID = 1L;

    private final int reregError;

    /**
     * @param errno      the errno.
     * @param reregError {@link #ERR_INPUT}, {@link #ERR_DONT_FORK_NEW} or {@link #ERR_CMD}.
     * @param message    what was wrong.
     */
    public ReregException(final int errno, final int reregError, final String message)
    {
        super("ibv_rereg_mr", errno, message);
        this.reregError = reregError;
    }

    /**
     * @return the library's return value: {@link #ERR_INPUT} (old MR still valid) or {@link #ERR_CMD} (MR unusable).
     */
    public int reregError()
    {
        return reregError;
    }
}
