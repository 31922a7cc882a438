package dev.rnicsim.keys;

import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.LifecycleContext;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;
import net.jqwik.api.lifecycle.SkipExecutionHook;
import net.jqwik.api.state.ActionChain;

/**
 * The key-lifecycle property of {@link KeyLifecycleProperties} for as long as asked (its summary line gives the
 * actions applied and actions per second, of the wall clock and of CPU time, the CPU time of the threads running
 * the chains, the rest being the JIT compilers' and the GC's, and the wall-clock rate as a multiple of the reference
 * rate, 3,000 chains in about 26 s before the soak was made faster): skipped unless
 * {@code -Drnicsim.soak.tries=N} is given; {@code -Drnicsim.soak.seed=S} repeats a run, {@code
 * -Drnicsim.soak.actions=M} changes the most actions per chain (default 50):
 * <pre>
 * bin/test -o -pl scenarios -am -Dtest='KeyLifecycleSoakProperties' -Dsurefire.failIfNoSpecifiedTests=false \
 *   -Drnicsim.soak.tries=100000 -Drnicsim.soak.seed=42
 * </pre>
 * (surefire passes -D properties of the Maven command line on to the tests; the module's {@code key-soak} profile,
 * active when {@code rnicsim.soak.tries} is given, runs the tests' JVM with the C1 compiler only and the serial
 * collector, which suit a run of seconds: {@code -Drnicsim.soak.jvm=} gives the default compilers and collector back
 * for a soak of hours.)
 *
 * <p>Unlike the suite, the soak runs its chains in a pipeline ({@link ChainPipeline}): at a chain's end the next try
 * starts while the worlds beside the first still run the chain on a thread of their own ({@link BesideWorlds}), up to
 * sixteen chains behind ({@code -Drnicsim.soak.pipeline=N}; 0 waits at every chain's end as the suite does), so
 * that neither core idles at chain boundaries. Every world still checks its invariants after every action and its
 * end checks at every chain's end, and the property passes only once the last chains' worlds are done. A failure
 * found in a world beside after its chain's try has returned is reported with that chain (its parameters and the
 * actions its world applied, minimized from those), whichever later try it surfaced in. The soak keeps the
 * generators' snapshot across actions that change nothing it holds ({@link Lockstep#snapshot}; the suites check the
 * rule) and makes its generators once ({@link MemoizedArbitrary}). {@code -Drnicsim.soak.digest=true} adds a CRC-32
 * of every chain drawn to the summary, to show that a change draws the same chains for a seed as before (summed on a
 * thread of its own).
 *
 * <p>{@code bin/soak -Drnicsim.soak.tries=N ...} runs the same soak in a JVM of its own ({@link KeySoakMain}), from
 * jars, with a JDK AOT cache of its classes; the summary's first line names the cache.
 */
@AddLifecycleHook(KeyLifecycleSoakProperties.Soak.class)
class KeyLifecycleSoakProperties
{
    @Property(tries = 100000)
    @AddLifecycleHook(Minimize.class)
    void everyKeyGrantsExactlyWhatTheModelSaysUnderEveryPolicy(@ForAll("params") final ChainParams params,
        @ForAll("chains") final ActionChain<Lockstep> chain)
    {
        if (ChainPipeline.failedEarlier())
        {
            // jqwik shrinks the try an earlier chain's failure surfaced in: not the chain that failed.
            return;
        }
        final Lockstep end = KeyLifecycleProperties.run(params, chain);
        Soak.ACTIONS.addAndGet(end.applied.size());
        if (Soak.DIGEST != null)
        {
            // Written out and summed on a thread of its own, in the chains' order: not on the drawing thread.
            final java.util.List<KeyOps.KeyOp> ops = end.applied;
            Soak.DIGESTER.execute(() -> Soak.digest(params, ops));
        }
        end.release();
    }

    @net.jqwik.api.lifecycle.BeforeProperty
    void forgetEarlierFailures()
    {
        Mismatch.reset();
    }

    /** The generators are made once ({@link MemoizedArbitrary}): the same values for a seed as the suite's. */
    @Provide
    Arbitrary<ChainParams> params()
    {
        return new MemoizedArbitrary<>(KeyChains.params());
    }

    @Provide
    Arbitrary<ActionChain<Lockstep>> chains()
    {
        return new MemoizedArbitrary<>(KeyChains.chains(Integer.getInteger("rnicsim.soak.actions",
            KeyLifecycleProperties.MAX_ACTIONS), new ReuseStats()));
    }

