package dev.rnicsim.testkit;

import java.util.Objects;

/**
 * One misuse strict mode caught.
 *
 * @param kind          what went wrong.
 * @param message       what happened, with the keys, addresses and process involved.
 * @param registeredAt  where the MR involved was registered (its stack trace), or null.
 * @param releasedAt    where it was deregistered or its memory released, when known, or null.
 */
public record Violation(Kind kind, String message, Throwable registeredAt, Throwable releasedAt)
{
    /** The misuses strict mode catches. */
    public enum Kind
    {
        /** A work request's SGE used an lkey that was deregistered (or re-registered under a new key). */
        STALE_LKEY,
        /** A remote access used an rkey that was deregistered (or re-registered under a new key). */
        STALE_RKEY,
        /** A DMA reached frames that no longer back the MR's virtual addresses (after munmap, mremap or a COW
         * break after fork): the stale-mapping bug of registration caches. */
        STALE_MAPPING,
        /** MRs still registered when their context closed. */
        LEAKED_MR,
        /** Registrations faster than the configured rate (registration on the hot path, S26). */
        HOT_REGISTRATION,
        /** A key issued again to a new MR after its first MR was deregistered was used: a holder of the old key
         * reaches the new MR (off unless {@link StrictMode#enable enabled}). */
        STALE_KEY_REUSED,
        /** An MR no DMA reached before it was deregistered or its context closed (off unless enabled). */
        UNUSED_MR,
        /** A polled flag was seen before the relaxed-ordering data written with it landed (off unless enabled). */
        FLAG_BEFORE_DATA,
        /** A key was retired (dereg, dealloc_mw, LOCAL_INV, rebind or unbind) while a message using it was in
         * flight (off unless enabled: the testkit's chains stage such races on purpose). */
        KEY_RETIRED_IN_FLIGHT
    }

    /**
     * @throws NullPointerException when kind or message is null.
     */
    public Violation
    {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(message, "message");
    }

    /**
     * @return the message followed by the stack traces involved (frames of the simulator itself left out).
     */
    public String report()
    {
        final StringBuilder sb = new StringBuilder(kind.name()).append(": ").append(message);
        stack(sb, "registered at", registeredAt);
        stack(sb, "released at", releasedAt);
        return sb.toString();
    }

    /**
     * Frames left out of a report: the simulator, strict mode and the fixture themselves, the JDK, and the test
     * engines that called the test (so that the first frames shown are the user's code, tests in this package
     * included).
     */
    private static boolean hidden(final String c)
    {
        return c.startsWith("dev.rnicsim.simnic.") || own(c, "StrictMode") || own(c, "Violation") || own(c, "TestNic")
            || c.startsWith("java.") || c.startsWith("jdk.") || c.startsWith("sun.") || c.startsWith("net.jqwik.")
            || c.startsWith("org.junit.") || c.startsWith("org.apache.maven.surefire.");
    }

    private static boolean own(final String c, final String simpleName)
    {
        final String name = "dev.rnicsim.testkit." + simpleName;
        return c.equals(name) || c.startsWith(name + "$");
    }

    private static void stack(final StringBuilder sb, final String what, final Throwable t)
    {
        if (t == null)
        {
            return;
        }
        sb.append("\n    ").append(what).append(':');
        int shown = 0;
        for (final StackTraceElement e : t.getStackTrace())
        {
            if (hidden(e.getClassName()))
            {
                continue;
            }
            sb.append("\n      at ").append(e);
            if (++shown == 12)
            {
                break;
            }
        }
    }
}
