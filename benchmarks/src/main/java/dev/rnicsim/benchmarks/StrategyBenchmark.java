package dev.rnicsim.benchmarks;

import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.HostMemory;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.strategy.MemoryPool;
import dev.rnicsim.verbs.strategy.RegistrationCache;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The CPU cost, in the simulator, of getting a registered buffer three ways, all in one JMH run on the same
 * simulated host and device (ConnectX-5 profile, an aged host is not used: fresh frames):
 * <ul>
 *   <li>{@link #directRegistration}: {@code ibv_reg_mr} then {@code ibv_dereg_mr} of a {@code bufferBytes} buffer
 *       (the baseline: the simulated driver path with pinning, page walk, MTT and MPT);</li>
 *   <li>{@link #cacheHit}: {@link RegistrationCache#acquire} and {@link RegistrationCache#release} of a buffer the
 *       cache holds among {@code cachedRegions} entries (a hit, no registration);</li>
 *   <li>{@link #poolAllocation}: {@link MemoryPool#allocate} and {@link MemoryPool#free} of a {@code bufferBytes}
 *       fragment from registered 64 MiB chunks.</li>
 * </ul>
 * Scores are ns per operation of the Java simulator (not simulated time); divide the cache and pool scores by the
 * direct registration's for the ratio reported. Running: {@code bin/bench StrategyBenchmark -f 1 -wi 3 -i 5}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class StrategyBenchmark
{
    private static final Set<Access> ACCESS = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
        Access.REMOTE_READ);

    /** Bytes of the buffer each operation gets. */
    @Param({"65536"})
    public long bufferBytes;

    /** Entries the cache holds (the hit looks one up among them). */
    @Param({"1024"})
    public int cachedRegions;

    private SimContext context;
    private ProtectionDomain pd;
    private HostMemory memory;
    private long directBuffer;
    private RegistrationCache cache;
    private long[] cachedBuffers;
    private MemoryPool pool;
    private int next;

    /** Builds the host, the device, a warm cache and a pool with one chunk registered. */
    @Setup(Level.Trial)
    public void setUp()
    {
        final SimFabric fabric = new SimFabric();
        final SimDevice device = fabric.addHost("bench", HostConfig.builder().physicalMemoryBytes(8L << 30).build())
            .addDevice("sim:bench/dev0", DeviceProfiles.connectx5());
        context = device.open(device.host().host().spawn("bench").capIpcLock(true));
        pd = context.allocPd();
        memory = context.memory();
        directBuffer = memory.allocate(bufferBytes, Backing.BASE_PAGES);
        memory.write(directBuffer, new byte[(int)bufferBytes]);
        cache = RegistrationCache.create(pd, RegistrationCache.Config.unbounded());
        cachedBuffers = new long[cachedRegions];
        for (int i = 0; i < cachedRegions; i++)
        {
            cachedBuffers[i] = memory.allocate(bufferBytes, Backing.BASE_PAGES);
            memory.write(cachedBuffers[i], new byte[1]);
            cache.release(cache.acquire(cachedBuffers[i], bufferBytes, ACCESS));
        }
        pool = MemoryPool.create(pd, memory, new MemoryPool.Config(64L << 20, 4, 4096, Backing.BASE_PAGES, ACCESS));
        pool.free(pool.allocate(bufferBytes));
    }

    /** Checks that the cache served hits only and closes everything. */
    @TearDown(Level.Trial)
    public void tearDown()
    {
        final long misses = cache.counters().misses();
        cache.close();
        pool.close();
        context.close();
        System.out.println("NOTE: cache misses=" + misses + " (setup only: " + cachedRegions + "), pool chunks="
            + pool.counters().registrations());
    }

    /**
     * @return the lkey of a fresh registration, after deregistering it.
     */
    @Benchmark
    public int directRegistration()
    {
        final MemoryRegion mr = pd.regMr(directBuffer, bufferBytes, ACCESS);
        final int lkey = mr.lkey();
        mr.close();
        return lkey;
    }

    /**
     * @return the lkey of a cached registration.
     */
    @Benchmark
    public int cacheHit()
    {
        final long addr = cachedBuffers[next];
        next = next + 1 == cachedBuffers.length ? 0 : next + 1;
        final RegistrationCache.Handle h = cache.acquire(addr + 64, bufferBytes - 128, ACCESS);
        final int lkey = h.lkey();
        cache.release(h);
        return lkey;
    }

    /**
     * @param bh consumes the fragment.
     */
    @Benchmark
    public void poolAllocation(final Blackhole bh)
    {
        final MemoryPool.Fragment f = pool.allocate(bufferBytes);
        bh.consume(f.lkey());
        pool.free(f);
    }
}
