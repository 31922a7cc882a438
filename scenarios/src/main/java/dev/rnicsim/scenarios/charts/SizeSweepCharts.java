package dev.rnicsim.scenarios.charts;

import static dev.rnicsim.scenarios.charts.Charts.FORCED;
import static dev.rnicsim.scenarios.charts.Charts.GIB_BYTES;
import static dev.rnicsim.scenarios.charts.Charts.LOCAL;
import static dev.rnicsim.scenarios.charts.Charts.MIB_BYTES;
import static dev.rnicsim.scenarios.charts.Charts.SERIES_1G;
import static dev.rnicsim.scenarios.charts.Charts.SERIES_2M;
import static dev.rnicsim.scenarios.charts.Charts.SERIES_4K;
import static dev.rnicsim.scenarios.charts.Charts.SWEEP_HOST_MEMORY_BYTES;
import static dev.rnicsim.scenarios.charts.Charts.SWEEP_HUGEPAGES_1G;
import static dev.rnicsim.scenarios.charts.Charts.SWEEP_HUGEPAGES_2M;
import static dev.rnicsim.scenarios.charts.Charts.SWEEP_MAX_BASE_PAGES_BYTES;
import static dev.rnicsim.scenarios.charts.Charts.SWEEP_MAX_BYTES;
import static dev.rnicsim.scenarios.charts.Charts.SWEEP_MIN_BYTES;
import static dev.rnicsim.scenarios.charts.Charts.costText;
import static dev.rnicsim.scenarios.charts.Charts.sizeText;
import static dev.rnicsim.scenarios.charts.CpuPageMrs.registerWithCpuPages;

import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.simnic.CostModel;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.RegistrationEvent;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.ProtectionDomain;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The two charts of the size sweep, {@link Charts#registrationTimeData()} and {@link Charts#mttEntriesData()}: every
 * power of two from 1 MiB to 4 GiB registered once in 4 KiB, 2 MiB and 1 GiB pages on a simulated ConnectX-5, each
 * with its MR page forced to its CPU page ({@link CpuPageMrs}). Stateless.
 */
final class SizeSweepCharts
{
    private SizeSweepCharts()
    {
    }

    /** Bytes of the plain {@code ibv_reg_mr} of base pages the MTT chart's subtitle compares with. */
    private static final long PLAIN_BYTES = 64 * MIB_BYTES;

    /** @return the data of {@link Charts#registrationTimeData()}. */
    static ChartData registrationTime()
    {
        final SimFabric fabric = new SimFabric();
        return sweepChart(fabric, "ibv_reg_mr time against buffer size (simulated)",
            "ConnectX-5, 64 GiB host, CAP_IPC_LOCK; " + FORCED + ". Cost model: " + costText(fabric.costModel()),
            "registration time (µs)", s -> s.durationNs() / 1000.0);
    }

    /** @return the data of {@link Charts#mttEntriesData()}. */
    static ChartData mttEntries()
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
     * Registers {@value Charts#PLAIN_BYTES} bytes of base pages with {@code ibv_reg_mr} (iova = addr) on a new default
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
}
