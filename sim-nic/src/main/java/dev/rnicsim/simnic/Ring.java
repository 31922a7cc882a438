package dev.rnicsim.simnic;

import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.PinnedPages;
import dev.rnicsim.pagetable.UserProcess;

/**
 * The ring of a CQ or QP: memory the user library maps in the process and the kernel pins with {@code ib_umem_get}
 * (so it is charged to RLIMIT_MEMLOCK like an MR), released when the queue is destroyed.
 */
final class Ring
{
    private final UserProcess process;
    private final long address;
    private final long lengthBytes;
    private final PinnedPages pinned;
    private final ForkSafety fork;

    private Ring(final ForkSafety fork, final UserProcess process, final long address, final long lengthBytes, final PinnedPages pinned)
    {
        this.fork = fork;
        this.process = process;
        this.address = address;
        this.lengthBytes = lengthBytes;
        this.pinned = pinned;
    }

    /**
     * Maps and pins a ring; on failure nothing stays mapped, madvised or pinned. With fork support on, the provider
     * madvises the buffer MADV_DONTFORK before the kernel pins it (mlx5 {@code mlx5_alloc_buf} calls
     * {@code ibv_dontfork_range}), so every ring costs VMA splits against {@code vm.max_map_count}.
     *
     * @param fork the fork support of libibverbs in the process that maps the ring.
     * @throws KernelException ENOMEM or EPERM from the pin (RLIMIT_MEMLOCK), ENOMEM from mmap, the madvise's errno.
     */
    static Ring map(final ForkSafety fork, final long lengthBytes)
    {
        final UserProcess process = fork.process();
        final long page = SimHostMemory.basePageBytes(process);
        final long length = (lengthBytes + page - 1) & -page;
        final long address = process.mmapAnonymous(length);
        try
        {
            fork.dontforkRange(address, length);
        }
        catch (final KernelException e)
        {
            process.munmap(address, length);
            throw new KernelException(e.errno(), "fork support (ibv_fork_init) could not madvise(MADV_DONTFORK) the "
                + "queue's ring: " + e.getMessage().substring(e.errno().name().length() + 2) + "; raise vm.max_map_count or create fewer queues");
        }
        try
        {
            return new Ring(fork, process, address, length, process.pinUserPages(address, length, true, true));
        }
        catch (final KernelException e)
        {
            fork.doforkRange(address, length);
            process.munmap(address, length);
            throw e;
        }
    }

    long lengthBytes()
    {
        return lengthBytes;
    }

    long pages()
    {
        return lengthBytes / SimHostMemory.basePageBytes(process);
    }

    void release()
    {
        process.unpinUserPages(pinned);
        fork.doforkRange(address, lengthBytes);
        if (!process.exited())
        {
            process.munmap(address, lengthBytes);
        }
    }
}
