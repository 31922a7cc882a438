package dev.rnicsim.keys;

import dev.rnicsim.keys.KeyOps.KeyOp;
import dev.rnicsim.mtt.VariantPolicy;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.Transformer;

/**
 * After jqwik has shrunk a failing key-lifecycle chain (within its time bound), minimizes its list of actions further
 * by delta debugging on the failing world alone: drops chunks of actions, then single actions, as long as the rest
 * still fails with the same kind of {@link Mismatch}. jqwik's own shrinker replays a chain's actions as generated and
 * spends most of its time shrinking values; here any action may go, because an action whose names a shorter chain
 * never created is a skipped step. The failure reported is the minimal chain's, with its script (also saved as
 * target/key-lifecycle-counterexample-POLICY.rnic).
 *
 * <p>It starts from jqwik's shrunk sample, or from the chain the failure carries ({@link Mismatch#params},
 * {@link Mismatch#ops}: the actions the failing world applied) when the failure is an earlier try's chain than the
 * sample jqwik reports (the soak's pipeline, {@link ChainPipeline}) or the sample ran no action. It first waits for
 * the chains still running beside ({@link ChainPipeline#settle}), so that a failure among the last of them fails the
 * property.
 */
public final class Minimize implements AroundPropertyHook
{
    /** Time the minimization may take. */
    private static final long BUDGET_NS = 60_000_000_000L;

    @Override
    public PropertyExecutionResult aroundProperty(final PropertyLifecycleContext context,
        final PropertyExecutor property)
    {
        // In the soak's pipeline the last chains' worlds beside may still be running: their failures count too.
        final PropertyExecutionResult r = ChainPipeline.settle(property.execute());
        if (r.status() != PropertyExecutionResult.Status.FAILED || r.throwable().isEmpty())
        {
            return r;
        }
        final Throwable original = r.throwable().get();
        final Mismatch first = Mismatch.withScript(original);
        if (first == null)
        {
            return r;
        }
        // jqwik's shrunk sample, unless the failure is an earlier chain's (the soak's pipeline) or the sample ran no
        // action: then the chain the failing world ran, which the failure carries.
        ChainParams params = null;
        List<KeyOp> ops = null;
        if (!first.late)
        {
            for (final Object o : r.falsifiedParameters().orElse(List.of()))
            {
                if (o instanceof ChainParams p)
                {
                    params = p;
                }
                else if (o instanceof ActionChain<?> c)
                {
                    ops = opsOf(c);
                }
            }
        }
        if (params == null || ops == null || ops.isEmpty())
        {
            params = first.params;
            ops = first.ops;
        }
        if (params == null || ops == null)
        {
            return r;
        }
        final Minimizer m = new Minimizer(params, first.policy, first.kind);
        final List<KeyOp> minimal = m.minimize(ops);
        final Throwable failure = m.run(minimal);
        final Mismatch withScript = failure == null ? null : Mismatch.withScript(failure);
        if (withScript == null)
        {
            return r;
        }
        Mismatch.FIRST.set(withScript);
        final String late = first.late ? " of the chain " + params + " that failed in a world beside after its try had "
            + "returned (the soak's pipeline; not the sample jqwik reports)" : "";
        final Mismatch reported = Mismatch.of(withScript.kind, "minimized from " + ops.size() + " to " + minimal.size()
            + " actions (" + m.runs + " runs of the " + first.policy + " world)" + late + ":\n"
            + withScript.getMessage(), original);
        reported.policy = withScript.policy;
        reported.script = withScript.script;
        reported.params = params;
        reported.ops = minimal;
        reported.late = first.late;
        Mismatch.saveFirstKind(reported);
        return r.mapToFailed(reported);
    }

    /** The actions of a chain jqwik ran. */
    private static List<KeyOp> opsOf(final ActionChain<?> chain)
    {
        final List<KeyOp> ops = new ArrayList<>();
        for (final Transformer<?> t : chain.transformers())
        {
            if (t instanceof KeyChains.OpTransformer o)
            {
                ops.add(o.op());
            }
        }
        return ops;
    }

    /** Delta debugging of a failing list of actions. */
    static final class Minimizer
    {
        private final ChainParams params;
        private final VariantPolicy policy;
        private final Mismatch.Kind kind;
        private final long deadline = System.nanoTime() + BUDGET_NS;
        int runs;

        Minimizer(final ChainParams params, final VariantPolicy policy, final Mismatch.Kind kind)
        {
            this.params = params;
            this.policy = policy;
            this.kind = kind;
        }

        /** Runs the actions on a fresh world of the policy, with the invariants after each; returns the failure. */
        Throwable run(final List<KeyOp> ops)
        {
            runs++;
            final Lockstep s = new Lockstep(params, new ReuseStats(), policy);
            try
            {
                s.check();
                for (final KeyOp op : ops)
                {
                    s.apply(op);
                    s.check();
                }
                s.finish();
                return null;
            }
            catch (final RuntimeException | AssertionError e)
            {
                return e;
            }
            finally
            {
                s.release();
            }
        }

        private boolean fails(final List<KeyOp> ops)
        {
            final Throwable t = run(ops);
            return t != null && Mismatch.kindOf(t) == kind;
        }

        List<KeyOp> minimize(final List<KeyOp> start)
        {
            List<KeyOp> current = start;
            if (!fails(current))
            {
                return current;
            }
            int n = 2;
            while (current.size() >= 2 && System.nanoTime() < deadline)
            {
                final int chunk = (current.size() + n - 1) / n;
                boolean reduced = false;
                for (int i = 0; i < current.size() && System.nanoTime() < deadline; i += chunk)
                {
                    final List<KeyOp> candidate = new ArrayList<>(current.subList(0, i));
                    candidate.addAll(current.subList(Math.min(current.size(), i + chunk), current.size()));
                    if (fails(candidate))
                    {
                        current = candidate;
                        n = Math.max(n - 1, 2);
                        reduced = true;
                        break;
                    }
                }
                if (!reduced)
                {
                    if (chunk == 1)
                    {
                        break;
                    }
                    n = Math.min(current.size(), n * 2);
                }
            }
            return current;
        }
    }
}
