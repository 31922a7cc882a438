package dev.rnicsim.scenarios.plan;

import dev.rnicsim.scenarios.charts.ChartData;
import dev.rnicsim.scenarios.charts.Charts;
import dev.rnicsim.simnic.DeviceProfile;
import java.awt.Rectangle;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jfree.svg.SVGGraphics2D;

/**
 * Plans one group at a series of sizes or counts, doubling from {@code from} (and ending with {@code to}), for
 * each backing whose page fits in the region: 4 KiB always, 2 MiB from 2 MiB regions, 1 GiB from 1 GiB regions.
 * The figures are the planner's, so an MR page may be larger than the CPU page where the driver merges physically
 * contiguous huge pages (mlx5 does): then a 2m group needs fewer than size / 2 MiB entries per MR.
 *
 * @param kind    what is swept.
 * @param device  the profile's name and driver.
 * @param group   the group swept (its size or count is replaced at each point; its backing is ignored).
 * @param rows    one per point and backing, in increasing value, backings in the order 4k, 2m, 1g.
 * @param cpuPages true when the MR page was forced to each backing's CPU page.
 */
public record Sweep(Kind kind, String device, Workload.Group group, List<Row> rows, boolean cpuPages)
{
    /** Fewest points a sweep has. */
    public static final int MIN_POINTS = 5;

    /** Backings swept, with their page size in bytes. */
    private static final Map<String, Long> BACKINGS = Map.of("4k", 4096L, "2m", 2L << 20, "1g", 1L << 30);

    private static final List<String> ORDER = List.of("4k", "2m", "1g");

    /** What a sweep varies. */
    public enum Kind
    {
        /** Bytes per region. */
        SIZE,
        /** Regions in the group. */
        COUNT
    }

    /**
     * One planned point.
     *
     * @param value   the swept value: bytes per region, or regions.
     * @param backing {@code 4k}, {@code 2m} or {@code 1g}.
     * @param plan    the plan of the group at that value with that backing.
     */
    public record Row(long value, String backing, Plan plan)
    {
        /**
         * @return MTT entries written by all the group's MRs (allocator rounding excluded).
         */
        public long mttEntriesWritten()
        {
            final Plan.GroupResult g = plan.groups().get(0);
            return g.mrs() * g.mttEntriesPerMr();
        }
    }

    /**
     * @param fromValue the first value, at least 1.
     * @param toValue   the last value.
     * @return fromValue, 2 x fromValue, ... below toValue, then toValue.
     * @throws IllegalArgumentException when that is fewer than {@value #MIN_POINTS} points.
     */
    public static List<Long> values(final long fromValue, final long toValue)
    {
        if (fromValue < 1 || toValue < fromValue)
        {
            throw new IllegalArgumentException("--from must be 1 or more and --to at least --from");
        }
        final List<Long> out = new ArrayList<>();
        for (long v = fromValue; v < toValue && v > 0; v *= 2)
        {
            out.add(v);
        }
        out.add(toValue);
        if (out.size() < MIN_POINTS)
        {
            throw new IllegalArgumentException("--from " + fromValue + " --to " + toValue + " gives " + out.size()
                + " log2 steps; expected at least " + MIN_POINTS + " (--to at least 16 x --from)");
        }
        return out;
    }

    /**
     * @param profile   the device.
     * @param host      the host.
     * @param group     the group to sweep.
     * @param kind      size or count.
     * @param fromValue first value (bytes or regions).
     * @param toValue   last value.
     * @return the sweep.
     * @throws IllegalArgumentException for a range of fewer than {@value #MIN_POINTS} points.
     */
    public static Sweep run(final DeviceProfile profile, final Planner.HostSpec host, final Workload.Group group,
        final Kind kind, final long fromValue, final long toValue)
    {
        return run(profile, host, group, kind, fromValue, toValue, false);
    }

