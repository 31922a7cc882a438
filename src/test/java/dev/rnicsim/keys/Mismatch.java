package dev.rnicsim.keys;

/**
 * A difference between the simulator and a world's model. One subclass per kind, rethrown from one place in the
 * property ({@link #rethrow}): jqwik accepts a shrunk chain only when it fails with the same exception class at the
 * same line, so that shrinking keeps to one kind of failure instead of drifting to another.
 */
class Mismatch extends AssertionError
{
    private static final long serialVersionUID = 1L;

    /** Kinds of difference. */
    enum Kind
    {
        /** A verb's errno or a work request's completion status. */
        OUTCOME,
        /** Bytes read by a CPU, an RDMA READ or an atomic, or found in memory at the end. */
        BYTES,
        /** A key the device handed out that the policy does not predict. */
        KEY,
        /** Counters, tables, windows, QP states or the address space after a step. */
        STATE,
        /** The simulator threw what no verb documents (or the harness did). */
        CRASH
    }

    final Kind kind;
    /** The failing world's policy and its run as a script, when known. */
    dev.rnicsim.mtt.VariantPolicy policy;
    String script;

    Mismatch(final Kind kind, final String message, final Throwable cause)
    {
        super(message, cause);
        this.kind = kind;
    }

    /**
     * The kind of the first failure of the property running in this thread, and the policy whose world failed: while
     * jqwik shrinks, only that world runs (three times faster), and only failures of that kind are saved as files.
     */
    static final ThreadLocal<Mismatch> FIRST = new ThreadLocal<>();

    /** Forgets the first failure: a new property starts. */
    static void reset()
    {
        FIRST.remove();
    }

    static final class Outcome extends Mismatch
    {
        private static final long serialVersionUID = 1L;

        Outcome(final String message, final Throwable cause)
        {
            super(Kind.OUTCOME, message, cause);
        }
    }

    static final class Bytes extends Mismatch
    {
        private static final long serialVersionUID = 1L;

        Bytes(final String message, final Throwable cause)
        {
            super(Kind.BYTES, message, cause);
        }
    }

    static final class Key extends Mismatch
    {
        private static final long serialVersionUID = 1L;

        Key(final String message, final Throwable cause)
        {
            super(Kind.KEY, message, cause);
        }
    }

    static final class State extends Mismatch
    {
        private static final long serialVersionUID = 1L;

        State(final String message, final Throwable cause)
        {
            super(Kind.STATE, message, cause);
        }
    }

    static final class Crash extends Mismatch
    {
        private static final long serialVersionUID = 1L;

        Crash(final String message, final Throwable cause)
        {
            super(Kind.CRASH, message, cause);
        }
    }

    static Mismatch of(final Kind kind, final String message, final Throwable cause)
    {
        return switch (kind)
        {
            case OUTCOME -> new Outcome(message, cause);
            case BYTES -> new Bytes(message, cause);
            case KEY -> new Key(message, cause);
            case STATE -> new State(message, cause);
            case CRASH -> new Crash(message, cause);
        };
    }

    /** The first Mismatch among the causes that carries a script, or null. */
    static Mismatch withScript(final Throwable t)
    {
        for (Throwable c = t; c != null; c = c.getCause())
        {
            if (c instanceof Mismatch m && m.script != null)
            {
                return m;
            }
        }
        return null;
    }

    /** Saves the script when the failure is of the first failure's kind. */
    static void saveFirstKind(final Mismatch m)
    {
        if (m.script != null && FIRST.get() != null && FIRST.get().kind == m.kind)
        {
            save(m);
        }
    }

    /** Saves the script as target/key-lifecycle-counterexample-POLICY.rnic (the last failure of the first kind). */
    private static void save(final Mismatch m)
    {
        try
        {
            final java.nio.file.Path dir = Lockstep.targetDir();
            java.nio.file.Files.createDirectories(dir);
            java.nio.file.Files.writeString(dir.resolve(fileName(m.policy)), m.script,
                java.nio.charset.StandardCharsets.UTF_8);
        }
        catch (final java.io.IOException e)
        {
            // The script is in the failure's message as well.
        }
    }

    static String fileName(final dev.rnicsim.mtt.VariantPolicy policy)
    {
        return "key-lifecycle-counterexample-" + policy.name().toLowerCase(java.util.Locale.ROOT) + ".rnic";
    }

    /** The kind of a failure: the first Mismatch among its causes, else a crash. */
    static Kind kindOf(final Throwable t)
    {
        for (Throwable c = t; c != null; c = c.getCause())
        {
            if (c instanceof Mismatch m)
            {
                return m.kind;
            }
        }
        return Kind.CRASH;
    }

    /** The message of the first Mismatch among the causes (it carries the script), else the failure's own. */
    static String messageOf(final Throwable t)
    {
        for (Throwable c = t; c != null; c = c.getCause())
        {
            if (c instanceof Mismatch)
            {
                return c.getMessage();
            }
        }
        return t.toString();
    }

    /**
     * Runs a chain's body and rethrows any failure as a new Mismatch of its kind, created here, so that every failure
     * of a kind looks the same to jqwik's shrinker.
     */
    static void rethrow(final Runnable body)
    {
        try
        {
            body.run();
        }
        catch (final org.opentest4j.TestAbortedException e)
        {
            throw e;
        }
        catch (final Throwable t)
        {
            final Mismatch withScript = withScript(t);
            if (FIRST.get() == null && withScript != null)
            {
                FIRST.set(withScript);
            }
            if (withScript != null && FIRST.get() != null && FIRST.get().kind == withScript.kind)
            {
                save(withScript);
            }
            throw of(kindOf(t), messageOf(t), t);
        }
    }
}
