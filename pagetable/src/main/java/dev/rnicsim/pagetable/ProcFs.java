package dev.rnicsim.pagetable;

import java.util.Locale;

/**
 * Text views of a host and its processes in the formats of Linux's /proc and /sys, so that what the model does
 * reads like what a user sees on a real machine: /proc/meminfo, /proc/vmstat, /proc/buddyinfo,
 * /sys/kernel/mm/hugepages, /proc/PID/status and /proc/PID/smaps (formats of fs/proc/meminfo.c,
 * fs/proc/array.c, fs/proc/task_mmu.c and proc(5)).
 *
 * <p>Stateless; reads the host, which is not thread safe.
 */
public final class ProcFs
{
    private ProcFs()
    {
    }

    /** Per-VMA statistics in kB, the numbers of an smaps entry. */
    record VmaUsage(long rssKb, long pssKb, long sharedKb, long privateKb, long anonymousKb, long anonHugeKb,
                    long swapKb, long hugetlbPrivateKb, long hugetlbSharedKb)
    {
    }

    /**
     * @param host a host.
     * @return the /proc/meminfo view: MemTotal, MemFree, AnonPages, Mlocked, SwapTotal, SwapFree, AnonHugePages,
     * HugePages_Total, HugePages_Free, HugePages_Rsvd, HugePages_Surp, Hugepagesize, Hugetlb.
     */
    public static String meminfo(final Host host)
    {
        final PhysicalMemory phys = host.physicalMemory();
        final int thpOrder = host.config().basePage().thpSize().order();
        final long[] anon = new long[2];
        phys.frames().forEachUsed(pfn ->
        {
            final byte kind = phys.frames().kind(pfn);
            if (kind == FrameTable.KIND_ANON)
            {
                anon[0]++;
                if (phys.frames().order(pfn) == thpOrder)
                {
                    anon[1]++;
                }
            }
        });
        long mlockedKb = 0;
        for (final UserProcess p : host.processes())
        {
            for (final Vma v : p.vmas())
            {
                if (v.has(Vma.VM_LOCKED))
                {
                    mlockedKb += usage(p, v).rssKb();
                }
            }
        }
        final SwapSpace swap = phys.swap();
        // HugePages_* and Hugepagesize are the default hstate's (the PMD size); Hugetlb counts every pool
        // (mm/hugetlb.c hugetlb_report_meminfo).
        final PageSize defaultSize = host.config().basePage().defaultHugetlbSize();
        final HugetlbPool pool2M = phys.pool(defaultSize);
        long hugetlbKb = 0;
        for (final HugetlbPool pool : phys.pools())
        {
            hugetlbKb += pool.totalPages() * pool.pageSize().kb();
        }
        final StringBuilder out = new StringBuilder();
        kb(out, "MemTotal", phys.totalFrames() * 4);
        kb(out, "MemFree", phys.freeFrames() * 4);
        kb(out, "AnonPages", anon[0] * 4);
        kb(out, "Mlocked", mlockedKb);
        kb(out, "SwapTotal", swap.totalSlots() * 4);
        kb(out, "SwapFree", (swap.totalSlots() - swap.usedSlots()) * 4);
        kb(out, "AnonHugePages", anon[1] * 4);
        out.append(String.format(Locale.ROOT, "HugePages_Total: %5d\n", pool2M.totalPages()));
        out.append(String.format(Locale.ROOT, "HugePages_Free:  %5d\n", pool2M.freePages()));
        out.append(String.format(Locale.ROOT, "HugePages_Rsvd:  %5d\n", pool2M.reservedPages()));
        out.append(String.format(Locale.ROOT, "HugePages_Surp:  %5d\n", 0));
        kb(out, "Hugepagesize", defaultSize.kb());
        kb(out, "Hugetlb", hugetlbKb);
        return out.toString();
    }

    /**
     * @param host a host.
     * @return the files of /sys/kernel/mm/hugepages/hugepages-SIZEkB/ as {@code path: value} lines, one directory
     * per hstate: the host's hugetlb sizes (a 4 KiB host shows x86-64's 2 MiB and 1 GiB, and arm64's 64 KiB and
     * 32 MiB only when it has pages of them).
     */
    public static String hugepages(final Host host)
    {
        final StringBuilder out = new StringBuilder();
        for (final PageSize size : host.config().basePage().hugetlbSizes())
        {
            if (host.config().basePage() == BasePage.SIZE_4K && size != PageSize.SIZE_2M && size != PageSize.SIZE_1G
                && host.config().hugepages(size) == 0)
            {
                continue;
            }
            final HugetlbPool pool = host.physicalMemory().pool(size);
            final String dir = "/sys/kernel/mm/hugepages/hugepages-" + size.kb() + "kB/";
            out.append(dir).append("nr_hugepages: ").append(pool.totalPages()).append('\n');
            out.append(dir).append("free_hugepages: ").append(pool.freePages()).append('\n');
            out.append(dir).append("resv_hugepages: ").append(pool.reservedPages()).append('\n');
        }
        return out.toString();
    }

