package dev.rnicsim.ibverbs;

import dev.rnicsim.pagetable.MapFlag;
import dev.rnicsim.pagetable.Prot;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.Vma;
import dev.rnicsim.verbs.VerbsException;
import java.io.IOException;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The real process's mappings copied into its modelled twin before the model walks them (at {@code ibv_reg_mr}, a
 * rereg of the translation, an ODP fault): the twin's page walk then finds what the kernel's would. Stateless.
 */
final class ProcessMirror
{
    private static final long PAGE_BYTES = 4096;

    private ProcessMirror()
    {
    }

    /**
     * Mirrors the real process's mappings over [addr, addr + length) into its modelled twin, so that the model's
     * page walk finds what the real one would: mapped pages with the real protection; a hole stays a hole, and the
     * model answers EFAULT for it as ib_umem_get does. Only the part below TASK_SIZE is mirrored: no process maps
     * anything above it, and the model's registration answers EFAULT for a range that leaves user space
     * (pin_user_pages_fast: {@code access_ok} fails, mm/gup.c), as the kernel does.
     */
    static void mirror(final UserProcess process, final int pid, final long addr, final long length)
    {
        if (length <= 0 || Long.compareUnsigned(addr + length, addr) < 0)
        {
            // the model refuses these with the verb's own errno and words: EINVAL for no byte or a range past 2^64;
            // a range past the end of user space is mirrored up to TASK_SIZE only, and the model answers with
            // ib_umem_get's checks (npages above UINT_MAX: EINVAL; else the page walk's EFAULT)
            return;
        }
        final long start = addr & -PAGE_BYTES;
        final long end = Long.compareUnsigned(addr + length, UserProcess.TASK_SIZE) >= 0 ? UserProcess.TASK_SIZE
            : (addr + length + PAGE_BYTES - 1) & -PAGE_BYTES;
        if (Long.compareUnsigned(start, end) >= 0)
        {
            return; // wholly outside user space: nothing to mirror, the model answers EFAULT
        }
        final List<ProcessMemory.Mapping> maps;
        try
        {
            maps = ProcessMemory.maps(pid);
        }
        catch (final IOException e)
        {
            throw new VerbsException("ibv_reg_mr", 14, "cannot read /proc/" + pid + "/maps: " + e.getMessage());
        }
        // a hole of the real process is a hole of its twin: what an earlier registration mirrored there and the
        // program has since unmapped goes, so the model's page walk fails with EFAULT as ib_umem_get does
        long covered = start;
        for (final ProcessMemory.Mapping m : maps)
        {
            if (m.end() <= covered || m.start() >= end)
            {
                continue;
            }
            if (m.start() > covered)
            {
                process.munmap(covered, Math.min(m.start(), end) - covered);
            }
            covered = Math.max(covered, m.end());
        }
        if (covered < end)
        {
            process.munmap(covered, end - covered);
        }
        List<ProcessMemory.Mapping> noReserve = null;
        for (final ProcessMemory.Mapping m : maps)
        {
            final long a = Math.max(m.start(), start);
            final long b = Math.min(m.end(), end);
            if (a >= b || !m.read())
            {
                continue;
            }
            final Set<Prot> prot = m.write() ? EnumSet.of(Prot.READ, Prot.WRITE) : EnumSet.of(Prot.READ);
            if (noReserve == null && m.write() && process.vmas().stream().noneMatch(v -> v.startAddress() <= a
                && v.endAddress() >= b))
            {
                noReserve = noReserveMappings(pid);
            }
            final boolean unaccounted = noReserve != null && noReserve.stream().anyMatch(n -> n.start() <= m.start()
                && n.end() >= m.end());
            long at = a;
            for (final Vma v : process.vmas())
            {
                if (v.endAddress() <= at || v.startAddress() >= b)
                {
                    continue;
                }
                if (v.startAddress() > at)
                {
                    mapFixed(process, at, v.startAddress() - at, prot, unaccounted);
                }
                at = Math.max(at, v.endAddress());
            }
            if (at < b)
            {
                mapFixed(process, at, b - at, prot, unaccounted);
            }
            process.mprotect(a, b - a, prot);
        }
    }

    /**
     * Maps a range the real process has mapped; a mapping the real one made with MAP_NORESERVE ({@code unaccounted})
     * is mapped so in the twin, whose host then does not account it either (mm/mmap.c {@code accountable_mapping}).
     */
    private static void mapFixed(final UserProcess process, final long at, final long length, final Set<Prot> prot,
        final boolean unaccounted)
    {
        final Set<MapFlag> flags = EnumSet.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.FIXED);
        if (unaccounted)
        {
            flags.add(MapFlag.NORESERVE);
        }
        process.mmap(at, length, prot, flags);
    }

    /** The real process's MAP_NORESERVE mappings, read only when a writable range is new to its twin. */
    private static List<ProcessMemory.Mapping> noReserveMappings(final int pid)
    {
        try
        {
            return ProcessMemory.noReserve(pid);
        }
        catch (final IOException e)
        {
            throw new VerbsException("ibv_reg_mr", 14, "cannot read /proc/" + pid + "/smaps: " + e.getMessage());
        }
    }
}
