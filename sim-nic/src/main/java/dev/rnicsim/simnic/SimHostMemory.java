package dev.rnicsim.simnic;

import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.Madvice;
import dev.rnicsim.pagetable.MapFlag;
import dev.rnicsim.pagetable.Prot;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.HostMemory;
import java.util.Set;

/**
 * {@link HostMemory} over a simulated process: buffers are mmaps in its address space, reads and writes are CPU
 * accesses that fault pages in.
 *
 * <p>Not thread safe.
 */
public final class SimHostMemory implements HostMemory
{
    private final UserProcess process;

    /**
     * @param process the process whose memory this is.
     */
    public SimHostMemory(final UserProcess process)
    {
        this(process, null);
    }

    private final SimFabric fabric;

    /**
     * @param process the process whose memory this is.
     * @param fabric  the fabric whose clock the CPU's page faults advance (null: they cost no simulated time).
     */
    public SimHostMemory(final UserProcess process, final SimFabric fabric)
    {
        this.fabric = fabric;
        this.process = process;
    }

    /**
     * @return the simulated process.
     */
    public UserProcess process()
    {
        return process;
    }

    @Override
    public void onUnmap(final java.util.function.BiConsumer<Long, Long> hook)
    {
        process.onUnmap(hook);
    }

    @Override
    public long allocate(final long lengthBytes, final Backing backing)
    {
        if (backing == null)
        {
            throw Errors.invalid("mmap", "backing is null"
                + "; pass a Backing (anonymous, THP or hugetlb)");
        }
        try
        {
            return switch (backing)
            {
                case BASE_PAGES -> advised(process.mmapAnonymous(lengthBytes), lengthBytes, Madvice.NOHUGEPAGE);
                case TRANSPARENT_HUGE_PAGES -> advised(process.mmapAnonymous(lengthBytes), lengthBytes,
                    Madvice.HUGEPAGE);
                case HUGETLB_2M -> process.mmap(0, lengthBytes, Prot.READ_WRITE,
                    Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.HUGETLB, MapFlag.HUGE_2MB));
                case HUGETLB_1G -> process.mmap(0, lengthBytes, Prot.READ_WRITE,
                    Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.HUGETLB, MapFlag.HUGE_1GB));
            };
        }
        catch (final KernelException e)
        {
            throw Errors.of("mmap", e);
        }
    }

    /**
     * @param process a simulated process.
     * @return its host's base page size in bytes: sysconf(_SC_PAGESIZE).
     */
    static long basePageBytes(final UserProcess process)
    {
        return process.host().config().basePage().bytes();
    }

    private long advised(final long address, final long lengthBytes, final Madvice advice)
    {
        final long page = basePageBytes(process);
        process.madvise(address, (lengthBytes + page - 1) & -page, advice);
        return address;
    }

    @Override
    public void free(final long address, final long lengthBytes)
    {
        try
        {
            // allocate() rounded the length up to the backing's page size; free() takes the same length back.
            final dev.rnicsim.pagetable.Vma vma = process.vmaAt(address);
            final long page = vma != null && vma.kind() == dev.rnicsim.pagetable.VmaKind.HUGETLB
                ? vma.hugePageSize().bytes() : basePageBytes(process);
            process.munmap(address, (lengthBytes + page - 1) & -page);
        }
        catch (final KernelException e)
        {
            throw Errors.of("munmap", e);
        }
    }

    @Override
    public void write(final long address, final byte[] data)
    {
        if (data == null)
        {
            throw Errors.of("write", Errno.EFAULT, "data is null"
                + "; pass the bytes to write");
        }
        try
        {
            if (fabric == null)
            {
                process.write(address, data);
            }
            else
            {
                fabric.cpuWork(process, "write", () ->
                {
                    process.write(address, data);
                    return null;
                });
            }
        }
        catch (final KernelException e)
        {
            throw Errors.of("write", e);
        }
    }

    @Override
    public byte[] read(final long address, final int lengthBytes)
    {
        try
        {
            return fabric == null ? process.read(address, lengthBytes)
                : fabric.cpuWork(process, "read", () -> process.read(address, lengthBytes));
        }
        catch (final KernelException e)
        {
            throw Errors.of("read", e);
        }
    }
}
