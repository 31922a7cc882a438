package dev.rnicsim.keys;

import dev.rnicsim.mtt.VariantPolicy;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The soak's fresh first worlds, made ahead on a thread of their own: the thread that draws the chains ({@link
 * Lockstep}) runs the first world, and was the soak's critical path; making that world at each chain's start (hosts,
 * devices, contexts, the first registrations and checks) was about a fourteenth of its time. A chain takes the world
 * made for its policy and parameters, if one is ready, and asks for the next one of the same kind; the first chain of
 * each kind makes its world itself, as before. A world made ahead is a fresh world like any other (made from the
 * policy and parameters alone, checked after it is made, touched by nothing until a chain takes it, and then only by
 * the chain's thread); at most one per kind is left unused when the property ends (the parameters take 48 values).
 *
 * <p>Only for the thread that runs the soak's pipeline ({@link ChainPipeline#on}); every other chain (the suites,
 * jqwik's shrinking, {@link Minimize}) makes its worlds itself. The worlds beside are made on their own threads anyway.
 */
final class FreshWorlds
{
    /**
     * A world made (or being made) ahead, and the policy and statistics it was made with (its parameters are its key
     * in {@link #AHEAD}: a record's hashing goes through invokedynamic, slow in the soak's C1-compiled run).
     */
    private record Ahead(VariantPolicy policy, ReuseStats stats, CompletableFuture<KeyWorld> world)
    {
    }

    /**
     * The thread that makes the worlds ahead (a daemon; its name makes the soak's summary count it among the chains'
     * threads).
     */
    private static final ExecutorService MAKER = Executors.newSingleThreadExecutor(r ->
    {
        final Thread t = new Thread(r, "key-lifecycle-world-maker");
        t.setDaemon(true);
        return t;
    });

    /** The world made (or being made) ahead for each set of parameters; touched by the pipeline's thread only. */
    private static final Map<ChainParams, Ahead> AHEAD = new HashMap<>();

    /** {@code -Drnicsim.soak.ahead=false}: every chain makes its first world itself. */
    static final boolean AHEAD_ON = !"false".equals(System.getProperty("rnicsim.soak.ahead"));

    private FreshWorlds()
    {
    }

    /**
     * A fresh world of the policy and parameters: the one made ahead for them, else one made here; in the soak's
     * pipeline, the next one is then made ahead.
     */
    static KeyWorld take(final VariantPolicy policy, final ChainParams params, final ReuseStats stats)
    {
        if (!ChainPipeline.on() || !AHEAD_ON)
        {
            return new KeyWorld(policy, params, stats);
        }
        final Ahead ahead = AHEAD.put(params, new Ahead(policy, stats, CompletableFuture.supplyAsync(
            () -> new KeyWorld(policy, params, stats), MAKER)));
        if (ahead == null || ahead.policy() != policy || ahead.stats() != stats)
        {
            return new KeyWorld(policy, params, stats);
        }
        final long start = System.nanoTime();
        try
        {
            return ahead.world().join();
        }
        catch (final java.util.concurrent.CompletionException e)
        {
            // Made as here: a failure to make the world is thrown as it would have been here.
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
        finally
        {
            Lockstep.WAITED_FOR_BESIDE_NS.addAndGet(System.nanoTime() - start);
        }
    }

    /** Drops the worlds made ahead (at the end of a pipelined property: the next may plant bugs or change flags). */
    static void drop()
    {
        for (final Ahead a : AHEAD.values())
        {
            a.world().cancel(false);
        }
        AHEAD.clear();
    }
}
