package dev.rnicsim.pagetable;

import dev.rnicsim.pagetable.proc.SmapsEntry;
import dev.rnicsim.pagetable.proc.SmapsParser;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Rebuilds a real process in the model from its /proc/PID/smaps (or /proc/PID/maps): the same VMAs (ranges,
 * permissions, anonymous / file / hugetlb backing, VmFlags such as {@code hg}, {@code nh}, {@code dc},
 * {@code lo}) and, on request, as many resident pages as the capture shows: {@code AnonHugePages} as 2 MiB
 * folios, the rest of {@code Rss} as 4 KiB pages, {@code Private_Hugetlb + Shared_Hugetlb} as pool pages. Which
 * pages of a VMA were resident is not in the file; the importer faults in the first ones. Registration can then
 * be planned for the captured process.
 *
 * <p>Not reproduced, and said so in the report: areas outside the user address range ({@code [vsyscall]}),
 * swapped-out pages, file contents (file pages read as zeros), sharing between processes.
 *
 * <p>Stateless; works on a process, which is not thread safe.
 */
public final class SmapsImporter
{
    private SmapsImporter()
    {
    }

    /**
     * What an import did.
     *
     * @param vmasImported      VMAs created.
     * @param notes             areas skipped and details not reproduced, one line each.
     * @param residentPages     4 KiB pages faulted in (hugetlb pages counted in 4 KiB units).
     * @param thpFolios         2 MiB transparent huge pages faulted in.
     * @param hugetlbPagesNeeded per hugetlb VMA page size, pool pages the capture's hugetlb VMAs need: 2 MiB then
     *                          1 GiB.
     */
    public record Report(int vmasImported, List<String> notes, long residentPages, long thpFolios,
                         long[] hugetlbPagesNeeded)
    {
    }

    /**
     * Imports a smaps or maps file into an empty process.
     *
     * @param process  the process to fill; it must have no VMA yet.
     * @param file     a /proc/PID/smaps or /proc/PID/maps file.
     * @param populate fault in the resident pages the file reports.
     * @return what was imported.
     * @throws IOException     when the file cannot be read.
     * @throws KernelException as {@link #importEntries}.
     */
    public static Report importFile(final UserProcess process, final Path file, final boolean populate)
        throws IOException
    {
        return importEntries(process, SmapsParser.parse(file), populate);
    }

    /**
     * Imports parsed smaps entries into an empty process. All VMAs are checked before any is created, so a
     * failed import leaves the process empty.
     *
     * @param process  the process to fill; it must have no VMA yet.
     * @param entries  the parsed file.
     * @param populate fault in the resident pages the file reports.
     * @return what was imported.
     * @throws KernelException EINVAL when the process already has VMAs, or an area is not page aligned, overlaps
     *                         another or lies below {@code vm.mmap_min_addr}; ENOMEM when the areas exceed {@code vm.max_map_count}, the hugetlb pools are
     *                         too small for the hugetlb areas, or memory runs out while populating.
     */
    public static Report importEntries(final UserProcess process, final List<SmapsEntry> entries,
        final boolean populate)
    {
        java.util.Objects.requireNonNull(entries, "entries");
        if (process.vmaCount() != 0)
        {
            throw new KernelException(Errno.EINVAL, "import needs an empty process; pid " + process.pid() + " has "
                + process.vmaCount() + " VMAs"
                + "; import into a freshly created process");
        }
        final List<String> notes = new ArrayList<>();
        final List<Vma> vmas = new ArrayList<>();
        final List<SmapsEntry> kept = new ArrayList<>();
        final java.util.Map<PageSize, Long> needed = new java.util.EnumMap<>(PageSize.class);
        final BasePage base = process.host().config().basePage();
        for (final SmapsEntry e : entries)
        {
            if (Long.compareUnsigned(e.endAddress(), UserProcess.TASK_SIZE) > 0)
            {
                notes.add("skipped " + e.pathname() + " at 0x" + Long.toHexString(e.startAddress())
                    + ": above the user address range");
                continue;
            }
            final Vma v = toVma(e, base);
            if (v.kind() == VmaKind.HUGETLB)
            {
                needed.merge(v.hugePageSize(), v.lengthBytes() / v.hugePageSize().bytes(), Long::sum);
            }
            if (e.fieldKb("Swap") > 0)
            {
                notes.add(e.fieldKb("Swap") + " kB swapped out at 0x" + Long.toHexString(e.startAddress())
                    + " not reproduced");
            }
            vmas.add(v);
            kept.add(e);
        }
        final long[] hugetlbNeeded = {needed.getOrDefault(PageSize.SIZE_2M, 0L), needed.getOrDefault(PageSize.SIZE_1G, 0L)};
        checkAll(process, vmas, needed);
        for (final Vma v : vmas)
        {
            process.mappings.addImportedVma(v);
        }
        long resident = 0;
        long thp = 0;
        if (populate)
        {
            try
            {
                for (int i = 0; i < vmas.size(); i++)
                {
                    final long[] got = populate(process, vmas.get(i), kept.get(i), notes);
                    resident += got[0];
                    thp += got[1];
                }
            }
            catch (final KernelException ex)
            {
                process.mappings.unmapAll();
                throw ex;
            }
        }
        return new Report(vmas.size(), List.copyOf(notes), resident, thp, hugetlbNeeded);
    }

