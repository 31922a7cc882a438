package dev.rnicsim.pagetable;

import java.util.ArrayList;
import java.util.List;

/**
 * What a process holds open and closes at exit, after its address space is gone (kernel/exit.c {@code do_exit}:
 * {@code exit_mm}, then {@code exit_files}): an RDMA device file deregisters its MRs then, unpinning pages that
 * stayed allocated because they were pinned.
 *
 * <p>Package-private. Not thread safe.
 */
final class ExitFiles
{
    private final List<Runnable> hooks = new ArrayList<>();

    void add(final Runnable hook)
    {
        hooks.add(hook);
    }

    /**
     * Runs every hook once, in registration order, even when one throws.
     *
     * @throws RuntimeException the first failure, with the later ones suppressed.
     */
    void closeAll()
    {
        RuntimeException failure = null;
        for (final Runnable hook : List.copyOf(hooks))
        {
            try
            {
                hook.run();
            }
            catch (final RuntimeException e)
            {
                if (failure == null)
                {
                    failure = e;
                }
                else
                {
                    failure.addSuppressed(e);
                }
            }
        }
        hooks.clear();
        if (failure != null)
        {
            throw failure;
        }
    }
}
