package dev.rnicsim.scenarios.script;

/**
 * What a step did: success with the figures it produced, or the errno it failed with.
 *
 * @param ok      true on success.
 * @param errno   the errno name on failure (e.g. {@code ENOMEM}), else null.
 * @param message the figures on success, the error message on failure.
 */
public record Outcome(boolean ok, String errno, String message)
{
    static Outcome ok(final String figures)
    {
        return new Outcome(true, null, figures);
    }

    static Outcome failed(final String errno, final String message)
    {
        return new Outcome(false, errno, message);
    }

    /**
     * @return {@code ok} or the errno name.
     */
    public String name()
    {
        return ok ? "ok" : errno;
    }
}
