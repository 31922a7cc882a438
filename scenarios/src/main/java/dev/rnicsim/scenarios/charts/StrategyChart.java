package dev.rnicsim.scenarios.charts;

import static dev.rnicsim.scenarios.charts.Charts.GIB_BYTES;
import static dev.rnicsim.scenarios.charts.Charts.KIB_BYTES;
import static dev.rnicsim.scenarios.charts.Charts.LOCAL;
import static dev.rnicsim.scenarios.charts.Charts.ODP;
import static dev.rnicsim.scenarios.charts.Charts.SERIES_CACHE;
import static dev.rnicsim.scenarios.charts.Charts.SERIES_ODP;
import static dev.rnicsim.scenarios.charts.Charts.SERIES_ONCE;
import static dev.rnicsim.scenarios.charts.Charts.SERIES_PER_REQUEST;
import static dev.rnicsim.scenarios.charts.Charts.SERIES_POOL;
import static dev.rnicsim.scenarios.charts.Charts.STRATEGY_BUFFERS;
import static dev.rnicsim.scenarios.charts.Charts.STRATEGY_CHUNK_BYTES;
import static dev.rnicsim.scenarios.charts.Charts.STRATEGY_MESSAGE_BYTES;
import static dev.rnicsim.scenarios.charts.Charts.STRATEGY_POINTS;
import static dev.rnicsim.scenarios.charts.Charts.STRATEGY_REQUESTS;
import static dev.rnicsim.scenarios.charts.Charts.TARGET;
import static dev.rnicsim.scenarios.charts.Charts.costText;
import static dev.rnicsim.scenarios.charts.Charts.sizeText;

import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.strategy.MemoryPool;
import dev.rnicsim.verbs.strategy.RegistrationCache;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

/**
 * The chart of the average time per request of five registration strategies against the requests served
 * ({@link Charts#strategyTimeData()}): per-request registration, one registration up front, a memory pool, a
 * registration cache and an on-demand-paging MR, serving the same stream of RDMA WRITEs. Stateless.
 */
final class StrategyChart
{
    private StrategyChart()
    {
    }

    /** @return the data of {@link Charts#strategyTimeData()}. */
    static ChartData data()
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
            final RdmaWrites writer = RdmaWrites.connect(a, pdA, b, pdB);
            final long inbox = b.memory().allocate(STRATEGY_MESSAGE_BYTES, Backing.BASE_PAGES);
            final MemoryRegion inboxMr = pdB.regMr(inbox, STRATEGY_MESSAGE_BYTES, TARGET);
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
}