    /**
     * As {@link #run(DeviceProfile, Planner.HostSpec, Workload.Group, Kind, long, long)}, optionally with the MR
     * page forced to the CPU page of each backing.
     *
     * @param profile   the device.
     * @param host      the host.
     * @param group     the group swept.
     * @param kind      size or count.
     * @param fromValue the first value.
     * @param toValue   the last value.
     * @param cpuPages  true to clear from the device's {@code page_size_cap} every size above the backing's page
     *                  (4 KiB, 2 MiB or 1 GiB), as a driver that does not merge contiguous pages would register:
     *                  then an MR needs exactly size / page entries.
     * @return the sweep.
     * @throws IllegalArgumentException for a range of fewer than {@value #MIN_POINTS} points.
     */
    public static Sweep run(final DeviceProfile profile, final Planner.HostSpec host, final Workload.Group group,
        final Kind kind, final long fromValue, final long toValue, final boolean cpuPages)
    {
        final List<Row> rows = new ArrayList<>();
        String device = profile.name();
        for (final long v : values(fromValue, toValue))
        {
            final long size = kind == Kind.SIZE ? v : group.sizeBytes();
            final long count = kind == Kind.COUNT ? v : group.count();
            for (final String b : ORDER)
            {
                final long page = BACKINGS.get(b);
                if (size < page)
                {
                    continue;
                }
                DeviceProfile p = profile;
                if (cpuPages)
                {
                    final long cap = profile.attributes().pageSizeCap() & ((page << 1) - 1);
                    if ((cap & page) == 0)
                    {
                        continue;
                    }
                    p = profile.withAttributes(profile.attributes().toBuilder().pageSizeCap(cap).build());
                }
                final Plan plan = Planner.plan(p, host, new Workload(List.of(group.with(count, size, b))),
                    Planner.Contiguity.BEST);
                device = plan.device();
                rows.add(new Row(v, b, plan));
            }
        }
        return new Sweep(kind, device, group, List.copyOf(rows), cpuPages);
    }

    /**
     * @param backing a backing.
     * @return the name of its series in both charts.
     */
    public static String seriesName(final String backing)
    {
        return switch (backing)
        {
            case "2m" -> "2 MiB pages (2m)";
            case "1g" -> "1 GiB pages (1g)";
            default -> "4 KiB pages (4k)";
        };
    }

    /**
     * @return the MTT-entries chart: x the swept value (region size in KiB, or regions), y MTT entries written by
     *         the group, one line per backing; log-log.
     */
    public ChartData mttChart()
    {
        return chart("MTT entries", "MTT entries (entries)", true);
    }

    /**
     * @return the pinned-memory chart: x as {@link #mttChart()}, y KiB pinned by the group, one line per backing;
     *         log-log.
     */
    public ChartData pinnedChart()
    {
        return chart("Pinned memory", "pinned (KiB)", false);
    }

    /**
     * Draws {@link #mttChart()} above {@link #pinnedChart()} with {@link Charts#toChart(ChartData)} on one canvas of
     * {@value Charts#WIDTH_PX} x 2 {@value Charts#HEIGHT_PX} pixels and writes the SVG document.
     *
     * @param svg the file to write (its folder must exist).
     * @throws IOException when the file cannot be written.
     */
    public void writeSvg(final Path svg) throws IOException
    {
        final SVGGraphics2D g2 = new SVGGraphics2D(Charts.WIDTH_PX, 2 * Charts.HEIGHT_PX);
        g2.setDefsKeyPrefix("rnicsimplan");
        Charts.toChart(mttChart()).draw(g2, new Rectangle(0, 0, Charts.WIDTH_PX, Charts.HEIGHT_PX));
        Charts.toChart(pinnedChart()).draw(g2, new Rectangle(0, Charts.HEIGHT_PX, Charts.WIDTH_PX,
            Charts.HEIGHT_PX));
        Files.writeString(svg, g2.getSVGDocument(), StandardCharsets.UTF_8);
    }

    private ChartData chart(final String title, final String yAxisLabel, final boolean mtt)
    {
        final Map<String, List<ChartData.Point>> series = new LinkedHashMap<>();
        for (final String b : ORDER)
        {
            final List<ChartData.Point> points = new ArrayList<>();
            for (final Row r : rows)
            {
                if (r.backing().equals(b))
                {
                    final double x = kind == Kind.SIZE ? r.value() / 1024.0 : r.value();
                    points.add(new ChartData.Point(x, Math.max(1, mtt ? r.mttEntriesWritten()
                        : r.plan().totals().pinnedBytes() / 1024.0)));
                }
            }
            if (!points.isEmpty())
            {
                series.put(seriesName(b), points);
            }
        }
        final String what = kind == Kind.SIZE ? "region size" : "regions";
        final String fixed = kind == Kind.SIZE ? group.count() + " region" + (group.count() == 1 ? "" : "s")
            : "regions of " + group.sizeBytes() + " bytes";
        return new ChartData(title + " against " + what + " (" + device + ")",
            "group '" + group.name() + "', " + fixed + "; measured on the simulated registration path and scaled; "
                + "a backing is drawn where its page fits in the region; " + (cpuPages ? "MR page forced to the CPU "
                + "page (page_size_cap cleared above it)" : "the driver may merge contiguous pages"),
            kind == Kind.SIZE ? "region size (KiB)" : "regions (MRs)", yAxisLabel, true, true, series);
    }
}
