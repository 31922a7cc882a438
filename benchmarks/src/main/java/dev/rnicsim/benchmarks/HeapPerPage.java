package dev.rnicsim.benchmarks;

import dev.rnicsim.pagetable.Host;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.PageSize;
import dev.rnicsim.pagetable.PinnedPages;
import dev.rnicsim.pagetable.ThpMode;
import dev.rnicsim.pagetable.UserProcess;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.ref.Reference;
import java.util.Locale;

/**
 * Retained Java heap of the host memory model per mapped 4 KiB page, beside a {@code long[]} with one element per
 * page measured in the same run.
 *
 * <p>What it measures: on a 4 GiB host with THP {@link ThpMode#NEVER}, the heap retained by mapping and
 * write-touching 1 GiB of anonymous memory ({@value PinBenchmark#PAGES} pages of 4 KiB), then by pinning all of it,
 * then (for comparison) by the same 1 GiB in 2 MiB transparent huge pages on a THP {@link ThpMode#ALWAYS} host.
 * Retained heap is the heap in use after {@link System#gc()}, as {@link MemoryMXBean} reports it, before and after
 * the step, with everything allocated kept reachable. The unit is bytes per 4 KiB page of the region. The project's
 * target is under 32 bytes per mapped 4 KiB page; the baseline {@code long[]} costs 8 bytes per page.
 *
 * <p>How to run (a full GC gives exact used-heap numbers with the serial collector; G1 also works):
 * <pre>
 * mvn -pl benchmarks -am package -DskipTests
 * bin/bench heap     (or: java -XX:+UseSerialGC -cp benchmarks/target/benchmarks.jar dev.rnicsim.benchmarks.HeapPerPage)
 * </pre>
 */
public final class HeapPerPage
{
    private static final long REGION_BYTES = PinBenchmark.REGION_BYTES;
    private static final int PAGES = PinBenchmark.PAGES;
    private static final long PHYSICAL_BYTES = 4L << 30;

    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

    private HeapPerPage()
    {
    }

    /**
     * Runs the measurement and prints the results.
     *
     * @param args ignored.
     */
    public static void main(final String[] args)
    {
        // Warm up class loading and the code paths on a small region first, so their one-off costs are not counted.
        warmUp();

        final long beforeBaseline = usedHeapAfterGc();
        final long[] baseline = new long[PAGES];
        final long afterBaseline = usedHeapAfterGc();
        final double baselinePerPage = (afterBaseline - beforeBaseline) / (double)PAGES;

        final Host host4k = new Host(HostConfig.builder().physicalMemoryBytes(PHYSICAL_BYTES)
            .thpMode(ThpMode.NEVER).build());
        final UserProcess p4k = host4k.spawn("heap-4k").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        final long beforeMap = usedHeapAfterGc();
        final long va4k = p4k.mmapAnonymous(REGION_BYTES);
        final long afterMmap = usedHeapAfterGc();
        p4k.touch(va4k, REGION_BYTES, true);
        final long afterTouch = usedHeapAfterGc();
        check(p4k, va4k, PageSize.SIZE_4K);
        final PinnedPages pin4k = p4k.pinUserPages(va4k, REGION_BYTES, true, true);
        final long afterPin = usedHeapAfterGc();

        final Host host2m = new Host(HostConfig.builder().physicalMemoryBytes(PHYSICAL_BYTES)
            .thpMode(ThpMode.ALWAYS).build());
        final UserProcess p2m = host2m.spawn("heap-2m").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        final long before2m = usedHeapAfterGc();
        final long va2m = p2m.mmapAnonymous(REGION_BYTES);
        p2m.touch(va2m, REGION_BYTES, true);
        final long after2m = usedHeapAfterGc();
        check(p2m, va2m, PageSize.SIZE_2M);

        final double mappedPerPage = (afterTouch - beforeMap) / (double)PAGES;
        System.out.printf(Locale.ROOT, "region: %d MiB = %d pages of 4 KiB; host: %d GiB; JVM: %s %s, GC %s%n",
            REGION_BYTES >> 20, PAGES, PHYSICAL_BYTES >> 30, System.getProperty("java.vm.name"),
            System.getProperty("java.version"), gcNames());
        System.out.printf(Locale.ROOT, "mmap only (VMA, no page touched): %d bytes in all%n", afterMmap - beforeMap);
        System.out.printf(Locale.ROOT, "heap bytes per mapped 4 KiB page: %.1f (baseline long[] per page: %.1f)%n",
            mappedPerPage, baselinePerPage);
        System.out.printf(Locale.ROOT, "  ratio to baseline: %.2fx; target < 32: %s%n", mappedPerPage / baselinePerPage,
            mappedPerPage < 32 ? "MET" : "NOT MET");
        System.out.printf(Locale.ROOT, "heap bytes per 4 KiB page added by pinning all of it: %.2f (%d runs)%n",
            (afterPin - afterTouch) / (double)PAGES, pin4k.runs().size());
        System.out.printf(Locale.ROOT, "heap bytes per 4 KiB page mapped in 2 MiB THPs: %.2f%n",
            (after2m - before2m) / (double)PAGES);
        if (!gcNames().contains("MarkSweepCompact"))
        {
            System.out.println("note: not the serial collector; G1 counts a humongous array (the 2 MiB baseline)"
                + " in whole regions, so run with -XX:+UseSerialGC for exact numbers");
        }

        Reference.reachabilityFence(baseline);
        Reference.reachabilityFence(host4k);
        Reference.reachabilityFence(p4k);
        Reference.reachabilityFence(pin4k);
        Reference.reachabilityFence(host2m);
        Reference.reachabilityFence(p2m);
    }

    private static void warmUp()
    {
        final Host host = new Host(HostConfig.builder().physicalMemoryBytes(PHYSICAL_BYTES)
            .thpMode(ThpMode.NEVER).build());
        final UserProcess p = host.spawn("warm-up").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        final long va = p.mmapAnonymous(64L << 20);
        p.touch(va, 64L << 20, true);
        p.unpinUserPages(p.pinUserPages(va, 64L << 20, true, true));
        p.munmap(va, 64L << 20);
    }

    private static void check(final UserProcess p, final long va, final PageSize expected)
    {
        for (long off = 0; off < REGION_BYTES; off += PageSize.SIZE_2M.bytes())
        {
            if (p.mappedPageSize(va + off) != expected)
            {
                throw new IllegalStateException("offset " + off + " is mapped with " + p.mappedPageSize(va + off)
                    + ", expected " + expected);
            }
        }
    }

    private static long usedHeapAfterGc()
    {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++)
        {
            System.gc();
            used = Math.min(used, MEMORY.getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    private static String gcNames()
    {
        final StringBuilder sb = new StringBuilder();
        for (final var gc : ManagementFactory.getGarbageCollectorMXBeans())
        {
            sb.append(sb.isEmpty() ? "" : "+").append(gc.getName());
        }
        return sb.toString();
    }
}
