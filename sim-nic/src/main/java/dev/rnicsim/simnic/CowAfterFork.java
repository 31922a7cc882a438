package dev.rnicsim.simnic;

import dev.rnicsim.pagetable.UserProcess;

/**
 * The STALE_MAPPING diagnosis of {@link StrictChecker} for a copy-on-write after fork(2): which child now maps the
 * frame an MR pins, and what to do about it.
 */
final class CowAfterFork
{
    private CowAfterFork()
    {
    }

    /**
     * The child that still maps the pinned frame at the same address: the parent's write after fork(2) took a copy
     * (copy-on-write) and left the frame the MR pins to the child. A kernel without copy-on-fork of pinned pages
     * (before Linux 5.9, commit 70e806e4e645 "mm: Do early cow for pinned pages during fork() for ptes") shares a
     * pinned page like any other; libibverbs' {@code ibv_fork_init} (or RDMAV_FORK_SAFE) marks registered ranges
     * MADV_DONTFORK so that the child never maps them (ibv_fork_init(3)).
     *
     * @return the child, or null when no child of the process maps {@code frame} at {@code page}.
     */
    static UserProcess child(final UserProcess process, final long page, final long frame)
    {
        for (final UserProcess p : process.host().processes())
        {
            if (p.parent() == process && !p.exited())
            {
                final long pa = p.translate(page);
                if (pa >= 0 && (pa & ~4095L) == frame)
                {
                    return p;
                }
            }
        }
        return null;
    }

    static String diagnosis(final UserProcess child)
    {
        return ": a copy-on-write after fork: the parent wrote to the page after forking process " + child.pid()
            + " and got a copy, and the frame the MR pins now belongs to the child (this kernel shares pinned pages "
            + "at fork); call ibv_fork_init() or set RDMAV_FORK_SAFE=1 before registering (the range is then "
            + "MADV_DONTFORK), or run a kernel that copies pinned pages at fork (Linux 5.9 or later)";
    }
}