    /**
     * @param host a host.
     * @return /proc/vmstat-style lines, one counter a line: {@code name value}.
     */
    public static String vmstat(final Host host)
    {
        final StringBuilder out = new StringBuilder();
        for (final VmEvent e : VmEvent.values())
        {
            out.append(e.procName()).append(' ').append(host.counter(e)).append('\n');
        }
        return out.toString();
    }

    /**
     * @param host a host.
     * @return /proc/buddyinfo lines: free blocks per order, orders 0 to 18.
     */
    public static String buddyinfo(final Host host)
    {
        final StringBuilder out = new StringBuilder();
        for (final Zone zone : Zone.values())
        {
            if (host.physicalMemory().zoneFrames(zone) == 0)
            {
                continue;
            }
            out.append(String.format(Locale.ROOT, "Node 0, zone %8s", zone.name().charAt(0)
                + zone.name().substring(1).toLowerCase(Locale.ROOT)));
            for (final int count : host.physicalMemory().buddyInfo(zone))
            {
                out.append(String.format(Locale.ROOT, " %6d", count));
            }
            out.append('\n');
        }
        return out.toString();
    }

    /**
     * @param process a process.
     * @return the /proc/PID/status lines about memory: Name, Pid, VmSize, VmLck, VmPin, VmRSS, RssAnon, RssFile,
     * VmPTE, VmSwap, HugetlbPages.
     */
    public static String status(final UserProcess process)
    {
        long sizeKb = 0;
        long anonKb = 0;
        long fileKb = 0;
        long swapKb = 0;
        long hugetlbKb = 0;
        for (final Vma v : process.vmas())
        {
            final VmaUsage u = usage(process, v);
            sizeKb += v.lengthBytes() / 1024;
            swapKb += u.swapKb();
            hugetlbKb += u.hugetlbPrivateKb() + u.hugetlbSharedKb();
            if (v.kind() == VmaKind.FILE)
            {
                fileKb += u.rssKb();
            }
            else
            {
                anonKb += u.rssKb();
            }
        }
        final StringBuilder out = new StringBuilder();
        out.append("Name:\t").append(process.name()).append('\n');
        out.append("Pid:\t").append(process.pid()).append('\n');
        statusKb(out, "VmSize", sizeKb);
        final long pageKb = process.host().config().basePage().kb();
        statusKb(out, "VmLck", process.lockedVmPages() * pageKb);
        statusKb(out, "VmPin", process.pinnedVmPages() * pageKb);
        statusKb(out, "VmRSS", anonKb + fileKb);
        statusKb(out, "RssAnon", anonKb);
        statusKb(out, "RssFile", fileKb);
        statusKb(out, "VmPTE", process.pageTable().tableBytes() / 1024);
        statusKb(out, "VmSwap", swapKb);
        statusKb(out, "HugetlbPages", hugetlbKb);
        return out.toString();
    }

    /**
     * @param process a process.
     * @return /proc/PID/smaps: per VMA a header line and Size, KernelPageSize, MMUPageSize, Rss, Pss,
     * Shared_Dirty, Private_Dirty, Anonymous, AnonHugePages, Shared_Hugetlb, Private_Hugetlb, Swap, Locked,
     * THPeligible and VmFlags.
     */
    public static String smaps(final UserProcess process)
    {
        final StringBuilder out = new StringBuilder();
        for (final Vma v : process.vmas())
        {
            final VmaUsage u = usage(process, v);
            final String header = String.format(Locale.ROOT, "%08x-%08x %s %08x %s %d ", v.startAddress(),
                v.endAddress(), v.permissions(), v.offsetBytes(), "00:00", 0);
            out.append(v.name().isEmpty() ? header.stripTrailing() : String.format(Locale.ROOT, "%-73s%s",
                header, v.name())).append('\n');
            // KernelPageSize and MMUPageSize: the hugetlb page size, else PAGE_SIZE (fs/proc/task_mmu.c).
            final long pageKb = v.kind() == VmaKind.HUGETLB ? v.hugePageSize().kb()
                : process.host().config().basePage().kb();
            kb(out, "Size", v.lengthBytes() / 1024);
            kb(out, "KernelPageSize", pageKb);
            kb(out, "MMUPageSize", pageKb);
            kb(out, "Rss", u.rssKb());
            kb(out, "Pss", u.pssKb());
            kb(out, "Shared_Dirty", u.sharedKb());
            kb(out, "Private_Dirty", u.privateKb());
            kb(out, "Anonymous", u.anonymousKb());
            kb(out, "AnonHugePages", u.anonHugeKb());
            kb(out, "Shared_Hugetlb", u.hugetlbSharedKb());
            kb(out, "Private_Hugetlb", u.hugetlbPrivateKb());
            kb(out, "Swap", u.swapKb());
            kb(out, "Locked", v.has(Vma.VM_LOCKED) ? u.pssKb() : 0);
            out.append(String.format(Locale.ROOT, "THPeligible:    %d\n", thpEligible(process, v) ? 1 : 0));
            out.append("VmFlags:").append(vmFlags(v)).append(" \n");
        }
        return out.toString();
    }

