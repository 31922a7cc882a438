package dev.rnicsim.keys;

import java.util.ArrayDeque;
import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;

/**
 * The soak's chains in a pipeline: at a chain's end the chain's thread goes on to the next try while the worlds beside
 * the first ({@link Lockstep}) still apply the chain's actions and run its end checks on the worlds' thread
 * ({@link BesideWorlds}), up to {@link #depth} chains behind. Without it, the chain's thread waited at every chain's
 * end for the worlds beside, and they waited at every chain's start for its first actions: a core idled at each chain
 * boundary.
 *
 * <p>Every action is still applied to every world with the invariants after it, and every chain's end checks still run
 * in every world, before the property reports its result: a chain kept behind is checked at every action of the tries
 * that follow ({@link #check}), waited for when more than {@link #depth} are behind, and at the property's end
 * ({@link #settle}: the result is mapped to failed when one of the last chains fails).
 *
 * <p>A failure of a chain kept behind surfaces in a later try (or at the end), and is that chain's failure: it carries
 * the chain's parameters and the actions its world applied ({@link Mismatch#params}, {@link Mismatch#ops}), says so
 * in its message, and {@link Minimize} delta-debugs from those, not from the sample jqwik reports. When chains behind
 * and the current one fail, the oldest failure is reported (waiting for the chains before it), so that a seed
 * reports the same chain whatever the threads' timing. The try a failure surfaced in is not the chain that failed:
 * jqwik's shrinking of it does not run ({@link #failedEarlier}: the property's body returns at once).
 *
 * <p>Soak only ({@link KeyLifecycleSoakProperties} and the test of late failures, through {@link On}); the suite of
 * {@link KeyLifecycleProperties} keeps each chain in lockstep to its end. The pipeline belongs to the thread that runs
 * the property's hooks and tries ({@link #owner}): jqwik shrinks on a thread of its pool, and gives up waiting for it
 * after its shrinking time while that thread may go on running chains; chains run by any other thread stay in lockstep
 * and never touch the pipeline.
 */
final class ChainPipeline
{
    /** Chains whose worlds beside may still be running, oldest first. */
    private static final ArrayDeque<Lockstep> BEHIND = new ArrayDeque<>();

    /**
     * Chains the worlds beside may run behind the chain's thread: 0 turns the pipeline off. Sixteen: a chain kept
     * holds its actions only (its worlds beside are made when their jobs start, {@link BesideWorlds}), and room for
     * many lets the worlds' thread and the chain's thread even out over chains of different lengths; past it the
     * chain's thread runs the oldest worlds beside itself rather than wait.
     */
    static final int DEPTH = 16;

    private static int depth;

    /** The thread running the pipelined property (its tries); null when none runs. */
    private static volatile Thread owner;

    /**
     * The failure of an earlier chain, once thrown in a later try: that try's shrinking (on jqwik's threads) does not
     * run.
     */
    private static volatile Mismatch surfaced;

    private ChainPipeline()
    {
    }

    /** Whether chains of this thread end without waiting for their worlds beside. */
    static boolean on()
    {
        return depth > 0 && Thread.currentThread() == owner;
    }

    /** Chains allowed behind (0: off). */
    static int depth()
    {
        return depth;
    }

    /**
     * Whether a failure of an earlier chain has been reported in this property: the tries jqwik runs after it (to
     * shrink the try it surfaced in) are not the chain that failed, and return at once.
     */
    static boolean failedEarlier()
    {
        return surfaced != null;
    }

    /** A chain has ended with its worlds beside still at work: kept, the oldest waited for when too many are. */
    static void behind(final Lockstep chain)
    {
        BEHIND.addLast(chain);
        while (BEHIND.size() > depth)
        {
            settleOldest();
        }
    }

    /** Throws the failure of a chain behind, if one of them has failed (the oldest failing one). */
    static void check()
    {
        if (!BesideWorlds.failed || owner != Thread.currentThread() || BEHIND.isEmpty())
        {
            return;
        }
        for (final Lockstep s : BEHIND)
        {
            if (s.besideFailed())
            {
                settleAll();
                return;
            }
        }
    }

    /**
     * Before a failure of the current chain is reported: waits for the chains behind, and throws the first that fails
     * instead (an earlier try's); returns when none does.
     */
    static void throwEarlier()
    {
        if (owner == Thread.currentThread())
        {
            settleAll();
        }
    }

    /** Waits for every chain behind, oldest first; throws the failure of the first that fails. */
    static void settleAll()
    {
        while (!BEHIND.isEmpty())
        {
            settleOldest();
        }
    }

    private static void settleOldest()
    {
        final Lockstep oldest = BEHIND.removeFirst();
        try
        {
            oldest.joinBeside();
        }
        catch (final RuntimeException | Error e)
        {
            drop();
            final Mismatch m = Mismatch.withScript(e);
            if (m == null)
            {
                throw e;
            }
            surfaced = m.withPrefix("found in a world beside after the try of its chain had returned (the soak's "
                + "pipeline); the chain that failed is this one (" + m.params + ", " + m.ops.size() + " actions "
                + "applied), not the sample jqwik reports:\n");
            surfaced.late = true;
            throw surfaced;
        }
    }

    /** Drops the chains behind without waiting: their worlds skip what is left. */
    static void drop()
    {
        while (!BEHIND.isEmpty())
        {
            BEHIND.removeFirst().dropBeside();
        }
    }

    /**
     * At the end of a property run in the pipeline: when it passed, waits for the last chains' worlds beside and maps
     * the result to failed with the first failure among them; in any case, nothing is left behind.
     */
    static PropertyExecutionResult settle(final PropertyExecutionResult r)
    {
        if (owner != Thread.currentThread())
        {
            return r;
        }
        try
        {
            if (r.status() == PropertyExecutionResult.Status.SUCCESSFUL && !BEHIND.isEmpty())
            {
                try
                {
                    settleAll();
                }
                catch (final RuntimeException | AssertionError e)
                {
                    return r.mapToFailed(Mismatch.reported(e));
                }
            }
            return r;
        }
        finally
        {
            drop();
        }
    }

    /** Runs a property with its chains in the pipeline, {@link #DEPTH} behind. */
    static PropertyExecutionResult pipelined(final PropertyExecutor property)
    {
        return pipelined(property, DEPTH);
    }

    /** Runs a property with its chains in the pipeline, {@code chainsBehind} behind (0: in lockstep). */
    static PropertyExecutionResult pipelined(final PropertyExecutor property, final int chainsBehind)
    {
        depth = chainsBehind;
        surfaced = null;
        BesideWorlds.failed = false;
        owner = Thread.currentThread();
        try
        {
            return settle(property.execute());
        }
        finally
        {
            drop();
            depth = 0;
            owner = null;
            surfaced = null;
        }
    }

    /** The hook that runs a property's chains in the pipeline. */
    public static final class On implements AroundPropertyHook
    {
        /** Outside {@link Minimize}, so that the chains it runs again see the pipeline as the property did. */
        @Override
        public int aroundPropertyProximity()
        {
            return -10;
        }

        @Override
        public PropertyExecutionResult aroundProperty(final PropertyLifecycleContext context,
            final PropertyExecutor property)
        {
            return pipelined(property);
        }
    }
}