    /** Skips the soak unless asked for, and sets its tries and seed from the system properties. */
    public static final class Soak implements SkipExecutionHook, AroundPropertyHook
    {
        /**
         * The reference rate: the soak before its speed-up, 3,000 chains in about 26 s on two cores; the speed target
         * is ten times it ({@link #TARGET_TIMES}).
         */
        static final double FILING_CHAINS = 3000;
        static final double FILING_SECONDS = 26;
        /** The speed target, as a multiple of the reference rate (docs/benchmarks.md). */
        static final double TARGET_TIMES = 10;

        /**
         * Chains the worlds beside the first may run behind the chain's thread ({@link ChainPipeline}):
         * {@code -Drnicsim.soak.pipeline=N}, 0 for each chain's end in lockstep as in the CI suite.
         */
        static final int PIPELINE = Integer.getInteger("rnicsim.soak.pipeline", ChainPipeline.DEPTH);

        /**
         * With {@code -Drnicsim.soak.digest}: a CRC-32 of every chain's parameters and actions as written in scripts,
         * in the summary line (the same for the same seed's draws: a change to the drawing or to jqwik's side can
         * show it draws what it drew before).
         */
        static final java.util.zip.CRC32 DIGEST = Boolean.getBoolean("rnicsim.soak.digest")
            ? new java.util.zip.CRC32() : null;

        /** The thread that sums the digest, one chain after the other (a daemon, made when first needed). */
        static final java.util.concurrent.ExecutorService DIGESTER = java.util.concurrent.Executors
            .newSingleThreadExecutor(r ->
            {
                final Thread t = new Thread(r, "key-lifecycle-digest");
                t.setDaemon(true);
                return t;
            });

        /** Waits for the digest of the chains run so far. */
        static void digested()
        {
            try
            {
                DIGESTER.submit(() -> { }).get();
            }
            catch (final InterruptedException e)
            {
                Thread.currentThread().interrupt();
            }
            catch (final java.util.concurrent.ExecutionException e)
            {
                throw new IllegalStateException("the soak's digest failed", e.getCause());
            }
        }

