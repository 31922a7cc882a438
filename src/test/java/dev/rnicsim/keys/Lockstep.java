package dev.rnicsim.keys;

import dev.rnicsim.mtt.VariantPolicy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The state of a key-lifecycle chain: the same actions applied side by side to three worlds that differ only in
 * device b's key variant policy (GENERATION, RANDOM, RECYCLED), each checked against its own model. Actions are
 * generated from the first world (their names and choices are the same in all three: the structure of a run does
 * not depend on key values, and where it does, e.g. a stale key that happens to name a window in one world, each
 * world's model follows).
 *
 * <p>The first world runs in the thread of the chain (the actions are drawn from it); the others each run on a
 * thread of their own ({@link #BESIDE}), the same actions in the same order with the invariants after each, handed
 * over {@value #BATCH} actions at a time (a thread woken for every action spent more CPU time waking than working on
 * small actions) and at the end: the chain's thread does not wait for them until the chain ends, and a failure in one
 * of them is thrown in the chain's thread at a later action or at the end. Each world is only ever touched by one thread at
 * a time (its own objects: fabric, hosts, devices, model); what the worlds share ({@link ReuseStats}) is synchronized.
 *
 * <p>A failure is reported with the failing world's script, runnable with {@code ./rnicsim run FILE}, and saved as
 * {@code target/key-lifecycle-counterexample-POLICY.rnic} of the module the tests run in (the file of the last
 * failure, after shrinking the smallest).
 */
final class Lockstep
{
    static final List<VariantPolicy> POLICIES = List.of(VariantPolicy.GENERATION, VariantPolicy.RANDOM,
        VariantPolicy.RECYCLED);

    /** The threads the worlds after the first run on, one per world (daemons, started when first needed). */
    private static final ExecutorService[] BESIDE = new ExecutorService[POLICIES.size() - 1];

    final ChainParams params;
    /** The worlds, the first one (actions are drawn from it) run in the chain's thread; all of them once the chain
     * has ended ({@link #finish}), the first one only until then. */
    final List<KeyWorld> worlds = new ArrayList<>();
    /** The worlds after the first: made, and each action applied and checked, on their own threads, in order. */
    private final List<CompletableFuture<KeyWorld>> beside = new ArrayList<>();
    /** Actions handed to the worlds beside at a time. */
    static final int BATCH = 8;
    /** Actions applied to the first world and not yet handed to the worlds beside. */
    private final List<KeyOps.KeyOp> unsent = new ArrayList<>(BATCH);
    /** Set when the chain is dropped: the worlds beside skip what is left of their work. */
    private volatile boolean released;
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
        final List<VariantPolicy> run = only == null ? POLICIES : List.of(only);
        // The worlds beside are made on their threads while the first is made here.
        for (final VariantPolicy p : run.subList(1, run.size()))
        {
            beside.add(CompletableFuture.supplyAsync(() -> new KeyWorld(p, params, stats), thread(beside.size())));
        }
        worlds.add(guard(null, () -> new KeyWorld(run.get(0), params, stats)));
    }

    private static synchronized ExecutorService thread(final int i)
    {
        if (BESIDE[i] == null)
        {
            BESIDE[i] = Executors.newSingleThreadExecutor(r ->
            {
                final Thread t = new Thread(r, "key-lifecycle-world-" + (i + 1));
                t.setDaemon(true);
                return t;
            });
        }
        return BESIDE[i];
    }

    /** CPU time of the threads the worlds after the first ran on, in nanoseconds. */
    static long besideCpuNanos()
    {
        long ns = 0;
        final java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        for (final Thread t : Thread.getAllStackTraces().keySet())
        {
            if (t.getName().startsWith("key-lifecycle-world-"))
            {
                ns += Math.max(0, threads.getThreadCpuTime(t.threadId()));
            }
        }
        return ns;
    }

    /** Runs {@code body} on the world of {@code beside[i]} on its thread, after what was queued before. */
    private void beside(final int i, final java.util.function.Consumer<KeyWorld> body)
    {
        beside.set(i, beside.get(i).thenApplyAsync(w ->
        {
            if (!released)
            {
                guard(w, () ->
                {
                    body.accept(w);
                    return null;
                });
            }
            return w;
        }, thread(i)));
    }

    /** Throws the failure of a world beside, if one has failed. */
    private void rethrowBeside()
    {
        for (final CompletableFuture<KeyWorld> f : beside)
        {
            if (f.isCompletedExceptionally())
            {
                join(f);
            }
        }
    }

    private static KeyWorld join(final CompletableFuture<KeyWorld> f)
    {
        try
        {
            return f.join();
        }
        catch (final java.util.concurrent.CompletionException e)
        {
            if (e.getCause() instanceof RuntimeException r)
            {
                throw r;
            }
            if (e.getCause() instanceof Error r)
            {
                throw r;
            }
            throw e;
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

    /** Applies the action to every world; the worlds beside check their invariants right after it. */
    void apply(final KeyOps.KeyOp op)
    {
        rethrowBeside();
        unsent.add(op);
        if (unsent.size() == BATCH)
        {
            handOver();
        }
        final KeyWorld w = ref();
        guard(w, () ->
        {
            op.apply(w);
            return null;
        });
        op.advance(names);
        applied.add(op);
    }

    /** Hands the actions not yet sent to the worlds beside, to apply in order with the invariants after each. */
    private void handOver()
    {
        if (unsent.isEmpty())
        {
            return;
        }
        final List<KeyOps.KeyOp> ops = List.copyOf(unsent);
        unsent.clear();
        for (int i = 0; i < beside.size(); i++)
        {
            beside(i, w ->
            {
                for (final KeyOps.KeyOp op : ops)
                {
                    op.apply(w);
                    w.checks.checkInvariants();
                }
            });
        }
    }

    /**
     * The invariants of every world, after every action: of the first world here, of the others on their threads
     * after each action once it is handed to them ({@link #apply}); a failure there is thrown here.
     */
    void check()
    {
        final KeyWorld w = ref();
        guard(w, () ->
        {
            w.checks.checkInvariants();
            return null;
        });
        rethrowBeside();
    }

    /**
     * At the end of a chain: every byte agrees, and closing the context leaves nothing behind, in every world; then
     * {@link #worlds} holds them all.
     */
    void finish()
    {
        handOver();
        for (int i = 0; i < beside.size(); i++)
        {
            beside(i, w ->
            {
                w.checks.checkAllBytes();
                w.connections.closeEverything();
            });
        }
        final KeyWorld w = ref();
        guard(w, () ->
        {
            w.checks.checkAllBytes();
            w.connections.closeEverything();
            return null;
        });
        for (final CompletableFuture<KeyWorld> f : beside)
        {
            worlds.add(join(f));
        }
        beside.clear();
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
        final Path target = (base != null ? Path.of(base) : Path.of("").toAbsolutePath()).resolve("target");
        // The counterexamples of the planted bug's test go apart from those of the suites.
        return KeyWorld.plantedMttBug ? target.resolve("planted-mtt-bug") : target;
    }

    /**
     * Drops the worlds (their simulated hosts hold much memory): jqwik keeps the chains it shrinks, and a chain keeps
     * its state.
     */
    void release()
    {
        released = true;
        worlds.clear();
        beside.clear();
    }

    @Override
    public String toString()
    {
        return "Lockstep[" + params + ", " + applied.size() + " actions]";
    }
}
