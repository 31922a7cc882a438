package dev.rnicsim.benchmarks;

import dev.rnicsim.pagetable.Host;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.MapFlag;
import dev.rnicsim.pagetable.PageSize;
import dev.rnicsim.pagetable.PhysicalMemory;
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
import org.openjdk.jmh.infra.BenchmarkParams;

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
 *       pool of 1024 pages of 2 MiB, room for two regions.</li>
 * </ul>
 *
 * <p><b>Benchmarks.</b>
 * <ul>
 *   <li>{@link #faultIn}: write-touches a fresh 1 GiB mapping (mapped before, unmapped after each invocation,
 *       outside the timing);</li>
 *   <li>{@link #pin}: {@code pinUserPages(write, longterm)} of 1 GiB already faulted in (unpinned after each
 *       invocation, outside the timing): the operation the project's target of 40 ns per 4 KiB page is about;</li>
 *   <li>{@link #unpin}: {@code unpinUserPages} of such a pin (pinned before each invocation);</li>
 *   <li>{@link #pinUnpin}: both, back to back;</li>
 *   <li>{@link #baselineArrayLoop}: one increment per element of a {@code long[PAGES]}, as a pin count per page
 *       would need; the floor a per-page loop over primitive state can reach on this machine. It does not use
 *       {@code pageSize}; JMH runs it once per value, so it sits beside each.</li>
 * </ul>
 * Before each pin benchmark of a 2 MiB region, a setup step checks that its folios are still whole (a guard: a
 * model that split a THP on unpin would otherwise make later iterations measure 4 KiB pins); if not, it boots a
 * new host and faults in a new region outside the timing, and the trial ends with a note saying how often.
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

    /*
     * All state lives in this one class on purpose: with helper @State classes taking another state as a
     * @Setup/@TearDown argument, the code JMH 1.37 generated here gave each of them its own instance of that state,
     * not the one the benchmark method got, so a pin taken on one host was handed to another host's process.
     * The per-invocation work is chosen by benchmark name instead.
     */

    private String benchmark;
    private HostConfig hostConfig;
    private Host host;
    private UserProcess process;
    private PageSize expectedSize;
    private boolean hugetlb;
    /** The region faulted in at trial setup, for the pin benchmarks. */
    private long faultedVa;
    /** The fresh, untouched region of {@link #faultIn}, mapped before and unmapped after each invocation. */
    private long freshVa;
    /** A pin held across the invocation boundary: taken by {@link #pin} or before {@link #unpin}. */
    private PinnedPages pinned;
    /** Times the faulted-in region had to be rebuilt because its folios were found split. */
    private long refaults;
    private long[] counts;

    /**
     * Boots the host and, for the pin benchmarks, maps and faults in their region and checks its page size.
     *
     * @param params the benchmark being run, which decides the work done around each invocation.
     */
    @Setup(Level.Trial)
    public void setUpTrial(final BenchmarkParams params)
    {
        final String name = params.getBenchmark();
        benchmark = name.substring(name.lastIndexOf('.') + 1);
        if (benchmark.equals("baselineArrayLoop"))
        {
            counts = new long[PAGES];
            return;
        }
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
                // Two regions can be live at once (the faulted-in one and a fresh one): reserve both.
                config.thpMode(ThpMode.NEVER).hugepages2M(2 * REGION_BYTES / PageSize.SIZE_2M.bytes());
                expectedSize = PageSize.SIZE_2M;
                hugetlb = true;
            }
            default -> throw new IllegalArgumentException("pageSize=" + pageSize + " is not 4k, 2m or 2m-hugetlb");
        }
        hostConfig = config.build();
        boot();
        if (!benchmark.equals("faultIn"))
        {
            faultedVa = mapAndFaultIn();
        }
    }

    private void boot()
    {
        host = new Host(hostConfig);
        process = host.spawn("bench").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
    }

    /** Checks that no pin is left and reports how often the faulted-in region had to be rebuilt. */
    @TearDown(Level.Trial)
    public void tearDownTrial()
    {
        if (process != null && process.pinnedVmPages() != 0)
        {
            throw new IllegalStateException("pinned_vm=" + process.pinnedVmPages() + " pages after the trial");
        }
        if (refaults > 0)
        {
            System.out.println("\nNOTE: " + benchmark + " pageSize=" + pageSize + ": the faulted-in region was found"
                + " with split folios and rebuilt on a new host " + refaults + " times (outside the timing)");
        }
    }

    /** Prepares one invocation: a fresh mapping for {@link #faultIn}, a pin for {@link #unpin}. */
    @Setup(Level.Invocation)
    public void setUpInvocation()
    {
        switch (benchmark)
        {
            case "faultIn" -> freshVa = map();
            case "pin", "pinUnpin" -> ensureIntact();
            case "unpin" ->
            {
                ensureIntact();
                pinned = process.pinUserPages(faultedVa, REGION_BYTES, true, true);
            }
            default ->
            {
            }
        }
    }

    /** Undoes one invocation: unmaps the region {@link #faultIn} touched, releases the pin {@link #pin} took. */
    @TearDown(Level.Invocation)
    public void tearDownInvocation()
    {
        if (freshVa != 0)
        {
            checkPageSize(freshVa);
            process.munmap(freshVa, REGION_BYTES);
            freshVa = 0;
        }
        if (pinned != null)
        {
            process.unpinUserPages(pinned);
            pinned = null;
        }
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

    private long mapAndFaultIn()
    {
        final long va = map();
        process.touch(va, REGION_BYTES, true);
        checkPageSize(va);
        return va;
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

    /**
     * Makes sure every 2 MiB folio of the faulted-in region is still whole, else boots a new host and faults in a
     * new region. The model splits a fully mapped THP folio when its last pin is dropped, while the PMD still maps
     * it whole ({@code UserProcess.releaseIfUnused}): the next pin of such a region is then charged to the first
     * frame of each 2 MiB only and its unpin fails with EINVAL, and unmapping it frees 1 frame of every 512 (the
     * other 511 leak). Without that bug this costs one lookup per 2 MiB and never rebuilds.
     */
    private void ensureIntact()
    {
        if (expectedSize == PageSize.SIZE_4K)
        {
            return;
        }
        final PhysicalMemory phys = host.physicalMemory();
        for (long off = 0; off < REGION_BYTES; off += PageSize.SIZE_2M.bytes())
        {
            final long pa = process.translate(faultedVa + off);
            if (pa < 0 || phys.folioSize(pa >>> 12) != expectedSize)
            {
                boot();
                faultedVa = mapAndFaultIn();
                refaults++;
                return;
            }
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
     * Pins 1 GiB of memory already faulted in, for writing and long-term, as an RDMA registration does. The pin
     * is released after the invocation, outside the timing.
     *
     * @return the pin.
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
     * @return the number of pages the process still has pinned (0).
     */
    @Benchmark
    public long unpin()
    {
        process.unpinUserPages(pinned);
        pinned = null;
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
        final long[] c = counts;
        for (int i = 0; i < c.length; i++)
        {
            c[i]++;
        }
        return c[0];
    }
}
