package dev.rnicsim.testkit;

import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.Madvice;
import dev.rnicsim.pagetable.MapFlag;
import dev.rnicsim.pagetable.Prot;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.testkit.TestNic.Side;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The system calls a {@link TestNic} makes on its processes beyond what the verbs API's {@code HostMemory} offers:
 * {@code mmap} at a fixed address, {@code fork} and {@code exit} of the children it forked. A kernel error comes out
 * as the {@link VerbsException} the verbs API throws, with the same errno and detail.
 *
 * <p>Not thread safe (nor is the simulator).
 */
final class Processes
{
    /** Bytes of the pages {@link #mmapFixed} maps (MADV_NOHUGEPAGE keeps them 4 KiB). */
    private static final long PAGE_4K_BYTES = 4096;

    private final List<UserProcess> children = new ArrayList<>();

    /**
     * {@code mmap(address, ..., MAP_FIXED_NOREPLACE)} of fresh anonymous 4 KiB pages, then MADV_NOHUGEPAGE.
     *
     * @param process     whose address space.
     * @param address     first byte, 4 KiB aligned.
     * @param lengthBytes bytes (rounded up to 4 KiB).
     * @return the address (the same).
     * @throws VerbsException "mmap" with EEXIST, EINVAL, EPERM or ENOMEM as the kernel model says.
     */
    long mmapFixed(final UserProcess process, final long address, final long lengthBytes)
    {
        try
        {
            final long at = process.mmap(address, lengthBytes, Prot.READ_WRITE, Set.of(MapFlag.PRIVATE,
                MapFlag.ANONYMOUS, MapFlag.FIXED_NOREPLACE));
            process.madvise(at, (lengthBytes + PAGE_4K_BYTES - 1) & -PAGE_4K_BYTES, Madvice.NOHUGEPAGE);
            return at;
        }
        catch (final KernelException e)
        {
            throw new VerbsException("mmap", e.errno().value(), e.detail(), e);
        }
    }

    /**
     * fork(2), the child named {@code child_<side><n>}.
     *
     * @param process whose process.
     * @param side    its side (for the child's name).
     * @return the child, which {@link #exitAll} ends.
     * @throws VerbsException "fork" with ENOMEM when memory runs out copying pinned pages.
     */
    UserProcess fork(final UserProcess process, final Side side)
    {
        try
        {
            final UserProcess child = process.fork("child_" + side.tag() + (children.size() + 1));
            children.add(child);
            return child;
        }
        catch (final KernelException e)
        {
            throw new VerbsException("fork", e.errno().value(), e.detail(), e);
        }
    }

    /**
     * exit(2) of the youngest child that still runs.
     *
     * @return true when a child exited, false when none was running.
     */
    boolean exitChild()
    {
        for (int i = children.size() - 1; i >= 0; i--)
        {
            final UserProcess child = children.get(i);
            if (!child.exited())
            {
                child.exit();
                return true;
            }
        }
        return false;
    }

    /**
     * exit(2) of every child forked, oldest first.
     */
    void exitAll()
    {
        for (final UserProcess child : children)
        {
            child.exit();
        }
    }
}