    /** Walks the page table of one VMA and adds up its pages, as {@code smaps_pte_range} does. */
    static VmaUsage usage(final UserProcess process, final Vma v)
    {
        final FrameTable frames = process.host().physicalMemory().frames();
        final long[] kbs = new long[9];
        process.pageTable().forEachLeaf(v.startAddress(), v.endAddress(), (va, entry, size) ->
        {
            if ((entry & PageTable.SWAP) != 0)
            {
                kbs[6] += 4;
                return;
            }
            if (!PageTable.present(entry))
            {
                return;
            }
            final long pfn = PageTable.pfn(entry);
            if (pfn == process.host().physicalMemory().zeroPfn())
            {
                return;
            }
            final int mappers = Math.max(1, frames.mapCount(pfn));
            final long kb = size.kb();
            if (v.kind() == VmaKind.HUGETLB)
            {
                kbs[mappers > 1 ? 8 : 7] += kb;
                return;
            }
            kbs[0] += kb;
            kbs[1] += kb / mappers;
            kbs[mappers > 1 ? 2 : 3] += kb;
            if (v.kind() == VmaKind.ANONYMOUS)
            {
                kbs[4] += kb;
                if (size == PageSize.SIZE_2M)
                {
                    kbs[5] += kb;
                }
            }
        });
        return new VmaUsage(kbs[0], kbs[1], kbs[2], kbs[3], kbs[4], kbs[5], kbs[6], kbs[7], kbs[8]);
    }

    private static boolean thpEligible(final UserProcess process, final Vma v)
    {
        if (v.kind() != VmaKind.ANONYMOUS || v.has(Vma.VM_NOHUGEPAGE)
            || v.lengthBytes() < process.host().config().basePage().thpSize().bytes())
        {
            return false;
        }
        return switch (process.host().config().thpMode())
        {
            case ALWAYS -> true;
            case MADVISE -> v.has(Vma.VM_HUGEPAGE);
            case NEVER -> false;
        };
    }

    private static String vmFlags(final Vma v)
    {
        final StringBuilder f = new StringBuilder();
        if (v.readable())
        {
            f.append(" rd");
        }
        if (v.writable())
        {
            f.append(" wr");
        }
        if (v.executable())
        {
            f.append(" ex");
        }
        if (v.has(Vma.VM_SHARED))
        {
            f.append(" sh");
        }
        f.append(" mr mw me");
        if (v.has(Vma.VM_LOCKED))
        {
            f.append(" lo");
        }
        if (v.has(Vma.VM_DONTCOPY))
        {
            f.append(" dc");
        }
        if (v.kind() == VmaKind.ANONYMOUS && v.writable() && !v.has(Vma.VM_SHARED))
        {
            f.append(" ac");
        }
        if (v.kind() == VmaKind.HUGETLB)
        {
            f.append(" de ht");
        }
        if (v.has(Vma.VM_HUGEPAGE))
        {
            f.append(" hg");
        }
        if (v.has(Vma.VM_NOHUGEPAGE))
        {
            f.append(" nh");
        }
        return f.toString();
    }

    private static void kb(final StringBuilder out, final String name, final long kb)
    {
        out.append(String.format(Locale.ROOT, "%-16s%8d kB\n", name + ":", kb));
    }

    private static void statusKb(final StringBuilder out, final String name, final long kb)
    {
        out.append(String.format(Locale.ROOT, "%s:\t%8d kB\n", name, kb));
    }
}
