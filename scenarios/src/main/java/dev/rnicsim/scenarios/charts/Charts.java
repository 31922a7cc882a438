package dev.rnicsim.scenarios.charts;

import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.CostModel;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.RegistrationEvent;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
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
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import java.util.function.ToDoubleFunction;
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

    private static final long BASE_PAGE_BYTES = 4 * KIB_BYTES;
    private static final Color[] PALETTE = {new Color(0xc0392b), new Color(0x2e6fd8), new Color(0x1e8449),
        new Color(0x8e44ad), new Color(0xd68910)};
    private static final long IOVA_BASE = 1L << 44;
    /** Bytes of the plain {@code ibv_reg_mr} of base pages the MTT chart's subtitle compares with. */
    private static final long PLAIN_BYTES = 64 * MIB_BYTES;
    private static final Set<Access> LOCAL = EnumSet.of(Access.LOCAL_WRITE);
    private static final Set<Access> ODP = EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND);
    private static final Set<Access> TARGET = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE);
    private static final String FORCED = "ibv_reg_mr_iova with an iova misaligned to the physical layout at the "
        + "CPU page bit, so the MR page equals the CPU page";

    private Charts()
    {
    }

    /**
     * Writes the three charts into a folder and prints each one's wall-clock time.
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
        final SimFabric fabric = new SimFabric();
        return sweepChart(fabric, "ibv_reg_mr time against buffer size (simulated)",
            "ConnectX-5, 64 GiB host, CAP_IPC_LOCK; " + FORCED + ". Cost model: " + costText(fabric.costModel()),
            "registration time (µs)", s -> s.durationNs() / 1000.0);
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
        final SimFabric fabric = new SimFabric();
        final Plain plain = plainBasePageRegistration(fabric);
        return sweepChart(fabric, "MTT entries against buffer size (simulated ConnectX-5)",
            "one entry per MR page; " + FORCED + ". Without that, a fresh simulated host's contiguous frames let "
                + "ibv_reg_mr (iova = addr) merge base pages: " + sizeText(PLAIN_BYTES) + " of 4 KiB pages took "
                + plain.mttEntries() + " entr" + (plain.mttEntries() == 1 ? "y" : "ies") + " of "
                + sizeText(plain.pageSizeBytes()),
            "MTT entries (entries)", s -> s.mttEntries());
    }

    /** What a plain {@code ibv_reg_mr} of base pages got: MTT entries and MR page size in bytes. */
    private record Plain(long mttEntries, long pageSizeBytes)
    {
    }

    /**
     * Registers {@value #PLAIN_BYTES} bytes of base pages with {@code ibv_reg_mr} (iova = addr) on a new default
     * host of the fabric, for the subtitle's comparison.
     */
    private static Plain plainBasePageRegistration(final SimFabric fabric)
    {
        final SimHost host = fabric.addHost("plain");
        final SimDevice device = host.addDevice("sim:plain/mlx5_0", DeviceProfiles.connectx5());
        try (SimContext context = device.open(host.host().spawn("plain").capIpcLock(true)))
        {
            final long addr = context.memory().allocate(PLAIN_BYTES, Backing.BASE_PAGES);
            final SimMr mr = (SimMr)context.allocPd().regMr(addr, PLAIN_BYTES, LOCAL);
            return new Plain(mr.mttEntries(), mr.pageSizeBytes());
        }
    }

    private static ChartData sweepChart(final SimFabric fabric, final String title, final String subtitle,
        final String yAxisLabel, final ToDoubleFunction<Sample> y)
    {
        final Map<String, List<Sample>> samples = sweep(fabric);
        final Map<String, List<ChartData.Point>> series = new LinkedHashMap<>();
        for (final Map.Entry<String, List<Sample>> e : samples.entrySet())
        {
            final List<ChartData.Point> points = new ArrayList<>();
            for (final Sample s : e.getValue())
            {
                points.add(new ChartData.Point((double)s.sizeBytes() / MIB_BYTES, y.applyAsDouble(s)));
            }
            series.put(e.getKey(), points);
        }
        return new ChartData(title, subtitle, "buffer size (MiB)", yAxisLabel, true, true, series);
    }

    /** One registration of the size sweep. */
    private record Sample(long sizeBytes, long durationNs, long mttEntries)
    {
    }

    /** Registers every size of every series once, on a new host of the fabric. */
    private static Map<String, List<Sample>> sweep(final SimFabric fabric)
    {
        final SimHost host = fabric.addHost("sweep", HostConfig.builder().physicalMemoryBytes(SWEEP_HOST_MEMORY_BYTES)
            .hugepages2M(SWEEP_HUGEPAGES_2M).hugepages1G(SWEEP_HUGEPAGES_1G).build());
        final SimDevice device = host.addDevice("sim:sweep/mlx5_0", DeviceProfiles.connectx5());
        final RegistrationEvent[] last = new RegistrationEvent[1];
        device.addRegistrationListener(e ->
        {
            if (e.kind() == RegistrationEvent.Kind.REG)
            {
                last[0] = e;
            }
        });
        final Map<String, List<Sample>> series = new LinkedHashMap<>();
        try (SimContext context = device.open(host.host().spawn("sweep").capIpcLock(true)))
        {
            final ProtectionDomain pd = context.allocPd();
            series.put(SERIES_4K, sweepSeries(context, pd, Backing.BASE_PAGES, SWEEP_MIN_BYTES,
                SWEEP_MAX_BASE_PAGES_BYTES, last));
            series.put(SERIES_2M, sweepSeries(context, pd, Backing.HUGETLB_2M, Math.max(SWEEP_MIN_BYTES,
                2 * MIB_BYTES), SWEEP_MAX_BYTES, last));
            series.put(SERIES_1G, sweepSeries(context, pd, Backing.HUGETLB_1G, Math.max(SWEEP_MIN_BYTES, GIB_BYTES),
                SWEEP_MAX_BYTES, last));
        }
        return series;
    }

    private static List<Sample> sweepSeries(final SimContext context, final ProtectionDomain pd,
        final Backing backing, final long minBytes, final long maxBytes, final RegistrationEvent[] last)
    {
        final List<Sample> samples = new ArrayList<>();
        for (long size = minBytes; size <= maxBytes; size *= 2)
        {
            final long addr = context.memory().allocate(size, backing);
            // The published registration figures the cost model is calibrated on are for pre-touched memory
            // (Mooncake PR 855), so the sweep touches the buffer first (at no simulated cost): a cold buffer would
            // add its fault-in (CostModel.hostMinorFaultNs per page).
            context.process().touch(addr, size, true);
            final SimMr mr = registerWithCpuPages(context, pd, addr, size, backing, LOCAL);
            final RegistrationEvent event = last[0];
            if (event == null || event.lkey() != mr.lkey())
            {
                throw new IllegalStateException("no registration event for " + mr);
            }
            samples.add(new Sample(size, event.durationNs(), mr.mttEntries()));
            mr.close();
            context.memory().free(addr, size);
        }
        return samples;
    }

    /**
     * Registers a buffer so that its MR page equals its CPU page: faults the first page in, reads its physical
     * address, and chooses an iova aligned to the CPU page that differs from that address in the CPU page's bit.
     */
    private static SimMr registerWithCpuPages(final SimContext context, final ProtectionDomain pd, final long addr,
        final long lengthBytes, final Backing backing, final Set<Access> access)
    {
        final long pageBytes = cpuPageBytes(backing);
        final UserProcess process = context.process();
        process.touch(addr, 1, true);
        final long phys = process.translate(addr);
        if (phys < 0 || (addr & (pageBytes - 1)) != 0)
        {
            throw new IllegalStateException("buffer 0x" + Long.toHexString(addr) + " is not a present page-aligned "
                + "mapping of " + backing);
        }
        final long iova = IOVA_BASE | ((phys + pageBytes) & (2 * pageBytes - 1));
        final SimMr mr = (SimMr)pd.regMr(addr, lengthBytes, iova, access);
        if (mr.pageSizeBytes() != pageBytes)
        {
            throw new IllegalStateException("expected MR pages of " + pageBytes + " bytes, got " + mr);
        }
        return mr;
    }

    private static long cpuPageBytes(final Backing backing)
    {
        return switch (backing)
        {
            case BASE_PAGES -> BASE_PAGE_BYTES;
            case HUGETLB_2M -> 2 * MIB_BYTES;
            case HUGETLB_1G -> GIB_BYTES;
            case TRANSPARENT_HUGE_PAGES -> throw new IllegalArgumentException("THP may mix page sizes");
        };
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
        final DeviceProfile responderProfile = DeviceProfiles.connectx5().withCache(CACHE_ENTRIES, CACHE_WAYS);
        final SimFabric fabric = new SimFabric();
        final SimDevice requester = fabric.addHost("requester").addDevice("sim:requester/mlx5_0",
            DeviceProfiles.connectx5());
        final long hugeBytes = roundUp(WORKING_SET_MAX_PAGES * BASE_PAGE_BYTES, 2 * MIB_BYTES);
        final SimHost responderHost = fabric.addHost("responder", HostConfig.builder()
            .hugepages2M(hugeBytes / (2 * MIB_BYTES)).build());
        final SimDevice responder = responderHost.addDevice("sim:responder/mlx5_0", responderProfile);
        final Map<String, List<ChartData.Point>> series = new LinkedHashMap<>();
        final double lookupsPerWrite;
        try (SimContext a = requester.open(requester.host().host().spawn("requester"));
            SimContext b = responder.open(responderHost.host().spawn("responder").capIpcLock(true)))
        {
            final ProtectionDomain pdA = a.allocPd();
            final ProtectionDomain pdB = b.allocPd();
            final CompletionQueue cqA = a.createCq(64);
            final CompletionQueue cqB = b.createCq(64);
            final QueuePair qpA = pdA.createQp(QpInitAttr.rc(cqA));
            final QueuePair qpB = pdB.createQp(QpInitAttr.rc(cqB));
            qpA.connect(qpB.address(), EnumSet.noneOf(Access.class));
            qpB.connect(qpA.address(), EnumSet.of(Access.REMOTE_WRITE));
            final long src = a.memory().allocate(BASE_PAGE_BYTES, Backing.BASE_PAGES);
            final MemoryRegion srcMr = pdA.regMr(src, BASE_PAGE_BYTES, LOCAL);
            final List<Sge> sgl = List.of(new Sge(src, WRITE_BYTES, srcMr.lkey()));
            final Writer writer = new Writer(qpA, cqA, sgl);
            final long[] lookups = new long[1];
            series.put(SERIES_CACHE_4K, hitRates(b, pdB, Backing.BASE_PAGES, responder, writer, lookups));
            series.put(SERIES_CACHE_2M, hitRates(b, pdB, Backing.HUGETLB_2M, responder, writer, lookups));
            lookupsPerWrite = (double)lookups[0] / (2L * MEASURED_WRITES * countWorkingSets());
        }
        return new ChartData("Responder translation-cache hit rate against working set (simulated)",
            "ConnectX-5 responder, cache of " + CACHE_ENTRIES + " lines, " + CACHE_WAYS + "-way LRU; "
                + WRITE_BYTES + " B RDMA WRITEs to random pages (seed 0x" + Long.toHexString(SEED) + "), "
                + MEASURED_WRITES + " measured per point after one write per page. The responder made "
                + new DecimalFormat("0.##").format(lookupsPerWrite) + " cache lookups per write (MPT and MTT "
                + "entry, at the rkey check and again when the bytes are placed), so the rate has a floor. " + FORCED,
            "working set (4 KiB pages)", "hit rate (hits / lookups)", true, false, series,
            Map.of("cache lines (" + CACHE_ENTRIES + ")", (double)CACHE_ENTRIES));
    }

    /** Posts signaled RDMA WRITEs and reaps each completion. */
    private static final class Writer
    {
        private final QueuePair qp;
        private final CompletionQueue cq;
        private final List<Sge> sgl;
        private long wrId;

        Writer(final QueuePair qp, final CompletionQueue cq, final List<Sge> sgl)
        {
            this.qp = qp;
            this.cq = cq;
            this.sgl = sgl;
        }

        void write(final long remoteAddr, final int rkey)
        {
            write(sgl, remoteAddr, rkey);
        }

        void write(final List<Sge> from, final long remoteAddr, final int rkey)
        {
            qp.postSend(SendWr.write(++wrId, from, remoteAddr, rkey));
            final List<WorkCompletion> wcs = cq.poll(1);
            if (wcs.size() != 1 || wcs.get(0).status() != WcStatus.SUCCESS)
            {
                throw new IllegalStateException("RDMA WRITE to 0x" + Long.toHexString(remoteAddr) + " completed with "
                    + wcs);
            }
        }
    }

    private static int countWorkingSets()
    {
        int n = 0;
        for (long pages = WORKING_SET_MIN_PAGES; pages <= WORKING_SET_MAX_PAGES; pages *= 2)
        {
            n++;
        }
        return n;
    }

    private static List<ChartData.Point> hitRates(final SimContext context, final ProtectionDomain pd,
        final Backing backing, final SimDevice responder, final Writer writer, final long[] lookups)
    {
        final List<ChartData.Point> points = new ArrayList<>();
        final SplittableRandom random = new SplittableRandom(SEED);
        for (long pages = WORKING_SET_MIN_PAGES; pages <= WORKING_SET_MAX_PAGES; pages *= 2)
        {
            final long lengthBytes = roundUp(pages * BASE_PAGE_BYTES, cpuPageBytes(backing));
            final long addr = context.memory().allocate(lengthBytes, backing);
            final SimMr mr = registerWithCpuPages(context, pd, addr, lengthBytes, backing, TARGET);
            for (long p = 0; p < pages; p++)
            {
                writer.write(mr.iova() + p * BASE_PAGE_BYTES, mr.rkey());
            }
            final long hitsBefore = responder.tables().cache().hits();
            final long missesBefore = responder.tables().cache().misses();
            final int slots = (int)(BASE_PAGE_BYTES / WRITE_BYTES);
            for (int i = 0; i < MEASURED_WRITES; i++)
            {
                final long offset = random.nextLong(pages) * BASE_PAGE_BYTES + random.nextInt(slots) * WRITE_BYTES;
                writer.write(mr.iova() + offset, mr.rkey());
            }
            final long hits = responder.tables().cache().hits() - hitsBefore;
            final long misses = responder.tables().cache().misses() - missesBefore;
            points.add(new ChartData.Point(pages, (double)hits / (hits + misses)));
            lookups[0] += hits + misses;
            mr.close();
            context.memory().free(addr, lengthBytes);
        }
        return points;
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
        final SimFabric fabric = new SimFabric();
        final SimHost clientHost = fabric.addHost("client", HostConfig.builder().physicalMemoryBytes(GIB_BYTES)
            .aged(true).build());
        final SimHost serverHost = fabric.addHost("server", HostConfig.builder().physicalMemoryBytes(GIB_BYTES)
            .build());
        final SimDevice clientNic = clientHost.addDevice("sim:client/mlx5_0", DeviceProfiles.connectx5());
        final SimDevice serverNic = serverHost.addDevice("sim:server/mlx5_0", DeviceProfiles.connectx5());
        final Map<String, List<ChartData.Point>> series = new LinkedHashMap<>();
        try (SimContext a = clientNic.open(clientHost.host().spawn("client").capIpcLock(true));
            SimContext b = serverNic.open(serverHost.host().spawn("server")))
        {
            final ProtectionDomain pdA = a.allocPd();
            final ProtectionDomain pdB = b.allocPd();
            final CompletionQueue cqA = a.createCq(64);
            final CompletionQueue cqB = b.createCq(64);
            final QueuePair qpA = pdA.createQp(QpInitAttr.rc(cqA));
            final QueuePair qpB = pdB.createQp(QpInitAttr.rc(cqB));
            qpA.connect(qpB.address(), EnumSet.noneOf(Access.class));
            qpB.connect(qpA.address(), EnumSet.of(Access.REMOTE_WRITE));
            final long inbox = b.memory().allocate(STRATEGY_MESSAGE_BYTES, Backing.BASE_PAGES);
            final MemoryRegion inboxMr = pdB.regMr(inbox, STRATEGY_MESSAGE_BYTES, TARGET);
            final Writer writer = new Writer(qpA, cqA, List.of());
            final long warm = a.memory().allocate(STRATEGY_MESSAGE_BYTES, Backing.BASE_PAGES);
            try (MemoryRegion warmMr = pdA.regMr(warm, STRATEGY_MESSAGE_BYTES, LOCAL))
            {
                writer.write(List.of(new Sge(warm, STRATEGY_MESSAGE_BYTES, warmMr.lkey())), inbox, inboxMr.rkey());
            }
            final long heapBytes = STRATEGY_BUFFERS * STRATEGY_MESSAGE_BYTES;
            final long heap = a.memory().allocate(heapBytes, Backing.BASE_PAGES);
            a.process().touch(heap, heapBytes, true);
            final long[] completed = new long[1];
            final Consumer<Sge> send = sge ->
            {
                writer.write(List.of(sge), inbox, inboxMr.rkey());
                completed[0] = fabric.clock().nowNs();
            };
            series.put(SERIES_PER_REQUEST, timed(fabric, completed, () -> { }, i ->
            {
                final long at = buffer(heap, i);
                try (MemoryRegion mr = pdA.regMr(at, STRATEGY_MESSAGE_BYTES, LOCAL))
                {
                    send.accept(new Sge(at, STRATEGY_MESSAGE_BYTES, mr.lkey()));
                }
            }, () -> { }));
            final MemoryRegion[] once = new MemoryRegion[1];
            series.put(SERIES_ONCE, timed(fabric, completed, () -> once[0] = pdA.regMr(heap, heapBytes, LOCAL),
                i -> send.accept(new Sge(buffer(heap, i), STRATEGY_MESSAGE_BYTES, once[0].lkey())),
                () -> once[0].close()));
            final MemoryPool pool = MemoryPool.create(pdA, a.memory(), new MemoryPool.Config(STRATEGY_CHUNK_BYTES,
                STRATEGY_BUFFERS, 4 * KIB_BYTES, Backing.BASE_PAGES, LOCAL));
            series.put(SERIES_POOL, timed(fabric, completed, () -> { }, i ->
            {
                final MemoryPool.Fragment f = pool.allocate(STRATEGY_MESSAGE_BYTES);
                send.accept(f.sge());
                pool.free(f);
            }, pool::close));
            final RegistrationCache cache = RegistrationCache.create(pdA, RegistrationCache.Config.unbounded());
            series.put(SERIES_CACHE, timed(fabric, completed, () -> { }, i ->
            {
                final RegistrationCache.Handle h = cache.acquire(buffer(heap, i), STRATEGY_MESSAGE_BYTES, LOCAL);
                send.accept(new Sge(buffer(heap, i), STRATEGY_MESSAGE_BYTES, h.lkey()));
                cache.release(h);
            }, cache::close));
            final MemoryRegion[] odp = new MemoryRegion[1];
            series.put(SERIES_ODP, timed(fabric, completed, () -> odp[0] = pdA.regMr(heap, heapBytes, ODP),
                i -> send.accept(new Sge(buffer(heap, i), STRATEGY_MESSAGE_BYTES, odp[0].lkey())),
                () -> odp[0].close()));
        }
        return new ChartData("Average time per request against requests served, by registration strategy "
            + "(simulated)", STRATEGY_REQUESTS + " RDMA WRITEs of " + sizeText(STRATEGY_MESSAGE_BYTES) + " from "
            + STRATEGY_BUFFERS + " buffers created once, ConnectX-5 to ConnectX-5, aged client host (4 KiB MR "
            + "pages); time from the strategy's first step to the n-th completion, divided by n: the first point is "
            + "the time to the first operation. The pool's and the cache's own bookkeeping is not priced; the ODP MR "
            + "maps the heap's present pages when registered, so no request faults. Cost "
            + "model: registration " + costText(fabric.costModel()) + "; deregistration "
            + fabric.costModel().deregFixedNs() + " ns fixed + " + fabric.costModel().unpinPerPageNs() + " ns per "
            + "page; an operation " + fabric.costModel().opBaseLatencyNs() + " ns + wire time + "
            + fabric.costModel().cacheMissNs() + " ns per translation-cache miss",
            "requests served", "average time per request (µs)", true, true, series);
    }

    /** The first byte of the buffer request {@code i} sends. */
    private static long buffer(final long heap, final int i)
    {
        return heap + (i % STRATEGY_BUFFERS) * STRATEGY_MESSAGE_BYTES;
    }

    /**
     * Runs a strategy's set-up and requests on the fabric's clock, and its tear-down after the last point; the point
     * at n is taken at the n-th completion, whose time the requests leave in {@code completed[0]} (what a request
     * does after it, such as a deregistration, counts towards the next one).
     */
    private static List<ChartData.Point> timed(final SimFabric fabric, final long[] completed,
        final Runnable setUp, final IntConsumer request, final Runnable tearDown)
    {
        final List<ChartData.Point> points = new ArrayList<>();
        final long t0 = fabric.clock().nowNs();
        setUp.run();
        for (int i = 0; i < STRATEGY_REQUESTS; i++)
        {
            request.accept(i);
            final int served = i + 1;
            if (STRATEGY_POINTS.contains(served))
            {
                points.add(new ChartData.Point(served, (completed[0] - t0) / 1000.0 / served));
            }
        }
        tearDown.run();
        return points;
    }

    /** A power-of-two size as text: {@code 4 KiB}, {@code 64 MiB}, {@code 1 GiB}. */
    private static String sizeText(final long bytes)
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

    private static long roundUp(final long value, final long multiple)
    {
        return (value + multiple - 1) / multiple * multiple;
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
    private static String costText(final CostModel m)
    {
        return m.regFixedNs() + " ns fixed + " + m.pinPerPageNs() + " ns per 4 KiB page pinned + "
            + m.pinPerLeafNs() + " ns per page-table leaf + " + m.mttWritePerEntryNs() + " ns per MTT entry";
    }
}
