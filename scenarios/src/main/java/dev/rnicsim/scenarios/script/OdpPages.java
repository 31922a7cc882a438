package dev.rnicsim.scenarios.script;

import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.Vma;
import dev.rnicsim.simnic.SimOdpMr;
import java.util.ArrayList;
import java.util.List;

/**
 * What the device maps of an on-demand-paging MR now, read page by page from the adapter tables: the runs of
 * mapped blocks of an explicit MR, or of an implicit MR within the process's VMAs (the NIC's entries are zapped
 * before a page leaves a VMA, so nothing outside them is mapped). Stateless.
 */
final class OdpPages
{
    /** Most blocks looked at for one MR: 16 GiB of 4 KiB pages. */
    static final long MAX_SCAN = 1L << 22;

    private OdpPages()
    {
    }

    /**
     * A run of blocks the device maps.
     *
     * @param startVa first byte of the first block.
     * @param endVa   one past the last block.
     */
    record Run(long startVa, long endVa)
    {
    }

    /**
     * @param mr an ODP MR.
     * @return the runs of mapped blocks, in address order (none once it is closed).
     */
    static List<Run> mapped(final SimOdpMr mr)
    {
        final List<Run> runs = new ArrayList<>();
        if (mr.isClosed())
        {
            return runs;
        }
        final long block = 1L << mr.pageShift();
        final List<long[]> ranges = new ArrayList<>();
        if (mr.isImplicit())
        {
            final UserProcess p = mr.pd().context().process();
            if (p.exited())
            {
                return runs;
            }
            for (final Vma v : p.vmas())
            {
                ranges.add(new long[] {v.startAddress(), v.endAddress()});
            }
        }
        else
        {
            ranges.add(new long[] {mr.addr() & -block, mr.addr() + mr.lengthBytes()});
        }
        long scanned = 0;
        for (final long[] r : ranges)
        {
            long runStart = -1;
            long va = r[0];
            for (; va < r[1] && scanned < MAX_SCAN; va += block, scanned++)
            {
                final boolean on = mr.deviceMapped(Math.max(va, mr.addr()));
                if (on && runStart < 0)
                {
                    runStart = va;
                }
                else if (!on && runStart >= 0)
                {
                    runs.add(new Run(runStart, va));
                    runStart = -1;
                }
            }
            if (runStart >= 0)
            {
                runs.add(new Run(runStart, va));
            }
        }
        return runs;
    }

    /**
     * @param mr an ODP MR.
     * @return the blocks the device maps now.
     */
    static long mappedBlocks(final SimOdpMr mr)
    {
        long n = 0;
        for (final Run r : mapped(mr))
        {
            n += (r.endVa() - r.startVa()) >>> mr.pageShift();
        }
        return n;
    }

    /**
     * @param mr an ODP MR.
     * @return the MTT entries it holds: one per block of an explicit MR (all of them from registration on), or
     * {@link AdapterTables#IMPLICIT_CHILD_ENTRIES} per child of an implicit MR.
     */
    static long mttEntries(final SimOdpMr mr)
    {
        if (mr.isClosed())
        {
            return 0;
        }
        if (mr.isImplicit())
        {
            return mr.implicitChildren() * AdapterTables.IMPLICIT_CHILD_ENTRIES;
        }
        final int shift = mr.pageShift();
        return ((mr.iova() + mr.lengthBytes() - 1) >>> shift) - (mr.iova() >>> shift) + 1;
    }
}
