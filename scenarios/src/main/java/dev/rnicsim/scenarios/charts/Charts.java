package dev.rnicsim.scenarios.charts;

import dev.rnicsim.simnic.CostModel;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.RegistrationEvent;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.strategy.MemoryPool;
import dev.rnicsim.verbs.strategy.RegistrationCache;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Rectangle;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.chart.util.ShapeUtils;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.jfree.svg.SVGGraphics2D;

/**
 * Charts of the simulator's model, written as SVG: registration time and MTT entries against buffer size for 4 KiB,
 * 2 MiB and 1 GiB pages, the responder's translation-cache hit rate against the working set of RDMA WRITEs, and the
 * average time per request of five registration strategies against the requests served.
 * Every number is computed by running the model (a {@link SimFabric} built for the chart); nothing is typed in.
 * Each chart has a {@code ...Data()} method returning its {@link ChartData}, and a method taking a {@link Path} that
 * computes the data, writes the SVG (JFreeChart drawn on JFreeSVG's {@link SVGGraphics2D}) and returns the data.
 * Each kind of chart is computed by its own class: the size sweeps by {@code SizeSweepCharts}, the hit rate by
 * {@code CacheHitRateChart}, the strategies by {@code StrategyChart}; this class draws them all.
 *
 * <p><b>MR page size.</b> A fresh simulated host hands out physically contiguous frames, so a buffer of 4 KiB pages
 * registered with {@code iova = addr} may get MR pages far larger than 4 KiB ({@code ib_umem_find_best_pgsz} merges
 * any run whose physical and virtual addresses agree in their low bits), which an aged real host rarely allows.
 * To show the cost of each CPU page size fairly, every MR here is registered with {@code ibv_reg_mr_iova} and an
 * iova that differs from the buffer's first physical address in exactly the bit of the CPU page size (and agrees
 * below it, so the page offsets match): the kernel rule then picks an MR page equal to the CPU page, 4 KiB, 2 MiB
 * or 1 GiB. The chart subtitles say so.
 *
 * <p>Stateless and thread safe: each call builds its own fabric, chart and SVG canvas.
 */
public final class Charts
{
    /** Bytes in a KiB. */
    public static final long KIB_BYTES = 1L << 10;
    /** Bytes in a MiB. */
    public static final long MIB_BYTES = 1L << 20;
    /** Bytes in a GiB. */
    public static final long GIB_BYTES = 1L << 30;
    /** Smallest buffer of the size sweeps (the huge-page series start at their page size). */
    public static final long SWEEP_MIN_BYTES = MIB_BYTES;
    /** Largest buffer of the size sweeps. */
    public static final long SWEEP_MAX_BYTES = 4 * GIB_BYTES;
    /** Largest buffer of the 4 KiB series; equal to {@link #SWEEP_MAX_BYTES}: the whole sweep fits the time. */
    public static final long SWEEP_MAX_BASE_PAGES_BYTES = 4 * GIB_BYTES;
    /** Physical memory of the host of the size sweeps. */
    public static final long SWEEP_HOST_MEMORY_BYTES = 64 * GIB_BYTES;
    /** 2 MiB pages reserved on the host of the size sweeps: the largest buffer of the 2 MiB series. */
    public static final long SWEEP_HUGEPAGES_2M = SWEEP_MAX_BYTES / (2 * MIB_BYTES);
    /** 1 GiB pages reserved on the host of the size sweeps: the largest buffer of the 1 GiB series. */
    public static final long SWEEP_HUGEPAGES_1G = SWEEP_MAX_BYTES / GIB_BYTES;
    /** Translation-cache lines of the responder in the hit-rate chart: the ConnectX-5 profile's default. */
    public static final int CACHE_ENTRIES = DeviceProfiles.ASSUMED_CACHE_ENTRIES;
    /** Translation-cache associativity of the responder in the hit-rate chart: the profile's default. */
    public static final int CACHE_WAYS = DeviceProfiles.ASSUMED_CACHE_WAYS;
    /** Smallest working set of the hit-rate chart, in 4 KiB pages. */
    public static final long WORKING_SET_MIN_PAGES = 4;
    /** Largest working set of the hit-rate chart, in 4 KiB pages: eight times the cache's lines. */
    public static final long WORKING_SET_MAX_PAGES = 8L * CACHE_ENTRIES;
    /** RDMA WRITEs measured per working set, after the warm-up pass. */
    public static final int MEASURED_WRITES = 16384;
    /** Bytes of each RDMA WRITE of the hit-rate chart. */
    public static final int WRITE_BYTES = 64;
    /** Seed of the random target pages. */
    public static final long SEED = 0x5eedL;
    /** Width of the SVG canvas in pixels. */
    public static final int WIDTH_PX = 900;
    /** Height of the SVG canvas in pixels. */
    public static final int HEIGHT_PX = 560;

