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

    private Ring(final UserProcess process, final long address, final long lengthBytes, final PinnedPages pinned)
    {
        this.process = process;
        this.address = address;
        this.lengthBytes = lengthBytes;
        this.pinned = pinned;
    }

    /**
     * Maps and pins a ring; on failure nothing stays mapped or pinned.
     *
     * @throws KernelException ENOMEM or EPERM from the pin (RLIMIT_MEMLOCK), ENOMEM from mmap.
     */
    static Ring map(final UserProcess process, final long lengthBytes)
    {
        final long length = (lengthBytes + 0xfff) & ~0xfffL;
        final long address = process.mmapAnonymous(length);
        try
        {
            return new Ring(process, address, length, process.pinUserPages(address, length, true, true));
        }
        catch (final KernelException e)
        {
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
        return lengthBytes >>> 12;
    }

    void release()
    {
        process.unpinUserPages(pinned);
        if (!process.exited())
        {
            process.munmap(address, lengthBytes);
        }
    }
}
