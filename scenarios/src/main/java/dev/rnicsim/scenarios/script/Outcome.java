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

    /**
     * @return the message as a failure line shows it after its errno: {@code ibv_reg_mr: ENOMEM: ...} becomes
     *         {@code ibv_reg_mr: ...}, since the line starts with the errno already (so does {@code netdev_mtu=40:
     *         EINVAL: ...}).
     */
    String shown()
    {
        final String dup = ": " + errno + ": ";
        final int i = message.indexOf(dup);
        // a verb, or a script option and its value (netdev_mtu=40: EINVAL: ...)
        if (i > 0 && message.substring(0, i).matches("[A-Za-z_.]+(=[^ :]*)?( [0-9a-z_]+)?"))
        {
            return message.substring(0, i) + ": " + message.substring(i + dup.length());
        }
        return message;
    }
}
