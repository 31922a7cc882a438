package dev.rnicsim.benchmarks;

import dev.rnicsim.pagetable.Host;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.MapFlag;
import dev.rnicsim.pagetable.PageSize;
import dev.rnicsim.pagetable.PinnedPages;
import dev.rnicsim.pagetable.Prot;
import dev.rnicsim.pagetable.ThpMode;
import dev.rnicsim.pagetable.UserProcess;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Fault-in, pin and unpin of 1 GiB of anonymous memory in the host memory model, beside a baseline loop over a
 * primitive array with the same page count, all in one JMH run.
 *
 * <p><b>Unit.</b> Every score is <em>nanoseconds per 4 KiB page</em>: each benchmark method handles 1 GiB, which is
 * {@value #PAGES} pages of 4 KiB, and is annotated {@code @OperationsPerInvocation(PAGES)}. The count is the same
 * for {@code pageSize=2m}, so the two page sizes compare per byte of memory; multiply a {@code 2m} score by 512 to
 * get nanoseconds per 2 MiB page.
 *
 * <p><b>Parameters.</b> {@code pageSize}:
 * <ul>
 *   <li>{@code 4k}: a host with THP {@link ThpMode#NEVER}, so every fault maps a 4 KiB page;</li>
 *   <li>{@code 2m}: a host with THP {@link ThpMode#ALWAYS}; the 1 GiB mapping is 2 MiB aligned, so every fault
 *       maps a 2 MiB transparent huge page (checked at setup with {@link UserProcess#mappedPageSize});</li>
 *   <li>{@code 2m-hugetlb} (not run by default; add {@code -p pageSize=2m-hugetlb}): MAP_HUGETLB from a boot-time
 *       pool of 512 pages of 2 MiB.</li>
 * </ul>
 *
 * <p><b>Benchmarks.</b>
 * <ul>
 *   <li>{@link #faultIn}: write-touches a fresh 1 GiB mapping (mapped before, unmapped after each invocation,
 *       outside the timing);</li>
 *   <li>{@link #pin}: {@code pinUserPages(write, longterm)} of 1 GiB already faulted in (unpinned after each
 *       invocation, outside the timing): the operation the target of 40 ns per 4 KiB page is about;</li>
 *   <li>{@link #unpin}: {@code unpinUserPages} of such a pin (pinned before each invocation);</li>
 *   <li>{@link #pinUnpin}: both, back to back;</li>
 *   <li>{@link #baselineArrayLoop}: one increment per element of a {@code long[PAGES]}, as a pin count per page
 *       would need; the floor a per-page loop over primitive state can reach on this machine.</li>
 * </ul>
 *
 * <p><b>Running.</b>
 * <pre>
 * mvn -pl benchmarks -am package -DskipTests
 * java -jar benchmarks/target/benchmarks.jar PinBenchmark            # defaults: 1 fork, 3 x 1 s warm-up, 5 x 1 s
 * java -jar benchmarks/target/benchmarks.jar PinBenchmark -f 1 -wi 2 -i 3 -p pageSize=4k
 * </pre>
 * The host has 4 GiB of physical memory; the model keeps per-frame state only for sections in use, so the JVM
 * needs well under 1 GiB of heap.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@OperationsPerInvocation(PinBenchmark.PAGES)
@Fork(1)
@Warmup(iterations = 3, time = 1, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 1, timeUnit = TimeUnit.SECONDS)
public class PinBenchmark
{
    /** Bytes handled by one invocation: 1 GiB. */
    public static final long REGION_BYTES = 1L << 30;
    /** 4 KiB pages in {@link #REGION_BYTES}: 262144, the operations per invocation. */
    public static final int PAGES = (int)(REGION_BYTES >>> 12);

    /** Physical memory of the simulated host: 4 GiB. */
    private static final long PHYSICAL_BYTES = 4L << 30;

    /** Page size of the mapping: {@code 4k}, {@code 2m} (THP) or {@code 2m-hugetlb}. */
    @Param({"4k", "2m"})
    public String pageSize;

    private Host host;
    private UserProcess process;
    private PageSize expectedSize;
    private boolean hugetlb;

    /** Region faulted in once per trial, for {@link #pin}, {@link #unpin} and {@link #pinUnpin}. */
    private long faultedVa;
    /** Region mapped but not touched, fresh for each invocation of {@link #faultIn}. */
    private long freshVa;
    /** The pin held between a benchmark and the invocation teardown. */
    private PinnedPages pinned;

    private long[] pinCounts;

    /**
     * Boots the host, maps and faults in the region used by the pin benchmarks, and checks its page size.
     */
    @Setup(Level.Trial)
    public void setUpTrial()
    {
        final HostConfig.Builder config = HostConfig.builder().physicalMemoryBytes(PHYSICAL_BYTES);
        switch (pageSize)
        {
            case "4k" ->
            {
                config.thpMode(ThpMode.NEVER);
                expectedSize = PageSize.SIZE_4K;
            }
            case "2m" ->
            {
                config.thpMode(ThpMode.ALWAYS);
                expectedSize = PageSize.SIZE_2M;
            }
            case "2m-hugetlb" ->
            {
                // Two regions can be live at once (the pinned one and a fresh one), so reserve two of them.
                config.thpMode(ThpMode.NEVER).hugepages2M(2 * REGION_BYTES / PageSize.SIZE_2M.bytes());
                expectedSize = PageSize.SIZE_2M;
                hugetlb = true;
            }
            default -> throw new IllegalArgumentException("pageSize=" + pageSize + " is not 4k, 2m or 2m-hugetlb");
        }
        host = new Host(config.build());
        process = host.spawn("bench").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        faultedVa = map();
        process.touch(faultedVa, REGION_BYTES, true);
        checkPageSize(faultedVa);
        pinCounts = new long[PAGES];
    }

    private long map()
    {
        if (hugetlb)
        {
            return process.mmap(0, REGION_BYTES, Prot.READ_WRITE,
                Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.HUGETLB));
        }
        return process.mmapAnonymous(REGION_BYTES);
    }

    private void checkPageSize(final long va)
    {
        for (long off = 0; off < REGION_BYTES; off += PageSize.SIZE_2M.bytes())
        {
            final PageSize got = process.mappedPageSize(va + off);
            if (got != expectedSize)
            {
                throw new IllegalStateException("pageSize=" + pageSize + ": offset " + off + " is mapped with "
                    + got + ", expected " + expectedSize);
            }
        }
    }

    /** Maps a fresh, untouched region for {@link #faultIn}. */
    @Setup(Level.Invocation)
    public void setUpInvocation()
    {
        if (freshVa == 0)
        {
            freshVa = map();
        }
    }

    /** Drops what the benchmark left: the pin it took, or the region it faulted in. */
    @TearDown(Level.Invocation)
    public void tearDownInvocation()
    {
        if (pinned != null)
        {
            process.unpinUserPages(pinned);
            pinned = null;
        }
        if (freshVa != 0 && process.mappedPageSize(freshVa) != null)
        {
            checkPageSize(freshVa);
            process.munmap(freshVa, REGION_BYTES);
            freshVa = 0;
        }
    }

    /** Checks that nothing is left pinned or mapped beyond the trial region. */
    @TearDown(Level.Trial)
    public void tearDownTrial()
    {
        if (process.pinnedVmPages() != 0)
        {
            throw new IllegalStateException("pinned_vm=" + process.pinnedVmPages() + " pages after the trial");
        }
    }

    /**
     * Write-touches every page of a fresh 1 GiB mapping: one fault per 4 KiB or per 2 MiB page.
     *
     * @return the number of faults taken.
     */
    @Benchmark
    public long faultIn()
    {
        return process.touch(freshVa, REGION_BYTES, true);
    }

    /**
     * Pins 1 GiB of memory already faulted in, for writing and long-term, as an RDMA registration does.
     *
     * @return the pin (released after the invocation).
     */
    @Benchmark
    public PinnedPages pin()
    {
        pinned = process.pinUserPages(faultedVa, REGION_BYTES, true, true);
        return pinned;
    }

    /**
     * Unpins 1 GiB pinned before the invocation.
     *
     * @param state the pin to release.
     * @return the number of pages the process still has pinned (0).
     */
    @Benchmark
    public long unpin(final PinnedState state)
    {
        process.unpinUserPages(state.pinned);
        state.pinned = null;
        return process.pinnedVmPages();
    }

    /**
     * Pins then unpins 1 GiB already faulted in.
     *
     * @return the number of pages the process still has pinned (0).
     */
    @Benchmark
    public long pinUnpin()
    {
        final PinnedPages p = process.pinUserPages(faultedVa, REGION_BYTES, true, true);
        process.unpinUserPages(p);
        return process.pinnedVmPages();
    }

    /**
     * Baseline: increments one {@code long} per page, the per-page state update a pin count needs, over
     * {@value #PAGES} elements.
     *
     * @return the first element, so that the loop is not dead code.
     */
    @Benchmark
    public long baselineArrayLoop()
    {
        final long[] counts = pinCounts;
        for (int i = 0; i < counts.length; i++)
        {
            counts[i]++;
        }
        return counts[0];
    }

    /**
     * A pin taken before each invocation of {@link #unpin}, released by it. Its setup runs after the enclosing
     * benchmark state's, which holds the faulted-in region.
     */
    @State(Scope.Thread)
    public static class PinnedState
    {
        PinnedPages pinned;

        /**
         * Pins the faulted-in region.
         *
         * @param bench the benchmark state.
         */
        @Setup(Level.Invocation)
        public void pin(final PinBenchmark bench)
        {
            pinned = bench.process.pinUserPages(bench.faultedVa, REGION_BYTES, true, true);
        }

        /**
         * Releases the pin if the benchmark did not.
         *
         * @param bench the benchmark state.
         */
        @TearDown(Level.Invocation)
        public void unpin(final PinBenchmark bench)
        {
            if (pinned != null)
            {
                bench.process.unpinUserPages(pinned);
                pinned = null;
            }
        }
    }
}