    /** Requests of the strategy chart, as in the {@code strategies} scenario's first profile. */
    public static final int STRATEGY_REQUESTS = 200;
    /** Bytes each request of the strategy chart sends with one RDMA WRITE. */
    public static final long STRATEGY_MESSAGE_BYTES = 64 * KIB_BYTES;
    /** Message buffers of the strategy chart, created once; request i sends buffer i mod this. */
    public static final int STRATEGY_BUFFERS = 16;
    /** Chunk size of the strategy chart's memory pool. */
    public static final long STRATEGY_CHUNK_BYTES = MIB_BYTES;
    /** Requests served at which the strategy chart has a point. */
    public static final List<Integer> STRATEGY_POINTS = List.of(1, 2, 5, 10, 20, 50, 100, 200);

    /** Series name of the strategy chart: register, WRITE, deregister per request. */
    public static final String SERIES_PER_REQUEST = "registration per request (reg, WRITE, dereg)";
    /** Series name of the strategy chart: the buffers registered once, up front, as one MR. */
    public static final String SERIES_ONCE = "registered once, up front";
    /** Series name of the strategy chart: a fragment of a memory pool per request. */
    public static final String SERIES_POOL = "memory pool (1 MiB chunks, a fragment per request)";
    /** Series name of the strategy chart: a registration cache. */
    public static final String SERIES_CACHE = "registration cache (acquire, WRITE, release)";
    /** Series name of the strategy chart: the buffers registered once as one on-demand-paging MR. */
    public static final String SERIES_ODP = "ODP MR registered once (nothing pinned)";

    /** Series name: buffers of 4 KiB base pages. */
    public static final String SERIES_4K = "4 KiB pages (BASE_PAGES)";
    /** Series name: buffers of 2 MiB hugetlb pages. */
    public static final String SERIES_2M = "2 MiB pages (HUGETLB_2M)";
    /** Series name: buffers of 1 GiB hugetlb pages. */
    public static final String SERIES_1G = "1 GiB pages (HUGETLB_1G)";
    /** Series name of the hit-rate chart: target MR of 4 KiB MR pages. */
    public static final String SERIES_CACHE_4K = "target MR of 4 KiB pages (BASE_PAGES)";
    /** Series name of the hit-rate chart: target MR of 2 MiB MR pages. */
    public static final String SERIES_CACHE_2M = "target MR of 2 MiB pages (HUGETLB_2M)";

