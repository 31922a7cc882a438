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
    /**
     * The chain the world failed in, when known: its parameters and the actions the world applied, the last the one
     * that failed (all of them when the end checks failed). In the soak a world beside can fail after its chain's try
     * has returned ({@link ChainPipeline}): these, not the sample jqwik reports, are the chain to minimize.
     */
    ChainParams params;
    java.util.List<KeyOps.KeyOp> ops;
    /** Found after its chain's try had returned, in a later try or at the property's end ({@link ChainPipeline}). */
    boolean late;

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
            throw reported(t);
        }
    }

    /**
     * A failure as the property reports it: the first failure of the property is remembered ({@link #FIRST}), its
     * script saved when of the first failure's kind, and the failure wrapped in a new Mismatch of its kind.
     */
    static Mismatch reported(final Throwable t)
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
        return of(kindOf(t), messageOf(t), t);
    }

    /** A copy of this failure with {@code prefix} before its message, carrying the same world and chain. */
    Mismatch withPrefix(final String prefix)
    {
        final Mismatch m = of(kind, prefix + getMessage(), this);
        m.policy = policy;
        m.script = script;
        m.params = params;
        m.ops = ops;
        m.late = late;
        return m;
    }
}
