package dev.rnicsim.keys;

import dev.rnicsim.mtt.VariantPolicy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The state of a key-lifecycle chain: the same actions applied side by side to three worlds that differ only in
 * device b's key variant policy (GENERATION, RANDOM, RECYCLED), each checked against its own model. Actions are
 * generated from the first world (their names and choices are the same in all three: the structure of a run does
 * not depend on key values, and where it does, e.g. a stale key that happens to name a window in one world, each
 * world's model follows).
 *
 * <p>A failure is reported with the failing world's script, runnable with {@code ./rnicsim run FILE}, and saved as
 * {@code target/key-lifecycle-counterexample-POLICY.rnic} of the module the tests run in (the file of the last
 * failure, after shrinking the smallest).
 */
final class Lockstep
{
    static final List<VariantPolicy> POLICIES = List.of(VariantPolicy.GENERATION, VariantPolicy.RANDOM,
        VariantPolicy.RECYCLED);

    final ChainParams params;
    final List<KeyWorld> worlds = new ArrayList<>();
    final KeyOps.Names names = new KeyOps.Names();
    final List<KeyOps.KeyOp> applied = new ArrayList<>();

    /** The snapshot the generators drew the last action from, and the actions applied when it was taken. */
    private KeyChains.Snapshot snapshot;
    private int snapshotAt = -1;

    /** The chain running in this thread, so that the property can release its worlds whatever happens. */
    static final ThreadLocal<Lockstep> CURRENT = new ThreadLocal<>();

    Lockstep(final ChainParams params, final ReuseStats stats)
    {
        this(params, stats, Mismatch.FIRST.get() == null ? null : Mismatch.FIRST.get().policy);
    }

    /**
     * @param only the one policy to run (while a failure is shrunk or minimized), or null for all three.
     */
    Lockstep(final ChainParams params, final ReuseStats stats, final VariantPolicy only)
    {
        this.params = params;
        CURRENT.set(this);
        for (final VariantPolicy p : POLICIES)
        {
            if (only == null || only == p)
            {
                worlds.add(guard(null, () -> new KeyWorld(p, params, stats)));
            }
        }
    }

    /** The world actions are generated from. */
    KeyWorld ref()
    {
        return worlds.get(0);
    }

    /**
     * The reference world's state as the generators see it: taken once per action applied (jqwik draws an action
     * from it, and draws again when the one drawn cannot run now; nothing changes in between).
     */
    KeyChains.Snapshot snapshot()
    {
        if (snapshotAt != applied.size())
        {
            snapshot = KeyChains.Snapshot.of(this);
            snapshotAt = applied.size();
        }
        return snapshot;
    }

    void apply(final KeyOps.KeyOp op)
    {
        for (final KeyWorld w : worlds)
        {
            guard(w, () ->
            {
                op.apply(w);
                return null;
            });
        }
        op.advance(names);
        applied.add(op);
    }

    /** The invariants of every world, after every action. */
    void check()
    {
        for (final KeyWorld w : worlds)
        {
            guard(w, () ->
            {
                w.checkInvariants();
                return null;
            });
        }
    }

    /** At the end of a chain: every byte agrees, and closing the context leaves nothing behind. */
    void finish()
    {
        for (final KeyWorld w : worlds)
        {
            guard(w, () ->
            {
                w.checkAllBytes();
                w.closeEverything();
                return null;
            });
        }
    }

    private <T> T guard(final KeyWorld w, final java.util.function.Supplier<T> body)
    {
        try
        {
            return body.get();
        }
        catch (final RuntimeException | AssertionError e)
        {
            if (w == null)
            {
                throw e;
            }
            throw counterexample(w, e);
        }
    }

    /** The failure with the world's run as a script (the property saves it under the module's target/). */
    static AssertionError counterexample(final KeyWorld w, final Throwable cause)
    {
        final String script = w.replayScript();
        final Mismatch m = Mismatch.of(Mismatch.kindOf(cause), (cause instanceof Mismatch ? cause.getMessage()
            : "[keys=" + w.policy + "] " + cause) + "\n\n--- the run as a scenario script (saved as target/"
            + Mismatch.fileName(w.policy) + " of the module under test; replay: ./rnicsim run FILE) ---\n" + script,
            cause);
        m.policy = w.policy;
        m.script = script;
        return m;
    }

    /** The target/ folder of the module running the tests (surefire sets basedir; else the working directory). */
    static Path targetDir()
    {
        final String base = System.getProperty("basedir");
        return (base != null ? Path.of(base) : Path.of("").toAbsolutePath()).resolve("target");
    }

    /**
     * Drops the worlds (their simulated hosts hold much memory): jqwik keeps the chains it shrinks, and a chain keeps
     * its state.
     */
    void release()
    {
        worlds.clear();
    }

    @Override
    public String toString()
    {
        return "Lockstep[" + params + ", " + applied.size() + " actions]";
    }
}
