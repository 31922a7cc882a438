package dev.rnicsim.scenarios;

import dev.rnicsim.pagetable.Host;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.MapFlag;
import dev.rnicsim.pagetable.Madvice;
import dev.rnicsim.pagetable.PhysRun;
import dev.rnicsim.pagetable.PinnedPages;
import dev.rnicsim.pagetable.ProcFs;
import dev.rnicsim.pagetable.Prot;
import dev.rnicsim.pagetable.ThpMode;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.VmEvent;
import dev.rnicsim.pagetable.Zone;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Set;

/**
 * The built-in demo of the host memory model: boots a 16 GiB host with a 2 MiB hugetlb pool and a ZONE_MOVABLE,
 * starts a process, maps memory three ways (4 KiB pages, transparent huge pages, hugetlbfs), touches it, pins it
 * the way an RDMA registration does (long-term, charged to {@code pinned_vm} against RLIMIT_MEMLOCK), shows a
 * registration refused by the memlock limit, and prints the /proc views of the result.
 *
 * <p>Every number printed comes out of the model. Not thread safe.
 */
public final class HostDemo
{
    private static final long MIB = 1L << 20;

    private HostDemo()
    {
    }

    /**
     * Runs the demo and prints to standard output.
     *
     * @param args ignored.
     */
    public static void main(final String[] args)
    {
        run(new PrintStream(System.out, true, StandardCharsets.UTF_8));
    }

    /**
     * Runs the demo.
     *
     * @param out where to print.
     * @return the host at the end of the demo, for inspection.
     */
    public static Host run(final PrintStream out)
    {
        final Host host = new Host(HostConfig.builder()
            .physicalMemoryBytes(16L << 30)
            .movableZoneBytes(4L << 30)
            .hugepages2M(512)
            .swapBytes(2L << 30)
            .thpMode(ThpMode.MADVISE)
            .build());
        final UserProcess app = host.spawn("trainer").rlimitMemlockBytes(64 * MIB);
        out.println("# rnic-sim host demo: 16 GiB host, ZONE_MOVABLE 4 GiB, vm.nr_hugepages=512, THP madvise");
        out.println("# process 'trainer' (pid " + app.pid() + "), RLIMIT_MEMLOCK=64 MiB, no CAP_IPC_LOCK");
        out.println();

        final long small = app.mmapAnonymous(16 * MIB);
        app.madvise(small, 16 * MIB, Madvice.NOHUGEPAGE);
        app.write(small, "hello from a 4 KiB page".getBytes(StandardCharsets.UTF_8));
        app.touch(small, 16 * MIB, true);
        step(out, "mmap 16 MiB, MADV_NOHUGEPAGE, write and touch", small, app);

        final long thp = app.mmapAnonymous(32 * MIB);
        app.madvise(thp, 32 * MIB, Madvice.HUGEPAGE);
        app.touch(thp, 32 * MIB, true);
        step(out, "mmap 32 MiB, MADV_HUGEPAGE, touch", thp, app);

        final long huge = app.mmap(0, 8 * MIB, Prot.READ_WRITE,
            Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.HUGETLB));
        step(out, "mmap 8 MiB MAP_HUGETLB (4 pool pages reserved, none faulted yet)", huge, app);
        app.touch(huge, 8 * MIB, true);
        step(out, "touch the 8 MiB: the 4 reserved pool pages are faulted in", huge, app);

        out.println("## pin_user_pages(FOLL_WRITE | FOLL_LONGTERM), as ibv_reg_mr does");
        out.println("  (user pages come from ZONE_MOVABLE first; a long-term pin must move them to ZONE_NORMAL)");
        pinAndDescribe(out, host, app, "16 MiB of 4 KiB pages", small, 16 * MIB);
        pinAndDescribe(out, host, app, "32 MiB of THP", thp, 32 * MIB);
        pinAndDescribe(out, host, app, "8 MiB of hugetlbfs", huge, 8 * MIB);
        out.println("  pinned_vm = " + app.pinnedVmPages() + " pages of RLIMIT_MEMLOCK "
            + (app.rlimitMemlockBytes() >>> 12) + " pages");
        try
        {
            app.pinUserPages(thp, 32 * MIB, true, true);
        }
        catch (final KernelException e)
        {
            out.println("  pinning the 32 MiB again fails: " + e.getMessage());
        }
        out.println();

        out.println("## /proc/meminfo");
        out.print(ProcFs.meminfo(host));
        out.println();
        out.println("## /sys/kernel/mm/hugepages");
        out.print(ProcFs.hugepages(host));
        out.println();
        out.println("## /proc/" + app.pid() + "/status");
        out.print(ProcFs.status(app));
        out.println();
        out.println("## /proc/" + app.pid() + "/smaps");
        out.print(ProcFs.smaps(app));
        out.println();
        out.println("## /proc/vmstat (names starting with sim_ are the simulator's own, not Linux's)");
        out.print(ProcFs.vmstat(host));
        return host;
    }

    private static void step(final PrintStream out, final String what, final long va, final UserProcess p)
    {
        out.println("## " + what);
        out.println("  at 0x" + Long.toHexString(va) + ", first page "
            + (p.mappedPageSize(va) == null ? "not faulted in yet" : "mapped by a " + p.mappedPageSize(va).kb()
            + " kB leaf"));
        out.println();
    }

    private static void pinAndDescribe(final PrintStream out, final Host host, final UserProcess app,
        final String what, final long va, final long lengthBytes)
    {
        final Zone before = host.physicalMemory().zoneOf(app.translate(va) >>> 12);
        final long migratedBefore = host.counter(VmEvent.PGMIGRATE_LONGTERM_PIN);
        final PinnedPages pin = app.pinUserPages(va, lengthBytes, true, true);
        final Zone after = host.physicalMemory().zoneOf(app.translate(va) >>> 12);
        describe(out, what, pin);
        out.println("    first page: ZONE_" + before + " before, ZONE_" + after + " after; "
            + (host.counter(VmEvent.PGMIGRATE_LONGTERM_PIN) - migratedBefore) + " pages migrated for this pin");
    }

    private static void describe(final PrintStream out, final String what, final PinnedPages pin)
    {
        long largestRun = 0;
        for (final PhysRun run : pin.runs())
        {
            largestRun = Math.max(largestRun, run.lengthBytes());
        }
        out.println("  " + what + ": " + pin.pageCount() + " pages in " + pin.runs().size()
            + " physically contiguous run(s) (largest " + (largestRun >>> 10) + " kB, page size "
            + (pin.runs().get(0).pageSizeBytes() >>> 10) + " kB)");
    }
}
