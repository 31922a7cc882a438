package dev.rnicsim.keys;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.ArrayList;
import java.util.List;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * Runs the soak ({@link KeyLifecycleSoakProperties}) in a JVM of its own, outside Maven's test run: {@code bin/soak},
 * which runs it from jars with an AOT cache of its classes. Prints each failure with its stack, as the test run would,
 * and exits with 1 when the soak fails (or did not run).
 */
final class KeySoakMain
{
    private KeySoakMain()
    {
    }

    public static void main(final String[] args)
    {
        final List<String> failures = new ArrayList<>();
        final int[] properties = new int[1];
        LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
            .selectors(selectClass(KeyLifecycleSoakProperties.class)).build(), new TestExecutionListener()
            {
                @Override
                public void executionSkipped(final TestIdentifier id, final String reason)
                {
                    failures.add(id.getDisplayName() + " skipped: " + reason);
                }

                @Override
                public void executionFinished(final TestIdentifier id, final TestExecutionResult result)
                {
                    if (!id.isTest())
                    {
                        return;
                    }
                    properties[0]++;
                    result.getThrowable().ifPresent(t ->
                    {
                        final java.io.StringWriter w = new java.io.StringWriter();
                        t.printStackTrace(new java.io.PrintWriter(w));
                        failures.add(id.getDisplayName() + " " + result.getStatus() + ":\n" + w);
                    });
                }
            });
        failures.forEach(System.out::println);
        if (!failures.isEmpty() || properties[0] == 0)
        {
            System.out.println("key-lifecycle soak: FAILED (" + (properties[0] == 0 ? "no property ran"
                : failures.size() + " failure(s) above") + ")");
            System.exit(1);
        }
    }
}