    private static void checkAll(final UserProcess process, final List<Vma> vmas,
        final java.util.Map<PageSize, Long> hugetlbNeeded)
    {
        final Host host = process.host();
        if (vmas.size() > host.config().maxMapCount())
        {
            throw new KernelException(Errno.ENOMEM, vmas.size() + " areas > vm.max_map_count="
                + host.config().maxMapCount()
                + "; raise vm.max_map_count or import a smaller capture");
        }
        long previousEnd = host.config().mmapMinAddrBytes();
        for (final Vma v : vmas)
        {
            final long align = v.kind() == VmaKind.HUGETLB ? v.hugePageSize().bytes()
                : host.config().basePage().bytes();
            if ((v.startAddress() & (align - 1)) != 0 || (v.endAddress() & (align - 1)) != 0
                || v.startAddress() < previousEnd)
            {
                throw new KernelException(Errno.EINVAL, "area 0x" + Long.toHexString(v.startAddress()) + "-0x"
                    + Long.toHexString(v.endAddress()) + " is not aligned to " + align
                    + " bytes, overlaps the area before it, or lies below vm.mmap_min_addr="
                + host.config().mmapMinAddrBytes()
                    + "; fix the capture's areas (sorted, aligned, disjoint)");
            }
            previousEnd = v.endAddress();
        }
        for (final java.util.Map.Entry<PageSize, Long> need : hugetlbNeeded.entrySet())
        {
            final HugetlbPool pool = host.physicalMemory().pool(need.getKey());
            if (need.getValue() > pool.availablePages())
            {
                throw new KernelException(Errno.ENOMEM, "the capture's hugetlb areas need " + need.getValue()
                    + " pages of " + need.getKey().kb() + " kB; the host pool has " + pool.availablePages()
                    + " unreserved free (boot the host with more hugepages)");
            }
        }
    }

