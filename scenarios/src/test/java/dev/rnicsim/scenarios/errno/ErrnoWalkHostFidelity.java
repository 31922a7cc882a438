package dev.rnicsim.scenarios.errno;

import java.util.List;

/**
 * Errno paths of the host and driver fidelity rules: the overcommit heuristic of mmap and irdma's answer when no
 * page size fits a registration. Stateless.
 */
final class ErrnoWalkHostFidelity
{
    private ErrnoWalkHostFidelity()
    {
    }

    /** @return the cases. */
    static List<ErrnoWalk.Case> cases()
    {
        return List.of(
            new ErrnoWalk.Case("a writable mmap larger than RAM + swap", ErrnoWalk.ONE_HOST, "mmap huge app_a 1T",
                "ENOMEM", List.of("larger than total RAM + swap", "__vm_enough_memory", "vm.overcommit_memory=1")),
            new ErrnoWalk.Case("an irdma registration no page size fits", """
                host alpha ram=256M page=64k aged=yes
                device nic_a alpha profile=e810
                open app_a nic_a memlock=unlimited
                pd pd_a app_a
                mmap buf app_a 1M
                touch buf 1M write
                """, "reg r pd_a buf 1M", "EOPNOTSUPP", List.of("no page size in page_size_cap",
                "ib_umem_find_best_pgsz")));
    }
}