    static final long BASE_PAGE_BYTES = 4 * KIB_BYTES;
    private static final Color[] PALETTE = {new Color(0xc0392b), new Color(0x2e6fd8), new Color(0x1e8449),
        new Color(0x8e44ad), new Color(0xd68910)};
    static final Set<Access> LOCAL = EnumSet.of(Access.LOCAL_WRITE);
    static final Set<Access> ODP = EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND);
    static final Set<Access> TARGET = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE);
    static final String FORCED = "ibv_reg_mr_iova with an iova misaligned to the physical layout at the "
        + "CPU page bit, so the MR page equals the CPU page";

    private Charts()
    {
    }

    /**
     * Writes the four charts into a folder and prints each one's wall-clock time.
     *
     * @param args the folder (default {@code target/charts}).
     * @throws IOException when a file cannot be written.
     */
    public static void main(final String[] args) throws IOException
    {
        final Path dir = Path.of(args.length > 0 ? args[0] : "target/charts");
        Files.createDirectories(dir);
        final PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        long t0 = System.nanoTime();
        registrationTime(dir.resolve("registration-time.svg"));
        out.printf("registration-time.svg %d ms%n", (System.nanoTime() - t0) / 1_000_000);
        t0 = System.nanoTime();
        mttEntries(dir.resolve("mtt-entries.svg"));
        out.printf("mtt-entries.svg %d ms%n", (System.nanoTime() - t0) / 1_000_000);
        t0 = System.nanoTime();
        cacheHitRate(dir.resolve("cache-hit-rate.svg"));
        out.printf("cache-hit-rate.svg %d ms%n", (System.nanoTime() - t0) / 1_000_000);
        t0 = System.nanoTime();
        strategyTime(dir.resolve("strategy-time.svg"));
        out.printf("strategy-time.svg %d ms%n", (System.nanoTime() - t0) / 1_000_000);
    }

    // ------------------------------------------------------------------ registration time

    /**
     * Computes {@link #registrationTimeData()} and writes it as SVG.
     *
     * @param svg the file to write (its folder is created).
     * @return the data drawn.
     * @throws IOException when the file cannot be written.
     */
    public static ChartData registrationTime(final Path svg) throws IOException
    {
        final ChartData data = registrationTimeData();
        writeSvg(data, svg);
        return data;
    }

    /**
     * Simulated registration time (the {@link RegistrationEvent#durationNs()} of each {@code ibv_reg_mr}, priced by
     * the fabric's {@link dev.rnicsim.simnic.CostModel}) against buffer size, for 4 KiB, 2 MiB and 1 GiB pages, on a
     * ConnectX-5 in a 64 GiB host with enough huge pages reserved, registered by a process with CAP_IPC_LOCK.
     * Sizes are the powers of two from 1 MiB (the page size for the huge-page series) to 4 GiB; each buffer is
     * registered, measured, deregistered and unmapped before the next.
     *
     * @return x: buffer size in MiB; y: registration time in µs; log-log.
     */
    public static ChartData registrationTimeData()
    {
        return SizeSweepCharts.registrationTime();
    }

    // ------------------------------------------------------------------ MTT entries

    /**
     * Computes {@link #mttEntriesData()} and writes it as SVG.
     *
     * @param svg the file to write (its folder is created).
     * @return the data drawn.
     * @throws IOException when the file cannot be written.
     */
    public static ChartData mttEntries(final Path svg) throws IOException
    {
        final ChartData data = mttEntriesData();
        writeSvg(data, svg);
        return data;
    }

    /**
     * MTT entries of each MR ({@link SimMr#mttEntries()}) against buffer size, for 4 KiB, 2 MiB and 1 GiB pages,
     * on a ConnectX-5 (any page size from 4 KiB), with the same sweep as {@link #registrationTimeData()}. The MR
     * page is forced to the CPU page (see the class comment), so the 4 KiB series is size / 4 KiB, the 2 MiB series
     * size / 2 MiB and the 1 GiB series size / 1 GiB.
     *
     * @return x: buffer size in MiB; y: MTT entries; log-log.
     */
    public static ChartData mttEntriesData()
    {
        return SizeSweepCharts.mttEntries();
    }

    // ------------------------------------------------------------------ translation-cache hit rate

    /**
     * Computes {@link #cacheHitRateData()} and writes it as SVG.
     *
     * @param svg the file to write (its folder is created).
     * @return the data drawn.
     * @throws IOException when the file cannot be written.
     */
    public static ChartData cacheHitRate(final Path svg) throws IOException
    {
        final ChartData data = cacheHitRateData();
        writeSvg(data, svg);
        return data;
    }

    /**
     * The responder's translation-cache hit rate against the working set of RDMA WRITEs. Two ConnectX-5 hosts, an
     * RC QP pair connected as in docs/java-api.md; for each working set W (powers of two from
     * {@value #WORKING_SET_MIN_PAGES} to {@link #WORKING_SET_MAX_PAGES} 4 KiB pages, i.e. up to eight times the
     * {@value #CACHE_ENTRIES}-line cache) a target MR of W pages (rounded up to whole 2 MiB pages for the huge-page
     * series) is registered on the responder, one 64-byte WRITE goes to each page in order (warm-up), then
     * {@value #MEASURED_WRITES} WRITEs of {@value #WRITE_BYTES} bytes go to random (seeded) pages of the working set
     * and the hit rate is hits / (hits + misses) of the responder's cache over those writes. The responder looks up
     * the MR's MPT entry and the MTT entry of the page when it checks the rkey, and again when it places the bytes
     * (the dma-engine translates twice; the second pair always hits), so the rate falls towards three quarters,
     * not zero, once the MTT entries no longer fit. The subtitle gives the lookups per write measured.
     *
     * @return x: working set in 4 KiB pages; y: hit rate (a fraction); log x, linear y.
     */
    public static ChartData cacheHitRateData()
    {
        return CacheHitRateChart.data();
    }

    // ------------------------------------------------------------------ registration strategies

    /**
     * Computes {@link #strategyTimeData()} and writes it as SVG.
     *
     * @param svg the file to write (its folder is created).
     * @return the data drawn.
     * @throws IOException when the file cannot be written.
     */
    public static ChartData strategyTime(final Path svg) throws IOException
    {
        final ChartData data = strategyTimeData();
        writeSvg(data, svg);
        return data;
    }

    /**
     * The average simulated time per request against the requests served, for five registration strategies
     * serving the same stream as the first profile of the {@code strategies} scenario: {@value #STRATEGY_REQUESTS}
     * requests, each an RDMA WRITE of 64 KiB from one of {@value #STRATEGY_BUFFERS} buffers created once (request i
     * sends buffer i mod {@value #STRATEGY_BUFFERS}), from a ConnectX-5 on an aged host (one MTT entry per 4 KiB
     * page) to a 64 KiB target MR on another ConnectX-5, whose translation cache one WRITE warms first. The
     * strategies run one after the other on the same fabric: registering per request ({@code ibv_reg_mr}, WRITE,
     * {@code ibv_dereg_mr}); the buffers registered once, up front, as one MR; a {@link MemoryPool} of 1 MiB chunks
     * (allocate, WRITE, free); an unbounded {@link RegistrationCache} (acquire, WRITE, release); the buffers
     * registered once as one on-demand-paging MR ({@link Access#ON_DEMAND}: nothing pinned; registering maps the
     * pages present, all of them here, so no request faults). The point at n
     * requests is the simulated time from the strategy's first step to the n-th completion, divided by n: the first
     * point is the time to the first operation, the last the cost per request once amortised.
     *
     * @return x: requests served; y: average time per request in µs; log-log.
     */
    public static ChartData strategyTimeData()
    {
        return StrategyChart.data();
    }

    /** A power-of-two size as text: {@code 4 KiB}, {@code 64 MiB}, {@code 1 GiB}. */
    static String sizeText(final long bytes)
    {
        if (bytes >= GIB_BYTES && bytes % GIB_BYTES == 0)
        {
            return bytes / GIB_BYTES + " GiB";
        }
        if (bytes >= MIB_BYTES && bytes % MIB_BYTES == 0)
        {
            return bytes / MIB_BYTES + " MiB";
        }
        return bytes % KIB_BYTES == 0 ? bytes / KIB_BYTES + " KiB" : bytes + " B";
    }

    // ------------------------------------------------------------------ SVG

    /**
     * Draws a chart's data with JFreeChart on a JFreeSVG canvas of {@value #WIDTH_PX} x {@value #HEIGHT_PX} pixels
     * and writes the SVG document.
     *
     * @param data the chart.
     * @param svg  the file to write (its folder must exist).
     * @throws IOException when the file cannot be written.
     */
    public static void writeSvg(final ChartData data, final Path svg) throws IOException
    {
        Files.writeString(svg, toSvg(data), StandardCharsets.UTF_8);
    }

    /**
     * @param data the chart.
     * @return the SVG document of the chart drawn on a {@value #WIDTH_PX} x {@value #HEIGHT_PX} pixel canvas.
     */
    public static String toSvg(final ChartData data)
    {
        final JFreeChart chart = toChart(data);
        final SVGGraphics2D g2 = new SVGGraphics2D(WIDTH_PX, HEIGHT_PX);
        g2.setDefsKeyPrefix("rnicsim");
        chart.draw(g2, new Rectangle(0, 0, WIDTH_PX, HEIGHT_PX));
        return g2.getSVGDocument();
    }

    /**
     * @param data the chart.
     * @return a JFreeChart line chart of it (points marked), with logarithmic axes where the data asks for them.
     */
    public static JFreeChart toChart(final ChartData data)
    {
        final XYSeriesCollection dataset = new XYSeriesCollection();
        for (final Map.Entry<String, List<ChartData.Point>> e : data.series().entrySet())
        {
            final XYSeries s = new XYSeries(e.getKey(), true, false);
            for (final ChartData.Point p : e.getValue())
            {
                s.add(p.x(), p.y());
            }
            dataset.addSeries(s);
        }
        final JFreeChart chart = ChartFactory.createXYLineChart(data.title(), data.xAxisLabel(), data.yAxisLabel(),
            dataset, PlotOrientation.VERTICAL, true, false, false);
        chart.setBackgroundPaint(Color.WHITE);
        final TextTitle subtitle = new TextTitle(data.subtitle(), new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        chart.addSubtitle(subtitle);
        final XYPlot plot = chart.getXYPlot();
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        if (data.logX())
        {
            plot.setDomainAxis(logAxis(plot.getDomainAxis(), 2));
        }
        if (data.logY())
        {
            plot.setRangeAxis(logAxis(plot.getRangeAxis(), 10));
        }
        else
        {
            final NumberAxis y = (NumberAxis)plot.getRangeAxis();
            y.setAutoRangeIncludesZero(true);
            y.setUpperBound(1.05);
        }
        final XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
        for (int i = 0; i < dataset.getSeriesCount(); i++)
        {
            renderer.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
            if (i > 1)
            {
                // Large hollow markers, visible where this series lies on another (1 GiB pages on 2 MiB pages).
                renderer.setSeriesShape(i, ShapeUtils.createUpTriangle(7f));
                renderer.setSeriesShapesFilled(i, false);
            }
            // Later series dashed, so that one lying on an earlier one stays visible.
            renderer.setSeriesStroke(i, i == 0 ? new BasicStroke(2f) : new BasicStroke(2f, BasicStroke.CAP_BUTT,
                BasicStroke.JOIN_MITER, 1f, new float[] {Math.max(2f, 10f - 3f * (i % 3)), 4f}, 0f));
        }
        plot.setRenderer(renderer);
        for (final Map.Entry<String, Double> e : data.xMarkers().entrySet())
        {
            final ValueMarker marker = new ValueMarker(e.getValue(), Color.GRAY, new BasicStroke(1f,
                BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 1f, new float[] {4f, 4f}, 0f));
            marker.setLabel(e.getKey());
            marker.setLabelAnchor(RectangleAnchor.BOTTOM_LEFT);
            marker.setLabelTextAnchor(TextAnchor.BOTTOM_RIGHT);
            marker.setLabelBackgroundColor(Color.WHITE);
            plot.addDomainMarker(marker);
        }
        return chart;
    }

    /** A logarithmic axis in place of a linear one, with its label and fonts. */
    private static ValueAxis logAxis(final ValueAxis linear, final double base)
    {
        final LogAxis axis = new LogAxis(linear.getLabel());
        axis.setLabelFont(linear.getLabelFont());
        axis.setLabelPaint(linear.getLabelPaint());
        axis.setTickLabelFont(linear.getTickLabelFont());
        axis.setTickLabelPaint(linear.getTickLabelPaint());
        axis.setBase(base);
        axis.setTickUnit(new NumberTickUnit(base == 2 ? 2 : 1));
        axis.setNumberFormatOverride(new DecimalFormat("#,##0.###"));
        axis.setMinorTickMarksVisible(true);
        return axis;
    }

    /** The cost-model constants a registration depends on, as text for a subtitle. */
    static String costText(final CostModel m)
    {
        return m.regFixedNs() + " ns fixed + " + m.pinPerPageNs() + " ns per 4 KiB page pinned + "
            + m.pinPerLeafNs() + " ns per page-table leaf + " + m.mttWritePerEntryNs() + " ns per MTT entry";
    }
}
