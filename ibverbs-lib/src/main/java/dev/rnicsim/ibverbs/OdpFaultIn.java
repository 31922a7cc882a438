package dev.rnicsim.ibverbs;

import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.Vma;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.VerbsException;

/**
 * The page walk of an ODP page fault over the real process: an ODP MR, an implicit one above all (addr 0, length
 * SIZE_MAX), covers memory the program maps after registering it, and the device's fault handler walks the process's
 * page table as it is at the fault ({@code hmm_range_fault} in {@code ib_umem_odp_map_dma_and_lock}). The model
 * faults over its twin of the process, so before a request that names an ODP MR reaches the model, a range it
 * touches that the twin does not map yet is mirrored from the real process's mappings ({@code /proc/PID/maps}) into
 * the twin of the MR's owner: a buffer the program allocated after an implicit registration is found, a range it
 * never mapped stays a hole and faults with EFAULT as on the real device. A range the twin maps already is left as
 * it is (mirroring it again would change its protection in the twin, which the real process did not do, and
 * invalidate the MR's pages as the MMU notifier does for an mprotect). MRs that are not ODP are pinned at
 * registration and need nothing here. Stateless.
 */
final class OdpFaultIn
{
    private OdpFaultIn()
    {
    }

    /**
     * Mirrors [addr, addr + lengthBytes) of the process that owns the MR named by key on a device, when that MR is
     * an ODP MR and its owner's twin does not map the whole range; does nothing for any other key (unknown ones
     * included: the model refuses them itself).
     *
     * @param server      the fabric.
     * @param deviceIndex the device the key belongs to.
     * @param key         an lkey or rkey.
     * @param addr        the first address the request touches (an iova: the MR's address for a VA-based MR).
     * @param lengthBytes how many bytes it touches.
     */
    static void before(final FabricServer server, final int deviceIndex, final int key, final long addr,
        final long lengthBytes)
    {
        final Session.MrInfo m = server.mrs.get(Verbs.mrKey(deviceIndex, key));
        if (m == null || lengthBytes <= 0 || !m.mr().access().contains(Access.ON_DEMAND))
        {
            return;
        }
        final long start = m.addr() + (addr - m.iova());
        if (start + lengthBytes < start || mapped(m.session().process, start, start + lengthBytes))
        {
            return;
        }
        try
        {
            m.session().mirror(start, lengthBytes);
        }
        catch (final VerbsException e)
        {
            // The owner's maps could not be read (it has exited): the model's walk finds what it had, and faults.
        }
    }

    /** Whether the twin's mappings cover [start, end) without a hole. */
    private static boolean mapped(final UserProcess twin, final long start, final long end)
    {
        long covered = start;
        for (final Vma v : twin.vmas())
        {
            if (v.endAddress() <= covered || v.startAddress() >= end)
            {
                continue;
            }
            if (v.startAddress() > covered)
            {
                return false;
            }
            covered = v.endAddress();
            if (covered >= end)
            {
                return true;
            }
        }
        return covered >= end;
    }
}
