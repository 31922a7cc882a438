package dev.rnicsim.scenarios.plan;

import dev.rnicsim.pagetable.proc.SmapsEntry;
import dev.rnicsim.pagetable.proc.SmapsFormatException;
import dev.rnicsim.pagetable.proc.SmapsParser;
import java.io.IOException;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Turns a real {@code /proc/PID/smaps} into a {@link Workload}: one group per writable anonymous or hugetlb
 * mapping, count 1, size = the mapping's size, the backing read from the mapping. File-backed, read-only and the
 * kernel's special areas ({@code [stack]}, {@code [vsyscall]}, {@code [vvar]}, {@code [vdso]}, ...) are skipped.
 * Backing: hugetlb with a {@code KernelPageSize} of 1 GiB or more is {@code 1g}, other hugetlb {@code 2m}; an
 * area with {@code AnonHugePages} above 0 is {@code thp}; anything else {@code 4k}. Group names are
 * {@code 0xSTART-0xEND [pathname]}.
 */
public final class SmapsWorkload
{
    /** Pseudo names of areas the kernel maps itself, never registered by an application. */
    private static final Set<String> SPECIALS = Set.of("[vsyscall]", "[vvar]", "[vvar_vclock]", "[vdso]",
        "[uprobes]", "[sigpage]", "[vectors]");

    private static final long ONE_GIB_BYTES = 1L << 30;

    private SmapsWorkload()
    {
    }

    /**
     * @param source the file name, for messages.
     * @param text   the smaps text.
     * @param filter only mappings whose pathname (e.g. {@code [heap]}, {@code [anon:name]}, {@code ""}) this
     *               pattern finds something in; null for all.
     * @return the workload.
     * @throws IllegalArgumentException {@code source:line: expected ...} for malformed smaps, or when no mapping
     *                                  qualifies.
     */
    public static Workload parse(final String source, final String text, final Pattern filter)
    {
        final List<SmapsEntry> entries;
        try
        {
            entries = SmapsParser.parse(new StringReader(text));
        }
        catch (final SmapsFormatException e)
        {
            final String prefix = "line " + e.lineNumber() + ": ";
            final String message = e.getMessage().startsWith(prefix) ? e.getMessage().substring(prefix.length())
                : e.getMessage();
            throw new IllegalArgumentException(source + ":" + e.lineNumber() + ": " + message);
        }
        catch (final IOException e)
        {
            throw new IllegalArgumentException(source + ": " + e.getMessage());
        }
        final Workload w;
        try
        {
            w = fromEntries(entries, filter);
        }
        catch (final IllegalArgumentException e)
        {
            throw new IllegalArgumentException(source + ": " + e.getMessage(), e);
        }
        if (w.groups().isEmpty())
        {
            throw new IllegalArgumentException(source + ": expected at least one writable anonymous or hugetlb "
                + "mapping" + (filter == null ? "" : " whose name matches '" + filter.pattern() + "'") + ", found "
                + entries.size() + " mappings and none that qualifies");
        }
        return w;
    }

    /**
     * @param entries parsed smaps areas.
     * @param filter  see {@link #parse(String, String, Pattern)}; null for all.
     * @return one group per qualifying area, in input order (possibly none).
     */
    public static Workload fromEntries(final List<SmapsEntry> entries, final Pattern filter)
    {
        final List<Workload.Group> groups = new ArrayList<>();
        final List<SmapsEntry> taken = new ArrayList<>();
        for (final SmapsEntry e : entries)
        {
            if (!qualifies(e) || filter != null && !filter.matcher(e.pathname()).find())
            {
                continue;
            }
            if (e.lengthBytes() <= 0 || (e.startAddress() & 4095) != 0 || (e.endAddress() & 4095) != 0)
            {
                throw new IllegalArgumentException("mapping 0x" + Long.toHexString(e.startAddress()) + "-0x"
                    + Long.toHexString(e.endAddress()) + ": expected a non-empty range of whole 4 KiB pages");
            }
            // fs/proc/task_mmu.c show_smap: KernelPageSize is vma_kernel_pagesize, a power of two of at least the
            // base page, and a VMA spans whole pages of it (a hugetlb VMA is aligned to its huge page size)
            final long page = e.kernelPageSizeBytes();
            if (page < 4096 || Long.bitCount(page) != 1 || e.lengthBytes() % page != 0
                || e.startAddress() % page != 0)
            {
                throw new IllegalArgumentException("mapping 0x" + Long.toHexString(e.startAddress()) + "-0x"
                    + Long.toHexString(e.endAddress()) + ": KernelPageSize " + page / 1024 + " kB" + (page < 4096
                    || Long.bitCount(page) != 1 ? " is no page size (a power of two of 4 kB or more: 4, 16, 64, 2048, "
                    + "1048576 ...)" : " does not divide the mapping of " + e.lengthBytes() / 1024 + " kB at its "
                    + "address") + "; fix the capture's KernelPageSize");
            }
            final String name = "0x" + Long.toHexString(e.startAddress()) + "-0x" + Long.toHexString(e.endAddress())
                + (e.pathname().isEmpty() ? "" : " " + e.pathname());
            groups.add(new Workload.Group(name, 1, e.lengthBytes(), backing(e), "lw"));
            taken.add(e);
        }
        return new Workload(List.copyOf(groups.size() > Workload.MAX_GROUPS ? merged(taken) : groups));
    }

