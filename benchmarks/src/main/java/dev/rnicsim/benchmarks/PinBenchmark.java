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

/**
 * Fault-in, pin and unpin of 1 GiB of anonymous memory in the host memory model, beside a baseline loop over a
 * primitive array with the same page count, all in one JMH run.
 *
 * <p><b>Unit.</b> Every score is <em>nanoseconds per 4 KiB page</em>: each benchmark method handles 1 GiB, which is
 * {@value #PAGES} pages of 4 KiB, and is annotated {@code @OperationsPerInvocation(PAGES)}. The count is the same
 * for {@code pageSize=2m}, so the two page sizes compare per byte of memory; multiply a {@code 2m} score by 512 to
 * get nanoseconds per 2 MiB page.
 *
 * <p><b>Parameters.</b> {@code pageSize} (of the {@link Memory} state):
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
 *       would need; the floor a per-page loop over primitive state can reach on this machine. It does not use
 *       {@code pageSize}, so it is run once per JMH run.</li>
 * </ul>
 * Before each pin benchmark of a 2 MiB region, {@link Memory#ensureIntact()} checks that its folios are still
 * whole and, if not, maps and faults in a new region (outside the timing, with a note printed at the end of the
 * trial): the model currently splits a THP folio on its last unpin, which would corrupt the next pin.
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

    /**
     * The simulated host and process, and a 1 GiB region faulted in at trial setup for the pin benchmarks.
     */
    @State(Scope.Thread)
    public static class Memory
    {
        /** Page size of the mapping: {@code 4k}, {@code 2m} (THP) or {@code 2m-hugetlb}. */
        @Param({"4k", "2m"})
        public String pageSize;

        Host host;
        UserProcess process;
        private PageSize expectedSize;
        private boolean hugetlb;
        /** The faulted-in region of the pin benchmarks. */
        long faultedVa;
        /** Times the faulted-in region had to be mapped again because its folios were found split. */
        private long refaults;

        /**
         * Boots the host, maps and faults in the region used by the pin benchmarks, and checks its page size.
         */
        @Setup(Level.Trial)
        public void setUp()
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
                    // Two regions can be live at once (the faulted-in one and a fresh one): reserve both.
                    config.thpMode(ThpMode.NEVER).hugepages2M(2 * REGION_BYTES / PageSize.SIZE_2M.bytes());
                    expectedSize = PageSize.SIZE_2M;
                    hugetlb = true;
                }
                default -> throw new IllegalArgumentException("pageSize=" + pageSize
                    + " is not 4k, 2m or 2m-hugetlb");
            }
            host = new Host(config.build());
            process = host.spawn("bench").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
            faultedVa = mapAndFaultIn();
        }

        /** Reports how often the faulted-in region had to be rebuilt (see {@link #ensureIntact()}). */
        @TearDown(Level.Trial)
        public void tearDown()
        {
            if (process.pinnedVmPages() != 0)
            {
                throw new IllegalStateException("pinned_vm=" + process.pinnedVmPages() + " pages after the trial");
            }
            if (refaults > 0)
            {
                System.out.println("\nNOTE: pageSize=" + pageSize + ": the faulted-in region was found with split"
                    + " folios and mapped again " + refaults + " times (outside the timing)");
            }
        }

        /** @return a fresh, untouched 1 GiB mapping. */
        long map()
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

        /** Checks that the whole region is mapped with the page size of {@link #pageSize}. */
        void checkPageSize(final long va)
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
         * Makes sure every 2 MiB folio of the faulted-in region is still whole, else maps and faults in a new
         * region. The model splits a fully mapped THP folio when its last pin is dropped, while the PMD still
         * maps it whole (UserProcess#releaseIfUnused); the next pin of such a region is then mis-accounted and
         * its unpin fails with EINVAL. Without that bug this costs one lookup per 2 MiB and never rebuilds.
         */
        void ensureIntact()
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
                    process.munmap(faultedVa, REGION_BYTES);
                    faultedVa = mapAndFaultIn();
                    refaults++;
                    return;
                }
            }
        }
    }

    /** A fresh, untouched 1 GiB mapping for each invocation of {@link #faultIn}, unmapped after it. */
    @State(Scope.Thread)
    public static class FreshRegion
    {
        long va;

        /**
         * Maps the region.
         *
         * @param mem the host.
         */
        @Setup(Level.Invocation)
        public void map(final Memory mem)
        {
            va = mem.map();
        }

        /**
         * Checks the page size the faults gave and unmaps the region.
         *
         * @param mem the host.
         */
        @TearDown(Level.Invocation)
        public void unmap(final Memory mem)
        {
            mem.checkPageSize(va);
            mem.process.munmap(va, REGION_BYTES);
        }
    }

    /** Holds the pin a benchmark took until the end of the invocation, then releases it. */
    @State(Scope.Thread)
    public static class PinHolder
    {
        PinnedPages pinned;

        /**
         * Makes sure the faulted-in region is whole before the invocation.
         *
         * @param mem the host.
         */
        @Setup(Level.Invocation)
        public void prepare(final Memory mem)
        {
            mem.ensureIntact();
        }

        /**
         * Releases the pin if one is held.
         *
         * @param mem the host.
         */
        @TearDown(Level.Invocation)
        public void release(final Memory mem)
        {
            if (pinned != null)
            {
                mem.process.unpinUserPages(pinned);
                pinned = null;
            }
        }
    }

    /** A pin of the faulted-in region taken before each invocation of {@link #unpin}. */
    @State(Scope.Thread)
    public static class Pinned
    {
        PinnedPages pinned;

        /**
         * Pins the faulted-in region.
         *
         * @param mem the host.
         */
        @Setup(Level.Invocation)
        public void pin(final Memory mem)
        {
            mem.ensureIntact();
            pinned = mem.process.pinUserPages(mem.faultedVa, REGION_BYTES, true, true);
        }

        /**
         * Checks that the benchmark released the pin.
         *
         * @param mem the host.
         */
        @TearDown(Level.Invocation)
        public void check(final Memory mem)
        {
            if (mem.process.pinnedVmPages() != 0)
            {
                throw new IllegalStateException("unpin left pinned_vm=" + mem.process.pinnedVmPages());
            }
        }
    }

    /** The baseline's array: one {@code long} per 4 KiB page of the region. */
    @State(Scope.Thread)
    public static class Counts
    {
        final long[] counts = new long[PAGES];
    }

    /**
     * Write-touches every page of a fresh 1 GiB mapping: one fault per 4 KiB or per 2 MiB page.
     *
     * @param mem    the host.
     * @param region the fresh mapping.
     * @return the number of faults taken.
     */
    @Benchmark
    public long faultIn(final Memory mem, final FreshRegion region)
    {
        return mem.process.touch(region.va, REGION_BYTES, true);
    }

    /**
     * Pins 1 GiB of memory already faulted in, for writing and long-term, as an RDMA registration does.
     *
     * @param mem    the host.
     * @param holder keeps the pin until the invocation teardown unpins it.
     * @return the pin.
     */
    @Benchmark
    public PinnedPages pin(final Memory mem, final PinHolder holder)
    {
        holder.pinned = mem.process.pinUserPages(mem.faultedVa, REGION_BYTES, true, true);
        return holder.pinned;
    }

    /**
     * Unpins 1 GiB pinned before the invocation.
     *
     * @param mem    the host.
     * @param pinned the pin to release.
     * @return the number of pages the process still has pinned (0).
     */
    @Benchmark
    public long unpin(final Memory mem, final Pinned pinned)
    {
        mem.process.unpinUserPages(pinned.pinned);
        return mem.process.pinnedVmPages();
    }

    /**
     * Pins then unpins 1 GiB already faulted in.
     *
     * @param mem    the host.
     * @param holder makes sure the region is whole before the invocation.
     * @return the number of pages the process still has pinned (0).
     */
    @Benchmark
    public long pinUnpin(final Memory mem, final PinHolder holder)
    {
        final PinnedPages p = mem.process.pinUserPages(mem.faultedVa, REGION_BYTES, true, true);
        mem.process.unpinUserPages(p);
        return mem.process.pinnedVmPages();
    }

    /**
     * Baseline: increments one {@code long} per page, the per-page state update a pin count needs, over
     * {@value #PAGES} elements. It does not depend on {@code pageSize}, so JMH runs it once.
     *
     * @param counts the array.
     * @return the first element, so that the loop is not dead code.
     */
    @Benchmark
    public long baselineArrayLoop(final Counts counts)
    {
        final long[] c = counts.counts;
        for (int i = 0; i < c.length; i++)
        {
            c[i]++;
        }
        return c[0];
    }
}
