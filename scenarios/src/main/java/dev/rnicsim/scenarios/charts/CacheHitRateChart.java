package dev.rnicsim.scenarios.charts;

import static dev.rnicsim.scenarios.charts.Charts.BASE_PAGE_BYTES;
import static dev.rnicsim.scenarios.charts.Charts.CACHE_ENTRIES;
import static dev.rnicsim.scenarios.charts.Charts.CACHE_WAYS;
import static dev.rnicsim.scenarios.charts.Charts.FORCED;
import static dev.rnicsim.scenarios.charts.Charts.LOCAL;
import static dev.rnicsim.scenarios.charts.Charts.MEASURED_WRITES;
import static dev.rnicsim.scenarios.charts.Charts.MIB_BYTES;
import static dev.rnicsim.scenarios.charts.Charts.SEED;
import static dev.rnicsim.scenarios.charts.Charts.SERIES_CACHE_2M;
import static dev.rnicsim.scenarios.charts.Charts.SERIES_CACHE_4K;
import static dev.rnicsim.scenarios.charts.Charts.TARGET;
import static dev.rnicsim.scenarios.charts.Charts.WORKING_SET_MAX_PAGES;
import static dev.rnicsim.scenarios.charts.Charts.WORKING_SET_MIN_PAGES;
import static dev.rnicsim.scenarios.charts.Charts.WRITE_BYTES;
import static dev.rnicsim.scenarios.charts.CpuPageMrs.cpuPageBytes;
import static dev.rnicsim.scenarios.charts.CpuPageMrs.registerWithCpuPages;
import static dev.rnicsim.scenarios.charts.CpuPageMrs.roundUp;

import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.Sge;
import java.text.DecimalFormat;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The chart of the responder's translation-cache hit rate against the working set of RDMA WRITEs
 * ({@link Charts#cacheHitRateData()}): two simulated ConnectX-5 hosts, one target MR per working set, seeded random
 * WRITEs. Stateless.
 */
final class CacheHitRateChart
{
    private CacheHitRateChart()
    {
    }

    /** @return the data of {@link Charts#cacheHitRateData()}. */
    static ChartData data()
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
            final RdmaWrites writer = RdmaWrites.connect(a, pdA, b, pdB);
            final long src = a.memory().allocate(BASE_PAGE_BYTES, Backing.BASE_PAGES);
            final MemoryRegion srcMr = pdA.regMr(src, BASE_PAGE_BYTES, LOCAL);
            final List<Sge> sgl = List.of(new Sge(src, WRITE_BYTES, srcMr.lkey()));
            final long[] lookups = new long[1];
            series.put(SERIES_CACHE_4K, hitRates(b, pdB, Backing.BASE_PAGES, responder, writer, sgl, lookups));
            series.put(SERIES_CACHE_2M, hitRates(b, pdB, Backing.HUGETLB_2M, responder, writer, sgl, lookups));
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
        final Backing backing, final SimDevice responder, final RdmaWrites writer, final List<Sge> sgl,
        final long[] lookups)
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
                writer.write(sgl, mr.iova() + p * BASE_PAGE_BYTES, mr.rkey());
            }
            final long hitsBefore = responder.tables().cache().hits();
            final long missesBefore = responder.tables().cache().misses();
            final int slots = (int)(BASE_PAGE_BYTES / WRITE_BYTES);
            for (int i = 0; i < MEASURED_WRITES; i++)
            {
                final long offset = random.nextLong(pages) * BASE_PAGE_BYTES + random.nextInt(slots) * WRITE_BYTES;
                writer.write(sgl, mr.iova() + offset, mr.rkey());
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
}
