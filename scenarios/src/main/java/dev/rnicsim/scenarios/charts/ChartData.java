package dev.rnicsim.scenarios.charts;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The data of one chart: named series of (x, y) points, with a title, a subtitle saying how the data was made, axis
 * labels that carry their units, and whether each axis is logarithmic. {@link Charts} computes it from the model and
 * writes it as SVG; tests read the points.
 *
 * <p>Immutable (the series map and its lists are unmodifiable copies) and thread safe.
 *
 * @param title      chart title.
 * @param subtitle   how the data was produced (configuration, assumptions), shown under the title.
 * @param xAxisLabel label of the x axis, with its unit in parentheses.
 * @param yAxisLabel label of the y axis, with its unit in parentheses.
 * @param logX       true for a logarithmic x axis.
 * @param logY       true for a logarithmic y axis.
 * @param series     series name to points, in legend order; each list in increasing x.
 * @param xMarkers   vertical reference lines: label to x value (e.g. the cache size), in drawing order.
 */
public record ChartData(String title, String subtitle, String xAxisLabel, String yAxisLabel, boolean logX,
    boolean logY, Map<String, List<Point>> series, Map<String, Double> xMarkers)
{
    /**
     * Copies the series into an unmodifiable, insertion-ordered map of unmodifiable lists, and the markers into an
     * unmodifiable, insertion-ordered map.
     *
     * @throws NullPointerException when a text, a map, a name, a point or a marker value is null.
     */
    public ChartData
    {
        Objects.requireNonNull(title, "title");
        Objects.requireNonNull(subtitle, "subtitle");
        Objects.requireNonNull(xAxisLabel, "xAxisLabel");
        Objects.requireNonNull(yAxisLabel, "yAxisLabel");
        final Map<String, List<Point>> copy = new LinkedHashMap<>();
        for (final Map.Entry<String, List<Point>> e : Objects.requireNonNull(series, "series").entrySet())
        {
            copy.put(Objects.requireNonNull(e.getKey(), "series name"), List.copyOf(e.getValue()));
        }
        series = Collections.unmodifiableMap(copy);
        final Map<String, Double> markers = new LinkedHashMap<>();
        for (final Map.Entry<String, Double> e : Objects.requireNonNull(xMarkers, "xMarkers").entrySet())
        {
            markers.put(Objects.requireNonNull(e.getKey(), "marker label"), Objects.requireNonNull(e.getValue(),
                "marker x"));
        }
        xMarkers = Collections.unmodifiableMap(markers);
    }

    /**
     * A chart without reference lines.
     *
     * @param title      chart title.
     * @param subtitle   how the data was produced.
     * @param xAxisLabel label of the x axis, with its unit.
     * @param yAxisLabel label of the y axis, with its unit.
     * @param logX       true for a logarithmic x axis.
     * @param logY       true for a logarithmic y axis.
     * @param series     series name to points, in legend order.
     */
    public ChartData(final String title, final String subtitle, final String xAxisLabel, final String yAxisLabel,
        final boolean logX, final boolean logY, final Map<String, List<Point>> series)
    {
        this(title, subtitle, xAxisLabel, yAxisLabel, logX, logY, series, Map.of());
    }

    /**
     * @param name a series name.
     * @return its points, in increasing x.
     * @throws IllegalArgumentException naming the series there are when there is none of that name.
     */
    public List<Point> points(final String name)
    {
        final List<Point> points = series.get(name);
        if (points == null)
        {
            throw new IllegalArgumentException("no series '" + name + "'; series: " + series.keySet());
        }
        return points;
    }

    /**
     * @param name a series name.
     * @param x    an x value of that series.
     * @return the y value at exactly that x.
     * @throws IllegalArgumentException when the series or the x value is not there.
     */
    public double yAt(final String name, final double x)
    {
        for (final Point p : points(name))
        {
            if (p.x() == x)
            {
                return p.y();
            }
        }
        throw new IllegalArgumentException("series '" + name + "' has no point at x=" + x);
    }

    /**
     * @param name a series name.
     * @return the y values of that series, in increasing x.
     */
    public List<Double> ys(final String name)
    {
        final List<Double> ys = new ArrayList<>();
        for (final Point p : points(name))
        {
            ys.add(p.y());
        }
        return ys;
    }

    /**
     * One point of a series.
     *
     * <p>Immutable and thread safe.
     *
     * @param x x value, in the unit of {@link ChartData#xAxisLabel()}.
     * @param y y value, in the unit of {@link ChartData#yAxisLabel()}.
     */
    public record Point(double x, double y)
    {
    }
}
