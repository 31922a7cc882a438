package dev.rnicsim.scenarios.cli;

import dev.rnicsim.scenarios.charts.Charts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Which built-in scenarios draw a chart with {@code --svg}, and the drawing. Stateless.
 */
final class Pictures
{
    private Pictures()
    {
    }

    static List<String> names()
    {
        return List.of("registration-cost", "thp-and-hugetlbfs", "translation-cache", "strategies");
    }

    /** @return what was drawn, or null when the scenario has no chart. */
    static String draw(final String scenario, final Path svg)
    {
        try
        {
            return switch (scenario)
            {
                case "registration-cost" ->
                {
                    Charts.registrationTime(svg);
                    yield "simulated registration time against buffer size, 4 KiB / 2 MiB / 1 GiB pages (log-log)";
                }
                case "thp-and-hugetlbfs" ->
                {
                    Charts.mttEntries(svg);
                    yield "MTT entries against buffer size, 4 KiB / 2 MiB / 1 GiB pages (log-log)";
                }
                case "translation-cache" ->
                {
                    Charts.cacheHitRate(svg);
                    yield "translation-cache hit rate against working set";
                }
                case "strategies" ->
                {
                    Charts.strategyTime(svg);
                    yield "average time per request against requests served, per registration strategy (log-log)";
                }
                default -> null;
            };
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException(svg + ": cannot write the chart", e);
        }
    }
}