    /**
     * More qualifying mappings than a workload's {@link Workload#MAX_GROUPS} groups: adjacent mappings of one backing
     * become one group; when that is still too many, mappings of one size and backing become one group with a count.
     * Each merged group's name says what it merged and why.
     */
    static List<Workload.Group> merged(final List<SmapsEntry> taken)
    {
        final List<Workload.Group> adjacent = new ArrayList<>();
        int i = 0;
        while (i < taken.size())
        {
            final SmapsEntry first = taken.get(i);
            long end = first.endAddress();
            int j = i + 1;
            while (j < taken.size() && taken.get(j).startAddress() == end && backing(taken.get(j)).equals(
                backing(first)))
            {
                end = taken.get(j).endAddress();
                j++;
            }
            adjacent.add(new Workload.Group("0x" + Long.toHexString(first.startAddress()) + "-0x"
                + Long.toHexString(end) + (j - i == 1 ? "" : " (" + (j - i) + " adjacent mappings merged: the smaps "
                + "has " + taken.size() + " qualifying mappings, more than " + Workload.MAX_GROUPS + ")"), 1,
                end - first.startAddress(), backing(first), "lw"));
            i = j;
        }
        if (adjacent.size() <= Workload.MAX_GROUPS)
        {
            return adjacent;
        }
        final java.util.Map<String, long[]> bySize = new java.util.LinkedHashMap<>();
        for (final SmapsEntry e : taken)
        {
            bySize.computeIfAbsent(e.lengthBytes() + " " + backing(e), k -> new long[] {e.lengthBytes(), 0})[1]++;
        }
        if (bySize.size() > Workload.MAX_GROUPS)
        {
            throw new IllegalArgumentException(taken.size() + " qualifying mappings of " + bySize.size() + " sizes: "
                + "more than the " + Workload.MAX_GROUPS + " groups a plan takes even merged; narrow it with "
                + "--smaps-filter");
        }
        final List<Workload.Group> out = new ArrayList<>();
        for (final java.util.Map.Entry<String, long[]> e : bySize.entrySet())
        {
            final String backing = e.getKey().substring(e.getKey().indexOf(' ') + 1);
            out.add(new Workload.Group(e.getValue()[1] + " mappings of " + e.getValue()[0] + " bytes (" + backing
                + "), merged by size: the smaps has " + taken.size() + " qualifying mappings, more than "
                + Workload.MAX_GROUPS, e.getValue()[1], e.getValue()[0], backing, "lw"));
        }
        return out;
    }

    /**
     * @param e an smaps area.
     * @return true for a writable area that is hugetlb, or anonymous (no inode, no file path) and not one of the
     *         kernel's special areas or a stack.
     */
    public static boolean qualifies(final SmapsEntry e)
    {
        if (!e.writable())
        {
            return false;
        }
        if (hugetlb(e))
        {
            return true;
        }
        final String path = e.pathname();
        if (e.inode() != 0 || path.startsWith("/") || SPECIALS.contains(path) || path.startsWith("[stack"))
        {
            return false;
        }
        return path.isEmpty() || path.startsWith("[");
    }

    /**
     * @param e a qualifying area.
     * @return {@code 1g}, {@code 2m}, {@code thp} or {@code 4k}.
     */
    public static String backing(final SmapsEntry e)
    {
        if (hugetlb(e))
        {
            return e.kernelPageSizeBytes() >= ONE_GIB_BYTES ? "1g" : "2m";
        }
        return e.fieldKb("AnonHugePages") > 0 ? "thp" : "4k";
    }

    /** A hugetlb area of 2 MiB or 1 GiB pages (a larger base page, as arm64's 64 KiB, is not hugetlb). */
    private static boolean hugetlb(final SmapsEntry e)
    {
        final long page = e.kernelPageSizeBytes();
        return e.isHugetlb() && (page == 2L << 20 || page == ONE_GIB_BYTES
            || page <= 4096 && (e.vmFlags().contains("ht") || e.pathname().startsWith("/anon_hugepage")));
    }
}
