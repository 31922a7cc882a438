package dev.rnicsim.testkit;

import net.jqwik.api.lifecycle.LifecycleContext;
import net.jqwik.api.lifecycle.SkipExecutionHook;

/**
 * Skips the properties of a class that is expected to fail unless {@link JqwikRun} runs it: such classes are named
 * outside the build's test patterns, and this keeps an IDE's "run all" from reporting their failures.
 */
public final class OnlyWhenAsked implements SkipExecutionHook
{
    @Override
    public SkipResult shouldBeSkipped(final LifecycleContext context)
    {
        return Boolean.getBoolean(JqwikRun.ENABLE) ? SkipResult.doNotSkip() : SkipResult.skip("expected to fail: "
            + "run by the test that asserts how");
    }
}
