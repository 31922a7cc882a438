package dev.rnicsim.keys;

import dev.rnicsim.mtt.VariantPolicy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The state of a key-lifecycle chain: the same actions applied side by side to three worlds that differ only in
 * device b's key variant policy (GENERATION, RANDOM, RECYCLED), each checked against its own model. Actions are
 * generated from the first world (their names and choices are the same in all three: the structure of a run does
 * not depend on key values, and where it does, e.g. a stale key that happens to name a window in one world, each
 * world's model follows).
 *
 * <p>The first world runs in the thread of the chain (the actions are drawn from it); the others run once the chain
 * has ended, each a job of its own ({@link BesideWorlds}): the world made, the same actions in the same order with
 * the invariants after each, and the end checks, on the worlds' thread, or on the chain's thread when it would
 * otherwise wait for them. A failure in one of them is thrown in the chain's thread at the chain's end (in the soak,
 * at a later try or at the property's end). Each world is only ever touched by one thread at a time (its own objects:
 * fabric, hosts, devices, model); what the worlds share ({@link ReuseStats}) is synchronized.
 *
 * <p>In the soak the chain's thread does not wait at a chain's end either: {@link ChainPipeline} keeps the chain (its
 * worlds beside still running its last actions and end checks) and the next try starts at once, the worlds beside up
 * to {@link ChainPipeline#depth} chains behind. A failure in a world beside carries the chain it belongs to (its
 * parameters and the actions that world applied, {@link Mismatch#params}, {@link Mismatch#ops}), whichever try it
 * surfaces in.
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
    final ReuseStats stats;
    /** The worlds, the first one (actions are drawn from it) run in the chain's thread; all of them once the chain
     * has ended ({@link #finish}), the first one only until then. */
    final List<KeyWorld> worlds = new ArrayList<>();
    /** The policies of the worlds after the first, run once the chain has ended ({@link BesideWorlds}). */
    private final List<VariantPolicy> besidePolicies;
    /** The worlds after the first, queued at the chain's end, in the order of {@link #POLICIES}. */
    private final List<BesideWorlds.Job> beside = new ArrayList<>(POLICIES.size() - 1);
    /** Set once {@link #finish} has queued the end checks: the worlds beside finish the chain on their own. */
    private boolean finished;
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
        this.stats = stats;
        CURRENT.set(this);
        // A chain still running beside (soak) that has failed fails this try: before any world is made.
        ChainPipeline.check();
        final List<VariantPolicy> run = only == null ? POLICIES : List.of(only);
        besidePolicies = run.subList(1, run.size());
        worlds.add(guard(null, () -> new KeyWorld(run.get(0), params, stats)));
    }

    /** Whether the chain was dropped: its worlds beside skip what is left of their work. */
    boolean released()
    {
        return released;
    }

    /** Whether a world beside has failed (a chain that {@link ChainPipeline} keeps). */
    boolean besideFailed()
    {
        for (final BesideWorlds.Job j : beside)
        {
            if (j.done.isCompletedExceptionally())
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Waits for the worlds beside to end the chain (a chain that {@link ChainPipeline} keeps), running those no thread
     * has taken yet in this one, then drops them; throws the failure of the first that failed, in the order of
     * {@link #POLICIES}.
     */
    void joinBeside()
    {
        try
        {
            BesideWorlds.await(beside);
        }
        finally
        {
            dropBeside();
        }
    }

    /** Drops the worlds beside without waiting: they skip what is left of their work. */
    void dropBeside()
    {
        released = true;
        for (final BesideWorlds.Job j : beside)
        {
            j.drop();
        }
        beside.clear();
    }

    static KeyWorld join(final CompletableFuture<KeyWorld> f)
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
     * from it, and draws again when the one drawn cannot run now; nothing changes in between), and kept across the
     * actions that change nothing it holds ({@link #unchangedSince}).
     */
    KeyChains.Snapshot snapshot()
    {
        if (snapshotAt != applied.size())
        {
            if (snapshot != null && unchangedSince(snapshotAt))
            {
                if (verifySnapshots)
                {
                    verifySnapshot();
                }
            }
            else
            {
                snapshot = KeyChains.Snapshot.of(this);
            }
            snapshotAt = applied.size();
        }
        return snapshot;
    }

    /**
     * Whether the actions applied since the {@code at}-th leave what a snapshot holds as it was: CPU loads and stores
     * and RDMA operations change bytes, pages and QPs, never the buffers, PDs, MRs, windows, keys or names a snapshot
     * lists (about two actions in five; {@link #verifySnapshots} checks it).
     */
    private boolean unchangedSince(final int at)
    {
        for (int i = at; i < applied.size(); i++)
        {
            final KeyOps.KeyOp op = applied.get(i);
            if (!(op instanceof KeyOps.Remote || op instanceof KeyOps.CpuWrite || op instanceof KeyOps.CpuRead))
            {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether a snapshot kept across actions ({@link #unchangedSince}) is compared with one taken afresh: on, so that
     * the suites check the rule on every action where it applies; off in the soak ({@link
     * KeyLifecycleSoakProperties}), which relies on it.
     */
    static volatile boolean verifySnapshots = true;

    private void verifySnapshot()
    {
        final KeyChains.Snapshot fresh = KeyChains.Snapshot.of(this);
        if (!fresh.equals(snapshot))
        {
            throw Mismatch.of(Mismatch.Kind.CRASH, "the generators' snapshot kept after " + applied.subList(snapshotAt,
                applied.size()) + " differs from one taken afresh:\nkept:  " + snapshot + "\nfresh: " + fresh, null);
        }
    }

    /**
     * Applies the action to the first world; the worlds beside apply it, and check their invariants right after it,
     * once the chain has ended ({@link #finish}).
     */
    void apply(final KeyOps.KeyOp op)
    {
        ChainPipeline.check();
        final KeyWorld w = ref();
        // In the list before it runs: a failure carries the actions applied, this one the last.
        applied.add(op);
        // Not through guard: a capturing lambda per action, made through a method handle under C1.
        try
        {
            op.apply(w);
        }
        catch (final RuntimeException | AssertionError e)
        {
            throw failure(w, e);
        }
        op.advance(names);
    }

    /**
     * The invariants of every world, after every action: of the first world here, of the others after each action
     * when they run the chain ({@link #finish}); a failure in a chain still running beside (soak) is thrown here.
     */
    void check()
    {
        final KeyWorld w = ref();
        try
        {
            w.checks.checkInvariants();
        }
        catch (final RuntimeException | AssertionError e)
        {
            throw failure(w, e);
        }
        ChainPipeline.check();
    }

    /**
     * At the end of a chain: the worlds beside are queued to run the chain's actions ({@link BesideWorlds}); every
     * byte agrees, and closing the context leaves nothing behind, in every world; then {@link #worlds} holds them
     * all. In the soak ({@link ChainPipeline#on}) it does not wait for the worlds beside: {@link #worlds} holds the
     * first world only, and the pipeline checks the others' end when they get there.
     */
    void finish()
    {
        if (!besidePolicies.isEmpty())
        {
            final List<KeyOps.KeyOp> all = List.copyOf(applied);
            for (final VariantPolicy p : besidePolicies)
            {
                beside.add(BesideWorlds.Job.queued(this, p, all));
            }
        }
        final KeyWorld w = ref();
        guard(w, applied, () ->
        {
            end(w);
            return null;
        });
        finished = true;
        if (!beside.isEmpty() && ChainPipeline.on())
        {
            ChainPipeline.behind(this);
            return;
        }
        try
        {
            worlds.addAll(BesideWorlds.await(beside));
        }
        finally
        {
            dropBeside();
        }
    }

    /** The end checks of one world, and the context closed. */
    static void end(final KeyWorld w)
    {
        w.checks.checkAllBytes();
        if (w.policy == plantedEndBug)
        {
            plantedEndCheck(w);
        }
        w.connections.closeEverything();
    }

    /**
     * A bug planted in the end checks of the worlds of one policy, for the test that a failure found in a world beside
     * after its chain's try has returned is still reported, with that chain ({@code ChainPipelineTest}): at the end of
     * a chain with at least {@link #plantedEndBugMrs} live MRs, such a world's model expects one MTT entry more than
     * the live MRs reserve. Null: no bug.
     */
    static volatile VariantPolicy plantedEndBug;
    static volatile int plantedEndBugMrs = 4;

    private static void plantedEndCheck(final KeyWorld w)
    {
        if (w.liveMrs() >= plantedEndBugMrs)
        {
            w.expectEqual(w.mttModel() + 1, w.nicB.counter(dev.rnicsim.simnic.SimCounter.MTT_ENTRIES_IN_USE),
                "sim_mtt_entries_in_use at the chain's end (sum of the live MRs' reserved MTT entries)");
        }
    }

    private <T> T guard(final KeyWorld w, final java.util.function.Supplier<T> body)
    {
        return guard(w, applied, body);
    }

    /** A failure of the first world, with its script and the actions applied, as {@link #guard} words it. */
    private AssertionError failure(final KeyWorld w, final Throwable e)
    {
        return e instanceof Mismatch m && m.script != null ? m : counterexample(w, e, params, applied);
    }

    /** Runs the body on a world; a failure is rethrown with the world's script and the actions {@code soFar}. */
    private <T> T guard(final KeyWorld w, final List<KeyOps.KeyOp> soFar, final java.util.function.Supplier<T> body)
    {
        try
        {
            return body.get();
        }
        catch (final RuntimeException | AssertionError e)
        {
            if (w == null || e instanceof Mismatch m && m.script != null)
            {
                throw e;
            }
            throw counterexample(w, e, params, soFar);
        }
    }

    /**
     * The failure with the world's run as a script (the property saves it under the module's target/), and the
     * chain it failed in: its parameters and the actions the world applied ({@link Minimize} starts from them).
     */
    static AssertionError counterexample(final KeyWorld w, final Throwable cause, final ChainParams params,
        final List<KeyOps.KeyOp> soFar)
    {
        final String script = w.replayScript();
        final Mismatch m = Mismatch.of(Mismatch.kindOf(cause), (cause instanceof Mismatch ? cause.getMessage()
            : "[keys=" + w.policy + "] " + cause) + "\n\n--- the run as a scenario script (saved as target/"
            + Mismatch.fileName(w.policy) + " of the module under test; replay: ./rnicsim run FILE) ---\n" + script,
            cause);
        m.policy = w.policy;
        m.script = script;
        m.params = params;
        m.ops = List.copyOf(soFar);
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
        worlds.clear();
        if (!finished)
        {
            dropBeside();
        }
        // else the worlds beside are ending the chain on their own: ChainPipeline waits for them or drops them.
    }

    @Override
    public String toString()
    {
        return "Lockstep[" + params + ", " + applied.size() + " actions]";
    }
}