        static void digest(final ChainParams params, final java.util.List<KeyOps.KeyOp> ops)
        {
            DIGEST.update(params.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
            for (final KeyOps.KeyOp op : ops)
            {
                DIGEST.update(op.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
                DIGEST.update('\n');
            }
        }

        /** Actions the chains of this run applied (each one to the three worlds in lockstep). */
        static final java.util.concurrent.atomic.AtomicLong ACTIONS = new java.util.concurrent.atomic.AtomicLong();

        /** Declared on the class, the hook must reach its property methods too (jqwik does not propagate by default). */
        @Override
        public PropagationMode propagateTo()
        {
            return PropagationMode.DIRECT_DESCENDANTS;
        }

        @Override
        public SkipResult shouldBeSkipped(final LifecycleContext context)
        {
            return System.getProperty("rnicsim.soak.tries") == null
                ? SkipResult.skip("soak: give -Drnicsim.soak.tries=N (and -Drnicsim.soak.seed=S) to run it")
                : SkipResult.doNotSkip();
        }

        @Override
        public PropertyExecutionResult aroundProperty(final PropertyLifecycleContext context,
            final PropertyExecutor property)
        {
            final int tries = Integer.getInteger("rnicsim.soak.tries", 100000);
            context.attributes().setTries(tries);
            final String seed = System.getProperty("rnicsim.soak.seed");
            if (seed != null && !seed.isBlank())
            {
                context.attributes().setSeed(seed);
            }
            final java.util.List<String> jvm = java.lang.management.ManagementFactory.getRuntimeMXBean()
                .getInputArguments();
            final String compilers = jvm.stream().anyMatch(a -> a.startsWith("-XX:TieredStopAtLevel=")) ? "C1 only"
                : "the JVM's default";
            final String collector = jvm.contains("-XX:+UseSerialGC") ? "serial" : "the JVM's default";
            // bin/soak's AOT cache: with -XX:AOTMode=on the JVM does not start without it, so it was used.
            final String aotCache = jvm.stream().filter(a -> a.startsWith("-XX:AOTCache=")).findFirst()
                .map(a -> a.substring("-XX:AOTCache=".length())).orElse(null);
            final boolean aotUsed = aotCache != null && jvm.contains("-XX:AOTMode=on");
            System.out.println("key-lifecycle soak: " + tries + " chains, seed " + (seed == null || seed.isBlank()
                ? "random (jqwik prints it if a chain fails)" : seed) + ", JIT compilers: " + compilers
                + ", collector: " + collector + ", worlds beside up to " + PIPELINE + " chains behind, AOT cache: "
                + (aotCache == null ? "none" : aotCache + (aotUsed ? " (classes loaded and linked from it)"
                : " (used if the JVM accepted it)")));
            final com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
            final java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory
                .getThreadMXBean();
            ACTIONS.set(0);
            BesideWorlds.WAITED_NS.set(0);
            BesideWorlds.IDLE_NS.set(0);
            BesideWorlds.RUN_BY_CHAIN.set(0);
            BesideWorlds.JOBS.set(0);
            if (DIGEST != null)
            {
                DIGEST.reset();
            }
            final long threadStart = threads.getCurrentThreadCpuTime();
            final long besideStart = BesideWorlds.cpuNanos();
            final long cpuStart = os.getProcessCpuTime();
            final long start = System.nanoTime();
            // The suites check that a snapshot kept across actions equals one taken afresh; the soak relies on it.
            Lockstep.verifySnapshots = false;
            final PropertyExecutionResult r;
            try
            {
                r = ChainPipeline.pipelined(property, PIPELINE);
                if (DIGEST != null)
                {
                    digested();
                }
            }
            finally
            {
                Lockstep.verifySnapshots = true;
            }
            final double seconds = (System.nanoTime() - start) / 1e9;
            final double cpuSeconds = (os.getProcessCpuTime() - cpuStart) / 1e9;
            final double threadSeconds = (threads.getCurrentThreadCpuTime() - threadStart) / 1e9;
            final double besideSeconds = (BesideWorlds.cpuNanos() - besideStart) / 1e9;
            final long actions = ACTIONS.get();
            // Actions per second of the wall clock, and per second of CPU time (which a busy machine does not skew);
            // the chains run in this thread and the worlds beside the first on one more (BesideWorlds), and the rest of
            // the CPU time is the JIT compilers' and the GC's (in a run of a few thousand chains, the JIT compilers
            // take a large part).
            // The reference rate: 3,000 chains in about 26 s (two idle cores), taken here with this run's mean
            // actions per chain; the wall clock is what it measured (a busy machine makes this ratio look worse).
            final double filingRate = r.countTries() > 0 ? FILING_CHAINS * ((double)actions / r.countTries())
                / FILING_SECONDS : 0.0;
            System.out.printf(java.util.Locale.ROOT, "key-lifecycle soak: %s after %d tries, %d actions in %.1f s: "
                + "%.0f actions/s (%.1f s CPU: %.0f actions per CPU second; %.1f s in the chains' threads, %.1f s of "
                + "it in the thread drawing them, the rest JIT and GC%s); %.1f times the reference rate by the wall "
                + "clock (%.0f actions/s: 3,000 chains of this run's mean length in 26 s on two cores, the soak before "
                + "its speed-up; the target is %.0f times)%n", r.status(),
                r.countTries(), actions, seconds, actions / seconds, cpuSeconds,
                cpuSeconds > 0 ? actions / cpuSeconds : 0.0, threadSeconds + besideSeconds, threadSeconds,
                aotCache == null ? "" : aotUsed ? "; classes from the AOT cache" : "; AOT cache given",
                filingRate > 0 ? actions / seconds / filingRate : 0.0, filingRate, TARGET_TIMES);
            // Where the threads waited for each other (the pipeline's point: the chain's thread seldom waits); the
            // worlds beside wait too when they are ahead, and a busy machine adds its own delays to both.
            System.out.printf(java.util.Locale.ROOT, "key-lifecycle soak: the chain's thread ran %d of the %d "
                + "RANDOM and RECYCLED worlds (the worlds beside its own) rather than wait, and waited %.1f s for "
                + "them; the worlds' thread waited %.1f s for chains%n", BesideWorlds.RUN_BY_CHAIN.get(),
                BesideWorlds.JOBS.get(), BesideWorlds.WAITED_NS.get() / 1e9, BesideWorlds.IDLE_NS.get() / 1e9);
            if (DIGEST != null)
            {
                System.out.printf(java.util.Locale.ROOT, "key-lifecycle soak: actions digest %08x (CRC-32 of every "
                    + "chain's parameters and actions)%n", DIGEST.getValue());
            }
            return r;
        }
    }
}
