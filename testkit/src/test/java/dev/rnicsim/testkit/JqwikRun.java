package dev.rnicsim.testkit;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.engine.reporting.ReportEntry;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.EngineFilter;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * Runs the properties of a class through the jqwik engine, as the build would, and gives back how each ended: for
 * tests that assert that a property fails, and how (its message, jqwik's report with the shrunk sample).
 */
final class JqwikRun
{
    /** The system property that lets the expected-failure classes run ({@link OnlyWhenAsked}). */
    static final String ENABLE = "testkit.expectedFailures";

    /**
     * How one property ended.
     *
     * @param result  the engine's result.
     * @param reports jqwik's report entries (tries, seed, shrunk and original samples).
     */
    record Outcome(TestExecutionResult result, List<Map<String, String>> reports)
    {
        /**
         * @return the failure's message, or "".
         */
        String message()
        {
            return result.getThrowable().map(Throwable::getMessage).orElse("");
        }

        /**
         * @return the report entries, one "key = value" a line.
         */
        String report()
        {
            final StringBuilder sb = new StringBuilder();
            for (final Map<String, String> r : reports)
            {
                r.forEach((k, v) -> sb.append(k).append(" = ").append(v).append('\n'));
            }
            return sb.toString();
        }

        /**
         * @return the actions of the chain the failure reports (after jqwik's shrinking).
         */
        List<String> actions()
        {
            final String m = message();
            final int from = m.indexOf("following actions: [");
            final int to = m.indexOf("\n]", from);
            if (from < 0 || to < 0)
            {
                return List.of();
            }
            return m.substring(from + "following actions: [".length(), to).lines().map(String::strip)
                .filter(l -> !l.isEmpty()).toList();
        }
    }

    private JqwikRun()
    {
    }

    /**
     * @param container a class of properties.
     * @return how each property ended, by method name.
     */
    static Map<String, Outcome> run(final Class<?> container)
    {
        final Map<String, TestExecutionResult> results = new LinkedHashMap<>();
        final Map<String, List<Map<String, String>>> reports = new LinkedHashMap<>();
        System.setProperty(ENABLE, "true");
        try
        {
            LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                .selectors(DiscoverySelectors.selectClass(container))
                .filters(EngineFilter.includeEngines("jqwik"))
                .configurationParameter("jqwik.reporting.usejunitplatform", "true")
                .build(), new TestExecutionListener()
                {
                    @Override
                    public void executionFinished(final TestIdentifier id, final TestExecutionResult result)
                    {
                        if (id.isTest())
                        {
                            results.put(name(id), result);
                        }
                    }

                    @Override
                    public void reportingEntryPublished(final TestIdentifier id, final ReportEntry entry)
                    {
                        reports.computeIfAbsent(name(id), k -> new ArrayList<>()).add(entry.getKeyValuePairs());
                    }
                });
        }
        finally
        {
            System.clearProperty(ENABLE);
        }
        final Map<String, Outcome> out = new LinkedHashMap<>();
        results.forEach((k, v) -> out.put(k, new Outcome(v, reports.getOrDefault(k, List.of()))));
        return out;
    }

    private static String name(final TestIdentifier id)
    {
        return id.getSource().filter(MethodSource.class::isInstance).map(s -> ((MethodSource)s).getMethodName())
            .orElse(id.getDisplayName());
    }
}
