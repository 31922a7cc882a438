package dev.rnicsim.pagetable;

/**
 * The kernel's overcommit check of a new mapping in its default heuristic mode ({@code vm.overcommit_memory=0},
 * OVERCOMMIT_GUESS): a private writable mapping is accountable ({@code accountable_mapping} in mm/mmap.c,
 * {@code VM_ACCOUNT}), and {@code __vm_enough_memory} (mm/util.c) refuses it with ENOMEM when its pages alone exceed
 * total RAM plus swap; anything smaller is granted whatever is in use (since Linux 5.2, commit "mm: fix
 * false-positive OVERCOMMIT_GUESS failures"). hugetlb mappings are charged to their pool instead, and read-only
 * mappings are not accounted, nor are MAP_NORESERVE ones (VM_NORESERVE: {@code accountable_mapping} is false;
 * {@link MapFlag#NORESERVE}). With {@code vm.overcommit_memory=1} (OVERCOMMIT_ALWAYS) every mapping is granted;
 * mode 2 (never, with {@code vm.overcommit_ratio}) is not modelled. Stateless.
 */
final class Overcommit
{
    private Overcommit()
    {
    }

    /**
     * @param config      the host's settings.
     * @param lengthBytes the mapping's length, rounded to its pages.
     * @param writable    true for an accountable PROT_WRITE mapping (not MAP_NORESERVE).
     * @param hugetlb     true for MAP_HUGETLB.
     * @throws KernelException ENOMEM when the heuristic refuses the mapping.
     */
    static void check(final HostConfig config, final long lengthBytes, final boolean writable, final boolean hugetlb)
    {
        if (!writable || hugetlb || config.overcommitMemory() == 1)
        {
            return;
        }
        final long pageBytes = config.basePage().bytes();
        final long pages = lengthBytes / pageBytes;
        final long totalPages = (config.physicalMemoryBytes() + config.swapBytes()) / pageBytes;
        if (pages > totalPages)
        {
            throw new KernelException(Errno.ENOMEM, "a private writable mapping of " + lengthBytes + " bytes ("
                + pages + " pages) is larger than total RAM + swap (" + config.physicalMemoryBytes() + " + "
                + config.swapBytes() + " bytes, " + totalPages + " pages): the heuristic overcommit of "
                + "vm.overcommit_memory=0 refuses it (mm/util.c __vm_enough_memory); map less, give the host more RAM "
                + "or swap, or set vm.overcommit_memory=1");
        }
    }
}