    private static Vma toVma(final SmapsEntry e, final BasePage base)
    {
        final int prot = (e.readable() ? Prot.READ.bit() : 0) | (e.writable() ? Prot.WRITE.bit() : 0)
            | (e.executable() ? Prot.EXEC.bit() : 0);
        int flags = e.shared() ? Vma.VM_SHARED : 0;
        for (final String flag : e.vmFlags())
        {
            flags |= switch (flag)
            {
                case "hg" -> Vma.VM_HUGEPAGE;
                case "nh" -> Vma.VM_NOHUGEPAGE;
                case "dc" -> Vma.VM_DONTCOPY;
                case "lo" -> Vma.VM_LOCKED;
                default -> 0;
            };
        }
        if (e.isHugetlb())
        {
            // A maps file has no KernelPageSize: hugetlb areas then use the host's default huge page size (its PMD).
            final long kernelPage = e.kernelPageSizeBytes();
            final PageSize size = kernelPage <= base.bytes() ? base.defaultHugetlbSize()
                : base.hugetlbSizes().stream().filter(z -> z.bytes() == kernelPage).findFirst().orElseThrow(() ->
                    new KernelException(Errno.EINVAL, "hugetlb area at 0x" + Long.toHexString(e.startAddress())
                        + " has KernelPageSize " + kernelPage / 1024 + " kB; a host of " + base.kb() + " KiB pages has "
                        + "only hugetlb pages of " + base.hugetlbSizes().stream().map(z -> z.kb() + " kB").toList()
                        + " (x86-64: 2048 or 1048576 kB); fix the capture's KernelPageSize"));
            return new Vma(e.startAddress(), e.endAddress(), prot, flags | Vma.VM_RESV_OWNER, VmaKind.HUGETLB,
                size, e.pathname(), 0);
        }
        final boolean file = e.inode() != 0 || (e.pathname().startsWith("/") && !e.pathname().startsWith("/anon"));
        return new Vma(e.startAddress(), e.endAddress(), prot, flags, file ? VmaKind.FILE : VmaKind.ANONYMOUS,
            PageSize.SIZE_4K, e.pathname(), file ? e.offsetBytes() : 0);
    }

    /** @return {residentPages, thpFolios} faulted in for one area. */
    private static long[] populate(final UserProcess process, final Vma v, final SmapsEntry e,
        final List<String> notes)
    {
        if (!v.readable() && !v.writable())
        {
            return new long[] {0, 0};
        }
        if (v.kind() == VmaKind.HUGETLB)
        {
            final long bytes = Math.min(v.lengthBytes(),
                (e.fieldKb("Private_Hugetlb") + e.fieldKb("Shared_Hugetlb")) * 1024);
            final long end = v.startAddress() + bytes / v.hugePageSize().bytes() * v.hugePageSize().bytes();
            return new long[] {end > v.startAddress() ? process.faults.populateForImport(v.startAddress(), end, false) : 0,
                0};
        }
        final PageSize thpSize = process.host().config().basePage().thpSize();
        final long hugeBytes = thpSize.bytes();
        final long pageBytes = process.host().config().basePage().bytes();
        final long thpWanted = v.kind() == VmaKind.ANONYMOUS ? e.fieldKb("AnonHugePages") * 1024 / hugeBytes : 0;
        long thpDone = 0;
        long resident = 0;
        long va = (v.startAddress() + hugeBytes - 1) & ~(hugeBytes - 1);
        while (thpDone < thpWanted && va + hugeBytes <= v.endAddress())
        {
            final long got = process.faults.populateForImport(va, va + hugeBytes, true);
            resident += got;
            if (process.mappedPageSize(va) == thpSize)
            {
                thpDone++;
            }
            va += hugeBytes;
        }
        if (thpDone < thpWanted)
        {
            notes.add("0x" + Long.toHexString(v.startAddress()) + ": " + thpDone + " of " + thpWanted
                + " AnonHugePages folios reproduced (no aligned room or no free " + thpSize.word() + " block)");
        }
        long smallLeft = Math.max(0, e.fieldKb("Rss") * 1024 - thpDone * hugeBytes) >>> PhysicalMemory.FRAME_SHIFT;
        // Resident memory comes back a base page at a time (PAGE_SIZE is what a fault maps).
        for (long page = v.startAddress(); page < v.endAddress() && smallLeft > 0; page += pageBytes)
        {
            if (process.translate(page) >= 0)
            {
                continue;
            }
            resident += process.faults.populateForImport(page, page + pageBytes, false);
            smallLeft -= pageBytes >>> PhysicalMemory.FRAME_SHIFT;
        }
        return new long[] {resident, thpDone};
    }
}
