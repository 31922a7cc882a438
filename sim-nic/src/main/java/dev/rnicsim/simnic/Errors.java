package dev.rnicsim.simnic;

import dev.rnicsim.mtt.TableException;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.SegmentationFault;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.Vma;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.VerbsException;

/**
 * The one place where failures of the host and adapter models become the errno a verb returns. The errno travels
 * intact: the host's and the tables' errno numbers are Linux's, so a verb fails with exactly the number the lower
 * model raised (ENOMEM stays ENOMEM, EFAULT stays EFAULT, EOPNOTSUPP stays EOPNOTSUPP), and the detail travels
 * beside it, never parsed out of a message. Stateless.
 */
final class Errors
{
    private Errors()
    {
    }

    /** @return the verbs errno of a host-kernel failure, number for number. */
    static Errno errno(final KernelException e)
    {
        return Errno.of(e.errno().value());
    }

    /** @return the verbs errno of an adapter-table failure, number for number. */
    static Errno errno(final TableException e)
    {
        return Errno.of(e.errno().value());
    }

    static VerbsException of(final String verb, final KernelException e)
    {
        return new VerbsException(verb, e.errno().value(), e.detail(), e);
    }

    static VerbsException of(final String verb, final TableException e)
    {
        return new VerbsException(verb, e.errno().value(), e.detail(), e);
    }

    /**
     * ib_umem_get's pin failed. An MR with LOCAL_WRITE, REMOTE_WRITE, REMOTE_ATOMIC or MW_BIND is pinned for writing
     * ({@code ib_access_writable} in include/rdma/ib_umem.h makes drivers/infiniband/core/umem.c {@code ib_umem_get}
     * pass FOLL_WRITE), so memory mapped without PROT_WRITE faults and the registration fails with EFAULT although
     * the process may read it; a buffer the NIC only reads needs none of those rights (libfabric's verbs provider
     * asked for LOCAL_WRITE on read-only buffers and got -14 until it stopped: ofiwg/libfabric PR 7243).
     *
     * @param verb        the verb.
     * @param e           the host's failure.
     * @param writablePin whether the pin was for writing.
     * @param process     the registering process.
     * @return the verbs failure, errno kept.
     */
    static VerbsException pinFailed(final String verb, final KernelException e, final boolean writablePin,
        final UserProcess process)
    {
        final Vma vma = e instanceof SegmentationFault f ? process.vmaAt(f.faultAddress()) : null;
        if (writablePin && vma != null && !vma.writable())
        {
            return new VerbsException(verb, e.errno().value(), e.detail() + ": the access flags ask for a write "
                + "right (LOCAL_WRITE, REMOTE_WRITE, REMOTE_ATOMIC or MW_BIND), so ib_umem_get pins the pages for "
                + "writing (FOLL_WRITE) and this mapping is read-only; register a buffer the NIC only reads with "
                + "none of them (local read is always allowed, REMOTE_READ lets a peer READ it), or mprotect it "
                + "writable first", e);
        }
        return of(verb, e);
    }

    /** ibv_rereg_mr's kernel command failed (IBV_REREG_MR_ERR_CMD) because the host refused; errno kept. */
    static ReregException reregCmd(final KernelException e)
    {
        final ReregException r = new ReregException(e.errno().value(), ReregException.ERR_CMD, e.detail());
        r.initCause(e);
        return r;
    }

    /** ibv_rereg_mr's kernel command failed (IBV_REREG_MR_ERR_CMD) because the tables refused; errno kept. */
    static ReregException reregCmd(final TableException e)
    {
        final ReregException r = new ReregException(e.errno().value(), ReregException.ERR_CMD, e.detail());
        r.initCause(e);
        return r;
    }

    static VerbsException invalid(final String verb, final String message)
    {
        return new VerbsException(verb, Errno.EINVAL.code(), message);
    }

    static VerbsException of(final String verb, final Errno errno, final String message)
    {
        return new VerbsException(verb, errno.code(), message);
    }
}
