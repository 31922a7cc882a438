package dev.rnicsim.verbs;

/**
 * {@code ibv_post_send} or {@code ibv_post_recv} refused a work request at post time. Posting stops at that work
 * request (the C API returns it in {@code bad_wr}); the ones before it were posted, it and the ones after were not.
 */
public final class PostException extends VerbsException
{
    private static final long serialVersionUID = 1L;

    private final int badWrIndex;

    /**
     * @param verb       {@code ibv_post_send} or {@code ibv_post_recv}.
     * @param errno      the errno number.
     * @param badWrIndex index in the posted list of the first work request not posted.
     * @param message    what was wrong.
     */
    public PostException(final String verb, final int errno, final int badWrIndex, final String message)
    {
        super(verb, errno, "wr[" + badWrIndex + "]: " + message);
        this.badWrIndex = badWrIndex;
    }

    /**
     * @return index in the posted list of the first work request that was not posted ({@code bad_wr}).
     */
    public int badWrIndex()
    {
        return badWrIndex;
    }
}
