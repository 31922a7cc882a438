package dev.rnicsim.scenarios.charts;

import static dev.rnicsim.scenarios.charts.Charts.BASE_PAGE_BYTES;
import static dev.rnicsim.scenarios.charts.Charts.GIB_BYTES;
import static dev.rnicsim.scenarios.charts.Charts.MIB_BYTES;

import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.ProtectionDomain;
import java.util.Set;

/**
 * Registers buffers whose MR page equals their CPU page (4 KiB, 2 MiB or 1 GiB), as the charts' class comment
 * explains ({@link Charts}, "MR page size"): a fresh simulated host hands out contiguous frames, which would let
 * {@code ib_umem_find_best_pgsz} merge base pages into larger MR pages. Stateless.
 */
final class CpuPageMrs
{
    private CpuPageMrs()
    {
    }

    private static final long IOVA_BASE = 1L << 44;

    /**
     * Registers a buffer so that its MR page equals its CPU page: faults the first page in, reads its physical
     * address, and chooses an iova aligned to the CPU page that differs from that address in the CPU page's bit.
     */
    static SimMr registerWithCpuPages(final SimContext context, final ProtectionDomain pd, final long addr,
        final long lengthBytes, final Backing backing, final Set<Access> access)
    {
        final long pageBytes = cpuPageBytes(backing);
        final UserProcess process = context.process();
        process.touch(addr, 1, true);
        final long phys = process.translate(addr);
        if (phys < 0 || (addr & (pageBytes - 1)) != 0)
        {
            throw new IllegalStateException("buffer 0x" + Long.toHexString(addr) + " is not a present page-aligned "
                + "mapping of " + backing);
        }
        final long iova = IOVA_BASE | ((phys + pageBytes) & (2 * pageBytes - 1));
        final SimMr mr = (SimMr)pd.regMr(addr, lengthBytes, iova, access);
        if (mr.pageSizeBytes() != pageBytes)
        {
            throw new IllegalStateException("expected MR pages of " + pageBytes + " bytes, got " + mr);
        }
        return mr;
    }

    /** @return the bytes of the CPU page of a backing (THP is refused: it may mix page sizes). */
    static long cpuPageBytes(final Backing backing)
    {
        return switch (backing)
        {
            case BASE_PAGES -> BASE_PAGE_BYTES;
            case HUGETLB_2M -> 2 * MIB_BYTES;
            case HUGETLB_1G -> GIB_BYTES;
            case TRANSPARENT_HUGE_PAGES -> throw new IllegalArgumentException("THP may mix page sizes");
        };
    }

    /** @return value rounded up to a multiple of multiple. */
    static long roundUp(final long value, final long multiple)
    {
        return (value + multiple - 1) / multiple * multiple;
    }
}
