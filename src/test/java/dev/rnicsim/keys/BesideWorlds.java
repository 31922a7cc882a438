package dev.rnicsim.keys;

import dev.rnicsim.mtt.VariantPolicy;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The worlds beside the first of a chain ({@link Lockstep}): each one a job that makes the world, applies the chain's
 * actions in order with the invariants after each, and runs the end checks, queued once the chain has ended and run
 * by one thread of its own ({@link #worldsThread}), or by the chain's thread when it would otherwise wait for it
 * ({@link #await}). One thread for both worlds beside, each world run a whole chain at a time: the chain's
 * thread and the worlds' thread keep the two cores busy, where a thread per world beside, handed actions eight at a
 * time, made three busy threads on two cores switch about 32,500 times a run and come back to cold caches
 * (docs/benchmarks.md, the tenth round).
 */
final class BesideWorlds
{
    /** The jobs queued and not yet taken, oldest first. */
    private static final LinkedBlockingQueue<Job> QUEUE = new LinkedBlockingQueue<>();

    /** The thread that runs the worlds beside: a daemon, started when first needed. */
    private static Thread worldsThread;

    /**
     * Wall-clock time the chain's thread waited for a world beside (a job the worlds' thread was running), the
     * worlds' thread waited for jobs, in nanoseconds, and the jobs the chain's thread ran itself rather than wait:
     * the soak's summary gives them.
     */
    static final AtomicLong WAITED_NS = new AtomicLong();
    static final AtomicLong IDLE_NS = new AtomicLong();
    static final AtomicLong RUN_BY_CHAIN = new AtomicLong();
    static final AtomicLong JOBS = new AtomicLong();

    /**
     * Set when a world beside has failed (before its job completes with the failure): until then the chain's thread
     * does not look through the chains behind for a failure at every action ({@link ChainPipeline#check}). A failure
     * is still seen, at the next action after the flag is.
     */
    static volatile boolean failed;

    private BesideWorlds()
    {
    }

    /** Queues a job for the worlds' thread (started when first needed). */
    private static void queue(final Job job)
    {
        synchronized (BesideWorlds.class)
        {
            if (worldsThread == null)
            {
                worldsThread = new Thread(BesideWorlds::runJobs, "key-lifecycle-worlds");
                worldsThread.setDaemon(true);
                worldsThread.start();
            }
        }
        JOBS.incrementAndGet();
        QUEUE.add(job);
    }

    /** The worlds' thread: takes the oldest job queued and runs it, for ever. */
    private static void runJobs()
    {
        while (true)
        {
            Job job = QUEUE.poll();
            if (job == null)
            {
                final long start = System.nanoTime();
                try
                {
                    job = QUEUE.take();
                }
                catch (final InterruptedException e)
                {
                    continue;
                }
                IDLE_NS.addAndGet(System.nanoTime() - start);
            }
            job.run();
        }
    }

    /**
     * Waits until the jobs are done, the chain's thread working rather than waiting: first it runs those of them no
     * thread has taken yet, then, while one still runs on the worlds' thread, the oldest job queued (a later chain's);
     * then returns their worlds, or throws the failure of the first that failed, in the order given.
     */
    static List<KeyWorld> await(final List<Job> jobs)
    {
        for (final Job j : jobs)
        {
            if (QUEUE.remove(j))
            {
                j.runHere();
            }
        }
        for (final Job j : jobs)
        {
            while (!j.done.isDone())
            {
                final Job next = QUEUE.poll();
                if (next != null)
                {
                    next.runHere();
                    continue;
                }
                final long start = System.nanoTime();
                try
                {
                    j.done.join();
                }
                catch (final java.util.concurrent.CompletionException e)
                {
                    // Thrown below, in the order of the jobs.
                }
                WAITED_NS.addAndGet(System.nanoTime() - start);
            }
        }
        final List<KeyWorld> worlds = new java.util.ArrayList<>(jobs.size());
        for (final Job j : jobs)
        {
            worlds.add(Lockstep.join(j.done));
        }
        return worlds;
    }

    /** CPU time of the threads named {@code key-lifecycle-*} (the worlds', the soak's digest), in nanoseconds. */
    static long cpuNanos()
    {
        long ns = 0;
        final java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        for (final Thread t : Thread.getAllStackTraces().keySet())
        {
            if (t.getName().startsWith("key-lifecycle-"))
            {
                ns += Math.max(0, threads.getThreadCpuTime(t.threadId()));
            }
        }
        return ns;
    }

    /**
     * One world beside for one chain, queued when the chain has ended: the world made, every action applied with the
     * invariants after it, then the end checks; run once, by the worlds' thread or by the chain's thread.
     */
    static final class Job
    {
        private final Lockstep chain;
        private final VariantPolicy policy;
        private final List<KeyOps.KeyOp> ops;
        /** The world once its chain has ended in it, or the failure (a {@link Mismatch} with the world's script). */
        final CompletableFuture<KeyWorld> done = new CompletableFuture<>();

        private Job(final Lockstep chain, final VariantPolicy policy, final List<KeyOps.KeyOp> ops)
        {
            this.chain = chain;
            this.policy = policy;
            this.ops = ops;
        }

        /** Queues the chain's world of {@code policy}, to run the actions {@code ops} and the end checks. */
        static Job queued(final Lockstep chain, final VariantPolicy policy, final List<KeyOps.KeyOp> ops)
        {
            final Job job = new Job(chain, policy, ops);
            queue(job);
            return job;
        }

        /** Drops the job if no thread has taken it yet (its chain was dropped). */
        void drop()
        {
            if (QUEUE.remove(this))
            {
                done.complete(null);
            }
        }

        private void runHere()
        {
            RUN_BY_CHAIN.incrementAndGet();
            run();
        }

        private void run()
        {
            KeyWorld w = null;
            int applied = 0;
            try
            {
                if (!chain.released())
                {
                    w = new KeyWorld(policy, chain.params, chain.stats);
                    for (final KeyOps.KeyOp op : ops)
                    {
                        if (chain.released())
                        {
                            break;
                        }
                        applied++;
                        op.apply(w);
                        w.checks.checkInvariants();
                    }
                    if (!chain.released())
                    {
                        Lockstep.end(w);
                    }
                }
                done.complete(w);
            }
            catch (final RuntimeException | AssertionError e)
            {
                failed = true;
                done.completeExceptionally(w == null || e instanceof Mismatch m && m.script != null ? e
                    : Lockstep.counterexample(w, e, chain.params, applied == ops.size() ? ops
                    : ops.subList(0, applied)));
            }
            catch (final Error e)
            {
                failed = true;
                done.completeExceptionally(e);
            }
        }
    }
}
