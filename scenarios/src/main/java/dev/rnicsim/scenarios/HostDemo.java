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

import dev.rnicsim.mtt.AccessFlags;
import dev.rnicsim.mtt.AdapterConfig;
import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.mtt.DmaRun;
import dev.rnicsim.mtt.KeyCheck;
import dev.rnicsim.mtt.MKey;
import dev.rnicsim.mtt.MptConfig;
import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.mtt.MttCounters;
import dev.rnicsim.mtt.RegisteredMr;
import dev.rnicsim.mtt.VariantPolicy;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The built-in demo of the host memory model: boots a 16 GiB host with a 2 MiB hugetlb pool and a ZONE_MOVABLE,
 * starts a process, maps memory three ways (4 KiB pages, transparent huge pages, hugetlbfs), touches it, pins it
 * the way an RDMA registration does (long-term, charged to {@code pinned_vm} against RLIMIT_MEMLOCK), shows a
 * registration refused by the memlock limit, loads the pinned pages into an adapter's tables (page size, MTT
 * entries, keys, a stale key after deregistration), and prints the /proc views of the result.
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
        out.println("# rnic-sim host demo: 16 GiB host, ZONE_MOVABLE 4 GiB, vm.nr_hugepages=512, THP madvise");
        fragmentZoneNormal(out, host);
        final UserProcess app = host.spawn("trainer").rlimitMemlockBytes(64 * MIB);
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
        final PinnedPages pinSmall = pinAndDescribe(out, host, app, "16 MiB of 4 KiB pages", small, 16 * MIB);
        final PinnedPages pinThp = pinAndDescribe(out, host, app, "32 MiB of THP", thp, 32 * MIB);
        final PinnedPages pinHuge = pinAndDescribe(out, host, app, "8 MiB of hugetlbfs", huge, 8 * MIB);
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

        registerOnAdapter(out, List.of(pinSmall, pinThp, pinHuge), List.of("16 MiB of 4 KiB pages",
            "32 MiB of THP", "8 MiB of hugetlbfs"));
        // ib_umem_release: deregistration unpins the buffer and gives its pages back to pinned_vm.
        app.unpinUserPages(pinSmall);
        out.println("  ... and the driver unpins the 16 MiB (ib_umem_release): pinned_vm = " + app.pinnedVmPages()
            + " pages");
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

    /**
     * A host that has been up for a while has scattered free pages. Another process pins 64 MiB long-term (which
     * moves it into ZONE_NORMAL), unpins it, and gives back every other page.
     */
    private static void fragmentZoneNormal(final PrintStream out, final Host host)
    {
        final UserProcess other = host.spawn("uptime").capIpcLock(true);
        final long va = other.mmapAnonymous(64 * MIB);
        other.madvise(va, 64 * MIB, Madvice.NOHUGEPAGE);
        other.touch(va, 64 * MIB, true);
        other.unpinUserPages(other.pinUserPages(va, 64 * MIB, true, true));
        for (long page = va; page < va + 64 * MIB; page += 2 * 4096)
        {
            other.madvise(page, 4096, Madvice.DONTNEED);
        }
        out.println("# uptime: process 'uptime' pinned 64 MiB long-term, unpinned it and freed every other page;");
        out.println("#   ZONE_NORMAL now has " + host.physicalMemory().buddyInfo(Zone.NORMAL).get(0)
            + " free single 4 KiB pages scattered among used ones (/proc/buddyinfo order 0)");
    }

    private static void step(final PrintStream out, final String what, final long va, final UserProcess p)
    {
        out.println("## " + what);
        out.println("  at 0x" + Long.toHexString(va) + ", first page "
            + (p.mappedPageSize(va) == null ? "not faulted in yet" : "mapped by a " + p.mappedPageSize(va).kb()
            + " kB leaf"));
        out.println();
    }

    /**
     * The table half of ibv_reg_mr on an adapter shaped like a ConnectX-3 (mlx4): page_size_cap 0xfffffe00, a buddy
     * MTT of 2^20 segments of 8 entries, max_mr 524032, generation-counted keys. The translation-cache geometry is
     * an assumption (no published figure): 4096 entries, 8 ways.
     */
    private static void registerOnAdapter(final PrintStream out, final List<PinnedPages> pins,
        final List<String> names)
    {
        final AdapterTables nic = new AdapterTables(new AdapterConfig(MttConfig.buddy(20, 3),
            MptConfig.of(524032, VariantPolicy.GENERATION), 0xfffffe00L, 4096, 8));
        out.println("## ibv_reg_mr, the adapter's half: MR page size, MTT entries, key (ConnectX-3-like tables)");
        out.println("  (the MR page size is the MTT block size: the largest size the buffer's physical layout allows)");
        final List<RegisteredMr> mrs = new ArrayList<>();
        for (int i = 0; i < pins.size(); i++)
        {
            final PinnedPages pin = pins.get(i);
            final List<DmaRun> runs = pin.runs().stream().map(r -> new DmaRun(r.physAddr(), r.lengthBytes())).toList();
            final RegisteredMr mr = nic.register(1, runs, pin.startAddress(), pin.lengthBytes(), pin.startAddress(),
                AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ | AccessFlags.REMOTE_WRITE);
            mrs.add(mr);
            out.println("  " + names.get(i) + ": page size " + (mr.pageSizeBytes() >>> 10) + " kB, MTT entries "
                + mr.mtt().entries() + " (" + mr.mtt().reservedEntries() + " reserved by the buddy), lkey=rkey="
                + MKey.toHex(mr.key()));
        }
        final PinnedPages first = pins.get(0);
        final long dma = nic.translate(mrs.get(0).key(), 1, AccessFlags.REMOTE_READ, first.startAddress(), 64);
        out.println("  RDMA READ of 64 bytes at 0x" + Long.toHexString(first.startAddress())
            + " with the first rkey: DMA to 0x" + Long.toHexString(dma));
        final int oldKey = mrs.get(0).key();
        nic.deregister(oldKey);
        out.println("  after ibv_dereg_mr the same rkey gives: "
            + KeyCheck.ofTranslation(nic.translate(oldKey, 1, AccessFlags.REMOTE_READ, first.startAddress(), 64)));
        final MttCounters c = nic.mtt().counters();
        out.println("  MTT: " + c.entriesRequested() + " entries written for the live MRs, " + c.entriesInUse()
            + " reserved (buddy rounding) of " + c.capacityEntries() + "; translation cache: " + nic.cache().hits()
            + " hits, " + nic.cache().misses() + " misses (the stale-key probe is one), "
            + nic.cache().invalidations() + " invalidation(s) dropping " + nic.cache().entriesDropped() + " entries");
    }

    private static PinnedPages pinAndDescribe(final PrintStream out, final Host host, final UserProcess app,
        final String what, final long va, final long lengthBytes)
    {
        final Zone before = host.physicalMemory().zoneOf(app.translate(va) >>> 12);
        final long migratedBefore = host.counter(VmEvent.PGMIGRATE_LONGTERM_PIN);
        final PinnedPages pin = app.pinUserPages(va, lengthBytes, true, true);
        final Zone after = host.physicalMemory().zoneOf(app.translate(va) >>> 12);
        describe(out, what, pin);
        out.println("    first page: ZONE_" + before + " before, ZONE_" + after + " after; "
            + (host.counter(VmEvent.PGMIGRATE_LONGTERM_PIN) - migratedBefore) + " pages migrated for this pin");
        return pin;
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
